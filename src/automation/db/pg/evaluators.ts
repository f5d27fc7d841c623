// Evaluator files and evaluation scores on PostgreSQL: the run_evaluations row is the marker, inserted
// with ON CONFLICT DO NOTHING, so exactly one scorer records a run even across instances.
import type { EvalResult, EvaluatorStore } from "../../evaluators/store";
import { type Pg, plainRows } from "./rows";

type ResultRow = Omit<EvalResult, "details"> & { details: string | null };

const RESULT_COLS = `e.id, e.run_id AS "runId", e.automation_id AS "automationId", e.evaluator_name AS "evaluatorName", e.evaluator_type AS "evaluatorType",
  e.score, e.passed, e.label, e.weight, e.pass_threshold AS "passThreshold", e.description, e.details::text AS details, e.error, e.created_at AS "createdAt"`;

const resultOf = (r: ResultRow): EvalResult => ({ ...r, details: r.details === null ? null : (JSON.parse(r.details) as unknown) });

export class PgEvaluatorStore implements EvaluatorStore {
  constructor(readonly pg: Pg) {}

  async yaml(automationId: string): Promise<string | undefined> {
    const [r] = await this.pg`SELECT yaml FROM evaluator_configs WHERE automation_id = ${automationId}`;
    return r?.yaml;
  }

  async put(tenantId: string, automationId: string, yaml: string, at: string): Promise<void> {
    await this.pg`INSERT INTO evaluator_configs (automation_id, tenant_id, yaml, updated_at) VALUES (${automationId}, ${tenantId}, ${yaml}, ${at})
      ON CONFLICT (automation_id) DO UPDATE SET yaml = excluded.yaml, updated_at = excluded.updated_at`;
  }

  async record(run: { runId: string; experimentId: string | null; score: number | null; passed: boolean; at: string }, results: EvalResult[]): Promise<boolean> {
    return this.pg.begin(async (tx) => {
      const ins = await tx`INSERT INTO run_evaluations (run_id, experiment_id, score, passed, created_at)
        VALUES (${run.runId}, ${run.experimentId}, ${run.score}, ${run.passed}, ${run.at}) ON CONFLICT (run_id) DO NOTHING`;
      if (ins.count !== 1) return false;
      for (const r of results) {
        const details = r.details === undefined || r.details === null ? null : JSON.stringify(r.details);
        await tx`INSERT INTO eval_results (id, run_id, automation_id, evaluator_name, evaluator_type, score, passed, label, weight, pass_threshold, description, details, error, created_at)
          VALUES (${r.id}, ${r.runId}, ${r.automationId}, ${r.evaluatorName}, ${r.evaluatorType}, ${r.score}, ${r.passed}, ${r.label}, ${r.weight}, ${r.passThreshold},
            ${r.description}, CAST(${details} AS text)::json, ${r.error}, ${r.createdAt})`;
      }
      return true;
    });
  }

  async scored(runId: string): Promise<boolean> {
    return (await this.pg`SELECT 1 FROM run_evaluations WHERE run_id = ${runId}`).length > 0;
  }

  async evaluation(runId: string): Promise<{ score: number | null; passed: boolean } | undefined> {
    const [r] = await this.pg`SELECT score, passed FROM run_evaluations WHERE run_id = ${runId}`;
    return r ? { score: r.score, passed: r.passed } : undefined;
  }

  async results(runId: string): Promise<EvalResult[]> {
    return plainRows<ResultRow>(await this.pg.unsafe(`SELECT ${RESULT_COLS} FROM eval_results e WHERE run_id = $1 ORDER BY id`, [runId])).map(resultOf);
  }

  async resultsOfExperiment(experimentId: string): Promise<EvalResult[]> {
    const rows = await this.pg.unsafe(`SELECT ${RESULT_COLS} FROM eval_results e JOIN runs r ON r.id = e.run_id WHERE r.experiment_id = $1 ORDER BY r.created_at, r.id, e.id`, [experimentId]);
    return plainRows<ResultRow>(rows).map(resultOf);
  }

  async unscored(limit: number): Promise<string[]> {
    const rows = await this.pg`SELECT r.id FROM runs r LEFT JOIN run_evaluations e ON e.run_id = r.id
      WHERE r.evaluation AND r.example_id IS NOT NULL AND r.status IN ('completed', 'failed', 'cancelled', 'rejected') AND e.run_id IS NULL
      ORDER BY r.created_at LIMIT ${limit}`;
    return rows.map((r: { id: string }) => r.id);
  }
}
