// Antigravity / Gemini: Cloud Code's quota summary, read with the Gemini CLI's (or Antigravity's) OAuth token.
import { join } from "../core/context";
import * as v from "valibot";
import { ident } from "../model/names";
import type { QuotaWindow } from "../model/types";
import { HOUR, WEEK, iso, numAt, optNum, percent, replyProblem, shape, slug, str, type Outcome, type ProviderDef, type Where } from "./provider";

const Bucket = v.looseObject({
  window: v.nullish(v.string()),
  resetTime: v.nullish(v.string()),
  remainingFraction: optNum,
  modelId: v.nullish(v.string()),
});
const Summary = v.looseObject({
  groups: v.nullish(v.array(v.looseObject({ displayName: v.nullish(v.string()), buckets: v.nullish(v.array(Bucket)) }))),
  buckets: v.nullish(v.array(Bucket)),
});

const periodOf = (w: string) => (w === "5h" ? 5 * HOUR : w === "weekly" ? WEEK : null);

/** Group name as a suffix: "Claude and GPT models" → "claude-and-gpt". */
const groupSlug = (name: string) => slug(name.replace(/\s+models?$/i, ""));

/**
 * Each group's `5h`/`weekly` buckets become percent windows (used = 1 - remainingFraction). The first
 * group keeps the plain names; later groups get their name as suffix (`weekly_<group>`, `<group>_5h`).
 * The older per-model shape (`buckets[]` with `modelId`) maps to one window per model.
 */
export function parse(json: unknown): Outcome {
  const r = shape(Summary, json);
  if (!r.ok) return r.outcome;
  const windows: QuotaWindow[] = [];
  if (r.value.groups) {
    r.value.groups.forEach((g, i) => {
      const suffix = i === 0 ? "" : groupSlug(g.displayName ?? `group-${i + 1}`);
      for (const b of g.buckets ?? []) {
        if (b.remainingFraction == null || !b.window) continue;
        const base = b.window;
        const name = !suffix ? base : base === "weekly" ? `weekly_${suffix}` : `${suffix}_${base}`;
        windows.push(percent(name, (1 - b.remainingFraction) * 100, iso(b.resetTime), periodOf(base)));
      }
    });
  } else {
    for (const b of r.value.buckets ?? []) {
      if (b.remainingFraction == null || !b.modelId) continue;
      windows.push(percent(slug(b.modelId), (1 - b.remainingFraction) * 100, iso(b.resetTime), null));
    }
  }
  return { status: "available", plan: null, windows };
}

const readOauth = (json: unknown, w: Where) => {
  const token = str(json, "access_token");
  if (!token) return null;
  const project = w.env.GOOGLE_CLOUD_PROJECT || w.env.GOOGLE_CLOUD_PROJECT_ID || undefined;
  return { token, expiresAt: numAt(json, "expiry_date"), project };
};

export const antigravity: ProviderDef = {
  ...ident("antigravity"),
  consoleUrl: "https://antigravity.google/",
  hint: "run `gemini` (or open Antigravity) and log in again",
  baseUrl: "https://cloudcode-pa.googleapis.com",
  profileDir: ".gemini",
  sources: [
    {
      kind: "file",
      paths: (w) => [
        ...(w.dir ? [join(w.dir, "oauth_creds.json")] : []),
        ...(w.profile === "default"
          ? [join(w.home, ".antigravity", "oauth_creds.json"), join(w.xdgConfig, "antigravity", "oauth_creds.json")]
          : []),
      ],
      read: readOauth,
    },
  ],
  async fetch(cred, http) {
    const r = await http.post("/v1internal:retrieveUserQuotaSummary", cred.project ? { project: cred.project } : {}, {
      Authorization: `Bearer ${cred.token}`,
      "User-Agent": "antigravity",
    });
    return replyProblem(r, antigravity) ?? { ...parse(r.json), raw: r.json };
  },
};
