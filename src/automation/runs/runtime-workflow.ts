// The runtime over C's workflow parser: YAML → Workflow, input checks and defaults; `execute` is the
// engine's (production) or one given by a test.
import type { ExecuteOptions, ExecuteResult } from "../engine/contract";
import { applyInputDefaults, parseWorkflow, validateRunInput } from "../workflow";
import type { Workflow } from "../engine/workflow-types";
import type { RunsRuntime } from "./runtime";

/** Parsed definitions by their YAML: every run of a version parses it twice (start, execute) otherwise. */
const CACHE_MAX = 200;

export function workflowRuntime(execute: (opts: ExecuteOptions) => Promise<ExecuteResult>): RunsRuntime {
  const cache = new Map<string, ReturnType<RunsRuntime["parse"]>>();
  return {
    parse(yaml) {
      const hit = cache.get(yaml);
      if (hit) return hit;
      // A run's definition is a stored version: hand-written YAML was refused internal kinds when pushed,
      // an agent release's generated workflow is one `agent.loop` step.
      const r = parseWorkflow(yaml, { internal: true });
      const out: ReturnType<RunsRuntime["parse"]> = r.ok
        ? { ok: true, workflow: r.workflow }
        : { ok: false, message: r.issues.map((i) => `${i.line ? `line ${i.line}: ` : ""}${i.field}: ${i.message}`).join("; ") };
      if (cache.size >= CACHE_MAX) cache.delete(cache.keys().next().value!);
      cache.set(yaml, out);
      return out;
    },
    validateInput(workflow, input) {
      const wf = workflow as Workflow;
      const issues = validateRunInput(wf, input);
      return { input: issues.length ? input : applyInputDefaults(wf, input), issues };
    },
    fileInputs: (workflow) => (workflow as Workflow).inputs.filter((i) => i.type === "file" || i.type === "array").map((i) => i.name),
    execute,
  };
}
