// Wire shapes of the agents feature: the sync call's (empty) body and its answer.
import * as v from "valibot";

/** The reference sends no body; `{}` is accepted too, anything else is refused. */
export const SyncBody = v.strictObject({});

export const syncResponseSchema = {
  type: "object",
  required: ["automation", "release", "warnings"],
  properties: {
    automation: {
      type: "object",
      required: ["id", "type", "slug", "status", "updatedAt"],
      properties: {
        id: { type: "string" },
        type: { type: "string", enum: ["agent", "workflow"] },
        slug: { type: "string" },
        status: { type: "string", enum: ["active", "archived"] },
        updatedAt: { type: "string", format: "date-time" },
      },
    },
    release: {
      type: "object",
      required: ["version", "tag", "commit"],
      properties: { version: { type: "string" }, tag: { type: "string" }, commit: { type: "string" } },
    },
    warnings: { type: "array", items: { type: "string" } },
  },
} as const;
