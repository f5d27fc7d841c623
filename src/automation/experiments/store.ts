// The only SQL of experiments. Counters are never stored: they are counted from the runs and their
// recorded evaluations, so they equal the rows whatever crashed when.
import type { Database } from "bun:sqlite";

export interface ExperimentRow {
  id: string;
  tenantId: string;
  automationId: string;
  automationType: string;
  name: string | null;
  version: string | null;
  runTotal: number;
  readyAt: string | null;
  createdAt: string;
  completedAt: string | null;
  cancelledAt: string | null;
  /** At most this many of its runs in flight at once (null = bounded by the server's workers only). */
  batchConcurrency: number | null;
}

export interface ExperimentStats {
  runCount: number;
  started: number;
  scored: number;
  passed: number;
  failed: number;
  avgScore: number | null;
}

export interface ExperimentRunRow {
  id: string;
  status: string;
  exampleId: string | null;
  exampleName: string | null;
  createdAt: string;
  completedAt: string | null;
  score: number | null;
  passed: number | null;
}

const COLS =
  "id, tenant_id AS tenantId, automation_id AS automationId, automation_type AS automationType, name, version, run_total AS runTotal, ready_at AS readyAt, created_at AS createdAt, completed_at AS completedAt, cancelled_at AS cancelledAt, batch_concurrency AS batchConcurrency";

export class ExperimentStore {
  constructor(readonly sqlite: Database) {}

  insert(r: ExperimentRow): void {
    this.sqlite
      .query(
        "INSERT INTO experiments (id, tenant_id, automation_id, automation_type, name, version, run_total, ready_at, created_at, completed_at, cancelled_at, batch_concurrency) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
      )
      .run(r.id, r.tenantId, r.automationId, r.automationType, r.name, r.version, r.runTotal, r.readyAt, r.createdAt, r.completedAt, r.cancelledAt, r.batchConcurrency);
  }

  remove(id: string): void {
    this.sqlite.query("DELETE FROM experiments WHERE id = ?").run(id);
  }

  byId(id: string): ExperimentRow | undefined {
    return this.sqlite.query<ExperimentRow, [string]>(`SELECT ${COLS} FROM experiments WHERE id = ?`).get(id) ?? undefined;
  }

  get(tenantId: string, id: string): ExperimentRow | undefined {
    return this.sqlite.query<ExperimentRow, [string, string]>(`SELECT ${COLS} FROM experiments WHERE tenant_id = ? AND id = ?`).get(tenantId, id) ?? undefined;
  }

  list(tenantId: string, automationId: string, f: { from?: string; to?: string; limit: number; offset: number }): { rows: ExperimentRow[]; total: number } {
    const where = "tenant_id = ? AND automation_id = ? AND created_at >= ? AND created_at <= ?";
    const args = [tenantId, automationId, f.from ?? "", f.to ?? "9999"] as const;
    const rows = this.sqlite
      .query<ExperimentRow, [string, string, string, string, number, number]>(`SELECT ${COLS} FROM experiments WHERE ${where} ORDER BY created_at DESC, id DESC LIMIT ? OFFSET ?`)
      .all(...args, f.limit, f.offset);
    const total = this.sqlite.query<{ n: number }, [string, string, string, string]>(`SELECT COUNT(*) AS n FROM experiments WHERE ${where}`).get(...args)!.n;
    return { rows, total };
  }

  /** Experiments of the automation, oldest first (the export of all experiments). */
  ofAutomation(tenantId: string, automationId: string): ExperimentRow[] {
    return this.sqlite
      .query<ExperimentRow, [string, string]>(`SELECT ${COLS} FROM experiments WHERE tenant_id = ? AND automation_id = ? ORDER BY created_at, id`)
      .all(tenantId, automationId);
  }

  stats(id: string): ExperimentStats {
    const s = this.sqlite
      .query<ExperimentStats, [string]>(
        `SELECT COUNT(*) AS runCount,
                COALESCE(SUM(r.started_at IS NOT NULL OR r.status NOT IN ('pending', 'created')), 0) AS started,
                COALESCE(SUM(e.run_id IS NOT NULL), 0) AS scored,
                COALESCE(SUM(e.passed = 1), 0) AS passed,
                COALESCE(SUM(e.run_id IS NOT NULL AND e.passed = 0 AND r.status NOT IN ('cancelled', 'rejected')), 0) AS failed,
                AVG(e.score) AS avgScore
         FROM runs r LEFT JOIN run_evaluations e ON e.run_id = r.id WHERE r.experiment_id = ?`,
      )
      .get(id)!;
    return s;
  }

  /** Whether some run of the experiment is not scored yet (stops at the first one). */
  hasUnscored(id: string): boolean {
    return !!this.sqlite
      .query("SELECT 1 FROM runs r LEFT JOIN run_evaluations e ON e.run_id = r.id WHERE r.experiment_id = ? AND e.run_id IS NULL LIMIT 1")
      .get(id);
  }

  runs(id: string): ExperimentRunRow[] {
    return this.sqlite
      .query<ExperimentRunRow, [string]>(
        `SELECT r.id, r.status, r.example_id AS exampleId, x.name AS exampleName, r.created_at AS createdAt, r.completed_at AS completedAt, e.score, e.passed
         FROM runs r LEFT JOIN dataset_examples x ON x.id = r.example_id LEFT JOIN run_evaluations e ON e.run_id = r.id
         WHERE r.experiment_id = ? ORDER BY r.created_at, r.id`,
      )
      .all(id);
  }

  /** Ids of the experiment's runs that are not finished yet. */
  openRuns(id: string): string[] {
    return this.sqlite
      .query<{ id: string }, [string]>("SELECT id FROM runs WHERE experiment_id = ? AND status NOT IN ('completed', 'failed', 'cancelled', 'rejected')")
      .all(id)
      .map((r) => r.id);
  }

  setReady(id: string, at: string, runTotal: number): void {
    this.sqlite.query("UPDATE experiments SET ready_at = ?, run_total = ? WHERE id = ?").run(at, runTotal, id);
  }

  setCancelled(id: string, at: string): void {
    this.sqlite.query("UPDATE experiments SET cancelled_at = COALESCE(cancelled_at, ?) WHERE id = ?").run(at, id);
  }

  /** Returns true when this call completed it. */
  markCompleted(id: string, at: string): boolean {
    return this.sqlite.query("UPDATE experiments SET completed_at = ? WHERE id = ? AND completed_at IS NULL").run(at, id).changes === 1;
  }

  /** Experiments still in progress (start-up recovery). */
  unfinished(): ExperimentRow[] {
    return this.sqlite.query<ExperimentRow, []>(`SELECT ${COLS} FROM experiments WHERE completed_at IS NULL`).all();
  }
}
