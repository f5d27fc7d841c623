// transform.remove: a copy of `input` without the listed dotted `fields`.
import * as v from "valibot";
import { defineKind } from "../kind";
import { clone, removePath } from "./paths";

export const schema = v.strictObject({
  input: v.union([v.record(v.string(), v.unknown()), v.array(v.unknown())]),
  fields: v.pipe(v.array(v.pipe(v.string(), v.minLength(1))), v.minLength(1)),
});

export default defineKind({
  type: "transform.remove",
  configAt: "with",
  schema,
  async run(config) {
    const out = clone(config.input);
    // Longest paths first, so removing `a.1` before `a.0` keeps indexes meaningful.
    for (const f of [...config.fields].sort().reverse()) removePath(out, f);
    return out;
  },
});
