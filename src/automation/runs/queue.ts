// The in-process worker pool over the durable queue (the runs table). It claims runs while it has
// free slots, is woken by new runs, and sleeps (no polling) when there is nothing to do. Leases are
// renewed while runs execute, so a second process sharing the database would not steal live runs.
import type { Clock } from "../../kernel/clock";
import { newId } from "../../kernel/ids";
import type { Logger } from "../../kernel/logger";
import type { Claim } from "../db/runs-model";
import type { RunStore } from "../db/storage";
import type { AbortReason, RunSignals } from "./signals";

export const LEASE_MS = 60_000;

/** Why a run's signal was aborted: the user cancelled it, or the server is stopping (resume later). */
export interface PoolDeps {
  store: RunStore;
  clock: Clock;
  log: Logger;
  concurrency: number;
  /** Executes one claimed run to a terminal status (or until its signals stop it for a shutdown). */
  execute(runId: string, signals: RunSignals, info: { claim: Claim; worker: string }): Promise<void>;
}

export class WorkerPool {
  readonly worker = newId("wrk");
  private active = new Map<string, { stop: AbortController; interrupt: AbortController }>();
  private started = false;
  private stopping = false;
  private pumping = false;
  /** A wake() arrived while a claim was in flight: claim again when it returns. */
  private rewake = false;
  /**
   * Runs may be waiting: a run was queued since the last claim, or the last claim filled every free
   * slot. A freed slot claims only then, so an idle queue costs no query per finished run.
   */
  private backlog = true;
  private heartbeat: ReturnType<typeof setInterval> | undefined;
  private drained: (() => void) | undefined;

  constructor(private deps: PoolDeps) {}

  /**
   * Recovers after a restart (runs a dead process held become claimable) and starts working; resolves
   * once the first claims are made (the runs claimed are executing).
   */
  async start(): Promise<void> {
    if (this.started) return;
    this.started = true;
    const released = await this.deps.store.releaseOrphans(this.worker);
    if (released) this.deps.log.info("recovering interrupted runs", { runs: released });
    await this.wake();
  }

  get running(): number {
    return this.active.size;
  }

  /** Called after a run is enqueued: claims as many runs as there are free slots. */
  wake(): Promise<void> {
    this.backlog = true;
    return this.pump();
  }

  private pump(): Promise<void> {
    if (this.pumping) {
      this.rewake = true;
      return Promise.resolve();
    }
    if (!this.started || this.stopping || !this.backlog || this.active.size >= this.deps.concurrency) return Promise.resolve();
    this.pumping = true;
    this.rewake = false;
    const free = this.deps.concurrency - this.active.size;
    return this.deps.store
      .claimMany(free, this.worker, this.deps.clock.now().toISOString(), Date.now(), LEASE_MS)
      .then(
        (claims) => {
          if (claims.length < free && !this.rewake) this.backlog = false;
          for (const c of claims) this.launch(c);
        },
        (err) => this.deps.log.error("claiming runs failed", { error: (err as Error)?.stack ?? String(err) }),
      )
      .then(() => {
        this.pumping = false;
        if (this.rewake) void this.pump(); // new runs or free slots meanwhile
      });
  }

  private launch(claim: Claim): void {
    const runId = claim.id;
    const ctl = { stop: new AbortController(), interrupt: new AbortController() };
    this.active.set(runId, ctl);
    if (this.stopping) ctl.stop.abort("shutdown" satisfies AbortReason); // claimed while stop() began
    this.ensureHeartbeat();
    // Run on a later tick so one wake() claims a whole batch before any run starts executing.
    queueMicrotask(() => {
      this.deps
        .execute(runId, { stop: ctl.stop.signal, interrupt: ctl.interrupt.signal }, { claim, worker: this.worker })
        .catch((err) => this.deps.log.error("run execution crashed", { runId, error: (err as Error)?.stack ?? String(err) }))
        .finally(() => {
          this.active.delete(runId);
          if (this.active.size === 0) {
            clearInterval(this.heartbeat);
            this.heartbeat = undefined;
            this.drained?.();
          }
          void this.pump(); // the freed slot takes a queued run, if the last claim left some
        });
    });
  }

  private ensureHeartbeat(): void {
    if (this.heartbeat) return;
    this.heartbeat = setInterval(() => {
      this.deps.store.renewLeases(this.worker, Date.now() + LEASE_MS).catch((err) => this.deps.log.error("renewing leases failed", { error: (err as Error)?.stack ?? String(err) }));
    }, LEASE_MS / 3);
    this.heartbeat.unref?.();
  }

  /**
   * Stops claiming and asks every running run to stop at its next step boundary: the steps in flight
   * get up to `graceMs` to finish (and be journaled). Steps still running then are interrupted; they
   * are not journaled and run again when the next start resumes the run. Stopped runs stay `running`.
   */
  async stop(graceMs = 10_000): Promise<void> {
    this.stopping = true;
    const drained = () => (this.active.size === 0 ? Promise.resolve() : new Promise<void>((r) => (this.drained = r)));
    for (const ctl of this.active.values()) ctl.stop.abort("shutdown" satisfies AbortReason);
    await Promise.race([drained(), Bun.sleep(graceMs)]);
    if (this.active.size > 0) {
      this.deps.log.warn("steps still running after the shutdown grace period are interrupted; they run again on the next start", { runs: this.active.size });
      for (const ctl of this.active.values()) ctl.interrupt.abort("shutdown" satisfies AbortReason);
      await Promise.race([drained(), Bun.sleep(1_000)]);
    }
    clearInterval(this.heartbeat);
  }
}
