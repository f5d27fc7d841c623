// The runtime over C's workflow parser: YAML → Workflow, input checks and defaults; `execute` is the
// engine's (production) or one given by a test.
import type { ExecuteOptions, ExecuteResult } from "../engine/contract";
import { applyInputDefaults, parseWorkflow, validateRunInput } from "../workflow";
import type { Workflow } from "../workflow/types";
import type { RunsRuntime } from "./runtime";

export function workflowRuntime(execute: (opts: ExecuteOptions) => Promise<ExecuteResult>): RunsRuntime {
  return {
    parse(yaml) {
      const r = parseWorkflow(yaml);
      if (r.ok) return { ok: true, workflow: r.workflow };
      return { ok: false, message: r.issues.map((i) => `${i.line ? `line ${i.line}: ` : ""}${i.field}: ${i.message}`).join("; ") };
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
