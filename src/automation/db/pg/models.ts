// The per-run journal of model calls on PostgreSQL. A call's seq is the next of its run: parallel
// branches of one run may append at once, so a seq taken by another insert meanwhile (the primary
// key answers) is simply retried with the next one.
import type { ModelCallRow, ModelCallStore, ModelResponse, RunUsageTotals } from "../../models/store";
import { int, isUniqueViolation, type Pg, plainRows } from "./rows";

const COLUMNS = `run_id AS "runId", seq::float8 AS seq, step_path AS "stepPath", request_hash AS "requestHash", model, provider, status,
  input_tokens::float8 AS "inputTokens", output_tokens::float8 AS "outputTokens", cache_read_tokens::float8 AS "cacheReadTokens",
  cache_write_tokens::float8 AS "cacheWriteTokens", duration_ms::float8 AS "durationMs", started_at AS "startedAt", error, request::text AS request, response::text AS response`;

export class PgModelCallStore implements ModelCallStore {
  constructor(readonly pg: Pg) {}

  async add(r: Omit<ModelCallRow, "seq">): Promise<number> {
    for (let attempt = 0; ; attempt++) {
      try {
        const [row] = await this.pg`INSERT INTO model_calls (run_id, seq, step_path, request_hash, model, provider, status, input_tokens, output_tokens, cache_read_tokens, cache_write_tokens, duration_ms, started_at, error, request, response)
          VALUES (${r.runId}, (SELECT COALESCE(MAX(seq), 0) + 1 FROM model_calls WHERE run_id = ${r.runId}), ${r.stepPath}, ${r.requestHash}, ${r.model}, ${r.provider}, ${r.status},
            ${r.inputTokens}, ${r.outputTokens}, ${r.cacheReadTokens}, ${r.cacheWriteTokens}, ${r.durationMs}, ${r.startedAt}, ${r.error},
            CAST(${r.request} AS text)::json, CAST(${r.response} AS text)::json)
          RETURNING seq`;
        return int(row.seq);
      } catch (err) {
        if (attempt < 20 && isUniqueViolation(err, "model_calls_pkey")) continue;
        throw err;
      }
    }
  }

  async replayable(runId: string, requestHash: string, skip: ReadonlySet<number>): Promise<{ seq: number; response: ModelResponse } | undefined> {
    const rows = await this.pg`SELECT seq::float8 AS seq, response::text AS response FROM model_calls WHERE run_id = ${runId} AND request_hash = ${requestHash} AND status = 'ok' ORDER BY seq`;
    const row = (rows as { seq: number; response: string }[]).find((x) => !skip.has(x.seq));
    return row ? { seq: row.seq, response: JSON.parse(row.response) as ModelResponse } : undefined;
  }

  async calls(runId: string): Promise<ModelCallRow[]> {
    return plainRows<ModelCallRow>(await this.pg.unsafe(`SELECT ${COLUMNS} FROM model_calls WHERE run_id = $1 ORDER BY seq`, [runId]));
  }

  async totals(runId: string): Promise<RunUsageTotals> {
    const [t] = await this.pg`SELECT COALESCE(SUM(input_tokens), 0)::float8 i, COALESCE(SUM(output_tokens), 0)::float8 o, COALESCE(SUM(cache_read_tokens), 0)::float8 cr,
      COALESCE(SUM(cache_write_tokens), 0)::float8 cw, COUNT(*)::int n, COALESCE(SUM(duration_ms), 0)::float8 d FROM model_calls WHERE run_id = ${runId}`;
    return { tokens: { input: t.i, output: t.o, cacheRead: t.cr, cacheWrite: t.cw }, llmCallCount: t.n, llmDurationMs: t.d };
  }
}
