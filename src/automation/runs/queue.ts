// The worker pool of one process over the durable queue (the runs table), shared by any number of
// processes on one PostgreSQL database. It claims runs while it has free slots; it is woken by runs
// queued here and, through `runs.queued` notifications, by runs queued in other processes; a slow poll
// is only the safety net. Every claimed run has a lease renewed by a heartbeat: a run whose lease lapsed
// is claimed again by anyone, and a process that died is detected sooner through its database session
// (`attach`), so its runs resume elsewhere within a poll. A graceful stop hands back what it still holds.
// Direct dispatch: while the queue is empty, the pool offers one idle slot in the database (`offer`); the
// next run inserted (by any process) while nothing is pending is inserted already claimed for it and
// announced on `runs.assigned` with its row, so it starts without a claim round trip.
// Claims follow free capacity (issue 38.5): while the process's off-thread pool is saturated it takes
// no run (no claim, no offer, no run inserted claimed by itself), so another process takes them.
import type { Clock } from "../../kernel/clock";
import { newId } from "../../kernel/ids";
import type { Logger } from "../../kernel/logger";
import { type Claim, parseAssignment, type Notifications, type RunStore } from "./store";
import { offThreadRoom, onOffThreadRoom } from "../offthread/pool";
import type { AbortReason, RunSignals } from "./signals";

/** How long a claim holds a run without a heartbeat (renewed every third of it). */
export const LEASE_MS = 30_000;
/** The safety-net poll: runs of dead processes are released and claimable runs claimed this often. */
export const POLL_MS = 2_000;
/** A withdrawn offer a run took: how long its `runs.assigned` may take before the pool looks for the run itself. */
const ASSIGNMENT_WAIT_MS = 5_000;

export interface PoolDeps {
  store: RunStore;
  notifications: Notifications;
  clock: Clock;
  log: Logger;
  /** Runs executing at once; 0 = this process executes no runs (an API-only instance). */
  concurrency: number;
  leaseMs?: number;
  pollMs?: number;
  /**
   * Executes one claimed run to a terminal status (or until its signals stop it for a shutdown).
   * `release` frees the run's slot early: once the run executes nothing more and only its finish is
   * committing (the next run's claim and start then overlap that commit); while `concurrency` runs are
   * finishing so already, it keeps the slot until execute settles.
   */
  execute(runId: string, signals: RunSignals, info: { claim: Claim; worker: string; release(): void }): Promise<unknown>;
  /** What else a run needs besides a slot; default: this process's off-thread pool (offthread/pool.ts). */
  capacity?: Capacity;
}

/** Room for more runs besides slots: read on every claim decision, so it must be cheap (no I/O). */
export interface Capacity {
  /** How many more runs to take on now (Infinity: no limit, 0: none). */
  room(): number;
  /** Calls `cb` when the room may have changed (the pool then claims, offers or withdraws); returns the unsubscribe. */
  onChange(cb: () => void): () => void;
}

