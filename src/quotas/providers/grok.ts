// Grok (xAI): the CLI's billing view in credits (the combined weekly view).
import { join } from "../core/context";
import * as v from "valibot";
import { ident } from "../model/names";
import type { QuotaWindow } from "../model/types";
import { counted, iso, optNum, percent, replyProblem, shape, slug, type Credential, type Outcome, type ProviderDef } from "./provider";

const Val = v.nullish(v.looseObject({ val: optNum }));
const Body = v.looseObject({
  config: v.looseObject({
    currentPeriod: v.nullish(v.looseObject({ type: v.nullish(v.string()), start: v.nullish(v.string()), end: v.nullish(v.string()) })),
    creditUsagePercent: optNum,
    productUsage: v.nullish(v.array(v.looseObject({ product: v.string(), usagePercent: optNum }))),
    monthlyLimit: Val,
    used: Val,
    billingPeriodStart: v.nullish(v.string()),
    billingPeriodEnd: v.nullish(v.string()),
  }),
});

/**
 * `productUsage[]` → `weekly_<product>` percent windows, else `creditUsagePercent` → `weekly`, over
 * `currentPeriod`. The plain billing view (no format) has `monthlyLimit`/`used` → `monthly` credits.
 */
export function parse(json: unknown): Outcome {
  const r = shape(Body, json);
  if (!r.ok) return r.outcome;
  const c = r.value.config;
  const start = c.currentPeriod?.start ?? c.billingPeriodStart ?? null;
  const end = c.currentPeriod?.end ?? c.billingPeriodEnd ?? null;
  const reset = iso(end);
  const period = start && end ? Math.round((Date.parse(end) - Date.parse(start)) / 1000) : null;
  const windows: QuotaWindow[] = [];
  for (const p of c.productUsage ?? []) {
    if (p.usagePercent != null) windows.push(percent(`weekly_${slug(p.product)}`, p.usagePercent, reset, period));
  }
  if (windows.length === 0 && c.creditUsagePercent != null) windows.push(percent("weekly", c.creditUsagePercent, reset, period));
  if (windows.length === 0 && c.monthlyLimit?.val != null && c.used?.val != null) {
    windows.push(counted("monthly", c.used.val, c.monthlyLimit.val, "credits", reset, period));
  }
  return { status: "available", plan: null, windows };
}

/**
 * `auth.json` holds one or more keys; the newest unexpired one wins. Accepted: `{"keys": [...]}`, a
 * bare array, or a single object, each with a key (`key`/`api_key`/`access_token`/`token`) and optional
 * `expires_at`/`created_at` (ISO or epoch).
 */
export function readAuth(json: unknown, now = Date.now()): Omit<Credential, "source"> | null {
  const list: unknown[] = Array.isArray(json)
    ? json
    : json && typeof json === "object" && Array.isArray((json as { keys?: unknown }).keys)
      ? (json as { keys: unknown[] }).keys
      : [json];
  const time = (x: unknown) => {
    const s = typeof x === "number" || typeof x === "string" ? iso(x) : null;
    return s ? Date.parse(s) : undefined;
  };
  const keys = list
    .map((e) => {
      const o = (e && typeof e === "object" ? e : {}) as Record<string, unknown>;
      const token = [o.key, o.api_key, o.access_token, o.token].find((x): x is string => typeof x === "string" && x !== "");
      return token ? { token, expiresAt: time(o.expires_at ?? o.expiresAt), created: time(o.created_at ?? o.createdAt) ?? 0 } : null;
    })
    .filter((k) => k !== null)
    .sort((a, b) => b.created - a.created);
  const live = keys.find((k) => k.expiresAt === undefined || k.expiresAt > now);
  // All expired: return the newest so discovery reports it as expired (auth_required with a hint).
  const pick = live ?? keys[0];
  return pick ? { token: pick.token, expiresAt: pick.expiresAt } : null;
}

export const grok: ProviderDef = {
  ...ident("grok"),
  consoleUrl: "https://grok.com/?_s=usage",
  hint: "run `grok login`, or set XAI_API_KEY",
  baseUrl: "https://cli-chat-proxy.grok.com",
  profileDir: ".grok",
  sources: [
    {
      kind: "file",
      paths: (w) => [
        ...(w.profile === "default" && w.env.GROK_HOME ? [join(w.env.GROK_HOME, "auth.json")] : []),
        ...(w.dir ? [join(w.dir, "auth.json")] : []),
      ],
      read: (j) => readAuth(j),
    },
    { kind: "env", names: ["XAI_API_KEY"] },
  ],
  async fetch(cred, http) {
    const r = await http.get("/v1/billing?format=credits", { Authorization: `Bearer ${cred.token}`, Accept: "application/json" });
    return replyProblem(r, grok) ?? { ...parse(r.json), raw: r.json };
  },
};
