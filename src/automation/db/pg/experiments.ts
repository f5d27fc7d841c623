// Experiments on PostgreSQL. Counters are counted from the runs and their recorded evaluations, never
// stored; completion is one conditional UPDATE, so of several instances finishing the last runs at
// once exactly one completes the experiment (the row lock makes the others re-check and find it done).
import type { ExperimentRow, ExperimentRunRow, ExperimentStats, ExperimentStore } from "../../experiments/store";
import { int, type Pg, plain, plainRows } from "./rows";

const COLS = `id, tenant_id AS "tenantId", automation_id AS "automationId", automation_type AS "automationType", name, version, run_total AS "runTotal",
  ready_at AS "readyAt", created_at AS "createdAt", completed_at AS "completedAt", cancelled_at AS "cancelledAt", batch_concurrency AS "batchConcurrency", trials`;
const FINISHED = "('completed', 'failed', 'cancelled', 'rejected')";

export class PgExperimentStore implements ExperimentStore {
  constructor(readonly pg: Pg) {}

  async insert(r: ExperimentRow): Promise<void> {
    await this.pg`INSERT INTO experiments (id, tenant_id, automation_id, automation_type, name, version, run_total, ready_at, created_at, completed_at, cancelled_at, batch_concurrency, trials)
      VALUES (${r.id}, ${r.tenantId}, ${r.automationId}, ${r.automationType}, ${r.name}, ${r.version}, ${r.runTotal}, ${r.readyAt}, ${r.createdAt}, ${r.completedAt}, ${r.cancelledAt}, ${r.batchConcurrency}, ${r.trials})`;
  }

  async remove(id: string): Promise<void> {
    await this.pg`DELETE FROM experiments WHERE id = ${id}`;
  }

  private async one(where: string, args: unknown[]): Promise<ExperimentRow | undefined> {
    const [r] = await this.pg.unsafe(`SELECT ${COLS} FROM experiments WHERE ${where}`, args);
    return r ? plain<ExperimentRow>(r) : undefined;
  }

  byId(id: string): Promise<ExperimentRow | undefined> {
    return this.one("id = $1", [id]);
  }

  get(tenantId: string, id: string): Promise<ExperimentRow | undefined> {
    return this.one("tenant_id = $1 AND id = $2", [tenantId, id]);
  }

  async list(tenantId: string, automationId: string, f: { from?: string; to?: string; limit: number; offset: number }): Promise<{ rows: ExperimentRow[]; total: number }> {
    const where = "tenant_id = $1 AND automation_id = $2 AND ($3::timestamptz IS NULL OR created_at >= $3::timestamptz) AND ($4::timestamptz IS NULL OR created_at <= $4::timestamptz)";
    const args = [tenantId, automationId, f.from ?? null, f.to ?? null];
    const rows = await this.pg.unsafe(`SELECT ${COLS} FROM experiments WHERE ${where} ORDER BY created_at DESC, id DESC LIMIT $5 OFFSET $6`, [...args, f.limit, f.offset]);
    const [{ n }] = await this.pg.unsafe(`SELECT COUNT(*)::int AS n FROM experiments WHERE ${where}`, args);
    return { rows: plainRows<ExperimentRow>(rows), total: n };
  }

  async ofAutomation(tenantId: string, automationId: string): Promise<ExperimentRow[]> {
    return plainRows<ExperimentRow>(await this.pg.unsafe(`SELECT ${COLS} FROM experiments WHERE tenant_id = $1 AND automation_id = $2 ORDER BY created_at, id`, [tenantId, automationId]));
  }

  async stats(id: string): Promise<ExperimentStats> {
    const [r] = await this.pg`SELECT COUNT(*)::int AS "runCount",
        COUNT(*) FILTER (WHERE r.started_at IS NOT NULL OR r.status NOT IN ('pending', 'created'))::int AS started,
        COUNT(e.run_id)::int AS scored,
        COUNT(*) FILTER (WHERE e.passed)::int AS passed,
        COUNT(*) FILTER (WHERE e.run_id IS NOT NULL AND NOT e.passed AND r.status NOT IN ('cancelled', 'rejected'))::int AS failed,
        AVG(e.score) AS "avgScore"
      FROM runs r LEFT JOIN run_evaluations e ON e.run_id = r.id WHERE r.experiment_id = ${id}`;
    return { ...r, avgScore: r.avgScore === null ? null : Number(r.avgScore) };
  }

  async runs(id: string): Promise<ExperimentRunRow[]> {
    const rows = await this.pg`SELECT r.id, r.status, r.example_id AS "exampleId", x.name AS "exampleName", r.trial, r.created_at AS "createdAt", r.completed_at AS "completedAt", e.score, e.passed
      FROM runs r LEFT JOIN dataset_examples x ON x.id = r.example_id LEFT JOIN run_evaluations e ON e.run_id = r.id
      WHERE r.experiment_id = ${id} ORDER BY r.created_at, r.id`;
    return plainRows<ExperimentRunRow>(rows);
  }

  async openRuns(id: string): Promise<string[]> {
    const rows = await this.pg.unsafe(`SELECT id FROM runs WHERE experiment_id = $1 AND status NOT IN ${FINISHED}`, [id]);
    return rows.map((r: { id: string }) => r.id);
  }

  async setReady(id: string, at: string, runTotal?: number): Promise<void> {
    if (runTotal !== undefined) await this.pg`UPDATE experiments SET ready_at = ${at}, run_total = ${runTotal} WHERE id = ${id}`;
    else await this.pg`UPDATE experiments SET ready_at = ${at}, run_total = (SELECT COUNT(*) FROM runs WHERE experiment_id = ${id}) WHERE id = ${id}`;
  }

  async setCancelled(id: string, at: string): Promise<void> {
    await this.pg`UPDATE experiments SET cancelled_at = COALESCE(cancelled_at, ${at}) WHERE id = ${id}`;
  }

  async completeIfDone(id: string, at: string): Promise<boolean> {
    const r = await this.pg`UPDATE experiments SET completed_at = ${at} WHERE id = ${id} AND completed_at IS NULL AND ready_at IS NOT NULL
      AND NOT EXISTS (SELECT 1 FROM runs r LEFT JOIN run_evaluations e ON e.run_id = r.id WHERE r.experiment_id = experiments.id AND e.run_id IS NULL)`;
    return r.count === 1;
  }

  async unfinished(): Promise<ExperimentRow[]> {
    return plainRows<ExperimentRow>(await this.pg.unsafe(`SELECT ${COLS} FROM experiments WHERE completed_at IS NULL`));
  }
}
