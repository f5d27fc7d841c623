// Runs on SQLite (tables in db/automation/0100_runs.sql, drizzle tables in ../tables/runs.ts). Hot
// paths (claim, step journal) are single prepared statements inside short transactions; the journal is
// group-committed (every write queued in one event-loop turn shares one transaction); listing builds its
// filter with drizzle. The pausing writes (`parkIn`, `requeueIn`, `endWaitingIn`) run inside the human
// review store's transaction on the same connection.
import type { Database } from "bun:sqlite";
import { and, asc, desc, eq, getTableColumns, gt, gte, inArray, lt, lte, or, sql, type SQL } from "drizzle-orm";
import { drizzle } from "drizzle-orm/bun-sqlite";
import { parseRef } from "../ref";
import { TickTaken } from "../../schedules/store";
import type { CancelResult, Claim, EventRow, FileRow, FinishedRun, FinishRequest, Lease, ListFilter, NewEvent, NewRun, RunRow, StepRecord, StepRow, StepStart } from "../../runs/store";
import { isTerminal } from "../../runs/store";
import { LostSteps } from "../runs-model";
import { likeEscape } from "../sql-shared";
import { StaleSource, type RunInsertOptions, type RunStore } from "../../runs/store";
import { runEvents, runFiles, runs, runSteps } from "../tables/runs";
import { reviewConditions } from "./reviews";

const sortColumn = { createdAt: runs.createdAt, completedAt: runs.completedAt, startedAt: runs.startedAt };

/** Step rows sort by this: increasing within a process and across restarts (microseconds + counter). */
let lastSeq = 0;
const nextSeq = () => (lastSeq = Math.max(lastSeq + 1, Date.now() * 1000));

type Columns = [string, { name: string; default?: unknown }][];
const runColumns: Columns = Object.entries(getTableColumns(runs));
const fileColumns: Columns = Object.entries(getTableColumns(runFiles));
const insertSql = (table: string, cols: Columns) =>
  `INSERT INTO ${table} (${cols.map(([, c]) => c.name).join(", ")}) VALUES (${cols.map(() => "?").join(", ")})`;
type SqlValue = string | number | null;
const valuesOf = (cols: Columns, row: Record<string, unknown>): SqlValue[] =>
  cols.map(([key, c]) => (row[key] ?? (c.default as SqlValue | undefined) ?? null) as SqlValue);
/** A statement's RETURNING list that gives a run row as drizzle's select does (no column has a mode). */
const RUN_RETURNING = `RETURNING ${runColumns.map(([key, c]) => `${c.name} AS "${key}"`).join(", ")}`;
const EVENT_ROW = "(?, ?, ?, ?, ?, ?)";
/** A journal write's fence: run ?1 is still held by worker ?w at attempt ?a, or the caller gave no lease (both null). */
const HELD_AT = (w: number, a: number) => `(?${w} IS NULL OR EXISTS (SELECT 1 FROM runs WHERE id = ?1 AND claimed_by = ?${w} AND attempts = ?${a}))`;
const HELD = HELD_AT(8, 9);
/** Rows per event INSERT: 6 parameters each, well under SQLite's 32,766. */
const EVENTS_PER_STATEMENT = 500;

/** A step start queued for the group commit (see SqliteRunStore.queuedStarts). */
interface QueuedStart {
  seq: number;
  lease?: Lease;
  /** Its finish was queued after it: the finish writes the row. */
  merged: boolean;
  /** Its event in the transaction's batch, dropped when the finish's write is fenced out. */
  event?: SqlValue[];
}
const stepKey = (runId: string, path: string) => `${runId}\u0000${path}`;

