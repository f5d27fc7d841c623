// The schedules of an automation's current version with their next fire times and last decided tick.
import { findAutomation } from "../automations/service";
import type { AutomationContext } from "../context";
import type { SchedulesResponse } from "./model";
import { schedulesIn } from "./schedule";

export const NEXT_FIRE_TIMES = 5;

export async function listSchedules(ctx: AutomationContext, tenantId: string, ref: string): Promise<SchedulesResponse> {
  const a = await findAutomation(ctx.storage.automations, tenantId, ref);
  const v = await ctx.storage.automations.current(a);
  const enabled = a.status === "active";
  const store = ctx.storage.schedules;
  const now = ctx.clock.now();
  const schedules = await Promise.all(
    (v ? schedulesIn(v.yaml) : []).map(async (s) => {
      const last = await store.lastTick(a.id, s.key);
      return {
        index: s.index,
        key: s.key,
        expression: s.trigger.schedule,
        timezone: s.trigger.timezone,
        input: s.trigger.input,
        overlap: s.trigger.overlap,
        catchUp: s.trigger.catchUp,
        maxCatchUp: s.trigger.maxCatchUp,
        nextFireTimes: enabled ? s.job.nextRuns(NEXT_FIRE_TIMES, now).map((d) => d.toISOString()) : [],
        lastTick: last ? { scheduledAt: last.scheduledAt, outcome: last.outcome, runId: last.runId, decidedAt: last.decidedAt } : null,
      };
    }),
  );
  return { automationId: a.id, enabled, versionId: v?.id ?? null, schedules };
}
