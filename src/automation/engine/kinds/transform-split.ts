// transform.split: a string cut at `separator` (default newline), or an array cut into chunks of
// `size`. Output `{items, count}`.
import * as v from "valibot";
import { StepError } from "../errors";
import { defineKind } from "../kind";

export const schema = v.strictObject({
  input: v.union([v.string(), v.array(v.unknown())]),
  separator: v.optional(v.string(), "\n"),
  size: v.optional(v.pipe(v.number(), v.integer(), v.minValue(1))),
  trim: v.optional(v.boolean(), false),
  removeEmpty: v.optional(v.boolean(), false),
});

export default defineKind({
  type: "transform.split",
  configAt: "with",
  schema,
  async run({ input, separator, size, trim, removeEmpty }) {
    let items: unknown[];
    if (typeof input === "string") {
      if (separator === "") throw new StepError("separator must not be empty", "invalid_config", { retryable: false });
      let parts = input.split(separator);
      if (trim) parts = parts.map((p) => p.trim());
      if (removeEmpty) parts = parts.filter((p) => p !== "");
      items = parts;
    } else {
      const n = size ?? 1;
      items = [];
      for (let i = 0; i < input.length; i += n) items.push(input.slice(i, i + n));
    }
    return { items, count: items.length };
  },
});
