// Valibot at the edge: outside data either parses or becomes a 400 whose issues name dotted fields.
import * as v from "valibot";
import { Invalid } from "../../kernel/errors";

type AnySchema = v.GenericSchema<unknown, unknown>;

export function parseWith<S extends AnySchema>(schema: S, value: unknown, prefix = ""): v.InferOutput<S> {
  const objectLike = (schema as { type?: string }).type === "strict_object" || (schema as { type?: string }).type === "object";
  // Valibot treats an array as an object with keys "0", "1"...; say what is wrong instead.
  if (objectLike && Array.isArray(value)) {
    throw Invalid("expected a JSON object, got an array", { field: prefix || "<root>", code: "invalid_type" });
  }
  const r = v.safeParse(schema, value);
  if (r.success) return r.output;
  const issues = r.issues.map((i) => {
    const path = v.getDotPath(i);
    const field = [prefix, path].filter(Boolean).join(".") || "<root>";
    // Strict objects report an unknown key as expecting `never`, a missing one as expecting `"name"`.
    if (i.type === "strict_object" && i.expected === "never") return { field, message: `unknown field ${i.received}`, code: "unrecognized_keys" };
    if (i.received === "undefined" && i.expected?.startsWith('"')) return { field, message: `${field} is required`, code: "required" };
    if (i.kind === "schema" && i.expected === "Object" && path === null) {
      return { field, message: `expected a JSON object, got ${i.received}`, code: "invalid_type" };
    }
    return { field, message: i.message, code: i.type === "never" ? "unrecognized_keys" : "invalid_value" };
  });
  throw Invalid(issues[0]?.message ?? "invalid input", { issues });
}

/** The largest value a 32-bit integer column (PostgreSQL `integer`) holds. */
export const INT32_MAX = 2_147_483_647;

/**
 * A whole number of a body between `min` and `max` (both inclusive), named in its messages. Every
 * integer a body carries into SQL has one: 1e20 is an integer to JavaScript, not to the database.
 */
export const wholeNumber = (name: string, min: number, max: number) =>
  v.pipe(
    v.number(`${name} must be a number`),
    v.integer(`${name} must be a whole number`),
    v.minValue(min, `${name} must be between ${min} and ${max}`),
    v.maxValue(max, `${name} must be between ${min} and ${max}`),
  );

/** Query integers arrive as strings: digits only, bounded, so `limit=1e400` is a 400, not NaN. */
export const queryInt = (min: number, max: number) =>
  v.pipe(
    v.string(),
    v.regex(/^\d{1,16}$/, "must be a whole number"),
    v.transform(Number),
    v.number(),
    v.minValue(min, `must be at least ${min}`),
    v.maxValue(max, `must be at most ${max}`),
  );

/** An ISO-8601 timestamp in a query, normalised to UTC `…Z` (so it compares as text with stored ones). */
export const isoQuery = v.pipe(
  v.string(),
  v.check((s) => !Number.isNaN(Date.parse(s)), "must be an ISO-8601 timestamp"),
  v.transform((s) => new Date(s).toISOString()),
);

/** Standard `{limit, offset}` of the data/total/limit/offset envelopes: limit 1-100 (default 50). */
export const pageQuery = {
  limit: v.optional(queryInt(1, 100), "50"),
  // The reference allows any safe integer offset.
  offset: v.optional(queryInt(0, Number.MAX_SAFE_INTEGER), "0"),
};

/** `expand=a,b`: a comma list of named optional sections; an unknown name is a 400 naming the allowed ones. */
export const expandQuery = <const T extends readonly [string, ...string[]]>(allowed: T) =>
  v.optional(
    v.pipe(
      v.string(),
      v.transform((s) => s.split(",").map((x) => x.trim()).filter(Boolean)),
      v.array(v.picklist(allowed, `expand takes ${allowed.join(", ")}`)),
    ),
  );

/** A `*` path parameter, percent-decoded; an undecodable escape (`%ED%A0%80`, `%zz`) is a 400, not a URIError. */
export function decodePathParam(raw: string, field = "path"): string {
  try {
    return decodeURIComponent(raw);
  } catch {
    throw Invalid(`the ${field} in the URL is not valid percent-encoded UTF-8`, { field, code: "invalid_path" });
  }
}
