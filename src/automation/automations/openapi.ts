// OpenAPI details of the automations routes: request bodies from the valibot schemas, responses in the
// reference API's shapes, and the shared error envelope.
import { toJsonSchema } from "@valibot/to-json-schema";
import type { DocumentDecoration } from "elysia";
import type { GenericSchema } from "valibot";
import { envelopeSchema } from "../http/envelope";
import { CreateAutomationBody, CreateVersionBody, RestoreBody, UpdateAutomationBody, ValidateBody } from "./model";

type Schema = Record<string, unknown>;
const str = { type: "string" };
const nullable = (s: Schema) => ({ anyOf: [s, { type: "null" }] });

const triggers: Schema = {
  type: "object",
  required: ["api", "email", "manual", "cron"],
  properties: { api: { type: "boolean" }, email: { type: "boolean" }, manual: { type: "boolean" }, cron: { type: "boolean" } },
};

const summary: Schema = {
  type: "object",
  required: ["id", "type", "slug", "name", "description", "status", "version", "triggers", "createdAt", "updatedAt"],
  properties: {
    id: str,
    type: { type: "string", enum: ["workflow", "agent"] },
    slug: str,
    name: nullable(str),
    description: nullable(str),
    status: str,
    version: nullable(str),
    triggers,
    implementationAvailable: { type: "boolean", description: "Only with expand=implementationAvailable." },
    createdAt: { type: "string", format: "date-time" },
    updatedAt: { type: "string", format: "date-time" },
  },
};

const detail: Schema = {
  ...summary,
  required: [...(summary.required as string[]), "inputSchema", "outputSchema"],
  properties: {
    ...(summary.properties as Schema),
    inputSchema: nullable({ type: "object" }),
    outputSchema: nullable({ type: "object" }),
    inboundEmail: nullable({
      type: "object",
      description: "Only with expand=inboundEmail (not in the hosted API): the address whose mail starts runs (null without --mail-domain) and the sender whitelist; null when the active version has no e-mail trigger.",
      required: ["address", "whitelist"],
      properties: {
        address: nullable(str),
        whitelist: { type: "object", required: ["domains", "emails"], properties: { domains: { type: "array", items: str }, emails: { type: "array", items: str } } },
      },
    }),
  },
};

const version: Schema = {
  type: "object",
  required: ["id", "automationId", "version", "sourceRef", "isCurrent", "createdAt"],
  properties: { id: str, automationId: str, version: nullable(str), sourceRef: nullable(str), isCurrent: { type: "boolean" }, createdAt: { type: "string", format: "date-time" } },
};

const page = (item: Schema): Schema => ({
  type: "object",
  required: ["data", "total", "limit", "offset"],
  properties: { data: { type: "array", items: item }, total: { type: "integer" }, limit: { type: "integer" }, offset: { type: "integer" } },
});

export const json = (schema: Schema) => ({ content: { "application/json": { schema } } });
const errors = Object.fromEntries(
  ["400", "401", "403", "404", "409", "413", "415"].map((code) => [code, { description: "Error envelope", ...json(envelopeSchema) }]),
);
const body = (s: GenericSchema) => ({ required: true, ...json(toJsonSchema(s, { errorMode: "ignore" }) as Schema) });
export const ok = (code: string, description: string, schema: Schema) => ({ [code]: { description, ...json(schema) }, ...errors });

export const idParam = {
  name: "id",
  in: "path" as const,
  required: true,
  schema: { type: "string" },
  description: "wf_/agt_ id, or typed target workflows.<slug or id> / agents.<slug or id>",
};
const expandParam = {
  name: "expand",
  in: "query" as const,
  schema: { type: "string", enum: ["implementationAvailable"] },
  description: "implementationAvailable adds that flag (not part of the default public shape)",
};
const pageParams = [
  { name: "limit", in: "query" as const, schema: { type: "integer", minimum: 1, maximum: 100, default: 50 } },
  { name: "offset", in: "query" as const, schema: { type: "integer", minimum: 0, maximum: Number.MAX_SAFE_INTEGER, default: 0 } },
];
const tags = ["Automations"];

