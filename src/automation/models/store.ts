// What the model gateway needs from storage: the per-run journal of model calls (replayed after a crash).
// One async interface; db/sqlite/models.ts and db/pg/models.ts implement it. This module imports no implementation.
import type { ModelResponse, ModelUsage } from "./contract";

export type { ModelResponse };

/** One journaled model call of a run. */
export interface ModelCallRow {
  runId: string;
  seq: number;
  stepPath: string | null;
  requestHash: string;
  model: string | null;
  provider: string | null;
  status: "ok" | "failed";
  inputTokens: number;
  outputTokens: number;
  cacheReadTokens: number;
  cacheWriteTokens: number;
  durationMs: number;
  startedAt: string;
  error: string | null;
  request: string | null;
  response: string | null;
}

export interface RunUsageTotals {
  tokens: ModelUsage;
  llmCallCount: number;
  llmDurationMs: number;
}

/** The per-run journal of model calls. */
export interface ModelCallStore {
  /** Appends a call and returns its seq (the next of its run, assigned by the database); durable when it resolves. */
  add(row: Omit<ModelCallRow, "seq">): Promise<number>;
  /** A finished call of this run with the same request, not among `skip` (seqs already replayed). */
  replayable(runId: string, requestHash: string, skip: ReadonlySet<number>): Promise<{ seq: number; response: ModelResponse } | undefined>;
  calls(runId: string): Promise<ModelCallRow[]>;
  totals(runId: string): Promise<RunUsageTotals>;
}
