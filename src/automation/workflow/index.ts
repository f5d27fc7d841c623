// The workflow definition: YAML parsing + validation, its types, and the JSON Schemas derived from it.
export { parseWorkflow } from "./parse";
export { inputJsonSchema, outputJsonSchema } from "./json-schema";
export { applyInputDefaults, validateRunInput } from "../engine/workflow-input";
export type { InputType, ParseResult, RetryPolicy, Step, TriggerMethod, Workflow, WorkflowInput, WorkflowIssue, WorkflowSettings } from "../engine/workflow-types";
