// What backtests need from storage: the backtest rows, one item per selected run (its replay, its
// state, both sides' scores), and the selection of past runs. One async interface;
// db/sqlite/backtests.ts and db/pg/backtests.ts implement it. This module imports no implementation.

export interface BacktestRow {
  id: string;
  tenantId: string;
  automationId: string;
  /** The active version whose runs were selected. */
  baseVersionId: string;
  baseVersion: string | null;
  candidateVersionId: string;
  candidateVersion: string | null;
  /** The selection as asked (JSON). */
  selection: string;
  /** Seed of the statistics' resampling: the report is the same on every read. */
  seed: number;
  runTotal: number;
  createdBy: string | null;
  createdAt: string;
  completedAt: string | null;
  cancelledAt: string | null;
}

/**
 * `pending` (no replay yet), `started` (its replay run exists), `scored`, `skipped` (cannot be replayed:
 * its input files are gone), `cancelled` (the backtest was cancelled before it was scored).
 */
export type ItemState = "pending" | "started" | "scored" | "skipped" | "cancelled";

/** One side's scores of an item: the overall score, pass, and each evaluator's score. */
export interface SideRecord {
  score: number | null;
  passed: boolean;
  scores: Record<string, number | null>;
}

export interface ItemRow {
  backtestId: string;
  position: number;
  originalRunId: string;
  replayRunId: string | null;
  state: ItemState;
  reason: string | null;
  /** Where the expected value came from: the original run's `output`, or a reviewer's `correction`. */
  expectedFrom: "output" | "correction" | null;
  base: SideRecord | null;
  candidate: SideRecord | null;
}

export type ItemCounts = Record<ItemState, number>;

/** Past runs of one automation version (validated filters); newest first. */
export interface RunSelection {
  tenantId: string;
  automationId: string;
  versionId: string;
  from?: string;
  to?: string;
  statuses?: string[];
  triggers?: string[];
  /** `correct`, `incorrect`, or `none` (not reviewed or no verdict). */
  reviewVerdict?: string;
  runIds?: string[];
  limit: number;
}

export interface BacktestStore {
  /** Ids of the selected runs (never evaluation runs), newest first, at most `limit`. */
  select(s: RunSelection): Promise<string[]>;
  /** The backtest and one pending item per run, in one transaction. */
  create(b: BacktestRow, runIds: string[]): Promise<void>;
  byId(id: string): Promise<BacktestRow | undefined>;
  get(tenantId: string, id: string): Promise<BacktestRow | undefined>;
  /** Newest first. */
  list(tenantId: string, automationId: string, page: { limit: number; offset: number }): Promise<{ rows: BacktestRow[]; total: number }>;
  counts(id: string): Promise<ItemCounts>;
  /** All items, by position. */
  items(id: string): Promise<ItemRow[]>;
  /** Up to `n` items still pending, by position. */
  pending(id: string, n: number): Promise<ItemRow[]>;
  /** Items whose replay exists and is not scored yet. */
  started(id: string): Promise<ItemRow[]>;
  itemByReplay(replayRunId: string): Promise<ItemRow | undefined>;
  /** The run started with this dedupe key, if any (a replay whose item was not updated before a crash). */
  runByDedupeKey(key: string): Promise<string | undefined>;
  /** pending → started with its replay; false when the item was not pending any more. */
  markStarted(id: string, originalRunId: string, replayRunId: string, at: string): Promise<boolean>;
  /** pending → skipped with the reason. */
  markSkipped(id: string, originalRunId: string, reason: string, at: string): Promise<boolean>;
  /** started → scored with both sides, once; false when it already was (or is not started). */
  markScored(id: string, originalRunId: string, r: { expectedFrom: "output" | "correction"; base: SideRecord; candidate: SideRecord }, at: string): Promise<boolean>;
  /** started → cancelled (its replay ended cancelled), once. */
  markReplayCancelled(id: string, originalRunId: string, at: string): Promise<boolean>;
  /** Sets cancelled_at (the first one stays) and turns every pending item to cancelled, in one transaction. */
  cancel(id: string, at: string): Promise<void>;
  /** Completes the backtest when no item is pending or started; true for exactly one caller. */
  completeIfDone(id: string, at: string): Promise<boolean>;
  unfinished(): Promise<BacktestRow[]>;
}

/** An item row as either backend reads it (passes as 0/1 or booleans, scores as JSON text). */
export interface ItemColumns {
  backtestId: string;
  position: number;
  originalRunId: string;
  replayRunId: string | null;
  state: ItemState;
  reason: string | null;
  expectedFrom: "output" | "correction" | null;
  baseScore: number | null;
  basePassed: number | boolean | null;
  baseScores: string | null;
  candidateScore: number | null;
  candidatePassed: number | boolean | null;
  candidateScores: string | null;
}

const side = (score: number | null, passed: number | boolean | null, scores: string | null): SideRecord | null =>
  passed === null ? null : { score, passed: passed === true || passed === 1, scores: scores ? (JSON.parse(scores) as Record<string, number | null>) : {} };

/** An item row of either backend as the interface hands it out. */
export function itemOf(r: ItemColumns): ItemRow {
  return {
    backtestId: r.backtestId,
    position: r.position,
    originalRunId: r.originalRunId,
    replayRunId: r.replayRunId,
    state: r.state,
    reason: r.reason,
    expectedFrom: r.expectedFrom,
    base: side(r.baseScore, r.basePassed, r.baseScores),
    candidate: side(r.candidateScore, r.candidatePassed, r.candidateScores),
  };
}

