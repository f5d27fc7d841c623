// control.parallel {branches: [{name, steps}]}: branches run concurrently; output = {branch: last output}.
import * as v from "valibot";
import { defineKind } from "../kind";
import { boundedAll, siblings, stepList, variableName } from "./control-shared";

export const schema = v.strictObject({
  branches: v.pipe(
    v.array(v.strictObject({ name: variableName, steps: v.pipe(stepList, v.minLength(1)) })),
    v.minLength(1),
    v.check((bs) => new Set(bs.map((b) => b.name)).size === bs.length, "branch names must be unique"),
  ),
  concurrency: v.optional(v.pipe(v.number(), v.integer(), v.minValue(1), v.maxValue(64))),
});

export default defineKind({
  type: "control.parallel",
  configAt: "step",
  schema,
  children: ["branches.*.steps"],
  async run(config, ctx) {
    const group = siblings(ctx.signal);
    const lasts = await boundedAll(config.branches.length, config.concurrency ?? config.branches.length, async (i) => {
      try {
        return (await ctx.runBlock(ctx.children(`branches.${i}.steps`), `${ctx.path}.${config.branches[i].name}`, undefined, group.signal)).last;
      } catch (e) {
        group.fail(e);
        throw e;
      }
    });
    return Object.fromEntries(config.branches.map((b, i) => [b.name, lasts[i]]));
  },
});