export class SqliteRunStore implements RunStore {
  private readonly db;
  // Drizzle builds SQL on every call unless prepared; the hot paths (executor, polling) reuse these.
  private readonly q;
  constructor(readonly sqlite: Database) {
    this.db = drizzle(sqlite);
    const id = sql.placeholder("id");
    const runId = sql.placeholder("runId");
    this.q = {
      byId: this.db.select().from(runs).where(eq(runs.id, id)).prepare(),
      get: this.db.select().from(runs).where(and(eq(runs.id, id), eq(runs.tenantId, sql.placeholder("tenantId")))).prepare(),
      completedSteps: this.db.select().from(runSteps).where(and(eq(runSteps.runId, runId), inArray(runSteps.status, ["completed", "skipped"]))).prepare(),
      steps: this.db.select().from(runSteps).where(eq(runSteps.runId, runId)).orderBy(asc(runSteps.seq)).prepare(),
      events: this.db.select().from(runEvents).where(eq(runEvents.runId, runId)).orderBy(asc(runEvents.id)).prepare(),
      files: this.db.select().from(runFiles).where(eq(runFiles.runId, runId)).orderBy(asc(runFiles.createdAt), asc(runFiles.path)).prepare(),
      filesByRole: this.db
        .select()
        .from(runFiles)
        .where(and(eq(runFiles.runId, runId), eq(runFiles.role, sql.placeholder("role"))))
        .orderBy(asc(runFiles.createdAt), asc(runFiles.path))
        .prepare(),
      file: this.db
        .select()
        .from(runFiles)
        .where(and(eq(runFiles.runId, runId), or(eq(runFiles.path, sql.placeholder("path")), eq(runFiles.fileId, sql.placeholder("path")))))
        .prepare(),
    };
  }

  /**
   * Inserts a run with its first events and input-file snapshots; resolves once committed. Runs
   * started in the same event-loop turn (concurrent requests) share one commit with the journal.
   * A tick claim (`opts.tick`) runs first in the same transaction; when it throws, this run is not inserted.
   */
  async insert(run: NewRun, events: NewEvent[], files: Omit<FileRow, "runId">[] = [], opts: RunInsertOptions = {}): Promise<RunRow> {
    await this.enqueue(() => {
      const s = opts.source;
      if (s && !this.sqlite.query("SELECT 1 FROM automations WHERE id = ? AND current_version_id = ? AND updated_at = ?").get(s.automationId, s.versionId, s.updatedAt)) {
        throw new StaleSource(s.automationId);
      }
      if (opts.tick) {
        const { key: t, tenantId, at } = opts.tick;
        const { changes } = this.sqlite
          .query(
            `INSERT INTO schedule_ticks (automation_id, schedule_key, scheduled_at, tenant_id, outcome, run_id, decided_at)
             VALUES (?, ?, ?, ?, 'started', ?, ?) ON CONFLICT DO NOTHING`,
          )
          .run(t.automationId, t.scheduleKey, t.scheduledAt, tenantId, run.id, at);
        if (changes !== 1) throw new TickTaken(t);
      }
      // Read back after the commit rather than by RETURNING: on this table an INSERT ... RETURNING costs
      // ~40 µs more a row than the INSERT and the read together (measured 2026-11-28, issue 42).
      this.sqlite.query(insertSql("runs", runColumns)).run(...valuesOf(runColumns, run));
      for (const f of files) this.sqlite.query(insertSql("run_files", fileColumns)).run(...valuesOf(fileColumns, { ...f, runId: run.id }));
      for (const e of events) this.addEvent(run.id, run.createdAt, e);
      if (opts.previousRunId) this.sqlite.query("UPDATE runs SET next_run_id = ? WHERE id = ?").run(run.id, opts.previousRunId);
    });
    return this.byIdSync(run.id)!;
  }

  /**
   * Events written by `batched` transactions wait here and go in with one multi-row INSERT at the end of
   * that transaction (same commit, same order per run); outside one, an event is written at once.
   */
  private eventBatch: SqlValue[][] | undefined;

  /** Writes an event, or adds it to the transaction's batch (and returns its row there). */
  private addEvent(runId: string, at: string, e: NewEvent): SqlValue[] | undefined {
    const row = [runId, e.type, at, e.status ?? null, e.message ?? null, e.metadata ? JSON.stringify(e.metadata) : null];
    if (this.eventBatch) {
      this.eventBatch.push(row);
      return row;
    }
    this.insertEvents([row]);
    return undefined;
  }

  private insertEvents(rows: SqlValue[][]): void {
    for (let i = 0; i < rows.length; i += EVENTS_PER_STATEMENT) {
      const chunk = rows.slice(i, i + EVENTS_PER_STATEMENT);
      this.sqlite
        .query(`INSERT INTO run_events (run_id, type, timestamp, status, message, metadata) VALUES ${Array(chunk.length).fill(EVENT_ROW).join(", ")}`)
        .run(...chunk.flat());
    }
  }

