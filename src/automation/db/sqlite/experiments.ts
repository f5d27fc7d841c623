// Experiments on SQLite. Counters are never stored: they are counted from the runs and their recorded
// evaluations, so they equal the rows whatever crashed when.
import type { Database } from "bun:sqlite";
import type { ExperimentRow, ExperimentRunRow, ExperimentStats, ExperimentStore } from "../../experiments/store";

const COLS =
  "id, tenant_id AS tenantId, automation_id AS automationId, automation_type AS automationType, name, version, run_total AS runTotal, ready_at AS readyAt, created_at AS createdAt, completed_at AS completedAt, cancelled_at AS cancelledAt, batch_concurrency AS batchConcurrency, trials";

/** Ready, not completed yet, and every run of it scored. */
const DONE = `completed_at IS NULL AND ready_at IS NOT NULL
  AND NOT EXISTS (SELECT 1 FROM runs r LEFT JOIN run_evaluations e ON e.run_id = r.id WHERE r.experiment_id = experiments.id AND e.run_id IS NULL)`;

export class SqliteExperimentStore implements ExperimentStore {
  constructor(readonly sqlite: Database) {}

  async insert(r: ExperimentRow): Promise<void> {
    this.sqlite
      .query(
        "INSERT INTO experiments (id, tenant_id, automation_id, automation_type, name, version, run_total, ready_at, created_at, completed_at, cancelled_at, batch_concurrency, trials) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
      )
      .run(r.id, r.tenantId, r.automationId, r.automationType, r.name, r.version, r.runTotal, r.readyAt, r.createdAt, r.completedAt, r.cancelledAt, r.batchConcurrency, r.trials);
  }

  async remove(id: string): Promise<void> {
    this.sqlite.query("DELETE FROM experiments WHERE id = ?").run(id);
  }

  async byId(id: string): Promise<ExperimentRow | undefined> {
    return this.sqlite.query<ExperimentRow, [string]>(`SELECT ${COLS} FROM experiments WHERE id = ?`).get(id) ?? undefined;
  }

  async get(tenantId: string, id: string): Promise<ExperimentRow | undefined> {
    return this.sqlite.query<ExperimentRow, [string, string]>(`SELECT ${COLS} FROM experiments WHERE tenant_id = ? AND id = ?`).get(tenantId, id) ?? undefined;
  }

  async list(tenantId: string, automationId: string, f: { from?: string; to?: string; limit: number; offset: number }): Promise<{ rows: ExperimentRow[]; total: number }> {
    const where = "tenant_id = ? AND automation_id = ? AND created_at >= ? AND created_at <= ?";
    const args = [tenantId, automationId, f.from ?? "", f.to ?? "9999"] as const;
    const rows = this.sqlite
      .query<ExperimentRow, [string, string, string, string, number, number]>(`SELECT ${COLS} FROM experiments WHERE ${where} ORDER BY created_at DESC, id DESC LIMIT ? OFFSET ?`)
      .all(...args, f.limit, f.offset);
    const total = this.sqlite.query<{ n: number }, [string, string, string, string]>(`SELECT COUNT(*) AS n FROM experiments WHERE ${where}`).get(...args)!.n;
    return { rows, total };
  }

  async ofAutomation(tenantId: string, automationId: string): Promise<ExperimentRow[]> {
    return this.sqlite
      .query<ExperimentRow, [string, string]>(`SELECT ${COLS} FROM experiments WHERE tenant_id = ? AND automation_id = ? ORDER BY created_at, id`)
      .all(tenantId, automationId);
  }

  async stats(id: string): Promise<ExperimentStats> {
    return this.sqlite
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
  }

  async runs(id: string): Promise<ExperimentRunRow[]> {
    return this.sqlite
      .query<Omit<ExperimentRunRow, "passed"> & { passed: number | null }, [string]>(
        `SELECT r.id, r.status, r.example_id AS exampleId, x.name AS exampleName, r.trial, r.created_at AS createdAt, r.completed_at AS completedAt, e.score, e.passed
         FROM runs r LEFT JOIN dataset_examples x ON x.id = r.example_id LEFT JOIN run_evaluations e ON e.run_id = r.id
         WHERE r.experiment_id = ? ORDER BY r.created_at, r.id`,
      )
      .all(id)
      .map((r) => ({ ...r, passed: r.passed === null ? null : r.passed === 1 }));
  }

  async openRuns(id: string): Promise<string[]> {
    return this.sqlite
      .query<{ id: string }, [string]>("SELECT id FROM runs WHERE experiment_id = ? AND status NOT IN ('completed', 'failed', 'cancelled', 'rejected')")
      .all(id)
      .map((r) => r.id);
  }

  async setReady(id: string, at: string, runTotal?: number): Promise<void> {
    if (runTotal !== undefined) this.sqlite.query("UPDATE experiments SET ready_at = ?, run_total = ? WHERE id = ?").run(at, runTotal, id);
    else this.sqlite.query("UPDATE experiments SET ready_at = ?, run_total = (SELECT COUNT(*) FROM runs WHERE experiment_id = ?) WHERE id = ?").run(at, id, id);
  }

  async setCancelled(id: string, at: string): Promise<void> {
    this.sqlite.query("UPDATE experiments SET cancelled_at = COALESCE(cancelled_at, ?) WHERE id = ?").run(at, id);
  }

  async completeIfDone(id: string, at: string): Promise<boolean> {
    // Asked after every scored run: reads answer the common "not yet" without taking the write lock, the
    // cheap one first (still being created), then the scan for an unscored run.
    const e = this.sqlite.query<{ readyAt: string | null; completedAt: string | null }, [string]>("SELECT ready_at AS readyAt, completed_at AS completedAt FROM experiments WHERE id = ?").get(id);
    if (!e || e.completedAt || !e.readyAt) return false;
    if (this.sqlite.query(`SELECT 1 FROM runs r LEFT JOIN run_evaluations e ON e.run_id = r.id WHERE r.experiment_id = ? AND e.run_id IS NULL LIMIT 1`).get(id)) return false;
    return this.sqlite.query(`UPDATE experiments SET completed_at = ? WHERE id = ? AND ${DONE}`).run(at, id).changes === 1;
  }

  async unfinished(): Promise<ExperimentRow[]> {
    return this.sqlite.query<ExperimentRow, []>(`SELECT ${COLS} FROM experiments WHERE completed_at IS NULL`).all();
  }
}
