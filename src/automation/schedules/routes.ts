// GET /automations/{id}/schedules (this server's addition; needs automations:read).
import { Elysia, type DocumentDecoration } from "elysia";
import { idParam, ok } from "../automations/openapi";
import type { AutomationContext } from "../context";
import { authPlugin, requireScope } from "../tenancy/auth";
import { listSchedules, NEXT_FIRE_TIMES } from "./service";

const str = { type: "string" };
const nullable = (s: Record<string, unknown>) => ({ anyOf: [s, { type: "null" }] });
const schedule = {
  type: "object",
  required: ["index", "key", "expression", "timezone", "input", "overlap", "catchUp", "maxCatchUp", "nextFireTimes", "lastTick"],
  properties: {
    index: { type: "integer", description: "position among the workflow's triggerMethods" },
    key: { ...str, description: "stable id of the schedule (expression, time zone, input): ticks continue across versions" },
    expression: str,
    timezone: str,
    input: { type: "object" },
    overlap: { type: "string", enum: ["skip", "allow"] },
    catchUp: { type: "string", enum: ["latest", "none", "all"] },
    maxCatchUp: { type: "integer" },
    nextFireTimes: { type: "array", items: { ...str, format: "date-time" }, description: `the next ${NEXT_FIRE_TIMES}; empty while disabled` },
    lastTick: nullable({
      type: "object",
      required: ["scheduledAt", "outcome", "runId", "decidedAt"],
      properties: {
        scheduledAt: { ...str, format: "date-time" },
        outcome: { type: "string", enum: ["started", "skipped_overlap", "skipped_missed", "refused"] },
        runId: nullable(str),
        decidedAt: { ...str, format: "date-time" },
      },
    }),
  },
};

const detail = {
  summary: "List an automation's schedules (this server's addition)",
  description: "The current version's cron triggers with their next fire times and the last tick decided (its run id, or why it started none).",
  tags: ["Automations"],
  parameters: [idParam],
  responses: ok("200", "Schedules", {
    type: "object",
    required: ["automationId", "enabled", "versionId", "schedules"],
    properties: { automationId: str, enabled: { type: "boolean" }, versionId: nullable(str), schedules: { type: "array", items: schedule } },
  }),
} as unknown as DocumentDecoration;

export const scheduleRoutes = (ctx: AutomationContext) =>
  new Elysia().use(authPlugin(ctx)).get(
    "/automations/:id/schedules",
    ({ auth, params }) => {
      requireScope(auth, "automations:read");
      return listSchedules(ctx, auth.tenantId, params.id);
    },
    { detail },
  );
