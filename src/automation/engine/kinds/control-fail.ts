// control.fail {condition, statusCode, message}: when `condition` is truthy (or absent) the run fails
// with `message` and `statusCode` (400–599, default 422); otherwise output {failed: false}.
import * as v from "valibot";
import { WorkflowFailure } from "../errors";
import { defineKind } from "../kind";
import { truthy } from "../template";

export const schema = v.strictObject({
  condition: v.optional(v.unknown()),
  statusCode: v.optional(v.pipe(v.number(), v.integer(), v.minValue(400), v.maxValue(599)), 422),
  message: v.optional(v.pipe(v.string(), v.maxLength(2000)), "workflow failed"),
});

export default defineKind({
  type: "control.fail",
  configAt: "step",
  schema,
  async run(config) {
    if ("condition" in config && !truthy(config.condition)) return { failed: false };
    throw new WorkflowFailure(config.message, config.statusCode);
  },
});