const raw = {
  create: { summary: "Create a workflow from YAML", tags, requestBody: body(CreateAutomationBody), responses: ok("201", "Created workflow", detail) },
  list: {
    summary: "List automations",
    tags,
    parameters: [
      { name: "search", in: "query" as const, schema: { type: "string" }, description: "substring of slug, name or description" },
      { name: "type", in: "query" as const, schema: { type: "string", enum: ["workflow", "agent"] } },
      ...pageParams,
      expandParam,
    ],
    responses: ok("200", "Page of automations", page(summary)),
  },
  get: {
    summary: "Get automation by id or alias",
    tags,
    parameters: [
      idParam,
      {
        ...expandParam,
        schema: { type: "string", enum: ["implementationAvailable", "inboundEmail"] },
        description: "comma list: implementationAvailable adds that flag, inboundEmail the inbound e-mail address and whitelist (neither is part of the default public shape)",
      },
    ],
    responses: ok("200", "Automation", detail) },
  update: {
    summary: "Enable or disable an automation (this server's addition: a disabled automation's schedules fire nothing)",
    tags,
    parameters: [idParam],
    requestBody: body(UpdateAutomationBody),
    responses: ok("200", "Automation", detail),
  },
  triggers: {
    summary: "Get automation triggers",
    tags,
    parameters: [idParam],
    responses: ok("200", "Trigger state", { type: "object", required: ["automationId", "type", "triggers"], properties: { automationId: str, type: str, triggers } }),
  },
  validate: {
    summary: "Validate workflow YAML without storing anything (this server's addition)",
    description:
      "Checks the YAML as creating a workflow would (no automation) or as a new version of `automation` would: every issue with the field and 1-based line it sits on. Answers 200 with valid false rather than 400, since the YAML is the subject, not the request.",
    tags,
    requestBody: body(ValidateBody),
    responses: ok("200", "The validation result", {
      type: "object",
      required: ["valid", "issues", "workflow"],
      properties: {
        valid: { type: "boolean" },
        issues: { type: "array", items: { type: "object", required: ["field", "message", "code"], properties: { field: str, message: str, code: str, line: { type: "integer", minimum: 1 } } } },
        workflow: nullable({
          type: "object",
          required: ["name", "version", "description", "triggers", "inputSchema"],
          properties: { name: str, version: nullable(str), description: nullable(str), triggers, inputSchema: nullable({ type: "object" }) },
        }),
      },
    }),
  },
  stepKinds: {
    summary: "The step kinds workflow YAML may use, with their config keys (this server's addition)",
    tags,
    responses: ok("200", "Step kinds", {
      type: "object",
      required: ["data"],
      properties: {
        data: {
          type: "array",
          items: {
            type: "object",
            required: ["type", "configAt", "keys"],
            properties: {
              type: str,
              configAt: { type: "string", enum: ["with", "step"] },
              keys: { type: "array", items: { type: "object", required: ["name", "required"], properties: { name: str, required: { type: "boolean" } } } },
            },
          },
        },
      },
    }),
  },
  versions: {
    summary: "List versions",
    tags,
    parameters: [
      idParam,
      ...pageParams,
      { name: "expand", in: "query" as const, schema: { type: "string", enum: ["message"] }, description: "message adds each version's message (not part of the default public shape)" },
    ],
    responses: ok("200", "Page of versions", page({ ...version, properties: { ...(version.properties as Record<string, unknown>), message: nullable(str) } })),
  },
  version: {
    summary: "One version with its YAML source (this server's addition)",
    tags,
    parameters: [idParam, { name: "versionId", in: "path" as const, required: true, schema: { type: "string" } }],
    responses: ok("200", "The version, its message and its YAML", { ...version, properties: { ...(version.properties as Record<string, unknown>), message: nullable(str), yaml: { type: "string" } } }),
  },
  createVersion: { summary: "Create a version (yaml or historyId)", tags, parameters: [idParam], requestBody: body(CreateVersionBody), responses: ok("201", "Created version", version) },
  promote: { summary: "Make a tagged version current", tags, parameters: [idParam], responses: ok("200", "Promoted version", version) },
  restore: {
    summary: "Restore a snapshot as a new untagged current version",
    tags,
    parameters: [idParam],
    requestBody: { ...body(RestoreBody), required: false },
    responses: ok("201", "Restored (new) version", version),
  },
};

// Plain JSON Schema objects; Elysia's OpenAPI typings want narrower literal types than JSON gives.
export const docs = raw as unknown as Record<keyof typeof raw, DocumentDecoration>;
