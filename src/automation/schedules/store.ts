// What the scheduler and the schedules endpoint need from storage, behind one async interface so a
// PostgreSQL implementation can stand beside the SQLite one (db/sqlite/schedules.ts) without touching callers.

/** An automation whose current version may declare schedules, as the scheduler sees it. */
export interface LiveAutomation {
  automationId: string;
  tenantId: string;
  versionId: string;
  /** When the current version became current (or the automation was enabled): ticks at or before it are never due. */
  since: string;
}

export interface TickKey {
  automationId: string;
  scheduleKey: string;
  /** ISO instant of the tick. */
  scheduledAt: string;
}

export type TickOutcome = "started" | "skipped_overlap" | "skipped_missed" | "refused";

export interface TickRow extends TickKey {
  outcome: TickOutcome;
  runId: string | null;
  decidedAt: string;
}

/** Thrown by a claim when the tick was already decided (by this or another instance). */
export class TickTaken extends Error {
  constructor(readonly tick: TickKey) {
    super(`tick ${tick.scheduledAt} of ${tick.automationId}/${tick.scheduleKey} already decided`);
  }
}

export interface ScheduleStore {
  /** Active automations whose current version declares a cron trigger. */
  live(): Promise<LiveAutomation[]>;
  /** A version's YAML (versions are immutable: callers cache what they parse from it). */
  yaml(versionId: string): Promise<string | undefined>;
  /** The latest decided tick of one schedule. */
  lastTick(automationId: string, scheduleKey: string): Promise<TickRow | undefined>;
  /** Whether the run of the schedule's latest started tick has not finished yet. */
  previousRunOpen(automationId: string, scheduleKey: string): Promise<boolean>;
  /** Records a tick that starts no run; false when it was already decided. */
  skip(tick: TickKey, tenantId: string, outcome: Exclude<TickOutcome, "started">, at: string): Promise<boolean>;
  // A tick a run starts is claimed by the run insert itself, in its transaction (RunInsertOptions.tick,
  // runs/store.ts): the tick and its run commit or roll back together.
}
