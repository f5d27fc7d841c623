// MiniMax coding plan: `coding_plan/remains`, whose "usage" counts are really what is LEFT.
import * as v from "valibot";
import { ident } from "../model/names";
import type { QuotaWindow } from "../model/types";
import { counted, iso, num, optNum, percent, replyProblem, shape, windowName, type Outcome, type ProviderDef } from "./provider";

const Model = v.looseObject({
  model_name: v.string(),
  start_time: optNum,
  end_time: optNum,
  current_interval_total_count: optNum,
  current_interval_usage_count: optNum,
  current_interval_remaining_percent: optNum,
  current_weekly_total_count: optNum,
  current_weekly_usage_count: optNum,
  current_weekly_remaining_percent: optNum,
  weekly_start_time: optNum,
  weekly_end_time: optNum,
});
const Body = v.looseObject({
  base_resp: v.looseObject({ status_code: num, status_msg: v.nullish(v.string()) }),
  model_remains: v.nullish(v.array(Model)),
});

function pair(name: string, total?: number | null, remaining?: number | null, remainingPercent?: number | null, start?: number | null, end?: number | null): QuotaWindow | null {
  const reset = end != null ? iso(end) : null;
  const period = start != null && end != null ? Math.round((end - start) / 1000) : null;
  // `usage_count` is the REMAINING count: used = total − usage_count.
  if (total != null && total > 0 && remaining != null) return counted(name, total - remaining, total, "requests", reset, period);
  if (remainingPercent != null) return percent(name, 100 - remainingPercent, reset, period);
  return null;
}

/**
 * OK when `base_resp.status_code` is 0. The general model's interval → `5h` and weekly pair →
 * `weekly`; other models get their name (`<model>_5h`, `weekly_<model>`). A zero total means the plan
 * counts in percent only.
 */
export function parse(json: unknown): Outcome {
  const r = shape(Body, json);
  if (!r.ok) return r.outcome;
  const code = r.value.base_resp.status_code;
  // 1004: "login fail" (bad or missing key); 2049: invalid API key.
  if (code === 1004 || code === 2049) return { status: "auth_required", hint: minimax.hint, message: `MiniMax rejected the key: ${r.value.base_resp.status_msg || code}` };
  if (code !== 0) {
    return { status: "unavailable", message: `MiniMax error ${r.value.base_resp.status_code}: ${r.value.base_resp.status_msg || "unknown"}` };
  }
  const windows: QuotaWindow[] = [];
  for (const m of r.value.model_remains ?? []) {
    const general = m.model_name === "general";
    const span = m.start_time != null && m.end_time != null ? Math.round((m.end_time - m.start_time) / 1000) : null;
    const base = windowName(span);
    const interval = pair(general ? base : `${m.model_name}_${base}`, m.current_interval_total_count, m.current_interval_usage_count, m.current_interval_remaining_percent, m.start_time, m.end_time);
    if (interval) windows.push(interval);
    const weekly = pair(general ? "weekly" : `weekly_${m.model_name}`, m.current_weekly_total_count, m.current_weekly_usage_count, m.current_weekly_remaining_percent, m.weekly_start_time, m.weekly_end_time);
    if (weekly) windows.push(weekly);
  }
  return { status: "available", plan: null, windows };
}

export const minimax: ProviderDef = {
  ...ident("minimax"),
  consoleUrl: "https://platform.minimax.io/user-center/payment/coding-plan",
  hint: "set MINIMAX_API_KEY or put your key in ~/.minimax",
  baseUrl: "https://api.minimax.io",
  sources: [
    { kind: "opencode", slot: "minimax-coding-plan" },
    { kind: "env", names: ["MINIMAX_API_KEY"] },
    { kind: "keyfile", path: ".minimax" },
  ],
  async fetch(cred, http) {
    const r = await http.get("/v1/api/openplatform/coding_plan/remains", { Authorization: `Bearer ${cred.token}`, Accept: "application/json" });
    return replyProblem(r, minimax) ?? { ...parse(r.json), raw: r.json };
  },
};