  /** Runs `fn` (a transaction's body) with the events it adds written by one statement at its end. */
  private batched<T>(fn: () => T): () => T {
    return () => {
      if (this.eventBatch) return fn(); // nested (claimMany's claims): the outer body writes them
      this.eventBatch = [];
      try {
        const out = fn();
        if (this.eventBatch.length) this.insertEvents(this.eventBatch);
        return out;
      } finally {
        this.eventBatch = undefined;
      }
    };
  }

  async get(tenantId: string, id: string): Promise<RunRow | undefined> {
    return this.q.get.get({ id, tenantId });
  }

  async byId(id: string): Promise<RunRow | undefined> {
    return this.byIdSync(id);
  }

  byIdSync(id: string): RunRow | undefined {
    return this.q.byId.get({ id });
  }

  async status(id: string): Promise<string | undefined> {
    return this.statusSync(id);
  }

  private statusSync(id: string): string | undefined {
    return this.sqlite.query<{ status: string }, [string]>("SELECT status FROM runs WHERE id = ?").get(id)?.status;
  }

  /**
   * Claims the oldest runnable run for `worker`: a pending one, or a running one nobody holds (released
   * at start-up after a crash) or whose lease lapsed. One conditional UPDATE, so two claimers never get
   * the same row.
   */
  private claim(worker: string, now: string, nowMs: number, leaseMs: number): Claim | null {
    return this.sqlite.transaction(this.batched(() => {
      // Two index-friendly lookups (runs_queue) rather than one OR that would scan the table. Interrupted
      // runs first: they were started before anything still pending, and must not wait behind a backlog.
      const row =
        this.sqlite
          .query<{ id: string; status: string; startedAt: string | null }, [number]>(
            "SELECT id, status, started_at AS startedAt FROM runs WHERE status = 'running' AND (claimed_by IS NULL OR lease_until < ?) ORDER BY created_at, id LIMIT 1",
          )
          .get(nowMs) ??
        this.sqlite
          .query<{ id: string; status: string; startedAt: string | null }, []>("SELECT id, status, started_at AS startedAt FROM runs WHERE status = 'pending' ORDER BY created_at, id LIMIT 1")
          .get();
      if (!row) return null;
      // The run as the claim left it comes back from the claim (the event below does not change it).
      const run = this.sqlite
        .query<RunRow, SqlValue[]>(
          `UPDATE runs SET status = 'running', claimed_by = ?, lease_until = ?, attempts = attempts + 1,
             started_at = COALESCE(started_at, ?)
           WHERE id = ? AND status = ? ${RUN_RETURNING}`,
        )
        .get(worker, nowMs + leaseMs, now, row.id, row.status);
      if (!run) return null;
      const resumed = row.status === "running";
      this.addEvent(row.id, now, resumed
        ? { type: "resumed", status: "running", message: "resumed after a restart from the last finished step" }
        : { type: "started", status: "running" });
      return { id: row.id, resumed, fresh: row.startedAt === null, run };
    })).immediate();
  }

  /** Up to `n` claims in one transaction (one commit when a pool fills several slots at once). */
  async claimMany(n: number, worker: string, now: string, nowMs: number, leaseMs: number): Promise<Claim[]> {
    if (n <= 0) return [];
    return this.sqlite.transaction(this.batched(() => {
      const out: Claim[] = [];
      for (let i = 0; i < n; i++) {
        const c = this.claim(worker, now, nowMs, leaseMs);
        if (!c) break;
        out.push(c);
      }
      return out;
    })).immediate();
  }

  /** Claims one given `running` run nobody holds (a child run its resumed parent continues inline). */
  async claimRun(id: string, worker: string, now: string, nowMs: number, leaseMs: number): Promise<boolean> {
    return this.sqlite.transaction(() => {
      const changed = this.sqlite
        .query("UPDATE runs SET claimed_by = ?, lease_until = ?, attempts = attempts + 1 WHERE id = ? AND status = 'running' AND (claimed_by IS NULL OR lease_until < ?)")
        .run(worker, nowMs + leaseMs, id, nowMs).changes;
      if (changed === 1) this.addEvent(id, now, { type: "resumed", status: "running", message: "resumed by its parent run after a restart" });
      return changed === 1;
    }).immediate();
  }

