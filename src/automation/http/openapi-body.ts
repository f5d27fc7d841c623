// OpenAPI request bodies from valibot schemas, for routes that read their bodies by hand.
import { toJsonSchema } from "@valibot/to-json-schema";
import type { GenericSchema } from "valibot";

/** `requestBody` for a JSON body, optionally also accepted as multipart with a `file` part and text fields. */
export function requestBody(schema: GenericSchema, multipartFields: string[] = []) {
  const content: Record<string, { schema: Record<string, unknown> }> = {
    "application/json": { schema: toJsonSchema(schema, { errorMode: "ignore" }) as Record<string, unknown> },
  };
  if (multipartFields.length) {
    content["multipart/form-data"] = {
      schema: {
        type: "object",
        required: ["file"],
        properties: { file: { type: "string", format: "binary" }, ...Object.fromEntries(multipartFields.map((f) => [f, { type: "string" }])) },
      },
    };
  }
  return { required: true, content };
}
