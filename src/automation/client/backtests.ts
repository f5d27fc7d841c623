// Backtests: past runs of an automation's active version replayed on a candidate version, with the
// runs whose outcome changed and the paired statistics of compare (ours; /v1/automations/{id}/backtests).
import { enc } from "./files";
import type { Transport } from "./transport";
import type { BacktestDetail, BacktestLine, BacktestSummary, ChangedRun } from "../backtests/model";

export type { BacktestDetail, BacktestLine, BacktestSummary, ChangedRun };

/** Which past runs of the active version to replay (all optional; default: the latest 100 finished runs). */
export interface BacktestSelect {
  from?: string;
  to?: string;
  status?: "completed" | "failed" | ("completed" | "failed")[];
  trigger?: string | string[];
  reviewVerdict?: "correct" | "incorrect" | "none";
  /** At most 10,000. */
  limit?: number;
  runIds?: string[];
}

const path = (automation: string, rest = "") => `/v1/automations/${enc(automation)}/backtests${rest}`;

export class BacktestsResource {
  constructor(private readonly http: Transport) {}

  /** Starts a backtest of `candidate` (a version id or tag, not the active one); a ValidationError when the selection matches no run. */
  create(automation: string, body: { candidate: string; select?: BacktestSelect }): Promise<{ id: string; total: number }> {
    return this.http.json({ method: "POST", path: path(automation), json: body });
  }
  /** Status and progress; once completed, the changed runs (broke first) and the report. */
  get(automation: string, backtestId: string, query: { resamples?: number } = {}): Promise<BacktestDetail> {
    return this.http.json({ method: "GET", path: path(automation, `/${enc(backtestId)}`), query: { ...query } });
  }
  list(automation: string, query: { limit?: number; offset?: number } = {}): Promise<{ data: BacktestSummary[]; total: number; limit: number; offset: number }> {
    return this.http.json({ method: "GET", path: path(automation), query: { ...query } });
  }
  cancel(automation: string, backtestId: string): Promise<BacktestSummary> {
    return this.http.json({ method: "POST", path: path(automation, `/${enc(backtestId)}/cancel`) });
  }
  /** A line per replayed (or skipped) run, then the summary once completed. */
  async *progress(automation: string, backtestId: string, options: { signal?: AbortSignal } = {}): AsyncGenerator<BacktestLine> {
    const res = await this.http.response({ method: "GET", path: path(automation, `/${enc(backtestId)}/progress`), signal: options.signal });
    if (!res.body) return;
    const dec = new TextDecoder();
    let buf = "";
    for await (const chunk of res.body) {
      buf += dec.decode(chunk, { stream: true });
      for (let nl = buf.indexOf("\n"); nl >= 0; nl = buf.indexOf("\n")) {
        const line = buf.slice(0, nl).trim();
        buf = buf.slice(nl + 1);
        if (line) yield JSON.parse(line) as BacktestLine;
      }
    }
  }
}
