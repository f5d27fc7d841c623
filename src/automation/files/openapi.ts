// OpenAPI details of the files routes (their bodies are read by hand, so the shapes are declared here).
import { toJsonSchema } from "@valibot/to-json-schema";
import type { DocumentDecoration } from "elysia";
import { envelopeSchema } from "../http/envelope";
import { CompleteUploadBody, CreateUploadBody } from "./model";

type Schema = Record<string, unknown>;
const str = { type: "string" };
const nullable = (s: Schema) => ({ anyOf: [s, { type: "null" }] });
const json = (schema: Schema) => ({ content: { "application/json": { schema } } });
const errors = Object.fromEntries(
  ["400", "401", "403", "404", "409", "413", "415"].map((code) => [code, { description: "Error envelope", ...json(envelopeSchema) }]),
);
const ok = (description: string, schema: Schema, code = "200") => ({ [code]: { description, ...json(schema) }, ...errors });
const tags = ["Files"];

const file: Schema = {
  type: "object",
  required: ["id", "filename", "contentType", "size", "purpose", "createdAt"],
  properties: { id: str, filename: str, contentType: str, size: { type: "integer" }, purpose: nullable(str), createdAt: { type: "string", format: "date-time" } },
};
const session: Schema = {
  type: "object",
  properties: {
    uploadId: str,
    fileId: str,
    status: { type: "string", enum: ["pending", "uploaded", "completed", "aborted"] },
    filename: str,
    contentType: str,
    size: { type: "integer" },
    purpose: nullable(str),
    createdAt: str,
    expiresAt: str,
    completedAt: nullable(str),
  },
};
const negotiation: Schema = {
  oneOf: [
    {
      type: "object",
      required: ["transport", "uploadId", "fileId", "url", "method", "headers", "expiresAt", "maxFileSizeBytes"],
      properties: { transport: { const: "presigned-put" }, uploadId: str, fileId: str, url: str, method: { const: "PUT" }, headers: { type: "object" }, expiresAt: str, maxFileSizeBytes: { type: "integer" } },
    },
    { type: "object", required: ["transport", "url", "maxFileSizeBytes"], properties: { transport: { const: "multipart" }, url: str, maxFileSizeBytes: { type: "integer" } } },
    {
      type: "object",
      description: "S3 blob storage only, when asked for: PUT each part to its URL, then POST {parts: [{partNumber, etag}], sha256?} to completeUrl",
      required: ["transport", "uploadId", "fileId", "partSize", "parts", "method", "headers", "completeUrl", "expiresAt", "maxFileSizeBytes"],
      properties: {
        transport: { const: "presigned-multipart" },
        uploadId: str,
        fileId: str,
        partSize: { type: "integer" },
        parts: { type: "array", items: { type: "object", required: ["partNumber", "url"], properties: { partNumber: { type: "integer" }, url: str } } },
        method: { const: "PUT" },
        headers: { type: "object" },
        completeUrl: str,
        expiresAt: str,
        maxFileSizeBytes: { type: "integer" },
      },
    },
  ],
};
const id = (name: string) => [{ name, in: "path" as const, required: true, schema: str }];

const raw = {
  upload: {
    summary: "Upload file (multipart, streamed)",
    tags,
    requestBody: {
      required: true,
      content: {
        "multipart/form-data": {
          schema: { type: "object", required: ["file"], properties: { file: { type: "string", format: "binary" }, purpose: { type: "string", description: "run-input files expire after 24 h" } } },
        },
      },
    },
    responses: ok("Uploaded file", file),
  },
  get: { summary: "Get file metadata", tags, parameters: id("id"), responses: ok("File", file) },
  list: {
    summary: "List files, newest first (this server's addition)",
    tags,
    parameters: [
      { name: "purpose", in: "query" as const, required: false, schema: str, description: "only files of this purpose" },
      { name: "limit", in: "query" as const, required: false, schema: { type: "integer", minimum: 1, maximum: 100, default: 50 } },
      { name: "offset", in: "query" as const, required: false, schema: { type: "integer", minimum: 0, default: 0 } },
    ],
    responses: ok("Page of files", {
      type: "object",
      required: ["data", "total", "limit", "offset"],
      properties: { data: { type: "array", items: file }, total: { type: "integer" }, limit: { type: "integer" }, offset: { type: "integer" } },
    }),
  },
  content: {
    summary: "Download file content (Range supported)",
    tags,
    parameters: [...id("id"), { name: "range", in: "header" as const, required: false, schema: str }],
    responses: { "200": { description: "The bytes" }, "206": { description: "A byte range" }, "416": { description: "Range not satisfiable", ...json(envelopeSchema) }, ...errors },
  },
  delete: { summary: "Delete file", tags, parameters: id("id"), responses: ok("Deleted", { type: "object", required: ["deleted"], properties: { deleted: { const: true } } }) },
  createUpload: {
    summary: "Prepare file upload (transport negotiation)",
    tags,
    requestBody: { required: true, ...json(toJsonSchema(CreateUploadBody, { errorMode: "ignore" }) as Schema) },
    responses: ok("How to send the bytes", negotiation),
  },
  getUpload: { summary: "Get file upload session", tags, parameters: id("uploadId"), responses: ok("Session", session) },
  complete: {
    summary: "Complete file upload (safe to retry)",
    description: "No body for presigned-put. presigned-multipart sends its parts' ETags; either may send the sha256 it computed, checked before the file exists.",
    tags,
    parameters: id("uploadId"),
    requestBody: { required: false, ...json(toJsonSchema(CompleteUploadBody, { errorMode: "ignore" }) as Schema) },
    responses: ok("The file", file),
  },
  abort: { summary: "Abort file upload (a completed file is never deleted)", tags, parameters: id("uploadId"), responses: ok("Session", session) },
  put: {
    summary: "Receive upload bytes (signed URL; no API key)",
    tags,
    security: [],
    parameters: [...id("uploadId"), { name: "expires", in: "query" as const, required: true, schema: str }, { name: "signature", in: "query" as const, required: true, schema: str }],
    requestBody: { required: true, content: { "application/octet-stream": { schema: { type: "string", format: "binary" } } } },
    responses: ok("Bytes received", session),
  },
};

export const docs = raw as unknown as Record<keyof typeof raw, DocumentDecoration>;
