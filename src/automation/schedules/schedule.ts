// A version's live schedules: its valid `{type: cron}` entries with their croner jobs and stable keys.
import { createHash } from "node:crypto";
import type { Cron } from "croner";
import * as v from "valibot";
import { cronOf, cronTriggerSchema, type CronTrigger, expressionError, timeZoneError } from "../workflow/cron";
import { parseWorkflow } from "../workflow/index";

export interface Schedule {
  /** Position among the workflow's triggerMethods. */
  index: number;
  /** Stable across versions for the same expression, time zone and input: ticks continue across activations. */
  key: string;
  trigger: CronTrigger;
  job: Cron;
}

export function scheduleKey(t: CronTrigger): string {
  return createHash("sha256").update(JSON.stringify([t.schedule.trim(), t.timezone, t.input])).digest("hex").slice(0, 16);
}

/** The schedules a version's YAML declares; entries version create would refuse are left out (they never fire). */
export function schedulesIn(yaml: string): Schedule[] {
  const parsed = parseWorkflow(yaml, { internal: true });
  if (!parsed.ok) return [];
  const out: Schedule[] = [];
  parsed.workflow.triggerMethods.forEach((raw, index) => {
    if (raw.type !== "cron") return;
    const r = v.safeParse(cronTriggerSchema, raw);
    if (!r.success || timeZoneError(r.output.timezone) || expressionError(r.output.schedule, r.output.timezone)) return;
    out.push({ index, key: scheduleKey(r.output), trigger: r.output, job: cronOf(r.output.schedule, r.output.timezone) });
  });
  return out;
}

/** Versions are immutable, so their schedules are read and parsed once per process. */
export class ScheduleCache {
  private byVersion = new Map<string, Schedule[]>();
  async get(versionId: string, load: (versionId: string) => Promise<string | undefined>): Promise<Schedule[]> {
    let s = this.byVersion.get(versionId);
    if (!s) this.byVersion.set(versionId, (s = schedulesIn((await load(versionId)) ?? "")));
    return s;
  }
  /** Forgets versions no longer current. */
  keep(versionIds: Set<string>): void {
    for (const id of this.byVersion.keys()) if (!versionIds.has(id)) this.byVersion.delete(id);
  }
}
