// Claude (Anthropic subscription): the OAuth usage endpoint Claude Code itself reads.
import { join } from "../core/context";
import * as v from "valibot";
import { ident } from "../model/names";
import type { QuotaWindow } from "../model/types";
import { HOUR, WEEK, iso, numAt, optNum, percent, replyProblem, round, shape, str, type Credential, type Outcome, type ProviderDef } from "./provider";

const CLAUDE_CODE_VERSION = "2.0.14";

const Window = v.nullish(v.looseObject({ utilization: optNum, resets_at: v.nullish(v.string()) }));
const Usage = v.looseObject({
  five_hour: Window,
  seven_day: Window,
  extra_usage: v.nullish(
    v.looseObject({ is_enabled: v.nullish(v.boolean()), monthly_limit: optNum, used_credits: optNum }),
  ),
});

/** `five_hour`→`5h`, `seven_day`→`weekly`, `seven_day_<m>`→`weekly_<m>` (percent); extra usage in USD. */
export function parse(json: unknown, cred?: Pick<Credential, "plan">): Outcome {
  const r = shape(Usage, json);
  if (!r.ok) return r.outcome;
  const windows: QuotaWindow[] = [];
  const add = (name: string, w: unknown, period: number) => {
    const u = numAt(w, "utilization");
    if (u === undefined) return;
    windows.push(percent(name, u, iso(str(w, "resets_at")), period));
  };
  add("5h", r.value.five_hour, 5 * HOUR);
  add("weekly", r.value.seven_day, WEEK);
  for (const [key, w] of Object.entries(json as Record<string, unknown>)) {
    const m = /^seven_day_(.+)$/.exec(key);
    if (m) add(`weekly_${m[1]}`, w, WEEK);
  }
  const extra = r.value.extra_usage;
  if (extra?.is_enabled && extra.monthly_limit != null) {
    // Anthropic reports extra usage in cents; money is printed as a decimal.
    const limit = extra.monthly_limit / 100;
    const used = (extra.used_credits ?? 0) / 100;
    windows.push({ window: "extra_credits", used: round(used), limit: round(limit), remaining: round(limit - used), unit: "usd", reset_at: null, period_seconds: null });
  }
  return { status: "available", plan: cred?.plan ?? null, windows };
}

const readCreds = (json: unknown) => {
  const token = str(json, "claudeAiOauth", "accessToken");
  if (!token) return null;
  return {
    token,
    expiresAt: numAt(json, "claudeAiOauth", "expiresAt"),
    plan: str(json, "claudeAiOauth", "subscriptionType"),
  };
};

export const claude: ProviderDef = {
  ...ident("claude"),
  consoleUrl: "https://claude.ai/settings/usage",
  hint: "run `claude` and log in again (/login)",
  baseUrl: "https://api.anthropic.com",
  profileDir: ".claude",
  sources: [
    {
      kind: "file",
      paths: (w) => [
        ...(w.profile === "default" && w.env.CLAUDE_CONFIG_DIR ? [join(w.env.CLAUDE_CONFIG_DIR, ".credentials.json")] : []),
        ...(w.dir ? [join(w.dir, ".credentials.json")] : []),
      ],
      read: readCreds,
    },
    { kind: "opencode", slot: "anthropic" },
  ],
  async fetch(cred, http) {
    const r = await http.get("/api/oauth/usage", {
      Authorization: `Bearer ${cred.token}`,
      "anthropic-beta": "oauth-2025-04-20",
      "User-Agent": `claude-code/${CLAUDE_CODE_VERSION}`,
      Accept: "application/json",
    });
    return replyProblem(r, claude) ?? { ...parse(r.json, cred), raw: r.json };
  },
};
