// Cursor: the dashboard's plan and current-period usage, read with the editor's session token.
import { join } from "../core/context";
import * as v from "valibot";
import { ident } from "../model/names";
import type { QuotaWindow } from "../model/types";
import { counted, iso, jwtExpiryMs, jwtPayload, optNum, percent, replyProblem, round, shape, str, type Credential, type Outcome, type ProviderDef, type Where } from "./provider";

const Plan = v.looseObject({ planInfo: v.nullish(v.looseObject({ planName: v.nullish(v.string()), billingCycleEnd: v.nullish(v.union([v.string(), v.number()])) })) });
const Usage = v.looseObject({
  billingCycleStart: v.nullish(v.union([v.string(), v.number()])),
  billingCycleEnd: v.nullish(v.union([v.string(), v.number()])),
  planUsage: v.nullish(
    v.looseObject({
      totalSpend: optNum,
      includedSpend: optNum,
      limit: optNum,
      apiPercentUsed: optNum,
      autoPercentUsed: optNum,
      totalPercentUsed: optNum,
    }),
  ),
  spendLimitUsage: v.nullish(v.looseObject({ individualLimit: optNum, individualRemaining: optNum })),
});

/**
 * `monthly` = total percent of the included usage (computed from includedSpend/limit when absent),
 * `auto` and `api` percents, `on_demand` USD from the spend limit (cents → dollars); the window is the
 * billing cycle.
 */
export function parse(planJson: unknown, usageJson: unknown): Outcome {
  const p = shape(Plan, planJson);
  if (!p.ok) return p.outcome;
  const u = shape(Usage, usageJson);
  if (!u.ok) return u.outcome;
  const start = iso(u.value.billingCycleStart ?? null);
  const end = iso(u.value.billingCycleEnd ?? p.value.planInfo?.billingCycleEnd ?? null);
  const period = start && end ? Math.round((Date.parse(end) - Date.parse(start)) / 1000) : null;
  const windows: QuotaWindow[] = [];
  const pu = u.value.planUsage;
  if (pu) {
    const total = pu.totalPercentUsed ?? (pu.includedSpend != null && pu.limit ? (pu.includedSpend / pu.limit) * 100 : undefined);
    if (total != null) windows.push(percent("monthly", total, end, period));
    if (pu.autoPercentUsed != null) windows.push(percent("auto", pu.autoPercentUsed, end, period));
    if (pu.apiPercentUsed != null) windows.push(percent("api", pu.apiPercentUsed, end, period));
  }
  const s = u.value.spendLimitUsage;
  if (s?.individualLimit != null && s.individualRemaining != null) {
    const limit = s.individualLimit / 100;
    windows.push(counted("on_demand", round(limit - s.individualRemaining / 100), limit, "usd", end, period));
  }
  return { status: "available", plan: p.value.planInfo?.planName ?? null, windows };
}

/** Cursor keeps its token in a VS Code state database; opened read-only, never written. */
function fromStateDb(w: Where): Credential | null {
  const candidates = [
    join(w.xdgConfig, "Cursor", "User", "globalStorage", "state.vscdb"),
    join(w.home, "Library", "Application Support", "Cursor", "User", "globalStorage", "state.vscdb"),
  ];
  for (const path of candidates) {
    if (!(require("node:fs") as typeof import("node:fs")).existsSync(path)) continue;
    try {
      // Loaded here, not at start-up: every `quotas` run would pay for SQLite otherwise.
      const { Database } = require("bun:sqlite") as typeof import("bun:sqlite");
      const db = new Database(path, { readonly: true });
      try {
        const row = db.query("SELECT value FROM ItemTable WHERE key = 'cursorAuth/accessToken'").get() as { value: unknown } | null;
        const raw = row?.value instanceof Uint8Array ? new TextDecoder().decode(row.value) : typeof row?.value === "string" ? row.value : "";
        const token = raw.replace(/^"|"$/g, "").trim();
        if (token) return { token, source: path.replace(w.home, "~"), expiresAt: jwtExpiryMs(token) };
      } finally {
        db.close();
      }
    } catch {
      // a locked or foreign database is simply not a credential
    }
  }
  return null;
}

export function sessionCookie(token: string): string {
  const sub = String(jwtPayload(token)?.sub ?? "");
  const userId = sub.split("|").pop() ?? "";
  return `WorkosCursorSessionToken=${userId}%3A%3A${token}`;
}

export const cursor: ProviderDef = {
  ...ident("cursor"),
  consoleUrl: "https://cursor.com/dashboard?tab=usage",
  hint: "open Cursor and sign in again",
  baseUrl: "https://cursor.com",
  sources: [
    { kind: "file", paths: (w) => [join(w.xdgConfig, "cursor", "auth.json")], read: (j) => {
      const token = str(j, "accessToken");
      return token ? { token, expiresAt: jwtExpiryMs(token) } : null;
    } },
    { kind: "custom", find: fromStateDb },
  ],
  async fetch(cred, http) {
    const headers = { Cookie: sessionCookie(cred.token), Origin: "https://cursor.com", "Content-Type": "application/json" };
    const [plan, usage] = await Promise.all([
      http.post("/api/dashboard/get-plan-info", {}, headers),
      http.post("/api/dashboard/get-current-period-usage", {}, headers),
    ]);
    return replyProblem(plan, cursor) ?? replyProblem(usage, cursor) ?? { ...parse(plan.json, usage.json), raw: { plan: plan.json, usage: usage.json } };
  },
};
