// transform.set: builds an object from `fields` (dotted keys create nested objects), optionally on top of `input`.
import * as v from "valibot";
import { defineKind } from "../kind";
import { clone, setPath } from "./paths";

export const schema = v.strictObject({
  input: v.optional(v.record(v.string(), v.unknown())),
  fields: v.record(v.string(), v.unknown()),
});

export default defineKind({
  type: "transform.set",
  configAt: "with",
  schema,
  async run(config) {
    const out = clone(config.input) ?? {};
    for (const [key, value] of Object.entries(config.fields)) setPath(out, key, value);
    return out;
  },
});
