// The scheduler loop of a serving process: each pass reads the live schedules from the database and
// decides every tick that has come due. Exactly-once is the database's job (the tick is claimed in
// the transaction inserting its run); this loop only has to be prompt and to apply the policies.
import { DomainError } from "../../kernel/errors";
import type { AutomationContext } from "../context";
import { runsOf, type RunService } from "../runs/service";
import { ScheduleCache, type Schedule } from "./schedule";
import { type LiveAutomation, type ScheduleStore, type TickKey, TickTaken } from "./store";

/** On-time ticks one schedule may start in one pass (a process that stalled for hours does not flood the queue). */
const MAX_PER_PASS = 100;
/** The loop looks for new or changed schedules at least this often. */
const POLL_MS = 1_000;

export class Scheduler {
  /** Ticks before this instant passed while this process was not running: the catch-up policy decides them. */
  readonly startedAt: number;
  private readonly cache = new ScheduleCache();
  private timer: ReturnType<typeof setTimeout> | undefined;
  private inFlight: Promise<unknown> | undefined;
  private stopped = false;

  constructor(
    private readonly ctx: AutomationContext,
    readonly store: ScheduleStore = ctx.storage.schedules,
    private readonly runs: RunService = runsOf(ctx),
  ) {
    this.startedAt = ctx.clock.now().getTime();
  }

  /** Runs passes until stop(): right after each due tick, and every second for new versions. */
  start(): void {
    const loop = async () => {
      if (this.stopped) return;
      let next = POLL_MS;
      try {
        next = await (this.inFlight = this.pass());
      } catch (err) {
        this.ctx.log.error("scheduler pass failed", { error: (err as Error)?.stack ?? String(err) });
      } finally {
        this.inFlight = undefined;
      }
      if (!this.stopped) this.timer = setTimeout(loop, next);
    };
    this.timer = setTimeout(loop, 0);
  }

  /** Stops the loop; resolves once a pass in flight has finished (before the database closes). */
  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.timer);
    await this.inFlight?.catch(() => {});
  }

  /** Decides every due tick of every live schedule; returns how long to wait before the next pass (ms). */
  async pass(): Promise<number> {
    const now = this.ctx.clock.now().getTime();
    const live = await this.store.live();
    this.cache.keep(new Set(live.map((a) => a.versionId)));
    let soonest = now + POLL_MS;
    for (const a of live) {
      for (const s of await this.cache.get(a.versionId, (id) => this.store.yaml(id))) {
        // One schedule failing (a busy database, a bad row) must not hold up the others.
        await this.decide(a, s, now).catch((err) =>
          this.ctx.log.error("schedule tick failed", { automationId: a.automationId, schedule: s.index, error: (err as Error)?.stack ?? String(err) }),
        );
        const next = s.job.nextRun(new Date(now))?.getTime();
        if (next !== undefined && next < soonest) soonest = next;
      }
    }
    return Math.max(0, soonest - this.ctx.clock.now().getTime()) + 5;
  }

  private async decide(a: LiveAutomation, s: Schedule, now: number): Promise<void> {
    const last = await this.store.lastTick(a.automationId, s.key);
    // Due ticks are those after both the activation and the last decided tick.
    let cursor = Math.max(Date.parse(a.since), last ? Date.parse(last.scheduledAt) : -Infinity);
    if (cursor < this.startedAt && this.startedAt <= now) {
      const want = s.trigger.catchUp === "all" ? s.trigger.maxCatchUp : 1;
      const missed = s.job
        .previousRuns(want, new Date(this.startedAt))
        .map((d) => d.getTime())
        .filter((t) => t > cursor && t < this.startedAt)
        .reverse();
      if (missed.length > 0) {
        const latest = missed[missed.length - 1];
        if (s.trigger.catchUp === "none") await this.store.skip(this.tick(a, s, latest), a.tenantId, "skipped_missed", this.iso());
        else for (const t of missed) await this.fire(a, s, t);
        cursor = latest;
      }
    }
    let t = s.job.nextRun(new Date(Math.max(cursor, this.startedAt - 1)))?.getTime();
    for (let n = 0; t !== undefined && t <= now && n < MAX_PER_PASS; n++) {
      await this.fire(a, s, t);
      t = s.job.nextRun(new Date(t))?.getTime();
    }
  }

  private tick(a: LiveAutomation, s: Schedule, at: number): TickKey {
    return { automationId: a.automationId, scheduleKey: s.key, scheduledAt: new Date(at).toISOString() };
  }

  private iso(): string {
    return this.ctx.clock.now().toISOString();
  }

  /** Starts the tick's run (claiming the tick in its transaction), or records why it starts none. */
  private async fire(a: LiveAutomation, s: Schedule, at: number): Promise<void> {
    const tick = this.tick(a, s, at);
    if (s.trigger.overlap === "skip" && (await this.store.previousRunOpen(a.automationId, s.key))) {
      await this.store.skip(tick, a.tenantId, "skipped_overlap", this.iso());
      return;
    }
    try {
      await this.runs.start(
        { tenantId: a.tenantId, keyId: "" },
        {
          target: a.automationId,
          input: structuredClone(s.trigger.input),
          trigger: "cron",
          metadata: { schedule: { index: s.index, expression: s.trigger.schedule, timezone: s.trigger.timezone, scheduledAt: tick.scheduledAt } },
          tick: { key: tick, at: this.iso() },
        },
      );
    } catch (err) {
      if (err instanceof TickTaken) return;
      // A run the rules refuse (its input no longer fits, the automation went away) would be refused
      // on every pass: record the tick so the schedule moves on. Anything else is retried next pass.
      if (err instanceof DomainError) {
        this.ctx.log.warn("scheduled run refused", { automationId: a.automationId, scheduledAt: tick.scheduledAt, error: err.message });
        await this.store.skip(tick, a.tenantId, "refused", this.iso());
        return;
      }
      throw err;
    }
  }
}

const schedulers = new WeakMap<AutomationContext, Scheduler>();

/** The one scheduler of a context (the server starts and stops it; the schedules endpoint reads its store). */
export function schedulerOf(ctx: AutomationContext): Scheduler {
  let s = schedulers.get(ctx);
  if (!s) schedulers.set(ctx, (s = new Scheduler(ctx)));
  return s;
}
