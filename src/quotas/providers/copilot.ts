// GitHub Copilot: the `copilot_internal/user` endpoint the editors read with the Copilot OAuth token.
import { join } from "../core/context";
import * as v from "valibot";
import { ident } from "../model/names";
import type { QuotaWindow } from "../model/types";
import { counted, iso, monthBefore, optNum, replyProblem, shape, str, type Outcome, type ProviderDef } from "./provider";

const Snapshot = v.nullish(v.looseObject({ entitlement: optNum, remaining: optNum, unlimited: v.nullish(v.boolean()) }));
const Counts = v.nullish(v.looseObject({ chat: optNum, completions: optNum }));
const User = v.looseObject({
  copilot_plan: v.nullish(v.string()),
  access_type_sku: v.nullish(v.string()),
  quota_reset_date: v.nullish(v.string()),
  limited_user_reset_date: v.nullish(v.string()),
  quota_snapshots: v.nullish(v.looseObject({ premium_interactions: Snapshot, chat: Snapshot, completions: Snapshot })),
  limited_user_quotas: Counts,
  monthly_quotas: Counts,
});

/**
 * Paid plans: `quota_snapshots` with entitlement and remaining → `premium`, `chat`, `completions`
 * (unlimited ones are left out). Free tier: `limited_user_quotas` are REMAINING counts and
 * `monthly_quotas` the limits, so used = limit − remaining.
 */
export function parse(json: unknown): Outcome {
  const r = shape(User, json);
  if (!r.ok) return r.outcome;
  const u = r.value;
  const windows: QuotaWindow[] = [];
  const snaps = u.quota_snapshots;
  if (snaps) {
    const reset = iso(u.quota_reset_date);
    const period = monthBefore(reset);
    for (const [key, name] of [["premium_interactions", "premium"], ["chat", "chat"], ["completions", "completions"]] as const) {
      const s = snaps[key];
      if (!s || s.unlimited || s.entitlement == null || s.remaining == null) continue;
      windows.push(counted(name, s.entitlement - s.remaining, s.entitlement, "requests", reset, period));
    }
  } else if (u.limited_user_quotas && u.monthly_quotas) {
    const reset = iso(u.limited_user_reset_date ?? u.quota_reset_date);
    const period = monthBefore(reset);
    for (const name of ["chat", "completions"] as const) {
      const remaining = u.limited_user_quotas[name];
      const limit = u.monthly_quotas[name];
      if (remaining == null || limit == null) continue;
      windows.push(counted(name, limit - remaining, limit, "requests", reset, period));
    }
  }
  return { status: "available", plan: u.copilot_plan ?? u.access_type_sku ?? null, windows };
}

/** apps.json / hosts.json: `{"github.com[:app]": {"oauth_token": ...}}`, first entry with a token. */
const readHosts = (json: unknown) => {
  if (!json || typeof json !== "object") return null;
  for (const entry of Object.values(json as Record<string, unknown>)) {
    const token = str(entry, "oauth_token");
    if (token) return { token };
  }
  return null;
};

export const copilot: ProviderDef = {
  ...ident("copilot"),
  consoleUrl: "https://github.com/settings/copilot",
  hint: "sign in to GitHub Copilot in your editor, or set GITHUB_COPILOT_TOKEN",
  baseUrl: "https://api.github.com",
  sources: [
    {
      kind: "file",
      paths: (w) => [join(w.xdgConfig, "github-copilot", "apps.json"), join(w.xdgConfig, "github-copilot", "hosts.json")],
      read: readHosts,
    },
    { kind: "env", names: ["GITHUB_COPILOT_TOKEN"] },
    { kind: "config" },
  ],
  async fetch(cred, http) {
    const r = await http.get("/copilot_internal/user", {
      Authorization: `token ${cred.token}`,
      Accept: "application/json",
      "Editor-Version": "vscode/1.99.0",
      "Editor-Plugin-Version": "copilot-chat/0.26.7",
      "User-Agent": "GitHubCopilotChat/0.26.7",
      "X-Github-Api-Version": "2025-04-01",
    });
    return replyProblem(r, copilot) ?? { ...parse(r.json), raw: r.json };
  },
};
