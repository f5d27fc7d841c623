// Kimi (Moonshot): the coding plan's usage endpoint, or the API balance when that fails.
import { join } from "../core/context";
import * as v from "valibot";
import { ident } from "../model/names";
import type { QuotaWindow } from "../model/types";
import { HOUR, WEEK, balance, counted, iso, numAt, optNum, percent, replyProblem, shape, str, type Outcome, type ProviderDef } from "./provider";

const Detail = v.looseObject({ limit: optNum, used: optNum, remaining: optNum, resetTime: v.nullish(v.string()) });
const Ratio = v.nullish(v.looseObject({ usedRatio: optNum, resetAt: v.nullish(v.union([v.string(), v.number()])) }));
const Usages = v.looseObject({
  user: v.nullish(v.looseObject({ membership: v.nullish(v.looseObject({ level: v.nullish(v.string()) })) })),
  usage: v.nullish(Detail),
  limits: v.nullish(
    v.array(v.looseObject({ window: v.nullish(v.looseObject({ duration: optNum, timeUnit: v.nullish(v.string()) })), detail: v.nullish(Detail) })),
  ),
  data: v.nullish(
    v.looseObject({
      plan: v.nullish(v.string()),
      quota: v.nullish(v.looseObject({ usages: v.nullish(v.looseObject({ limit5h: Ratio, limit7d: Ratio })) })),
    }),
  ),
});

const unitSeconds: Record<string, number> = { TIME_UNIT_SECOND: 1, TIME_UNIT_MINUTE: 60, TIME_UNIT_HOUR: HOUR, TIME_UNIT_DAY: 24 * HOUR };

function detailWindow(name: string, d: v.InferOutput<typeof Detail>, period: number | null): QuotaWindow | null {
  if (d.limit == null) return null;
  const used = d.used ?? (d.remaining != null ? d.limit - d.remaining : null);
  if (used == null) return null;
  return counted(name, used, d.limit, "requests", iso(d.resetTime), period);
}

const planName = (level: string | null | undefined) => (level ? level.replace(/^LEVEL_/, "").toLowerCase() : null);

/**
 * Older shape: `usage` (the weekly request quota; `used` or `remaining`) and `limits[]` (a 300-minute
 * window → `5h`). Newer shape: `data.quota.usages.{limit5h, limit7d}.usedRatio` (0..1) in percent.
 * Numbers may be strings.
 */
export function parse(json: unknown): Outcome {
  const r = shape(Usages, json);
  if (!r.ok) return r.outcome;
  const u = r.value;
  const windows: QuotaWindow[] = [];
  const newer = u.data?.quota?.usages;
  if (newer) {
    for (const [key, name, period] of [["limit5h", "5h", 5 * HOUR], ["limit7d", "weekly", WEEK]] as const) {
      const w = newer[key];
      if (w?.usedRatio == null) continue;
      windows.push(percent(name, w.usedRatio * 100, iso(w.resetAt ?? null), period));
    }
    return { status: "available", plan: u.data?.plan ?? planName(u.user?.membership?.level), windows };
  }
  for (const l of u.limits ?? []) {
    if (!l.detail || l.window?.duration == null) continue;
    const seconds = l.window.duration * (unitSeconds[l.window.timeUnit ?? "TIME_UNIT_MINUTE"] ?? 60);
    const name = seconds === 5 * HOUR ? "5h" : seconds === 24 * HOUR ? "daily" : `${Math.round(seconds / 60)}m`;
    const w = detailWindow(name, l.detail, seconds);
    if (w) windows.push(w);
  }
  if (u.usage) {
    const w = detailWindow("weekly", u.usage, WEEK);
    if (w) windows.unshift(w);
  }
  return { status: "available", plan: planName(u.user?.membership?.level), windows };
}

/** Moonshot API balance: `data.available_balance` in CNY. */
export function parseBalance(json: unknown): Outcome {
  const amount = numAt(json, "data", "available_balance");
  if (amount === undefined) return { status: "unavailable", message: "unexpected response: data.available_balance missing" };
  return { status: "available", plan: null, windows: [balance("balance", amount, "cny")] };
}

const readCli = (json: unknown) => {
  const token = str(json, "access_token");
  if (!token) return null;
  const exp = numAt(json, "expires_at");
  return { token, expiresAt: exp === undefined ? undefined : exp < 1e11 ? exp * 1000 : exp };
};

const MOONSHOT = "https://api.moonshot.ai";

export const kimi: ProviderDef = {
  ...ident("kimi"),
  consoleUrl: "https://www.kimi.com/code/console",
  hint: "run `kimi` and log in again, or set KIMI_API_KEY",
  baseUrl: "https://api.kimi.com",
  sources: [
    {
      kind: "file",
      paths: (w) => [join(w.home, ".kimi-code", "credentials", "kimi-code.json"), join(w.home, ".kimi", "credentials", "kimi-code.json")],
      read: readCli,
    },
    { kind: "env", names: ["KIMI_API_KEY", "MOONSHOT_API_KEY"] },
  ],
  async fetch(cred, http) {
    const auth = { Authorization: `Bearer ${cred.token}`, Accept: "application/json" };
    const r = await http.get("/coding/v1/usages", auth);
    const problem = replyProblem(r, kimi);
    if (!problem) return { ...parse(r.json), raw: r.json };
    // An API key (not a coding plan) has no /usages: fall back to the account balance.
    const balanceUrl = http.base === kimi.baseUrl ? `${MOONSHOT}/v1/users/me/balance` : "/v1/users/me/balance";
    const b = await http.get(balanceUrl, auth);
    return replyProblem(b, kimi) ?? { ...parseBalance(b.json), raw: b.json };
  },
};
