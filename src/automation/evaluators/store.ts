// What evaluation needs from storage: the evaluator YAML of an automation and the scores of its runs.
// One async interface; db/sqlite/evaluators.ts and db/pg/evaluators.ts implement it. This module imports no implementation.
/** One stored score of a run (model.ts re-exports it for the wire), as `GET /v1/runs/{id}/evaluations` and experiments show it. */
export interface EvalResult {
  id: string;
  runId: string;
  automationId: string | null;
  evaluatorName: string;
  evaluatorType: string;
  score: number | null;
  passed: boolean | null;
  label: string | null;
  weight: number | null;
  passThreshold: number | null;
  description: string | null;
  details: unknown;
  error: string | null;
  createdAt: string;
}

/** Evaluator files (one YAML per automation) and the scores of evaluation runs. */
export interface EvaluatorStore {
  /** The stored evaluator YAML of an automation; undefined when it has none. */
  yaml(automationId: string): Promise<string | undefined>;
  put(tenantId: string, automationId: string, yaml: string, at: string): Promise<void>;
  /**
   * Records a run's scores once: a second call for the same run (a restart recovering it) changes
   * nothing. Returns whether this call recorded them.
   */
  record(run: { runId: string; experimentId: string | null; score: number | null; passed: boolean; at: string }, results: EvalResult[]): Promise<boolean>;
  scored(runId: string): Promise<boolean>;
  /** A scored run's overall score and verdict. */
  evaluation(runId: string): Promise<{ score: number | null; passed: boolean } | undefined>;
  /** A run's results, in the order they were recorded. */
  results(runId: string): Promise<EvalResult[]>;
  /** Results of every run of an experiment, in run then evaluator order. */
  resultsOfExperiment(experimentId: string): Promise<EvalResult[]>;
  /** Evaluation runs that ended but were never scored (the process died in between), oldest first. */
  unscored(limit: number): Promise<string[]>;
}
