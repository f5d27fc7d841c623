// Checks a model's JSON answer against the step's JSON Schema: the subset extraction schemas use
// (type incl. unions and nullable, properties, required, additionalProperties, items, enum, const,
// numeric and length bounds, pattern, anyOf/oneOf). Unknown keywords are ignored rather than refused:
// the schema is also the model's instruction, and may carry hints only the model reads.
type Schema = Record<string, unknown>;

const typeOf = (x: unknown): string => (x === null ? "null" : Array.isArray(x) ? "array" : Number.isInteger(x) ? "integer" : typeof x);
const matchesType = (x: unknown, t: string) => typeOf(x) === t || (t === "number" && typeof x === "number");

/** Problems found (empty = valid), each naming the path (`lines[2].amount`). */
export function checkSchema(value: unknown, schema: Schema, path = "$"): string[] {
  const out: string[] = [];
  const types = Array.isArray(schema.type) ? (schema.type as string[]) : typeof schema.type === "string" ? [schema.type] : undefined;
  if (types) {
    const allowed = schema.nullable === true ? [...types, "null"] : types;
    if (!allowed.some((t) => matchesType(value, t))) return [`${path}: expected ${allowed.join(" or ")}, got ${typeOf(value)}`];
  }
  if (Array.isArray(schema.enum) && !schema.enum.some((e) => JSON.stringify(e) === JSON.stringify(value))) {
    out.push(`${path}: must be one of ${schema.enum.map((e) => JSON.stringify(e)).join(", ")}`);
  }
  if ("const" in schema && JSON.stringify(schema.const) !== JSON.stringify(value)) out.push(`${path}: must be ${JSON.stringify(schema.const)}`);
  for (const key of ["anyOf", "oneOf"] as const) {
    const alts = schema[key];
    if (Array.isArray(alts) && !alts.some((s) => checkSchema(value, s as Schema, path).length === 0)) out.push(`${path}: matches none of the allowed shapes`);
  }
  if (typeof value === "number") {
    if (typeof schema.minimum === "number" && value < schema.minimum) out.push(`${path}: must be ≥ ${schema.minimum}`);
    if (typeof schema.maximum === "number" && value > schema.maximum) out.push(`${path}: must be ≤ ${schema.maximum}`);
  }
  if (typeof value === "string") {
    if (typeof schema.minLength === "number" && value.length < schema.minLength) out.push(`${path}: shorter than ${schema.minLength}`);
    if (typeof schema.maxLength === "number" && value.length > schema.maxLength) out.push(`${path}: longer than ${schema.maxLength}`);
    if (typeof schema.pattern === "string" && !new RegExp(schema.pattern, "u").test(value)) out.push(`${path}: does not match ${schema.pattern}`);
  }
  if (Array.isArray(value)) {
    if (typeof schema.minItems === "number" && value.length < schema.minItems) out.push(`${path}: fewer than ${schema.minItems} items`);
    if (typeof schema.maxItems === "number" && value.length > schema.maxItems) out.push(`${path}: more than ${schema.maxItems} items`);
    if (schema.items && typeof schema.items === "object") value.forEach((x, i) => out.push(...checkSchema(x, schema.items as Schema, `${path}[${i}]`)));
  }
  if (typeOf(value) === "object") {
    const obj = value as Record<string, unknown>;
    const props = (schema.properties ?? {}) as Record<string, Schema>;
    for (const r of Array.isArray(schema.required) ? (schema.required as string[]) : []) if (obj[r] === undefined) out.push(`${path}.${r}: is required`);
    for (const [k, x] of Object.entries(obj)) {
      if (props[k]) out.push(...checkSchema(x, props[k], `${path}.${k}`));
      else if (schema.additionalProperties === false) out.push(`${path}.${k}: is not an allowed field`);
      else if (schema.additionalProperties && typeof schema.additionalProperties === "object") out.push(...checkSchema(x, schema.additionalProperties as Schema, `${path}.${k}`));
    }
  }
  return out;
}

/** A model's text as JSON: tolerates a Markdown code fence around it, nothing else. */
export function parseModelJson(text: string): { ok: true; value: unknown } | { ok: false; problem: string } {
  const fenced = /^\s*```(?:json)?\s*\n([\s\S]*?)\n\s*```\s*$/.exec(text);
  const body = (fenced ? fenced[1] : text).trim();
  if (!body) return { ok: false, problem: "the answer is empty" };
  try {
    return { ok: true, value: JSON.parse(body) };
  } catch (err) {
    return { ok: false, problem: `the answer is not valid JSON (${(err as Error).message}): ${body.slice(0, 120)}` };
  }
}
