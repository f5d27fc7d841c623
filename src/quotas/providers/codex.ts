// Codex (ChatGPT plan): the `wham/usage` endpoint the Codex CLI reads.
import { join } from "../core/context";
import * as v from "valibot";
import { ident } from "../model/names";
import type { QuotaWindow } from "../model/types";
import { balance, iso, jwtExpiryMs, optNum, percent, replyProblem, shape, slug, str, windowName, type Outcome, type ProviderDef } from "./provider";

const RateWindow = v.nullish(
  v.looseObject({ used_percent: optNum, reset_at: optNum, limit_window_seconds: optNum }),
);
const RateLimit = v.nullish(v.looseObject({ primary_window: RateWindow, secondary_window: RateWindow }));
const Usage = v.looseObject({
  plan_type: v.nullish(v.string()),
  rate_limit: RateLimit,
  additional_rate_limits: v.nullish(
    v.array(v.looseObject({ limit_name: v.nullish(v.string()), metered_feature: v.nullish(v.string()), rate_limit: RateLimit })),
  ),
  credits: v.nullish(v.looseObject({ balance: optNum, has_credits: v.nullish(v.boolean()), unlimited: v.nullish(v.boolean()) })),
});

type RW = v.InferOutput<typeof RateWindow>;

function toWindow(w: RW, model?: string): QuotaWindow | null {
  if (!w || w.used_percent == null) return null;
  const base = windowName(w.limit_window_seconds);
  const name = !model ? base : base === "weekly" ? `weekly_${model}` : `${model}_${base}`;
  return percent(name, w.used_percent, w.reset_at != null ? iso(w.reset_at) : null, w.limit_window_seconds ?? null);
}

/** Windows named by their length (5h, weekly); extra per-model limits get the model as suffix. */
export function parse(json: unknown): Outcome {
  const r = shape(Usage, json);
  if (!r.ok) return r.outcome;
  const u = r.value;
  const windows: QuotaWindow[] = [];
  for (const w of [u.rate_limit?.primary_window, u.rate_limit?.secondary_window]) {
    const x = toWindow(w);
    if (x) windows.push(x);
  }
  for (const extra of u.additional_rate_limits ?? []) {
    const model = slug(extra.limit_name ?? extra.metered_feature ?? "model");
    for (const w of [extra.rate_limit?.primary_window, extra.rate_limit?.secondary_window]) {
      const x = toWindow(w, model);
      if (x) windows.push(x);
    }
  }
  const c = u.credits;
  if (c && c.balance != null && (c.has_credits || c.balance > 0)) windows.push(balance("credits", c.balance, "credits"));
  return { status: "available", plan: u.plan_type ?? null, windows };
}

const readAuth = (json: unknown) => {
  const token = str(json, "tokens", "access_token");
  if (!token) return null;
  return { token, accountId: str(json, "tokens", "account_id"), expiresAt: jwtExpiryMs(token) };
};

export const codex: ProviderDef = {
  ...ident("codex"),
  consoleUrl: "https://chatgpt.com/codex/settings/usage",
  hint: "run `codex login`",
  baseUrl: "https://chatgpt.com",
  profileDir: ".codex",
  sources: [
    {
      kind: "file",
      paths: (w) => [
        ...(w.profile === "default" && w.env.CODEX_HOME ? [join(w.env.CODEX_HOME, "auth.json")] : []),
        ...(w.dir ? [join(w.dir, "auth.json")] : []),
      ],
      read: readAuth,
    },
    { kind: "opencode", slot: "openai" },
  ],
  async fetch(cred, http) {
    const headers: Record<string, string> = { Authorization: `Bearer ${cred.token}`, Accept: "application/json", "User-Agent": "codex-cli" };
    if (cred.accountId) headers["ChatGPT-Account-Id"] = cred.accountId;
    const r = await http.get("/backend-api/wham/usage", headers);
    return replyProblem(r, codex) ?? { ...parse(r.json), raw: r.json };
  },
};