  /**
   * Queues the oldest held (`created`) runs of experiment `experimentId` while fewer than `limit` of
   * its runs are in flight (pending, running, waiting, finalizing); returns how many it queued. One
   * immediate transaction, so processes finishing runs of the same experiment never queue past the
   * bound; held rows stay out of the claim query (it reads `pending` only), so the pool never skips them.
   */
  async releaseHeld(experimentId: string, limit: number, at: string): Promise<number> {
    return this.sqlite.transaction(this.batched(() => {
      const inFlight = this.sqlite
        .query<{ n: number }, [string]>("SELECT COUNT(*) AS n FROM runs WHERE experiment_id = ? AND status IN ('pending', 'running', 'waiting', 'finalizing')")
        .get(experimentId)!.n;
      if (inFlight >= limit) return 0;
      const ids = this.sqlite
        .query<{ id: string }, [string, number]>("SELECT id FROM runs WHERE experiment_id = ? AND status = 'created' ORDER BY created_at, id LIMIT ?")
        .all(experimentId, limit - inFlight);
      for (const { id } of ids) {
        this.sqlite.query("UPDATE runs SET status = 'pending' WHERE id = ? AND status = 'created'").run(id);
        this.addEvent(id, at, { type: "queued", status: "pending" });
      }
      return ids.length;
    })).immediate();
  }

  /** Ids of the unfinished child runs of run `parentId` (not indexed: called on cancel only). */
  async openChildren(parentId: string): Promise<string[]> {
    return this.sqlite
      .query<{ id: string }, [string]>("SELECT id FROM runs WHERE parent_run_id = ? AND status NOT IN ('completed', 'failed', 'cancelled', 'rejected')")
      .all(parentId)
      .map((r) => r.id);
  }

  /** The latest child run that `action.invoke-workflow` at `step` of run `parentId` started. */
  async childAt(parentId: string, step: string): Promise<{ id: string; status: string } | undefined> {
    return this.sqlite
      .query<{ id: string; status: string }, [string, string]>(
        "SELECT id, status FROM runs WHERE parent_run_id = ? AND json_extract(metadata, '$.invokedBy.step') = ? ORDER BY created_at DESC, id DESC LIMIT 1",
      )
      .get(parentId, step) ?? undefined;
  }

  async attach(_worker: string): Promise<void> {}

  async detach(_worker: string): Promise<void> {}

  /** No offers: the one process's pool takes the runs started in it directly (RunService reserve). */
  async offer(_worker: string, _token: string, _leaseMs: number): Promise<boolean> {
    return false;
  }

  async retract(_worker: string, _token: string): Promise<boolean> {
    return true;
  }

  /** One process owns the data dir: runs claimed by any other worker (a previous, dead process) are released. */
  async releaseOrphans(worker: string): Promise<number> {
    return this.sqlite
      .query("UPDATE runs SET claimed_by = NULL, lease_until = NULL WHERE status = 'running' AND claimed_by IS NOT NULL AND claimed_by != ?")
      .run(worker).changes;
  }

  async renewLeases(worker: string, until: number): Promise<string[]> {
    return this.sqlite
      .query<{ id: string }, [number, string]>("UPDATE runs SET lease_until = ? WHERE claimed_by = ? AND status = 'running' RETURNING id")
      .all(until, worker)
      .map((r) => r.id);
  }

  async handBack(worker: string): Promise<string[]> {
    return this.sqlite
      .query<{ id: string }, [string]>("UPDATE runs SET claimed_by = NULL, lease_until = NULL WHERE claimed_by = ? AND status = 'running' RETURNING id")
      .all(worker)
      .map((r) => r.id);
  }

  async completedSteps(runId: string): Promise<StepRow[]> {
    return this.q.completedSteps.all({ runId });
  }

  // Group commit of the journal: writes queued in one event-loop turn (every worker's step records and
  // run finishes) share one transaction, flushed on setImmediate. A step's start usually commits
  // together with its finish, and a run's last steps with its finish, as on PostgreSQL.
  private journalOps: (() => unknown)[] = [];
  private journalWaiters: { resolve(value: unknown): void; reject(err: unknown): void }[] = [];
  /** Per op: the finished step it records (a failed one keeps the run from finishing), or undefined. */
  private journalSteps: ({ runId: string; path: string } | undefined)[] = [];
  /** Per op: the run it finishes, or undefined. */
  private journalFinishes: (string | undefined)[] = [];
  private readonly lost = new LostSteps();
  private flushScheduled = false;
  /**
   * Step starts queued for the next group commit: a finish of the same step queued before that commit
   * writes the row for both (one upsert instead of two; same transaction, same final row).
   */
  private readonly queuedStarts = new Map<string, QueuedStart>();
  /** The journal's writes are being replayed one transaction each (every write then stands alone). */
  private replaying = false;

