// The only code touching the runs tables. Hot paths (claim, step journal) are single prepared
// statements inside short transactions; listing builds its filter with drizzle.
import type { Database } from "bun:sqlite";
import { and, asc, desc, eq, gt, gte, inArray, like, lt, lte, or, sql, type SQL } from "drizzle-orm";
import { drizzle } from "drizzle-orm/bun-sqlite";
import type { StepRecord } from "../engine/contract";
import { runEvents, runFiles, runs, runSteps } from "./schema";

export type RunRow = typeof runs.$inferSelect;
export type NewRun = typeof runs.$inferInsert;
export type StepRow = typeof runSteps.$inferSelect;
export type EventRow = typeof runEvents.$inferSelect;
export type FileRow = typeof runFiles.$inferSelect;

export const TERMINAL = ["completed", "failed", "cancelled", "rejected"] as const;
export const STATUSES = ["created", "pending", "running", "waiting", "finalizing", ...TERMINAL] as const;
export type RunStatus = (typeof STATUSES)[number];
export const isTerminal = (s: string) => (TERMINAL as readonly string[]).includes(s);

export interface NewEvent {
  type: string;
  status?: string | null;
  message?: string | null;
  metadata?: Record<string, unknown>;
}

export interface ListFilter {
  tenantId: string;
  type?: string;
  source?: string;
  statuses?: string[];
  trigger?: string;
  triggeredBy?: string;
  sourceRef?: string;
  batchId?: string;
  exampleId?: string;
  exampleIdContains?: string;
  createdFrom?: string; // inclusive
  createdTo?: string; // inclusive
  createdAfter?: string;
  createdBefore?: string;
  completedAfter?: string;
  completedBefore?: string;
  ids?: string[];
  experiments?: { mode: "include" | "exclude" | "only" } | { ids: string[] };
  sampleRate?: number;
  /** Review filters match nothing-reviewed: until run reviews exist, no run has a review. */
  requireReview?: boolean;
  sort: "createdAt" | "completedAt" | "startedAt";
  order: "asc" | "desc";
  after?: { key: string; id: string };
  offset?: number;
  limit: number;
}

const sortColumn = { createdAt: runs.createdAt, completedAt: runs.completedAt, startedAt: runs.startedAt };

export class RunStore {
  readonly db;
  constructor(readonly sqlite: Database) {
    this.db = drizzle(sqlite);
  }

  /** Inserts a run with its first events and input-file snapshots in one transaction. */
  insert(run: NewRun, events: NewEvent[], files: Omit<FileRow, "runId">[] = [], link?: { previousRunId: string }): void {
    this.sqlite.transaction(() => {
      this.db.insert(runs).values(run).run();
      for (const f of files) this.db.insert(runFiles).values({ ...f, runId: run.id }).run();
      for (const e of events) this.addEvent(run.id, run.createdAt, e);
      if (link) this.db.update(runs).set({ nextRunId: run.id }).where(eq(runs.id, link.previousRunId)).run();
    })();
  }

  addEvent(runId: string, at: string, e: NewEvent): void {
    this.sqlite
      .query("INSERT INTO run_events (run_id, type, timestamp, status, message, metadata) VALUES (?, ?, ?, ?, ?, ?)")
      .run(runId, e.type, at, e.status ?? null, e.message ?? null, e.metadata ? JSON.stringify(e.metadata) : null);
  }

  get(tenantId: string, id: string): RunRow | undefined {
    return this.db.select().from(runs).where(and(eq(runs.id, id), eq(runs.tenantId, tenantId))).get();
  }

  byId(id: string): RunRow | undefined {
    return this.db.select().from(runs).where(eq(runs.id, id)).get();
  }

  status(id: string): string | undefined {
    return this.sqlite.query<{ status: string }, [string]>("SELECT status FROM runs WHERE id = ?").get(id)?.status;
  }

  /**
   * Claims the oldest runnable run for `worker`: a pending one, or a running one nobody holds (released
   * at start-up after a crash) or whose lease lapsed. One conditional UPDATE, so two claimers never get
   * the same row.
   */
  claim(worker: string, now: string, nowMs: number, leaseMs: number): { id: string; resumed: boolean } | null {
    return this.sqlite.transaction(() => {
      const row = this.sqlite
        .query<{ id: string; status: string }, [number]>(
          `SELECT id, status FROM runs
           WHERE status = 'pending' OR (status = 'running' AND (claimed_by IS NULL OR lease_until < ?))
           ORDER BY created_at, id LIMIT 1`,
        )
        .get(nowMs);
      if (!row) return null;
      const changed = this.sqlite
        .query(
          `UPDATE runs SET status = 'running', claimed_by = ?, lease_until = ?, attempts = attempts + 1,
             started_at = COALESCE(started_at, ?)
           WHERE id = ? AND status = ?`,
        )
        .run(worker, nowMs + leaseMs, now, row.id, row.status).changes;
      if (changed !== 1) return null;
      const resumed = row.status === "running";
      this.addEvent(row.id, now, resumed
        ? { type: "resumed", status: "running", message: "resumed after a restart from the last finished step" }
        : { type: "started", status: "running" });
      return { id: row.id, resumed };
    }).immediate();
  }

