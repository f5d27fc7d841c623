// `--json`: the report as the spec prints it, keys in the spec's order. Raw responses only with `--raw`.
import type { ProviderResult, Report } from "../model/types";
import { VERSION } from "../core/version";

/** One result with the spec's key order; optional keys only when set. */
export function ordered(r: ProviderResult, raw: boolean): ProviderResult {
  // every window carries `pace` (null until the history has a minute of this window)
  const windows = r.windows.map((w) => ({ ...w, pace: w.pace ?? null }));
  const out: ProviderResult = { provider: r.provider, profile: r.profile, name: r.name, status: r.status, plan: r.plan, windows } as ProviderResult;
  if (r.hint !== undefined) out.hint = r.hint;
  if (r.message !== undefined) out.message = r.message;
  if (r.console_url !== undefined) out.console_url = r.console_url;
  out.fetched_at = r.fetched_at;
  out.cached_at = r.cached_at;
  out.auth_source = r.auth_source;
  if (raw && r.raw !== undefined) out.raw = r.raw;
  return out;
}

export function report(results: ProviderResult[], opts: { raw: boolean; now: Date }): Report {
  return { version: VERSION, timestamp: opts.now.toISOString(), providers: results.map((r) => ordered(r, opts.raw)) };
}

export function renderJson(rep: Report, pretty: boolean): string {
  return JSON.stringify(rep, null, pretty ? 2 : undefined);
}