  private enqueue<T = void>(op: () => T, step?: { runId: string; path: string }, finishes?: string): Promise<T> {
    this.journalOps.push(op);
    this.journalSteps.push(step);
    this.journalFinishes.push(finishes);
    const done = new Promise<T>((resolve, reject) => this.journalWaiters.push({ resolve: resolve as (value: unknown) => void, reject }));
    if (!this.flushScheduled) {
      this.flushScheduled = true;
      setImmediate(() => this.flushJournal());
    }
    return done;
  }

  async flush(): Promise<void> {
    this.flushJournal();
  }

  /** Commits every queued journal write now (also called before a write that must follow them, e.g. a cancel). */
  flushJournal(): void {
    this.flushScheduled = false;
    if (this.journalOps.length === 0) return;
    let ops = this.journalOps.splice(0);
    this.queuedStarts.clear(); // a finish queued from now on commits after these starts
    let waiters = this.journalWaiters.splice(0);
    let steps = this.journalSteps.splice(0);
    let finishes = this.journalFinishes.splice(0);
    // A run with a finished step's record lost in an earlier commit does not finish (see RunStore.finish).
    if (!this.lost.empty && finishes.some((id) => id !== undefined && this.lost.has(id))) {
      const keep = ops.map((_, i) => {
        const refused = finishes[i] !== undefined ? this.lost.take(finishes[i]!) : undefined;
        if (refused) waiters[i]!.reject(refused);
        return !refused;
      });
      [ops, waiters, steps, finishes] = [ops.filter((_, i) => keep[i]), waiters.filter((_, i) => keep[i]), steps.filter((_, i) => keep[i]), finishes.filter((_, i) => keep[i])];
      if (ops.length === 0) return;
    }
    let values: unknown[];
    try {
      values = this.sqlite.transaction(this.batched(() => ops.map((op) => op()))).immediate();
    } catch {
      // One bad write must not fail its neighbours: replay them one transaction each. A finished
      // step whose record still fails is remembered: its run's finish is refused until it commits.
      this.replaying = true;
      ops.forEach((op, i) => {
        const step = steps[i];
        const refused = finishes[i] !== undefined ? this.lost.take(finishes[i]!) : undefined;
        if (refused) {
          waiters[i]!.reject(refused);
          return;
        }
        try {
          const value = this.sqlite.transaction(this.batched(op)).immediate();
          if (step) this.lost.unmark(step.runId, step.path);
          waiters[i]!.resolve(value);
        } catch (err) {
          if (step) this.lost.mark(step.runId, step.path);
          waiters[i]!.reject(err);
        }
      });
      this.replaying = false;
      return;
    }
    if (!this.lost.empty) for (const step of steps) if (step) this.lost.unmark(step.runId, step.path);
    waiters.forEach((w, i) => w.resolve(values[i]));
  }

  /** Recorded with the next journal commit (not awaited: a lost start only hides a running step). */
  stepStarted(runId: string, s: StepStart, lease?: Lease): void {
    const seq = nextSeq();
    const start: QueuedStart = { seq, lease, merged: false };
    this.queuedStarts.set(stepKey(runId, s.path), start);
    this.enqueue(() => {
      const event: NewEvent = { type: "step_started", status: "running", message: s.name, metadata: { path: s.path, type: s.type, attempt: s.attempt } };
      if (start.merged && this.eventBatch && !this.replaying) {
        // The step's finish, later in this transaction, writes the row for both; the event keeps its place.
        start.event = this.addEvent(runId, s.startedAt, event);
        return;
      }
      // Fencing in the write itself: nothing is written unless the run is still held under `lease`
      // (no lease: the caller holds no claim, e.g. a test); the event follows the row.
      const written = this.sqlite
        .query(
          `INSERT INTO run_steps (run_id, path, seq, name, type, status, attempt, started_at)
           SELECT ?1, ?2, ?7, ?3, ?4, 'running', ?5, ?6 WHERE ${HELD}
           ON CONFLICT (run_id, path) DO UPDATE SET status = 'running', attempt = excluded.attempt,
             started_at = excluded.started_at, completed_at = NULL, output = NULL, error = NULL, input = NULL`,
        )
        .run(runId, s.path, s.name, s.type, s.attempt, s.startedAt, seq, lease?.worker ?? null, lease?.attempt ?? null).changes;
      if (written !== 1) return;
      this.addEvent(runId, s.startedAt, event);
    }).catch(() => {});
  }