  /** At start-up, one server owns the data dir: runs claimed by a previous (dead) process are released. */
  releaseOrphans(worker: string): number {
    return this.sqlite
      .query("UPDATE runs SET claimed_by = NULL, lease_until = NULL WHERE status = 'running' AND (claimed_by IS NULL OR claimed_by != ?)")
      .run(worker).changes;
  }

  renewLeases(worker: string, until: number): void {
    this.sqlite.query("UPDATE runs SET lease_until = ? WHERE claimed_by = ? AND status = 'running'").run(until, worker);
  }

  hasRunnable(): boolean {
    return !!this.sqlite
      .query("SELECT 1 FROM runs WHERE status = 'pending' OR (status = 'running' AND claimed_by IS NULL) LIMIT 1")
      .get();
  }

  completedSteps(runId: string): StepRow[] {
    return this.db
      .select()
      .from(runSteps)
      .where(and(eq(runSteps.runId, runId), inArray(runSteps.status, ["completed", "skipped"])))
      .all();
  }

  stepStarted(runId: string, s: { path: string; name: string; type: string; attempt: number; startedAt: string }): void {
    this.sqlite.transaction(() => {
      this.sqlite
        .query(
          `INSERT INTO run_steps (run_id, path, seq, name, type, status, attempt, started_at)
           VALUES (?1, ?2, (SELECT COALESCE(MAX(seq), 0) + 1 FROM run_steps WHERE run_id = ?1), ?3, ?4, 'running', ?5, ?6)
           ON CONFLICT (run_id, path) DO UPDATE SET status = 'running', attempt = excluded.attempt,
             started_at = excluded.started_at, completed_at = NULL, output = NULL, error = NULL`,
        )
        .run(runId, s.path, s.name, s.type, s.attempt, s.startedAt);
      this.addEvent(runId, s.startedAt, { type: "step_started", status: "running", message: s.name, metadata: { path: s.path, type: s.type, attempt: s.attempt } });
    })();
  }

  /** Durable when it returns (one committed transaction): a finished step is never executed again. */
  stepFinished(runId: string, s: StepRecord): void {
    this.sqlite.transaction(() => {
      this.sqlite
        .query(
          `INSERT INTO run_steps (run_id, path, seq, name, type, status, output, error, attempt, started_at, completed_at)
           VALUES (?1, ?2, (SELECT COALESCE(MAX(seq), 0) + 1 FROM run_steps WHERE run_id = ?1), ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)
           ON CONFLICT (run_id, path) DO UPDATE SET status = excluded.status, output = excluded.output,
             error = excluded.error, attempt = excluded.attempt, started_at = excluded.started_at,
             completed_at = excluded.completed_at`,
        )
        .run(
          runId, s.path, s.name, s.type, s.status,
          s.output === undefined ? null : JSON.stringify(s.output),
          s.error ? JSON.stringify(s.error) : null,
          s.attempt, s.startedAt, s.completedAt,
        );
      const type = s.status === "failed" ? "step_failed" : s.status === "skipped" ? "step_skipped" : "step_completed";
      this.addEvent(runId, s.completedAt, { type, status: s.status, message: s.error?.message ?? s.name, metadata: { path: s.path, type: s.type, attempt: s.attempt } });
    })();
  }

  /** Moves a non-terminal run to a terminal status exactly once; false when it already was terminal. */
  finish(
    runId: string,
    at: string,
    r: { status: "completed" | "failed" | "cancelled"; output?: unknown; error?: unknown; message?: string },
  ): boolean {
    return this.sqlite.transaction(() => {
      const changed = this.sqlite
        .query(
          `UPDATE runs SET status = ?, output = ?, error = ?, completed_at = ?, claimed_by = NULL, lease_until = NULL
           WHERE id = ? AND status NOT IN ('completed', 'failed', 'cancelled', 'rejected')`,
        )
        .run(r.status, r.output === undefined ? null : JSON.stringify(r.output), r.error ? JSON.stringify(r.error) : null, at, runId).changes;
      if (changed === 1) this.addEvent(runId, at, { type: r.status, status: r.status, message: r.message ?? null });
      return changed === 1;
    }).immediate();
  }

