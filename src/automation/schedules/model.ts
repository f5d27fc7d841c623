// The wire shape of GET /v1/automations/{id}/schedules (this server's addition).
import type { TickOutcome } from "./store";

export interface ScheduleView {
  /** Position among the workflow's triggerMethods. */
  index: number;
  key: string;
  expression: string;
  timezone: string;
  input: Record<string, unknown>;
  overlap: "skip" | "allow";
  catchUp: "latest" | "none" | "all";
  maxCatchUp: number;
  /** The next fire times (ISO, UTC); empty while the automation is disabled. */
  nextFireTimes: string[];
  lastTick: { scheduledAt: string; outcome: TickOutcome; runId: string | null; decidedAt: string } | null;
}

export interface SchedulesResponse {
  automationId: string;
  /** False when the automation is disabled: nothing fires. */
  enabled: boolean;
  versionId: string | null;
  schedules: ScheduleView[];
}