  /** Resolves once committed (durable): after a crash a finished step is never executed again. */
  stepFinished(runId: string, s: StepRecord, lease?: Lease): Promise<void> {
    // The step's start still queued for the same commit under the same lease: this write stands for
    // both (the row ends as if the start had been written first: the start's seq, the finish's values).
    const key = stepKey(runId, s.path);
    const start = this.queuedStarts.get(key);
    const merged = start && start.lease?.worker === lease?.worker && start.lease?.attempt === lease?.attempt ? start : undefined;
    if (merged) {
      merged.merged = true;
      this.queuedStarts.delete(key);
    }
    const seq = merged?.seq ?? nextSeq();
    return this.enqueue(() => {
      const written = this.sqlite
        .query(
          `INSERT INTO run_steps (run_id, path, seq, name, type, status, output, error, attempt, started_at, completed_at, input)
           SELECT ?1, ?2, ?11, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?12 WHERE ${HELD_AT(13, 14)}
           ON CONFLICT (run_id, path) DO UPDATE SET status = excluded.status, output = excluded.output,
             error = excluded.error, attempt = excluded.attempt, started_at = excluded.started_at,
             completed_at = excluded.completed_at, input = excluded.input`,
        )
        .run(
          runId, s.path, s.name, s.type, s.status,
          s.output === undefined ? null : JSON.stringify(s.output),
          s.error ? JSON.stringify(s.error) : null,
          s.attempt, s.startedAt, s.completedAt, seq,
          s.input === undefined ? null : JSON.stringify(s.input),
          lease?.worker ?? null, lease?.attempt ?? null,
        ).changes;
      if (written !== 1) {
        // Fenced out: the merged start's event goes too (its own write would have been refused alike).
        const at = merged?.event && !this.replaying ? (this.eventBatch?.indexOf(merged.event) ?? -1) : -1;
        if (at >= 0) this.eventBatch!.splice(at, 1);
        return;
      }
      const type = s.status === "failed" ? "step_failed" : s.status === "skipped" ? "step_skipped" : "step_completed";
      this.addEvent(runId, s.completedAt, { type, status: s.status, message: s.error?.message ?? s.name, metadata: { path: s.path, type: s.type, attempt: s.attempt } });
    }, { runId, path: s.path });
  }

  /**
   * Moves a non-terminal run to a terminal status exactly once (its row as finished); undefined when it
   * already was terminal. Joins the journal's group commit after the run's steps queued before it, and
   * resolves once committed; refused (JournalWriteLost) when a finished step's record was lost.
   */
  finish(runId: string, at: string, r: FinishRequest, lease?: Lease): Promise<FinishedRun | undefined> {
    return this.enqueue<FinishedRun | undefined>(() => {
      // The run as finished, with whether it has output files and a review, comes back from the finish
      // itself (its event does not change them).
      const row = this.sqlite
        .query<RunRow & { hasOutputFiles: number; hasReview: number }, SqlValue[]>(
          `UPDATE runs SET status = ?1, output = ?2, error = ?3, completed_at = ?4, claimed_by = NULL, lease_until = NULL
           WHERE id = ?5 AND status NOT IN ('completed', 'failed', 'cancelled', 'rejected') AND (?6 IS NULL OR (claimed_by = ?6 AND attempts = ?7))
           ${RUN_RETURNING},
             EXISTS (SELECT 1 FROM run_files WHERE run_id = ?5 AND role = 'output') AS hasOutputFiles,
             EXISTS (SELECT 1 FROM run_reviews WHERE run_id = ?5) AS hasReview`,
        )
        .get(r.status, r.output === undefined ? null : JSON.stringify(r.output), r.error ? JSON.stringify(r.error) : null, at, runId, lease?.worker ?? null, lease?.attempt ?? null);
      if (!row) return undefined;
      this.addEvent(runId, at, { type: r.status, status: r.status, message: r.message ?? null });
      const { hasOutputFiles, hasReview, ...run } = row;
      return { run, has: { outputFiles: hasOutputFiles === 1, review: hasReview === 1 } };
    }, undefined, runId);
  }