  /** Records a cancel request; returns the status the run had. Pending runs are cancelled in the same transaction. */
  requestCancel(runId: string, at: string): { wasStatus: string; state: "cancelled" | "requested" | "already_terminal" } {
    return this.sqlite.transaction(() => {
      const was = this.status(runId)!;
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

  events(runId: string): EventRow[] {
    return this.db.select().from(runEvents).where(eq(runEvents.runId, runId)).orderBy(asc(runEvents.id)).all();
  }

  steps(runId: string): StepRow[] {
    return this.db.select().from(runSteps).where(eq(runSteps.runId, runId)).orderBy(asc(runSteps.seq)).all();
  }

  files(runId: string, role?: string): FileRow[] {
    const where = role ? and(eq(runFiles.runId, runId), eq(runFiles.role, role)) : eq(runFiles.runId, runId);
    return this.db.select().from(runFiles).where(where).orderBy(asc(runFiles.createdAt), asc(runFiles.path)).all();
  }

  file(runId: string, pathOrFileId: string): FileRow | undefined {
    return this.db
      .select()
      .from(runFiles)
      .where(and(eq(runFiles.runId, runId), or(eq(runFiles.path, pathOrFileId), eq(runFiles.fileId, pathOrFileId))))
      .get();
  }

  putFile(f: FileRow): void {
    this.db
      .insert(runFiles)
      .values(f)
      .onConflictDoUpdate({
        target: [runFiles.runId, runFiles.path],
        set: { contentType: f.contentType, size: f.size, sha256: f.sha256, stepName: f.stepName, name: f.name, role: f.role },
      })
      .run();
  }

  nextRunStatus(id: string | null): { id: string; status: string } | null {
    if (!id) return null;
    const status = this.status(id);
    return status ? { id, status } : null;
  }

  list(f: ListFilter): RunRow[] {
    const where: (SQL | undefined)[] = [eq(runs.tenantId, f.tenantId)];
    if (f.type) where.push(eq(runs.type, f.type));
    if (f.source) {
      const slug = f.source.replace(/^(workflows|agents)\./, "");
      where.push(or(eq(runs.automationId, f.source), eq(runs.automationSlug, slug)));
    }
    if (f.statuses?.length) where.push(inArray(runs.status, f.statuses));
    if (f.trigger) where.push(eq(runs.triggerType, f.trigger));
    if (f.triggeredBy) where.push(or(eq(runs.triggeredBy, f.triggeredBy), eq(runs.triggeredByName, f.triggeredBy)));
    if (f.sourceRef) where.push(or(eq(runs.sourceRef, f.sourceRef), eq(runs.versionId, f.sourceRef), eq(runs.versionLabel, f.sourceRef)));
    if (f.batchId) where.push(eq(runs.batchId, f.batchId));
    if (f.exampleId) where.push(eq(runs.exampleId, f.exampleId));
    if (f.exampleIdContains) where.push(like(runs.exampleId, `%${f.exampleIdContains.replace(/[%_\\]/g, (c) => `\\${c}`)}%`));
    if (f.createdFrom) where.push(gte(runs.createdAt, f.createdFrom));
    if (f.createdTo) where.push(lte(runs.createdAt, f.createdTo));
    if (f.createdAfter) where.push(gt(runs.createdAt, f.createdAfter));
    if (f.createdBefore) where.push(lt(runs.createdAt, f.createdBefore));
    if (f.completedAfter) where.push(gt(runs.completedAt, f.completedAfter));
    if (f.completedBefore) where.push(lt(runs.completedAt, f.completedBefore));
    if (f.ids?.length) where.push(inArray(runs.id, f.ids));
    if (f.experiments) {
      if ("ids" in f.experiments) where.push(inArray(runs.experimentId, f.experiments.ids));
      else if (f.experiments.mode === "exclude") where.push(sql`${runs.experimentId} IS NULL`);
      else if (f.experiments.mode === "only") where.push(sql`${runs.experimentId} IS NOT NULL`);
    }
    if (f.sampleRate !== undefined) where.push(lt(runs.sampleRank, f.sampleRate));
    if (f.requireReview) where.push(sql`0`);
    // Sorting on a nullable column: nulls sort as '' so the (key, id) cursor stays total.
    const key = sql`COALESCE(${sortColumn[f.sort]}, '')`;
    if (f.after) {
      const { key: k, id } = f.after;
      where.push(
        f.order === "desc"
          ? sql`(${key} < ${k} OR (${key} = ${k} AND ${runs.id} < ${id}))`
          : sql`(${key} > ${k} OR (${key} = ${k} AND ${runs.id} > ${id}))`,
      );
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
