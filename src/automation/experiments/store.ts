// What experiments need from storage: the experiment rows, their counted stats and their runs.
// One async interface; db/sqlite/experiments.ts and db/pg/experiments.ts implement it. This module imports no implementation.

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
  /** Runs per example (1–20): each example runs this many times, each run an independent trial. */
  trials: number;
}

/** Counted from the runs and their recorded evaluations (never stored), so they equal the rows whatever crashed when. */
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
  /** 1-based trial of an experiment with `trials` > 1; null when it runs each example once. */
  trial: number | null;
  createdAt: string;
  completedAt: string | null;
  score: number | null;
  /** null until the run is scored. */
  passed: boolean | null;
}

/** Experiments; their runs are runs with `experiment_id` set, their scores the evaluators' records. */
export interface ExperimentStore {
  insert(r: ExperimentRow): Promise<void>;
  remove(id: string): Promise<void>;
  byId(id: string): Promise<ExperimentRow | undefined>;
  get(tenantId: string, id: string): Promise<ExperimentRow | undefined>;
  /** Newest first, created within [from, to]. */
  list(tenantId: string, automationId: string, f: { from?: string; to?: string; limit: number; offset: number }): Promise<{ rows: ExperimentRow[]; total: number }>;
  /** Experiments of the automation, oldest first (the export of all experiments). */
  ofAutomation(tenantId: string, automationId: string): Promise<ExperimentRow[]>;
  stats(id: string): Promise<ExperimentStats>;
  /** Its runs, oldest first, with their example's name and score. */
  runs(id: string): Promise<ExperimentRunRow[]>;
  /** Ids of the experiment's runs that are not finished yet. */
  openRuns(id: string): Promise<string[]>;
  /** All its runs are created: `runTotal` of them, or as many as exist when undefined (a creation that died). */
  setReady(id: string, at: string, runTotal?: number): Promise<void>;
  /** Keeps the first cancellation time. */
  setCancelled(id: string, at: string): Promise<void>;
  /**
   * Completes the experiment when it is ready, not completed yet and every run of it is scored, in one
   * conditional update; returns whether this call completed it (exactly one caller sees true).
   */
  completeIfDone(id: string, at: string): Promise<boolean>;
  /** Experiments still in progress (start-up recovery). */
  unfinished(): Promise<ExperimentRow[]>;
}
