// The typed form of a workflow YAML file, as the parser (workflow/) produces it and the engine executes
// it. It sits in engine/, the lower of the two: the parser needs the step kinds of engine/registry.ts.

export const inputTypes = ["string", "number", "integer", "boolean", "object", "array", "file"] as const;
export type InputType = (typeof inputTypes)[number];
/** What an `array` input may declare its elements to be (`items: file`: a list of files). */
export const itemTypes = ["string", "number", "integer", "boolean", "file"] as const;
export type ItemType = (typeof itemTypes)[number];

export interface WorkflowInput {
  name: string;
  type: InputType;
  required: boolean;
  description?: string;
  default?: unknown;
  /** The allowed values (string, number and integer inputs). */
  enum?: (string | number)[];
  /** The type of each element of an `array` input. */
  items?: ItemType;
}

export type RetryPolicy = "never" | { mode: "automatic"; maxAttempts: number; delayMs?: number };

export interface TriggerMethod {
  type: "api" | "manual" | "email" | "cron";
  [extra: string]: unknown;
}

export interface Step {
  name: string;
  type: string;
  description?: string;
  /** Liquid template or boolean; the step is skipped when it renders falsy. */
  if?: string | boolean;
  /** Milliseconds for one attempt. */
  timeout?: number;
  retry?: RetryPolicy;
  /** The kind's configuration with templates unrendered: `with` for most kinds, the step's own fields for control kinds. */
  config: Record<string, unknown>;
  /** Nested step lists of control kinds, by path relative to the config (`then`, `cases.0.steps`, `branches.1.steps`). */
  children: Record<string, Step[]>;
  /** 1-based line of the step in the YAML source. */
  line?: number;
}

export interface WorkflowSettings {
  /** Milliseconds for the whole run. */
  timeout?: number;
  /** Extra attempts for steps that declare no `retry`. */
  retries?: number;
}

export interface Workflow {
  name: string;
  version?: string;
  description?: string;
  /** Model for AI steps that name none (step `model` > this > server default). */
  defaultModel?: string;
  triggerMethods: TriggerMethod[];
  inputs: WorkflowInput[];
  steps: Step[];
  /** Output mapping (templates unrendered); absent = every top-level step's output by name. */
  output?: unknown;
  settings: WorkflowSettings;
}

export interface WorkflowIssue {
  /** Dotted path into the YAML document (`steps.2.with.url`) or `<root>`. */
  field: string;
  message: string;
  code: string;
  line?: number;
}

export type ParseResult = { ok: true; workflow: Workflow } | { ok: false; issues: WorkflowIssue[] };
