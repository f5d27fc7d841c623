// Evaluator files and evaluation scores on SQLite (`passed` as 0/1, `details` as JSON text).
import type { Database } from "bun:sqlite";
import type { EvalResult, EvaluatorStore } from "../../evaluators/store";

type ResultRow = Omit<EvalResult, "passed" | "details"> & { passed: number | null; details: string | null };

const resultCols = (t: string) =>
  ["id", "run_id AS runId", "automation_id AS automationId", "evaluator_name AS evaluatorName", "evaluator_type AS evaluatorType", "score", "passed", "label", "weight", "pass_threshold AS passThreshold", "description", "details", "error", "created_at AS createdAt"]
    .map((c) => `${t}.${c}`)
    .join(", ");

const resultOf = (r: ResultRow): EvalResult => ({
  ...r,
  passed: r.passed === null ? null : r.passed === 1,
  details: r.details === null ? null : (JSON.parse(r.details) as unknown),
});

export class SqliteEvaluatorStore implements EvaluatorStore {
  constructor(readonly sqlite: Database) {}

  async yaml(automationId: string): Promise<string | undefined> {
    return this.sqlite.query<{ yaml: string }, [string]>("SELECT yaml FROM evaluator_configs WHERE automation_id = ?").get(automationId)?.yaml;
  }

  async put(tenantId: string, automationId: string, yaml: string, at: string): Promise<void> {
    this.sqlite
      .query("INSERT INTO evaluator_configs (automation_id, tenant_id, yaml, updated_at) VALUES (?, ?, ?, ?) ON CONFLICT(automation_id) DO UPDATE SET yaml = excluded.yaml, updated_at = excluded.updated_at")
      .run(automationId, tenantId, yaml, at);
  }

  // The run_evaluations row is the marker: INSERT OR IGNORE lets exactly one scorer through.
  async record(run: { runId: string; experimentId: string | null; score: number | null; passed: boolean; at: string }, results: EvalResult[]): Promise<boolean> {
    return this.sqlite.transaction(() => {
      const changed = this.sqlite
        .query("INSERT OR IGNORE INTO run_evaluations (run_id, experiment_id, score, passed, created_at) VALUES (?, ?, ?, ?, ?)")
        .run(run.runId, run.experimentId, run.score, run.passed ? 1 : 0, run.at).changes;
      if (changed !== 1) return false;
      const ins = this.sqlite.query(
        "INSERT INTO eval_results (id, run_id, automation_id, evaluator_name, evaluator_type, score, passed, label, weight, pass_threshold, description, details, error, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
      );
      for (const r of results) {
        const passed = r.passed === null ? null : r.passed ? 1 : 0;
        const details = r.details === undefined || r.details === null ? null : JSON.stringify(r.details);
        ins.run(r.id, r.runId, r.automationId, r.evaluatorName, r.evaluatorType, r.score, passed, r.label, r.weight, r.passThreshold, r.description, details, r.error, r.createdAt);
      }
      return true;
    }).immediate();
  }

  async scored(runId: string): Promise<boolean> {
    return !!this.sqlite.query("SELECT 1 FROM run_evaluations WHERE run_id = ?").get(runId);
  }

  async evaluation(runId: string): Promise<{ score: number | null; passed: boolean } | undefined> {
    const r = this.sqlite.query<{ score: number | null; passed: number }, [string]>("SELECT score, passed FROM run_evaluations WHERE run_id = ?").get(runId);
    return r ? { score: r.score, passed: r.passed === 1 } : undefined;
  }

  async results(runId: string): Promise<EvalResult[]> {
    return this.sqlite.query<ResultRow, [string]>(`SELECT ${resultCols("e")} FROM eval_results e WHERE run_id = ? ORDER BY id`).all(runId).map(resultOf);
  }

  async resultsOfExperiment(experimentId: string): Promise<EvalResult[]> {
    return this.sqlite
      .query<ResultRow, [string]>(`SELECT ${resultCols("e")} FROM eval_results e JOIN runs r ON r.id = e.run_id WHERE r.experiment_id = ? ORDER BY r.created_at, r.id, e.id`)
      .all(experimentId)
      .map(resultOf);
  }

  async unscored(limit: number): Promise<string[]> {
    return this.sqlite
      .query<{ id: string }, [number]>(
        `SELECT r.id FROM runs r LEFT JOIN run_evaluations e ON e.run_id = r.id
         WHERE r.evaluation = 1 AND r.example_id IS NOT NULL AND r.status IN ('completed', 'failed', 'cancelled', 'rejected') AND e.run_id IS NULL
         ORDER BY r.created_at LIMIT ?`,
      )
      .all(limit)
      .map((r) => r.id);
  }
}
