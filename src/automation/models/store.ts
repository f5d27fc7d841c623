// The only SQL of the models feature: the per-run journal of model calls (db/automation/0300).
import type { Database } from "bun:sqlite";
import type { ModelResponse, ModelUsage } from "./contract";

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

export interface ModelCallStore {
  /** Appends a call and returns its seq; durable when it returns (a resumed run must find it). */
  add(row: Omit<ModelCallRow, "seq">): number;
  /** A finished call of this run with the same request, not among `skip` (seqs already replayed). */
  replayable(runId: string, requestHash: string, skip: ReadonlySet<number>): { seq: number; response: ModelResponse } | undefined;
  calls(runId: string): ModelCallRow[];
  totals(runId: string): RunUsageTotals;
}

const COLUMNS =
  "run_id AS runId, seq, step_path AS stepPath, request_hash AS requestHash, model, provider, status, input_tokens AS inputTokens, output_tokens AS outputTokens, cache_read_tokens AS cacheReadTokens, cache_write_tokens AS cacheWriteTokens, duration_ms AS durationMs, started_at AS startedAt, error, request, response";

export function sqliteModelCallStore(sqlite: Database): ModelCallStore {
  return {
    add(r) {
      return sqlite
        .query<{ seq: number }, (string | number | null)[]>(
          `INSERT INTO model_calls (run_id, seq, step_path, request_hash, model, provider, status, input_tokens, output_tokens, cache_read_tokens, cache_write_tokens, duration_ms, started_at, error, request, response)
           VALUES (?1, (SELECT COALESCE(MAX(seq), 0) + 1 FROM model_calls WHERE run_id = ?1), ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15)
           RETURNING seq`,
        )
        .get(r.runId, r.stepPath, r.requestHash, r.model, r.provider, r.status, r.inputTokens, r.outputTokens, r.cacheReadTokens, r.cacheWriteTokens, r.durationMs, r.startedAt, r.error, r.request, r.response)!.seq;
    },
    replayable(runId, requestHash, skip) {
      const rows = sqlite
        .query<{ seq: number; response: string }, [string, string]>("SELECT seq, response FROM model_calls WHERE run_id = ? AND request_hash = ? AND status = 'ok' ORDER BY seq")
        .all(runId, requestHash);
      const row = rows.find((r) => !skip.has(r.seq));
      return row ? { seq: row.seq, response: JSON.parse(row.response) as ModelResponse } : undefined;
    },
    calls(runId) {
      return sqlite.query<ModelCallRow, [string]>(`SELECT ${COLUMNS} FROM model_calls WHERE run_id = ? ORDER BY seq`).all(runId);
    },
    totals(runId) {
      const t = sqlite
        .query<{ i: number | null; o: number | null; cr: number | null; cw: number | null; n: number; d: number | null }, [string]>(
          "SELECT SUM(input_tokens) i, SUM(output_tokens) o, SUM(cache_read_tokens) cr, SUM(cache_write_tokens) cw, COUNT(*) n, SUM(duration_ms) d FROM model_calls WHERE run_id = ?",
        )
        .get(runId)!;
      return { tokens: { input: t.i ?? 0, output: t.o ?? 0, cacheRead: t.cr ?? 0, cacheWrite: t.cw ?? 0 }, llmCallCount: t.n, llmDurationMs: t.d ?? 0 };
    },
  };
}
