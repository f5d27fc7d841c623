// The only SQL of evaluator files (one YAML per automation) and of evaluation scores.
import type { Database } from "bun:sqlite";
import type { EvalResult } from "./model";

/** A stored score: the wire's fields, with `passed` as 0/1 and `details` as JSON text. */
export type ResultRow = Omit<EvalResult, "passed" | "details"> & { passed: number | null; details: string | null };

const resultCols = (t: string) =>
  ["id", "run_id AS runId", "automation_id AS automationId", "evaluator_name AS evaluatorName", "evaluator_type AS evaluatorType", "score", "passed", "label", "weight", "pass_threshold AS passThreshold", "description", "details", "error", "created_at AS createdAt"]
    .map((c) => `${t}.${c}`)
    .join(", ");

export class EvaluatorStore {
  constructor(readonly sqlite: Database) {}

  yaml(automationId: string): string | undefined {
    return this.sqlite.query<{ yaml: string }, [string]>("SELECT yaml FROM evaluator_configs WHERE automation_id = ?").get(automationId)?.yaml;
  }

  put(tenantId: string, automationId: string, yaml: string, at: string): void {
    this.sqlite
      .query("INSERT INTO evaluator_configs (automation_id, tenant_id, yaml, updated_at) VALUES (?, ?, ?, ?) ON CONFLICT(automation_id) DO UPDATE SET yaml = excluded.yaml, updated_at = excluded.updated_at")
      .run(automationId, tenantId, yaml, at);
  }

  /**
   * Records a run's scores once: the run_evaluations row is the marker, so a second scorer (a restart
   * recovering the same run) changes nothing. Returns whether this call recorded them.
   */
  record(run: { runId: string; experimentId: string | null; score: number | null; passed: boolean; at: string }, results: ResultRow[]): boolean {
    return this.sqlite.transaction(() => {
      const changed = this.sqlite
        .query("INSERT OR IGNORE INTO run_evaluations (run_id, experiment_id, score, passed, created_at) VALUES (?, ?, ?, ?, ?)")
        .run(run.runId, run.experimentId, run.score, run.passed ? 1 : 0, run.at).changes;
      if (changed !== 1) return false;
      const ins = this.sqlite.query(
        "INSERT INTO eval_results (id, run_id, automation_id, evaluator_name, evaluator_type, score, passed, label, weight, pass_threshold, description, details, error, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
      );
      for (const r of results) {
        ins.run(r.id, r.runId, r.automationId, r.evaluatorName, r.evaluatorType, r.score, r.passed, r.label, r.weight, r.passThreshold, r.description, r.details, r.error, r.createdAt);
      }
      return true;
    }).immediate();
  }

  scored(runId: string): boolean {
    return !!this.sqlite.query("SELECT 1 FROM run_evaluations WHERE run_id = ?").get(runId);
  }

  evaluation(runId: string): { score: number | null; passed: number } | undefined {
    return this.sqlite.query<{ score: number | null; passed: number }, [string]>("SELECT score, passed FROM run_evaluations WHERE run_id = ?").get(runId) ?? undefined;
  }

  results(runId: string): ResultRow[] {
    return this.sqlite.query<ResultRow, [string]>(`SELECT ${resultCols("e")} FROM eval_results e WHERE run_id = ? ORDER BY id`).all(runId);
  }

  /** Results of every run of an experiment, in run then evaluator order. */
  resultsOfExperiment(experimentId: string): ResultRow[] {
    return this.sqlite
      .query<ResultRow, [string]>(
        `SELECT ${resultCols("e")} FROM eval_results e JOIN runs r ON r.id = e.run_id WHERE r.experiment_id = ? ORDER BY r.created_at, r.id, e.id`,
      )
      .all(experimentId);
  }

  /** Evaluation runs that ended but were never scored (the process died in between). */
  unscored(limit = 1000): string[] {
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
