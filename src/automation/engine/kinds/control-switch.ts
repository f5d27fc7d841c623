// control.switch {on, cases: [{when, steps}], default}: the first case whose `when` equals `on` runs
// (without `on`, the first case whose `when` is truthy); else `default`. Output = last output of the branch.
import * as v from "valibot";
import { defineKind } from "../kind";
import { truthy } from "../template";
import { present, stepList } from "./control-shared";

export const schema = v.strictObject({
  on: v.optional(v.unknown()),
  cases: v.pipe(v.array(v.strictObject({ when: present, steps: stepList })), v.minLength(1)),
  default: v.optional(stepList),
});

function same(a: unknown, b: unknown): boolean {
  return a === b || JSON.stringify(a) === JSON.stringify(b) || (typeof a !== typeof b && String(a) === String(b));
}

export default defineKind({
  type: "control.switch",
  configAt: "step",
  schema,
  children: ["cases.*.steps", "default"],
  async run(config, ctx) {
    const hasOn = "on" in config;
    const i = config.cases.findIndex((c) => (hasOn ? same(c.when, config.on) : truthy(c.when)));
    const steps = i >= 0 ? ctx.children(`cases.${i}.steps`) : ctx.children("default");
    if (steps.length === 0) return null;
    return (await ctx.runBlock(steps, ctx.path)).last;
  },
});
