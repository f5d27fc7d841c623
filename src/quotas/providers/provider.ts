// What a provider is: data (names, endpoint, where its credentials live) plus two small functions,
// `fetch` (the request(s)) and a pure `parse` of the response that each provider file exports for tests.
import * as v from "valibot";
import type { QuotaWindow } from "../model/types";

/** Credentials found on disk or in the environment. `source` is what output shows; never the secret. */
export interface Credential {
  token: string;
  source: string;
  accountId?: string;
  plan?: string;
  /** Epoch ms; an expired token is never sent (spec: auth_required, no refresh). */
  expiresAt?: number;
  project?: string;
}

export type Outcome =
  | { status: "available"; plan: string | null; windows: QuotaWindow[]; raw?: unknown }
  | { status: "unavailable"; message: string; raw?: unknown }
  | { status: "auth_required"; hint?: string; message?: string; raw?: unknown }
  | { status: "network_error"; message: string; retryAfterSeconds?: number; raw?: unknown };

export interface Reply {
  status: number;
  ok: boolean;
  /** Seconds from a Retry-After header, when there is one. */
  retryAfter?: number;
  json: unknown;
  text: string;
}

/** The HTTP a provider may use: relative to its (overridable) base URL, sharing one timeout. */
export interface Http {
  base: string;
  get(path: string, headers?: Record<string, string>): Promise<Reply>;
  post(path: string, body: unknown, headers?: Record<string, string>): Promise<Reply>;
}

/** Where a provider's credentials may be; `dir` is the profile's directory (e.g. `~/.claude-work`). */
export interface Where {
  home: string;
  profile: string;
  dir: string | null;
  env: Record<string, string | undefined>;
  xdgConfig: string;
}

export type Source =
  /** A login file of the provider's own CLI (or another coding tool); `read` picks the token out. */
  | { kind: "file"; paths: (w: Where) => string[]; read: (json: unknown, w: Where) => Omit<Credential, "source"> | null }
  /** Environment variables, first non-empty wins. */
  | { kind: "env"; names: string[] }
  /** A key file in the home directory: first non-comment line, or an `api_key=`/`token=` line. */
  | { kind: "keyfile"; path: string }
  /** A slot of opencode's auth.json. */
  | { kind: "opencode"; slot: string }
  /** `[copilot] token` of our own config. */
  | { kind: "config" }
  /** Anything else (Cursor's SQLite state database). */
  | { kind: "custom"; find: (w: Where) => Credential | null };

export interface ProviderDef {
  id: string;
  name: string;
  aliases: string[];
  consoleUrl: string;
  /** Shown with auth_required: how the user logs in again. */
  hint: string;
  baseUrl: string;
  /** Home directory prefix of its CLI, for profile autodetection (`.claude` → `~/.claude-work`). */
  profileDir?: string;
  sources: Source[];
  fetch(cred: Credential, http: Http): Promise<Outcome>;
}

/** How long a provider that answered 429 without Retry-After is left alone. */
export const DEFAULT_BACKOFF_SECONDS = 300;

/** Maps the HTTP status classes every provider shares; null when the reply is a usable 2xx JSON. */
export function replyProblem(r: Reply, def: Pick<ProviderDef, "hint">): Outcome | null {
  if (r.status === 401 || r.status === 403) {
    return { status: "auth_required", hint: def.hint, message: `credentials rejected (HTTP ${r.status})` };
  }
  if (r.status === 429) {
    return { status: "network_error", message: "rate limited (HTTP 429)", retryAfterSeconds: r.retryAfter ?? DEFAULT_BACKOFF_SECONDS };
  }
  if (!r.ok) return { status: "unavailable", message: `HTTP ${r.status}${errorText(r.json, r.text)}` };
  if (r.json === undefined) return { status: "unavailable", message: "unexpected response (not JSON)" };
  return null;
}

function errorText(json: unknown, text: string): string {
  const o = json as Record<string, unknown> | undefined;
  const pick = (x: unknown): string | undefined => {
    if (typeof x === "string") return x;
    if (x && typeof x === "object") {
      const m = (x as Record<string, unknown>).message ?? (x as Record<string, unknown>).msg;
      if (typeof m === "string") return m;
    }
    return undefined;
  };
  const msg = o && typeof o === "object" ? pick(o.error) ?? pick(o) ?? pick(o.base_resp) : undefined;
  const s = msg ?? text.trim().slice(0, 120);
  return s ? `: ${s.replace(/\s+/g, " ").slice(0, 160)}` : "";
}

/** Validates a provider's response; a shape we don't know is `unavailable`, never a crash. */
export function shape<S extends v.GenericSchema>(
  schema: S,
  json: unknown,
): { ok: true; value: v.InferOutput<S> } | { ok: false; outcome: Outcome } {
  const r = v.safeParse(schema, json);
  if (r.success) return { ok: true, value: r.output };
  const issue = r.issues[0];
  const path = issue.path?.map((p) => String(p.key)).join(".") || "response";
  return { ok: false, outcome: { status: "unavailable", message: `unexpected response: ${path}: ${issue.message}` } };
}