  /** Records a cancel request; returns the status the run had. Pending runs are cancelled in the same transaction. */
  async requestCancel(runId: string, at: string): Promise<CancelResult> {
    this.flushJournal(); // a step start still queued for the group commit must precede cancel_requested
    return this.sqlite.transaction(() => {
      const was = this.statusSync(runId)!;
      if (isTerminal(was)) return { wasStatus: was, state: "already_terminal" as const };
      this.sqlite.query("UPDATE runs SET cancel_requested_at = COALESCE(cancel_requested_at, ?) WHERE id = ?").run(at, runId);
      this.addEvent(runId, at, { type: "cancel_requested", status: was });
      if (was === "pending" || was === "created" || was === "waiting") {
        this.sqlite
          .query("UPDATE runs SET status = 'cancelled', completed_at = ?, claimed_by = NULL WHERE id = ?")
          .run(at, runId);
        this.addEvent(runId, at, { type: "cancelled", status: "cancelled", message: "cancelled before it started" });
        return { wasStatus: was, state: "cancelled" as const };
      }
      return { wasStatus: was, state: "requested" as const };
    }).immediate();
  }

  // Pausing (human review, human-review/): three statements the pausing feature runs inside ITS
  // transaction, so its own rows (the task, the decision) and the run's status commit together.

  /**
   * Parks run `runId` on step `path`: the step row becomes `waiting`, the run `waiting` without worker
   * or lease (the pool never claims it). False when a cancel was requested or the run is not running.
   * Call `flushJournal()` first so the step's start is not committed after its parking.
   */
  parkIn(runId: string, at: string, path: string, event: NewEvent): boolean {
    const run = this.sqlite.query<{ status: string; c: string | null }, [string]>("SELECT status, cancel_requested_at AS c FROM runs WHERE id = ?").get(runId);
    if (!run || run.c || (run.status !== "running" && run.status !== "waiting")) return false;
    this.sqlite.query("UPDATE run_steps SET status = 'waiting' WHERE run_id = ? AND path = ?").run(runId, path);
    this.sqlite.query("UPDATE runs SET status = 'waiting', claimed_by = NULL, lease_until = NULL WHERE id = ?").run(runId);
    this.addEvent(runId, at, event);
    return true;
  }

  /**
   * A waiting run goes back to the queue (`pending`; the pool resumes it once, skipping journaled
   * steps) with its parked step completed as `output`. Its pick-up count restarts: a human decision
   * is progress, so many review steps never look like a crash loop. False when it was not waiting.
   */
  requeueIn(runId: string, at: string, path: string, output: unknown, event: NewEvent): boolean {
    const changed = this.sqlite.query("UPDATE runs SET status = 'pending', attempts = 0 WHERE id = ? AND status = 'waiting'").run(runId).changes;
    if (changed !== 1) return false;
    this.sqlite
      .query("UPDATE run_steps SET status = 'completed', output = ?, error = NULL, completed_at = ? WHERE run_id = ? AND path = ?")
      .run(JSON.stringify(output ?? null), at, runId, path);
    this.addEvent(runId, at, event);
    return true;
  }

  /** A waiting run ends with `status` (e.g. `rejected`) and `error`; its parked step fails. False when it was not waiting. */
  endWaitingIn(runId: string, at: string, path: string, status: "rejected" | "failed", error: { message: string; code: string }): boolean {
    const changed = this.sqlite
      .query("UPDATE runs SET status = ?, error = ?, completed_at = ?, claimed_by = NULL, lease_until = NULL WHERE id = ? AND status = 'waiting'")
      .run(status, JSON.stringify(error), at, runId).changes;
    if (changed !== 1) return false;
    this.sqlite
      .query("UPDATE run_steps SET status = 'failed', error = ?, completed_at = ? WHERE run_id = ? AND path = ?")
      .run(JSON.stringify(error), at, runId, path);
    this.addEvent(runId, at, { type: status, status, message: error.message });
    return true;
  }

  async events(runId: string): Promise<EventRow[]> {
    return this.q.events.all({ runId });
  }

  async steps(runId: string): Promise<StepRow[]> {
    return this.q.steps.all({ runId });
  }

  async files(runId: string, role?: string): Promise<FileRow[]> {
    return role ? this.q.filesByRole.all({ runId, role }) : this.q.files.all({ runId });
  }

  async file(runId: string, pathOrFileId: string): Promise<FileRow | undefined> {
    return this.q.file.get({ runId, path: pathOrFileId });
  }

