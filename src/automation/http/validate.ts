// Valibot at the edge: outside data either parses or becomes a 400 whose issues name dotted fields.
import * as v from "valibot";
import { Invalid } from "../../kernel/errors";

type AnySchema = v.GenericSchema<unknown, unknown>;

export function parseWith<S extends AnySchema>(schema: S, value: unknown, prefix = ""): v.InferOutput<S> {
  const r = v.safeParse(schema, value);
  if (r.success) return r.output;
  const issues = r.issues.map((i) => {
    const path = v.getDotPath(i);
    const field = [prefix, path].filter(Boolean).join(".") || "<root>";
    const unknownKey = i.type === "strict_object" || i.type === "never";
    return { field, message: i.message, code: unknownKey ? "unrecognized_keys" : "invalid_value" };
  });
  throw Invalid(issues[0]?.message ?? "invalid input", { issues });
}

/** Query integers arrive as strings: digits only, bounded, so `limit=1e400` is a 400, not NaN. */
export const queryInt = (min: number, max: number) =>
  v.pipe(
    v.string(),
    v.regex(/^\d{1,15}$/, "must be a whole number"),
    v.transform(Number),
    v.number(),
    v.minValue(min, `must be at least ${min}`),
    v.maxValue(max, `must be at most ${max}`),
  );

/** Standard `{limit, offset}` of the data/total/limit/offset envelopes: limit 1-100 (default 50). */
export const pageQuery = {
  limit: v.optional(queryInt(1, 100), "50"),
  offset: v.optional(queryInt(0, 1_000_000_000), "0"),
};