// Numbers arrive as numbers or decimal strings ("100", "12.50").
export const num = v.pipe(
  v.union([v.number(), v.pipe(v.string(), v.trim(), v.regex(/^-?\d+(\.\d+)?([eE][-+]?\d+)?$/))]),
  v.transform((x) => Number(x)),
);
export const optNum = v.nullish(num);

export const round = (x: number, digits = 2) => {
  const f = 10 ** digits;
  return Math.round(x * f) / f;
};

/** ISO-8601 UTC from epoch ms, epoch seconds, an ISO string or a date-only string. */
export function iso(x: string | number | null | undefined): string | null {
  if (x === null || x === undefined || x === "") return null;
  let ms: number;
  if (typeof x === "number" || /^\d+$/.test(x)) {
    const n = Number(x);
    ms = n < 1e11 ? n * 1000 : n;
  } else {
    ms = Date.parse(/^\d{4}-\d{2}-\d{2}$/.test(x) ? `${x}T00:00:00Z` : x);
  }
  return Number.isFinite(ms) ? new Date(ms).toISOString().replace(".000Z", "Z") : null;
}

export const HOUR = 3600;
export const WEEK = 7 * 24 * HOUR;

/** A usage window in percent (used + remaining = 100). */
export function percent(window: string, usedPercent: number, resetAt: string | null, period: number | null): QuotaWindow {
  const used = round(Math.min(Math.max(usedPercent, 0), 100));
  return { window, used, limit: 100, remaining: round(100 - used), unit: "percent", reset_at: resetAt, period_seconds: period };
}

/** A counted window: used of limit, in `unit`. */
export function counted(
  window: string,
  used: number,
  limit: number,
  unit: string,
  resetAt: string | null = null,
  period: number | null = null,
): QuotaWindow {
  return { window, used: round(used), limit: round(limit), remaining: round(limit - used), unit, reset_at: resetAt, period_seconds: period };
}

/** A balance: what is left is all we know, so limit = remaining and used = 0. */
export function balance(window: string, amount: number, unit: string): QuotaWindow {
  return { window, used: 0, limit: round(amount), remaining: round(amount), unit, reset_at: null, period_seconds: null };
}

/** Seconds of the calendar month ending at `resetIso` (monthly quotas reset on a date). */
export function monthBefore(resetIso: string | null): number | null {
  if (!resetIso) return null;
  const end = new Date(resetIso);
  const start = new Date(end);
  start.setUTCMonth(start.getUTCMonth() - 1);
  return Math.round((end.getTime() - start.getTime()) / 1000);
}

/** `5h` for a 5-hour window, `weekly` for 7 days, `daily`, `monthly`, else `<n>h`. */
export function windowName(seconds: number | null | undefined): string {
  if (!seconds) return "window";
  if (seconds === 5 * HOUR) return "5h";
  if (seconds === 24 * HOUR) return "daily";
  if (seconds === WEEK) return "weekly";
  if (seconds >= 28 * 24 * HOUR && seconds <= 31 * 24 * HOUR) return "monthly";
  if (seconds % (24 * HOUR) === 0) return `${seconds / (24 * HOUR)}d`;
  return `${round(seconds / HOUR, 1)}h`;
}

/** A model or product name as a window-name suffix: lower case, dashes. */
export const slug = (s: string) =>
  s.toLowerCase().replace(/[^a-z0-9.]+/g, "-").replace(/^-+|-+$/g, "");

/** Payload of a JWT (unverified: we only read `exp`/`sub` of our own user's token). */
export function jwtPayload(token: string): Record<string, unknown> | null {
  const part = token.split(".")[1];
  if (!part) return null;
  try {
    const json = JSON.parse(Buffer.from(part.replace(/-/g, "+").replace(/_/g, "/"), "base64").toString("utf8"));
    return json && typeof json === "object" ? (json as Record<string, unknown>) : null;
  } catch {
    return null;
  }
}

export function jwtExpiryMs(token: string): number | undefined {
  const exp = jwtPayload(token)?.exp;
  return typeof exp === "number" ? exp * 1000 : undefined;
}

/** Reads `obj.a.b.c` as a non-empty string. */
export function str(obj: unknown, ...path: string[]): string | undefined {
  let cur: unknown = obj;
  for (const k of path) {
    if (!cur || typeof cur !== "object") return undefined;
    cur = (cur as Record<string, unknown>)[k];
  }
  return typeof cur === "string" && cur.trim() !== "" ? cur.trim() : undefined;
}

export function numAt(obj: unknown, ...path: string[]): number | undefined {
  let cur: unknown = obj;
  for (const k of path) {
    if (!cur || typeof cur !== "object") return undefined;
    cur = (cur as Record<string, unknown>)[k];
  }
  const n = typeof cur === "string" ? Number(cur) : cur;
  return typeof n === "number" && Number.isFinite(n) ? n : undefined;
}
