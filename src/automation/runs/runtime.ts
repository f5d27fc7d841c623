// What the runs subsystem needs from the workflow side: parse a stored definition, check a run's
// input against the workflow's `inputs`, execute. Production wires C's parser and engine
// (runtime-default.ts); tests may pass their own executor.
import type { ExecuteOptions, ExecuteResult } from "../engine/contract";

export interface InputIssue {
  field: string;
  message: string;
  code?: string;
}

export interface RunsRuntime {
  /** Parses workflow YAML; a definition that no longer parses fails the run. */
  parse(yaml: string): { ok: true; workflow: unknown } | { ok: false; message: string };
  /** Issues for `input` against the workflow's declared inputs (empty = valid); may fill defaults. */
  validateInput(workflow: unknown, input: Record<string, unknown>): { input: Record<string, unknown>; issues: InputIssue[] };
  /** Workflow inputs that may receive files: `file` inputs, and `array` inputs for lists of files. */
  fileInputs(workflow: unknown): string[];
  execute(opts: ExecuteOptions): Promise<ExecuteResult>;
}
