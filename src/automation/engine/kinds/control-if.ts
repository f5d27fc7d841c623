// control.if {condition, then, else}: runs one branch; output = the last output of that branch (null if none ran).
import * as v from "valibot";
import { defineKind } from "../kind";
import { truthy } from "../template";
import { present, stepList } from "./control-shared";

export const schema = v.strictObject({ condition: present, then: stepList, else: v.optional(stepList) });

export default defineKind({
  type: "control.if",
  configAt: "step",
  schema,
  children: ["then", "else"],
  async run(config, ctx) {
    const branch = truthy(config.condition) ? "then" : "else";
    const steps = ctx.children(branch);
    if (steps.length === 0) return null;
    return (await ctx.runBlock(steps, ctx.path)).last;
  },
});
