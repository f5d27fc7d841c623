// control.foreach and control.parallel_map share this: `steps` run once per element of `items` with
// `as`/`indexAs` bound, at most `concurrency` iterations at a time. Output = per-iteration last outputs, in order.
import * as v from "valibot";
import { StepError } from "../errors";
import { defineKind, type AnyStepKind } from "../kind";
import { boundedAll, present, siblings, stepList, variableName } from "./control-shared";

const MAX_ITEMS = 10_000;

function loopKind(type: string, defaultConcurrency: number): AnyStepKind {
  const schema = v.strictObject({
    items: present,
    as: v.optional(variableName, "item"),
    indexAs: v.optional(variableName, "index"),
    steps: v.pipe(stepList, v.minLength(1)),
    concurrency: v.optional(v.pipe(v.number(), v.integer(), v.minValue(1), v.maxValue(64)), defaultConcurrency),
  });
  return defineKind({
    type,
    configAt: "step",
    schema,
    children: ["steps"],
    async run(config, ctx) {
      const items = config.items === null ? [] : config.items;
      if (!Array.isArray(items)) throw new StepError(`items must be an array, got ${typeof items}`, "invalid_config", { retryable: false });
      if (items.length > MAX_ITEMS) throw new StepError(`items has ${items.length} elements; at most ${MAX_ITEMS}`, "invalid_config", { retryable: false });
      const steps = ctx.children("steps");
      const group = siblings(ctx.signal);
      return boundedAll(items.length, config.concurrency, async (i) => {
        const scope = ctx.childScope({ [config.as]: items[i], [config.indexAs]: i });
        try {
          return (await ctx.runBlock(steps, `${ctx.path}[${i}]`, scope, group.signal)).last;
        } catch (e) {
          group.fail(e);
          throw e;
        }
      });
    },
  });
}

export const foreach = loopKind("control.foreach", 1);
export const parallelMap = loopKind("control.parallel_map", 4);
