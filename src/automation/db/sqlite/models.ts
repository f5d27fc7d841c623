// The per-run journal of model calls on SQLite (db/automation/0300).
import type { Database } from "bun:sqlite";
import type { ModelCallRow, ModelCallStore, ModelResponse, RunUsageTotals } from "../../models/store";

const COLUMNS =
  "run_id AS runId, seq, step_path AS stepPath, request_hash AS requestHash, model, provider, status, input_tokens AS inputTokens, output_tokens AS outputTokens, cache_read_tokens AS cacheReadTokens, cache_write_tokens AS cacheWriteTokens, duration_ms AS durationMs, started_at AS startedAt, error, request, response";

export class SqliteModelCallStore implements ModelCallStore {
  constructor(readonly sqlite: Database) {}

  async add(r: Omit<ModelCallRow, "seq">): Promise<number> {
    return this.sqlite
      .query<{ seq: number }, (string | number | null)[]>(
        `INSERT INTO model_calls (run_id, seq, step_path, request_hash, model, provider, status, input_tokens, output_tokens, cache_read_tokens, cache_write_tokens, duration_ms, started_at, error, request, response)
         VALUES (?1, (SELECT COALESCE(MAX(seq), 0) + 1 FROM model_calls WHERE run_id = ?1), ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15)
         RETURNING seq`,
      )
      .get(r.runId, r.stepPath, r.requestHash, r.model, r.provider, r.status, r.inputTokens, r.outputTokens, r.cacheReadTokens, r.cacheWriteTokens, r.durationMs, r.startedAt, r.error, r.request, r.response)!.seq;
  }

  async replayable(runId: string, requestHash: string, skip: ReadonlySet<number>): Promise<{ seq: number; response: ModelResponse } | undefined> {
    const rows = this.sqlite
      .query<{ seq: number; response: string }, [string, string]>("SELECT seq, response FROM model_calls WHERE run_id = ? AND request_hash = ? AND status = 'ok' ORDER BY seq")
      .all(runId, requestHash);
    const row = rows.find((r) => !skip.has(r.seq));
    return row ? { seq: row.seq, response: JSON.parse(row.response) as ModelResponse } : undefined;
  }

  async calls(runId: string): Promise<ModelCallRow[]> {
    return this.sqlite.query<ModelCallRow, [string]>(`SELECT ${COLUMNS} FROM model_calls WHERE run_id = ? ORDER BY seq`).all(runId);
  }

  async totals(runId: string): Promise<RunUsageTotals> {
    const t = this.sqlite
      .query<{ i: number | null; o: number | null; cr: number | null; cw: number | null; n: number; d: number | null }, [string]>(
        "SELECT SUM(input_tokens) i, SUM(output_tokens) o, SUM(cache_read_tokens) cr, SUM(cache_write_tokens) cw, COUNT(*) n, SUM(duration_ms) d FROM model_calls WHERE run_id = ?",
      )
      .get(runId)!;
    return { tokens: { input: t.i ?? 0, output: t.o ?? 0, cacheRead: t.cr ?? 0, cacheWrite: t.cw ?? 0 }, llmCallCount: t.n, llmDurationMs: t.d ?? 0 };
  }
}
