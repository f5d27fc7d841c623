// OpenRouter: account credits and the key's own limit (two GETs; any non-2xx is an error).
import * as v from "valibot";
import { ident } from "../model/names";
import type { QuotaWindow } from "../model/types";
import { counted, num, optNum, replyProblem, shape, type Outcome, type ProviderDef } from "./provider";

const Credits = v.looseObject({ data: v.looseObject({ total_credits: num, total_usage: num }) });
const Key = v.looseObject({
  data: v.looseObject({ limit: optNum, limit_remaining: optNum, usage: optNum, is_free_tier: v.nullish(v.boolean()) }),
});

/** `credits` (USD: total_usage of total_credits) and, when the key has a limit, `key_limit`. */
export function parse(creditsJson: unknown, keyJson: unknown): Outcome {
  const c = shape(Credits, creditsJson);
  if (!c.ok) return c.outcome;
  const k = shape(Key, keyJson);
  if (!k.ok) return k.outcome;
  const windows: QuotaWindow[] = [counted("credits", c.value.data.total_usage, c.value.data.total_credits, "usd")];
  const key = k.value.data;
  if (key.limit != null) {
    const remaining = key.limit_remaining ?? key.limit - (key.usage ?? 0);
    windows.push(counted("key_limit", key.limit - remaining, key.limit, "usd"));
  }
  const plan = key.is_free_tier == null ? null : key.is_free_tier ? "free" : "paid";
  return { status: "available", plan, windows };
}

export const openrouter: ProviderDef = {
  ...ident("openrouter"),
  consoleUrl: "https://openrouter.ai/settings/credits",
  hint: "set OPENROUTER_API_KEY or put your key in ~/.openrouter",
  baseUrl: "https://openrouter.ai",
  sources: [
    { kind: "env", names: ["OPENROUTER_API_KEY"] },
    { kind: "keyfile", path: ".openrouter" },
  ],
  async fetch(cred, http) {
    const auth = { Authorization: `Bearer ${cred.token}`, Accept: "application/json" };
    const [credits, key] = await Promise.all([http.get("/api/v1/credits", auth), http.get("/api/v1/key", auth)]);
    return (
      replyProblem(credits, openrouter) ??
      replyProblem(key, openrouter) ?? { ...parse(credits.json, key.json), raw: { credits: credits.json, key: key.json } }
    );
  },
};
