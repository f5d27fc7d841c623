// Checks a run's input against the workflow's declared `inputs` (the runs API answers 400 with these
// issues), and fills declared defaults.
import type { Workflow, WorkflowInput, WorkflowIssue } from "./workflow-types";

function isObject(v: unknown): v is Record<string, unknown> {
  return v !== null && typeof v === "object" && !Array.isArray(v);
}

/** A file value as the runs API receives it (`$fileId`, `$inline`) or after it resolved it (`$file`). */
function isFileValue(v: unknown): boolean {
  if (!isObject(v)) return false;
  if (typeof v.$fileId === "string" || typeof v.$file === "string") return true;
  const inline = v.$inline;
  return isObject(inline) && typeof inline.base64 === "string";
}

/** Why `value` does not fit the declared input type, or undefined when it does. */
export function typeError(input: Pick<WorkflowInput, "type" | "items">, value: unknown): string | undefined {
  if (input.type === "array" && input.items && Array.isArray(value)) {
    const items = input.items;
    const bad = value.findIndex((x) => typeError({ type: items }, x) !== undefined);
    if (bad === -1) return undefined;
    return items === "file" ? `must be a list of files (element ${bad} is not one)` : `must be a list of ${items} values (element ${bad} is not one)`;
  }
  const ok = {
    string: typeof value === "string",
    number: typeof value === "number" && Number.isFinite(value),
    integer: typeof value === "number" && Number.isInteger(value),
    boolean: typeof value === "boolean",
    object: isObject(value),
    array: Array.isArray(value),
    file: isFileValue(value),
  }[input.type];
  if (ok) return undefined;
  if (input.type === "file") return 'must be a file: {"$fileId": "file_..."}, {"$inline": {filename, mimeType, base64}} or a multipart file part';
  return `must be ${input.type === "integer" || input.type === "array" || input.type === "object" ? "an" : "a"} ${input.type}`;
}

/**
 * Issues with `input` (fields named `input.<name>`); empty when valid. Unknown keys are rejected
 * unless `allowUnknown`. `null` counts as missing for required inputs.
 */
export function validateRunInput(workflow: Workflow, input: unknown, opts: { allowUnknown?: boolean } = {}): WorkflowIssue[] {
  if (!isObject(input)) return [{ field: "input", message: "input must be a JSON object", code: "invalid_type" }];
  const issues: WorkflowIssue[] = [];
  const declared = new Map(workflow.inputs.map((i) => [i.name, i]));
  for (const def of workflow.inputs) {
    const value = input[def.name];
    if (value === undefined || value === null) {
      if (def.required && def.default === undefined) issues.push({ field: `input.${def.name}`, message: `input.${def.name} is required`, code: "required" });
      continue;
    }
    const err = typeError(def, value);
    if (err) issues.push({ field: `input.${def.name}`, message: `input.${def.name} ${err}`, code: "invalid_type" });
    else if (def.enum && !def.enum.includes(value as string | number)) {
      issues.push({ field: `input.${def.name}`, message: `input.${def.name} must be one of ${def.enum.map((x) => JSON.stringify(x)).join(", ")}`, code: "invalid_value" });
    }
  }
  if (!opts.allowUnknown) {
    for (const key of Object.keys(input)) {
      if (!declared.has(key)) issues.push({ field: `input.${key}`, message: `input.${key} is not an input of workflow ${workflow.name}`, code: "unknown_field" });
    }
  }
  return issues;
}

/** `input` with declared defaults filled in for absent values. */
export function applyInputDefaults(workflow: Workflow, input: Record<string, unknown>): Record<string, unknown> {
  const out = { ...input };
  for (const def of workflow.inputs) {
    if ((out[def.name] === undefined || out[def.name] === null) && def.default !== undefined) out[def.name] = structuredClone(def.default);
  }
  return out;
}
