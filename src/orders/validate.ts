import * as v from "valibot";
import { Invalid } from "../kernel/errors";

/**
 * Validates outside data against a valibot schema. The first issue becomes a 400 whose message names
 * the field ("price: must be ..."), with the rest attached as `issues`.
 */
export function parseInput<S extends v.GenericSchema>(schema: S, data: unknown): v.InferOutput<S> {
  if (typeof data !== "object" || data === null || Array.isArray(data)) {
    throw Invalid("Request body must be a JSON object");
  }
  const r = v.safeParse(schema, data);
  if (r.success) return r.output;
  const issues = r.issues.map((i) => {
    const field = v.getDotPath(i) ?? "";
    const message = i.kind === "schema" && i.input === undefined ? `${field} is required` : i.message;
    return { field, message };
  });
  const first = issues[0];
  return throwInvalid(first.message, first.field, issues);
}

function throwInvalid(message: string, field: string, issues: { field: string; message: string }[]): never {
  throw Invalid(message, { field, issues });
}
