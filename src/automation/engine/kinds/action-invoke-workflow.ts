// action.invoke-workflow: runs another workflow of the same tenant to completion (through the runs
// service) and outputs its output. `workflow` is an id or alias (`workflows.<slug>`), `version` a tag or `latest`.
import * as v from "valibot";
import { Cancelled, StepError } from "../errors";
import { defineKind } from "../kind";

export const schema = v.strictObject({
  workflow: v.pipe(v.string(), v.minLength(1)),
  input: v.optional(v.record(v.string(), v.unknown()), {}),
  version: v.optional(v.pipe(v.string(), v.minLength(1))),
});

export default defineKind({
  type: "action.invoke-workflow",
  configAt: "with",
  schema,
  async run(config, ctx) {
    try {
      return await ctx.services.invokeWorkflow(config.workflow, config.input, { version: config.version, step: ctx.path });
    } catch (e) {
      // Cancelled: the child was stopped by a shutdown, unfinished; this step runs again on resume.
      if (e instanceof StepError || e instanceof Cancelled) throw e;
      throw new StepError(`invoked workflow ${config.workflow} failed: ${(e as Error).message}`, "invoke_failed");
    }
  },
});
