// The in-process worker pool over the durable queue (the runs table). It claims runs while it has
// free slots, is woken by new runs, and sleeps (no polling) when there is nothing to do. Leases are
// renewed while runs execute, so a second process sharing the database would not steal live runs.
import type { Clock } from "../../kernel/clock";
import { newId } from "../../kernel/ids";
import type { Logger } from "../../kernel/logger";
import type { RunStore } from "./store";

export const LEASE_MS = 60_000;

/** Why a run's signal was aborted: the user cancelled it, or the server is stopping (resume later). */
export type AbortReason = "cancel" | "shutdown";

export interface PoolDeps {
  store: RunStore;
  clock: Clock;
  log: Logger;
  concurrency: number;
  /** Executes one claimed run to a terminal status (or until the signal aborts for shutdown). */
  execute(runId: string, signal: AbortSignal, info: { resumed: boolean; worker: string }): Promise<void>;
}

export class WorkerPool {
  readonly worker = newId("wrk");
  private active = new Map<string, AbortController>();
  private started = false;
  private stopping = false;
  private pumping = false;
  private heartbeat: ReturnType<typeof setInterval> | undefined;
  private drained: (() => void) | undefined;

  constructor(private deps: PoolDeps) {}

  /** Recovers after a restart (runs a dead process held become claimable) and starts working. */
  start(): void {
    if (this.started) return;
    this.started = true;
    const released = this.deps.store.releaseOrphans(this.worker);
    if (released) this.deps.log.info("recovering interrupted runs", { runs: released });
    this.wake();
  }

  get running(): number {
    return this.active.size;
  }

  /** Called after a run is enqueued (or a slot frees): claims as many runs as there are free slots. */
  wake(): void {
    if (!this.started || this.stopping || this.pumping || this.active.size >= this.deps.concurrency) return;
    this.pumping = true;
    try {
      const free = this.deps.concurrency - this.active.size;
      const claims = this.deps.store.claimMany(free, this.worker, this.deps.clock.now().toISOString(), Date.now(), LEASE_MS);
      for (const c of claims) this.launch(c.id, c.resumed);
    } finally {
      this.pumping = false;
    }
  }

  private launch(runId: string, resumed: boolean): void {
    const ctl = new AbortController();
    this.active.set(runId, ctl);
    this.ensureHeartbeat();
    // Run on a later tick so one wake() claims a whole batch before any run starts executing.
    queueMicrotask(() => {
      this.deps
        .execute(runId, ctl.signal, { resumed, worker: this.worker })
        .catch((err) => this.deps.log.error("run execution crashed", { runId, error: (err as Error)?.stack ?? String(err) }))
        .finally(() => {
          this.active.delete(runId);
          if (this.active.size === 0) {
            clearInterval(this.heartbeat);
            this.heartbeat = undefined;
            this.drained?.();
          }
          this.wake();
        });
    });
  }

  private ensureHeartbeat(): void {
    if (this.heartbeat) return;
    this.heartbeat = setInterval(() => this.deps.store.renewLeases(this.worker, Date.now() + LEASE_MS), LEASE_MS / 3);
    this.heartbeat.unref?.();
  }

  /**
   * Stops claiming, gives running runs half of `graceMs` to finish, then asks the rest to stop at
   * their next step boundary; those stay `running` for the next start to resume.
   */
  async stop(graceMs = 5_000): Promise<void> {
    this.stopping = true;
    const drained = () => (this.active.size === 0 ? Promise.resolve() : new Promise<void>((r) => (this.drained = r)));
    await Promise.race([drained(), Bun.sleep(graceMs / 2)]);
    if (this.active.size > 0) {
      for (const ctl of this.active.values()) ctl.abort("shutdown" satisfies AbortReason);
      await Promise.race([drained(), Bun.sleep(graceMs / 2)]);
    }
    clearInterval(this.heartbeat);
  }
}
