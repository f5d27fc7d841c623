// transform.combine: `merge` (shallow, later wins), `deep` (recursive merge, arrays replaced) or
// `concat` (arrays joined; non-array values appended as elements) over `inputs`.
import * as v from "valibot";
import { StepError } from "../errors";
import { defineKind } from "../kind";
import { clone, isPlainObject } from "./paths";

export const schema = v.strictObject({
  inputs: v.pipe(v.array(v.unknown()), v.minLength(1)),
  mode: v.optional(v.picklist(["merge", "concat", "deep"]), "merge"),
});

function deepMerge(a: unknown, b: unknown): unknown {
  if (!isPlainObject(a) || !isPlainObject(b)) return clone(b);
  const out: Record<string, unknown> = { ...a };
  for (const [k, val] of Object.entries(b)) out[k] = k in out ? deepMerge(out[k], val) : clone(val);
  return out;
}

export default defineKind({
  type: "transform.combine",
  configAt: "with",
  schema,
  async run({ inputs, mode }) {
    if (mode === "concat") return inputs.flatMap((x) => (Array.isArray(x) ? x : x === null ? [] : [x]));
    const objects = inputs.filter((x) => x !== null);
    const bad = objects.findIndex((x) => !isPlainObject(x));
    if (bad >= 0) throw new StepError(`inputs.${bad} is not an object; mode ${mode} combines objects`, "invalid_config", { retryable: false });
    if (mode === "merge") return Object.assign({}, ...objects);
    return objects.reduce<unknown>((acc, x) => deepMerge(acc, x), {});
  },
});
