// The automation server's storage: one async store per feature. Services, routes, the engine and the
// workers only ever see these interfaces; the SQLite implementations live in sqlite/ (a PostgreSQL one
// comes in pg/). A multi-step invariant is one method here (decided inside the database: a conditional
// update, a transaction), never a read-then-write in a service. This module imports no implementation.
import type { EvalResult } from "../evaluators/model";

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

export interface AutomationStorage {
  backend: "sqlite" | "postgres";
  evaluators: EvaluatorStore;
}