  async putFile(f: FileRow): Promise<void> {
    this.db
      .insert(runFiles)
      .values(f)
      .onConflictDoUpdate({
        target: [runFiles.runId, runFiles.path],
        set: { contentType: f.contentType, size: f.size, sha256: f.sha256, stepName: f.stepName, name: f.name, role: f.role },
      })
      .run();
  }

  async list(f: ListFilter): Promise<RunRow[]> {
    const where: (SQL | undefined)[] = [eq(runs.tenantId, f.tenantId)];
    if (f.type) where.push(eq(runs.type, f.type));
    if (f.source) {
      const ref = parseRef(f.source);
      // A typed target's name may be a slug or (as the SDKs send `{type, id}`) the automation id.
      if (ref.kind === "typed") where.push(and(or(eq(runs.automationSlug, ref.name), eq(runs.automationId, ref.name)), eq(runs.type, ref.type)));
      else where.push(or(eq(runs.automationId, f.source), eq(runs.automationSlug, f.source)));
    }
    if (f.statuses?.length) where.push(inArray(runs.status, f.statuses));
    if (f.trigger) where.push(eq(runs.triggerType, f.trigger));
    if (f.triggeredBy) where.push(or(eq(runs.triggeredBy, f.triggeredBy), eq(runs.triggeredByName, f.triggeredBy)));
    if (f.sourceRef) where.push(or(eq(runs.sourceRef, f.sourceRef), eq(runs.versionId, f.sourceRef), eq(runs.versionLabel, f.sourceRef)));
    if (f.batchId) where.push(eq(runs.batchId, f.batchId));
    if (f.exampleId) where.push(eq(runs.exampleId, f.exampleId));
    // ESCAPE: the search text's own % and _ match themselves (as on PostgreSQL).
    if (f.exampleIdContains) where.push(sql`${runs.exampleId} LIKE ${likeEscape(f.exampleIdContains)} ESCAPE '\\'`);
    if (f.createdFrom) where.push(gte(runs.createdAt, f.createdFrom));
    if (f.createdTo) where.push(lte(runs.createdAt, f.createdTo));
    if (f.createdAfter) where.push(gt(runs.createdAt, f.createdAfter));
    if (f.createdBefore) where.push(lt(runs.createdAt, f.createdBefore));
    if (f.completedAfter) where.push(gt(runs.completedAt, f.completedAfter));
    if (f.completedBefore) where.push(lt(runs.completedAt, f.completedBefore));
    if (f.ids?.length) where.push(inArray(runs.id, f.ids));
    if (f.experiments) {
      if ("ids" in f.experiments) where.push(inArray(runs.experimentId, f.experiments.ids));
      else if (f.experiments.mode === "exclude") where.push(sql`${runs.experimentId} IS NULL AND ${runs.evaluation} = 0`);
      else if (f.experiments.mode === "only") where.push(sql`${runs.experimentId} IS NOT NULL`);
    }
    if (f.sampleRate !== undefined) where.push(lt(runs.sampleRank, f.sampleRate));
    if (f.review) where.push(...reviewConditions(f.review));
    // Sorting on a nullable column: a null key sorts as '' (first ascending, last descending, as SQLite
    // orders NULLs) and the cursor's key is '' for it, so the (key, id) cursor stays total. The bare
    // column lets SQLite walk runs_tenant_created/_completed/_started and stop at the page's end instead
    // of sorting every run of the tenant (50,000 runs: ~350 ms → a few ms per page).
    const key = sortColumn[f.sort];
    if (f.after) {
      const { key: k, id } = f.after;
      if (k === "") {
        // After a null key: ascending, the remaining nulls and then every non-null; descending, the remaining nulls.
        where.push(f.order === "desc" ? sql`(${key} IS NULL AND ${runs.id} < ${id})` : sql`(${key} IS NOT NULL OR ${runs.id} > ${id})`);
      } else {
        where.push(
          f.order === "desc"
            ? sql`(${key} < ${k} OR ${key} IS NULL OR (${key} = ${k} AND ${runs.id} < ${id}))`
            : sql`(${key} > ${k} OR (${key} = ${k} AND ${runs.id} > ${id}))`,
        );
      }
    }
    const dir = f.order === "desc" ? desc : asc;
    let q = this.db
      .select()
      .from(runs)
      .where(and(...where))
      .orderBy(dir(key), dir(runs.id))
      .limit(f.limit)
      .$dynamic();
    if (f.offset && !f.after) q = q.offset(f.offset);
    return q.all();
  }
}
