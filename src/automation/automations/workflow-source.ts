// The one place automations meet the workflow parser: YAML in, the facts a version row keeps out
// (slug, name, triggers, JSON Schemas), or a 400 whose issues name the line and field.
import { Invalid, TooLarge } from "../../kernel/errors";
import { inputJsonSchema, outputJsonSchema, parseWorkflow, type Workflow } from "../workflow/index";
import { MAX_YAML_BYTES, type Triggers } from "./model";

export interface ParsedSource {
  slug: string;
  name: string;
  description: string | null;
  version?: string;
  triggers: Triggers;
  inputSchema: Record<string, unknown> | null;
  outputSchema: Record<string, unknown> | null;
  workflow: Workflow;
}

export function parseSource(yaml: string): ParsedSource {
  if (Buffer.byteLength(yaml, "utf8") > MAX_YAML_BYTES) {
    throw TooLarge(`yaml is larger than ${MAX_YAML_BYTES} bytes (1 MiB)`, { field: "yaml", code: "yaml_too_large" });
  }
  const r = parseWorkflow(yaml);
  if (!r.ok) {
    const issues = r.issues.map((i) => ({
      field: i.field === "<root>" ? "yaml" : `yaml.${i.field}`,
      message: i.line && !i.message.includes(`line ${i.line}`) ? `line ${i.line}: ${i.message}` : i.message,
      code: i.code,
    }));
    throw Invalid(issues[0]?.message ?? "invalid workflow YAML", { issues });
  }
  const w = r.workflow;
  const types = new Set(w.triggerMethods.map((t) => t.type));
  return {
    slug: w.name,
    name: w.name,
    description: w.description ?? null,
    version: w.version,
    triggers: { api: types.has("api"), email: types.has("email"), manual: types.has("manual"), cron: types.has("cron") },
    inputSchema: inputJsonSchema(w),
    outputSchema: outputJsonSchema(w),
    workflow: w,
  };
}
