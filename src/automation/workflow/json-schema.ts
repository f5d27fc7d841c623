// JSON Schema (draft 2020-12) of a workflow's inputs and output, for automation detail responses.
import { isTemplate } from "../engine/template";
import type { InputType, ItemType, Workflow } from "../engine/workflow-types";

type JsonSchema = Record<string, unknown>;

/** How a file input is passed on the wire: an uploaded file id or inline base64. */
const fileSchema: JsonSchema = {
  type: "object",
  format: "file",
  description: 'A file: {"$fileId": "file_..."} or {"$inline": {filename, mimeType, base64}}',
  properties: {
    $fileId: { type: "string" },
    $inline: {
      type: "object",
      properties: { filename: { type: "string" }, mimeType: { type: "string" }, base64: { type: "string" } },
      required: ["filename", "base64"],
    },
  },
};

function typeSchema(type: InputType | ItemType): JsonSchema {
  if (type === "file") return { ...fileSchema };
  return { type };
}

export function inputJsonSchema(workflow: Workflow): JsonSchema {
  const properties: Record<string, JsonSchema> = {};
  for (const input of workflow.inputs) {
    properties[input.name] = {
      ...typeSchema(input.type),
      ...(input.type === "array" && input.items ? { items: typeSchema(input.items) } : {}),
      ...(input.description !== undefined ? { description: input.description } : {}),
      ...(input.default !== undefined ? { default: input.default } : {}),
      ...(input.enum ? { enum: input.enum } : {}),
    };
  }
  const required = workflow.inputs.filter((i) => i.required).map((i) => i.name);
  return { $schema: "https://json-schema.org/draft/2020-12/schema", type: "object", properties, required, additionalProperties: false };
}

/** A literal's schema; a template's type is only known at run time, so it gets the empty schema. */
function valueSchema(value: unknown): JsonSchema {
  if (typeof value === "string") return isTemplate(value) ? {} : { type: "string" };
  if (typeof value === "number") return { type: Number.isInteger(value) ? "integer" : "number" };
  if (typeof value === "boolean") return { type: "boolean" };
  if (value === null) return { type: "null" };
  if (Array.isArray(value)) return { type: "array" };
  const properties: Record<string, JsonSchema> = {};
  for (const [k, v] of Object.entries(value as Record<string, unknown>)) properties[k] = valueSchema(v);
  return { type: "object", properties, required: Object.keys(properties) };
}

export function outputJsonSchema(workflow: Workflow): JsonSchema {
  const base = { $schema: "https://json-schema.org/draft/2020-12/schema" };
  if (workflow.output === undefined) {
    // Without a mapping the output is every top-level step's output by name.
    return { ...base, type: "object", properties: Object.fromEntries(workflow.steps.map((s) => [s.name, {}])) };
  }
  return { ...base, ...valueSchema(workflow.output) };
}