const offThread: Capacity = { room: offThreadRoom, onChange: onOffThreadRoom };

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
  /** Runs released from their slot early (execute's `release`) whose finish is still committing. */
  private finishing = new Set<string>();
  /**
   * This process's standing offer of one idle slot (direct dispatch; the slot counts as taken). `taken`
   * once a withdrawal found that a run took it: the run's `runs.assigned` is on its way.
   */
  private offered: { token: string; landed: Promise<boolean>; withdrawing: boolean; taken?: ReturnType<typeof setTimeout> } | undefined;
  /** False once the store said it has no offers (SQLite). */
  private offers = true;
  /** Slots promised to runs being inserted already claimed by this process (reserve()). */
  private reserved = 0;
  private heartbeat: ReturnType<typeof setInterval> | undefined;
  private poll: ReturnType<typeof setInterval> | undefined;
  private unsubscribe: (() => void) | undefined;
  private drained: (() => void) | undefined;
  readonly leaseMs: number;
  private capacity: Capacity;

  constructor(private deps: PoolDeps) {
    this.leaseMs = deps.leaseMs ?? LEASE_MS;
    this.capacity = deps.capacity ?? offThread;
  }

  /**
   * How many more runs this process takes on now besides its free slots. While it executes nothing it
   * takes at least one, whatever the capacity says (work that is not its runs fills it): a lone
   * process always makes progress, and a run already claimed here is never waiting on this.
   */
  private room(): number {
    const room = this.capacity.room();
    return room > 0 || this.active.size + this.reserved > 0 ? room : 1;
  }

  /**
   * Marks this process alive, releases the runs of processes that are gone, listens for queued runs and
   * starts working; resolves once the first claims are made (the runs claimed are executing).
   */
  async start(): Promise<void> {
    if (this.started || this.deps.concurrency <= 0) return;
    this.started = true;
    await this.deps.store.attach(this.worker);
    await this.recover();
    const n = this.deps.notifications;
    const offs = await Promise.all([
      n.subscribe("runs.queued", () => void this.wake()).catch((err) => {
        this.deps.log.warn("cannot listen for queued runs; the poll picks them up", { error: (err as Error)?.message ?? String(err) });
        return undefined;
      }),
      // Without this subscription the pool makes no offers: nobody would hear that a run took one.
      n.subscribe("runs.assigned", (payload) => this.assigned(payload)).catch(() => ((this.offers = false), undefined)),
    ]);
    // Assignments lost while the listening connection was down: withdrawing the offer finds out.
    const reconnect = n.onReconnect(() => this.withdraw());
    // Room came back (claim what waits, offer a slot) or went (withdraw the offer).
    const capacity = this.capacity.onChange(() => void this.pump());
    this.unsubscribe = () => {
      for (const off of offs) off?.();
      reconnect();
      capacity();
    };
    this.poll = setInterval(() => void this.recover().then(() => this.wake()), this.deps.pollMs ?? POLL_MS);
    this.poll.unref?.();
    await this.wake();
  }

  /** Releases the runs of dead processes (they become claimable). */
  private async recover(): Promise<void> {
    try {
      const released = await this.deps.store.releaseOrphans(this.worker);
      if (released) {
        this.deps.log.info("recovering interrupted runs", { runs: released });
        this.backlog = true;
      }
    } catch (err) {
      this.deps.log.error("releasing the runs of stopped processes failed", { error: (err as Error)?.stack ?? String(err) });
    }
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
    if (!this.started || this.stopping) return Promise.resolve();
    const room = this.room();
    if (!this.backlog) {
      if (room > 0) this.offer();
      else void this.withdraw(); // saturated: the next run goes to another process (or the queue)
      return Promise.resolve();
    }
    // Runs wait: the offered slot takes them instead (or, saturated, another process does).
    if (this.busy() >= this.deps.concurrency || room <= 0) {
      void this.withdraw();
      return Promise.resolve();
    }
    this.pumping = true;
    this.rewake = false;
    const free = Math.min(this.deps.concurrency - this.busy(), room);
    return this.deps.store
      .claimMany(free, this.worker, this.deps.clock.now().toISOString(), Date.now(), this.leaseMs)
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
        else if (!this.backlog) this.offer(); // the queue is empty: an idle slot waits for the next run
        else void this.withdraw(); // runs wait: the offered slot takes them too
      });
  }

  /** Offers one idle slot for the next run inserted while the queue is empty (no-op with an offer standing). */
  private offer(): void {
    if (!this.offers || this.offered || !this.started || this.stopping || this.pumping || this.busy() >= this.deps.concurrency || this.room() <= 0) return;
    const token = newId("ofr");
    const offered: NonNullable<WorkerPool["offered"]> = { token, landed: this.deps.store.offer(this.worker, token, this.leaseMs), withdrawing: false };
    this.offered = offered;
    offered.landed.then(
      (ok) => {
        if (ok) return;
        this.offers = false; // this backend has none
        this.dropOffer(offered);
      },
      (err) => {
        this.deps.log.warn("offering an idle slot failed; runs reach it through the queue", { error: (err as Error)?.message ?? String(err) });
        // The next offer follows a claim that finds the queue empty (not a retry loop while the database is away).
        this.backlog = true;
        this.dropOffer(offered);
      },
    );
  }

  private dropOffer(offered: NonNullable<WorkerPool["offered"]>): void {
    if (this.offered !== offered) return;
    clearTimeout(offered.taken);
    this.offered = undefined;
    void this.pump();
  }

  /** Withdraws the standing offer (its slot then claims from the queue); a run that took it arrives on runs.assigned. */
  private withdraw(): Promise<void> {
    const offered = this.offered;
    if (!offered || offered.withdrawing) return Promise.resolve();
    offered.withdrawing = true;
    return offered.landed
      .then((ok) => (ok ? this.deps.store.retract(this.worker, offered.token) : true))
      .then(
        (stood) => {
          if (this.offered !== offered) return; // its run arrived meanwhile
          if (stood) return this.dropOffer(offered);
          offered.taken = setTimeout(() => void this.adoptLost(offered), ASSIGNMENT_WAIT_MS);
        },
        (err) => {
          offered.withdrawing = false;
          this.deps.log.warn("withdrawing the offered slot failed", { error: (err as Error)?.message ?? String(err) });
        },
      );
  }

  /** A run took this process's offer: it is claimed for this worker already, so it starts here now. */
  private assigned(payload: string): void {
    const a = parseAssignment(payload);
    if (!a || a.worker !== this.worker || this.stopping || this.active.has(a.runId)) return;
    if (this.offered?.token === a.token) {
      clearTimeout(this.offered.taken);
      this.offered = undefined;
    }
    if (a.run) return this.launch({ id: a.runId, resumed: false, fresh: true, run: a.run });
    this.deps.store.byId(a.runId).then(
      (run) => run && run.status === "running" && run.claimedBy === this.worker && !this.active.has(run.id) && !this.stopping && this.launch({ id: run.id, resumed: false, fresh: true, run }),
      (err) => this.deps.log.error("reading an assigned run failed; it resumes when its lease lapses", { runId: a.runId, error: (err as Error)?.stack ?? String(err) }),
    );
  }

  /**
   * A run took the offer but its `runs.assigned` never came (the listening connection dropped): the
   * runs this worker holds without executing them start here.
   */
  private async adoptLost(offered: NonNullable<WorkerPool["offered"]>): Promise<void> {
    if (this.offered !== offered) return;
    this.offered = undefined;
    try {
      for (const id of await this.deps.store.renewLeases(this.worker, Date.now() + this.leaseMs)) {
        if (this.active.has(id) || this.finishing.has(id) || this.stopping) continue;
        const run = await this.deps.store.byId(id);
        if (run && run.claimedBy === this.worker && run.status === "running" && !this.active.has(id)) this.launch({ id, resumed: false, fresh: false, run });
      }
    } catch (err) {
      this.deps.log.error("looking for an assigned run failed; it resumes when its lease lapses", { error: (err as Error)?.stack ?? String(err) });
    }
    void this.pump();
  }

  /** Slots taken: runs executing, runs being inserted for this process (reserve()), and the offered slot. */
  private busy(): number {
    return this.active.size + this.reserved + (this.offered ? 1 : 0);
  }

  /**
   * A free slot for a run the caller is about to insert already claimed by this process (running,
   * leased to `worker`): it skips the claim round trip and wakes no other process. Only while the queue
   * is known to be empty (no backlog), so a new run never overtakes older queued ones. The caller then
   * either launches the inserted run in the slot or gives the slot back (the insert failed).
   */
  reserve(): { launch(claim: Claim): void; release(): void } | undefined {
    if (!this.started || this.stopping || this.backlog || this.pumping || this.busy() >= this.deps.concurrency) return undefined;
    // Saturated: the run is queued (an idle process's offer takes it). Runs reserved a moment ago have
    // not shown their work in the capacity yet, so they count against it.
    if (this.room() - this.reserved <= 0) return undefined;
    this.reserved++;
    let settled = false;
    const settle = () => {
      if (settled) return false;
      settled = true;
      this.reserved--;
      return true;
    };
    return {
      // Launched even when a stop began meanwhile: the run then stops at once and is handed back with the rest.
      launch: (claim) => settle() && this.launch(claim),
      release: () => {
        if (!settle()) return;
        if (this.busy() === 0) this.drained?.();
        void this.pump();
      },
    };
  }

  private launch(claim: Claim): void {
    const runId = claim.id;
    if (this.active.has(runId)) return; // already executing here (found by adoptLost and launched by its insert too)
    const ctl = { stop: new AbortController(), interrupt: new AbortController() };
    this.active.set(runId, ctl);
    if (this.stopping) ctl.stop.abort("shutdown" satisfies AbortReason); // claimed while stop() began
    this.ensureHeartbeat();
    // The slot is free once the run executes nothing more (release: its finish is committing) or at the
    // latest when execute settles. At most `concurrency` runs are released early at once, so a process
    // holds at most twice its slots in runs (executing, or finishing) when it dies.
    let state: "active" | "finishing" | "settled" = "active";
    const free = () => {
      this.active.delete(runId);
      if (this.active.size === 0) {
        clearInterval(this.heartbeat);
        this.heartbeat = undefined;
      }
      if (this.busy() === 0) this.drained?.();
      void this.pump(); // the freed slot takes a queued run, if the last claim left some
    };
    const release = () => {
      if (state !== "active" || this.finishing.size >= this.deps.concurrency) return;
      state = "finishing";
      this.finishing.add(runId);
      free();
    };
    // Run on a later tick so one wake() claims a whole batch before any run starts executing.
    queueMicrotask(() => {
      this.deps
        .execute(runId, { stop: ctl.stop.signal, interrupt: ctl.interrupt.signal }, { claim, worker: this.worker, release })
        .catch((err) => this.deps.log.error("run execution crashed", { runId, error: (err as Error)?.stack ?? String(err) }))
        .finally(() => {
          if (state === "finishing") this.finishing.delete(runId);
          if (state === "active") free();
          state = "settled";
        });
    });
  }

  private ensureHeartbeat(): void {
    if (this.heartbeat) return;
    this.heartbeat = setInterval(() => void this.renew(), this.leaseMs / 3);
    this.heartbeat.unref?.();
  }

  /**
   * Renews the leases of the runs executing here. A run whose lease was lost (this process stalled past
   * it and another worker claimed the run) is interrupted: its journal writes and finish are refused
   * anyway (fenced by the lease), so it stops spending effort and side effects.
   */
  private async renew(): Promise<void> {
    try {
      // Only runs executing before the renewal was asked can be missing from its answer for a lost lease.
      const asked = [...this.active.keys()];
      const held = new Set(await this.deps.store.renewLeases(this.worker, Date.now() + this.leaseMs));
      for (const runId of asked) {
        const ctl = this.active.get(runId);
        if (!ctl || held.has(runId) || ctl.stop.signal.aborted) continue;
        this.deps.log.warn("lease lost: another worker took the run over; stopping it here", { runId });
        ctl.stop.abort("lease_lost" satisfies AbortReason);
        ctl.interrupt.abort("lease_lost" satisfies AbortReason);
      }
    } catch (err) {
      this.deps.log.error("renewing leases failed", { error: (err as Error)?.stack ?? String(err) });
    }
  }

  /**
   * Stops claiming and asks every running run to stop at its next step boundary: the steps in flight
   * get up to `graceMs` to finish (and be journaled). Steps still running then are interrupted; they
   * are not journaled and run again where the run resumes. The runs still held are handed back
   * (claimable at once by another process, or by the next start).
   */
  async stop(graceMs = 10_000): Promise<void> {
    this.stopping = true;
    clearInterval(this.poll);
    this.unsubscribe?.();
    const offered = this.offered;
    this.offered = undefined; // its slot is not a run to wait for
    clearTimeout(offered?.taken);
    const withdrawn = offered ? offered.landed.then((ok) => ok && this.deps.store.retract(this.worker, offered.token)).catch(() => {}) : undefined;
    const drained = () => (this.busy() === 0 ? Promise.resolve() : new Promise<void>((r) => (this.drained = r)));
    for (const ctl of this.active.values()) ctl.stop.abort("shutdown" satisfies AbortReason);
    await Promise.race([drained(), Bun.sleep(graceMs)]);
    if (this.active.size > 0) {
      this.deps.log.warn("steps still running after the shutdown grace period are interrupted; they run again where the run resumes", { runs: this.active.size });
      for (const ctl of this.active.values()) ctl.interrupt.abort("shutdown" satisfies AbortReason);
      await Promise.race([drained(), Bun.sleep(1_000)]);
    }
    clearInterval(this.heartbeat);
    if (!this.started) return;
    await this.deps.store.flush(); // what finished is committed before the leases go back
    // No run takes the offer from now on; one that took it already is handed back below.
    await withdrawn;
    try {
      const handed = await this.deps.store.handBack(this.worker);
      if (handed.length) {
        this.deps.log.info("handed back unfinished runs", { runs: handed.length });
        await this.deps.notifications.publish("runs.queued", "").catch(() => {});
      }
    } catch (err) {
      this.deps.log.error("handing back runs failed; they resume when their leases lapse", { error: (err as Error)?.stack ?? String(err) });
    }
    await this.deps.store.detach(this.worker).catch(() => {});
  }
}
