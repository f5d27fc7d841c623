// The TOTP second factor (RFC 6238 through `otpauth`: SHA-1, 6 digits, 30 s steps, the usual
// authenticator apps' defaults). A secret is enrolled pending, confirmed by a first code, and only then
// asked for at sign-in. Secrets are sealed at rest under the server's secret key (secrets.ts, bound to
// the user's id): a code can only be checked against the secret itself, so it is encrypted, not hashed.
// A code is accepted one step either side of now, and once: its step must be later than the last one
// accepted, decided by one conditional UPDATE in the database, so a code seen once (over a shoulder, in
// a proxy log) cannot be replayed within its window on any instance.
import * as OTPAuth from "otpauth";
import { Conflict, Invalid, NotFound } from "../../kernel/errors";
import { deriveKey, open, seal, SecretUnreadable } from "../secrets";
import type { Clock } from "../../kernel/clock";
import type { PeopleStore, UserRow } from "./store";

/** What the second factor needs (service.ts's PeopleDeps has it; declared here so the two do not import each other). */
interface TotpDeps {
  people: PeopleStore;
  clock: Clock;
  secretKey?: string;
}

export const TOTP_ISSUER = "Automation server";
export const TOTP_PERIOD_S = 30;
const TOTP_DIGITS = 6;
/** Steps accepted either side of now: clocks of phones drift. */
const TOTP_WINDOW = 1;

function keyOf(d: TotpDeps): Buffer {
  // Every server context has one (key-material.ts); a store used without a server (the CLI) never seals.
  if (!d.secretKey) throw new Error("no secret key configured: TOTP secrets cannot be sealed");
  return deriveKey(d.secretKey);
}

const aad = (userId: string) => `totp:${userId}`;

function totpOf(secret: string, label = "user"): OTPAuth.TOTP {
  return new OTPAuth.TOTP({ issuer: TOTP_ISSUER, label, algorithm: "SHA1", digits: TOTP_DIGITS, period: TOTP_PERIOD_S, secret: OTPAuth.Secret.fromBase32(secret) });
}

/** The step a code matches (now ±1 step), or undefined. */
function matchStep(secret: string, code: string, nowMs: number): number | undefined {
  const delta = totpOf(secret).validate({ token: code, timestamp: nowMs, window: TOTP_WINDOW });
  if (delta === null) return undefined;
  return Math.floor(nowMs / 1000 / TOTP_PERIOD_S) + delta;
}

function opened(d: TotpDeps, userId: string, sealed: string): string {
  try {
    return open(keyOf(d), sealed, aad(userId));
  } catch (err) {
    if (err instanceof SecretUnreadable) throw Conflict("the stored second factor cannot be read with this server's secret key: ask an admin to reset it (users reset-totp)", { code: "totp_unreadable" });
    throw err;
  }
}

const invalidCode = (why = "wrong or expired code") => Invalid(`${why}: enter the current code of your authenticator app`, { field: "code", code: "invalid_code" });

/** Whether the user has a confirmed second factor, one pending, and whether their tenant requires one. */
export async function totpStatus(d: TotpDeps, userId: string, tenantId: string): Promise<{ enabled: boolean; pending: boolean; required: boolean }> {
  const t = await d.people.totp(userId);
  return { enabled: t.secret !== null, pending: t.pending !== null, required: (await d.people.tenantSettings(tenantId)).requireTotp };
}

/**
 * Enrolls a new secret, pending until a code confirms it (a second enrollment replaces the pending one).
 * Refused while a confirmed one exists: replacing it would need no code, so it is removed first (with one).
 */
export async function enrollTotp(d: TotpDeps, user: { id: string; email: string }): Promise<{ secret: string; uri: string }> {
  if ((await d.people.totp(user.id)).secret !== null) throw Conflict("a second factor is already set: remove it (DELETE /v1/auth/totp with a code) before enrolling another", { code: "totp_enabled" });
  const secret = new OTPAuth.Secret({ size: 20 }).base32;
  await d.people.setTotpPending(user.id, seal(keyOf(d), secret, aad(user.id)));
  return { secret, uri: totpOf(secret, user.email).toString() };
}

/** Confirms the pending secret with a code of it: from now on sign-in asks for a code. */
export async function confirmTotp(d: TotpDeps, userId: string, code: string): Promise<void> {
  const t = await d.people.totp(userId);
  if (t.pending === null) throw NotFound("no second factor is being enrolled: POST /v1/auth/totp/enroll first", { code: "totp_not_enrolled" });
  const step = matchStep(opened(d, userId, t.pending), code, d.clock.now().getTime());
  if (step === undefined) throw invalidCode();
  if (!(await d.people.confirmTotp(userId, t.pending, step))) throw Conflict("another enrollment replaced this secret meanwhile: scan the new one", { code: "totp_replaced" });
}

/** Checks a code against the confirmed secret and uses up its step (true), or refuses it (false). */
export async function checkTotp(d: TotpDeps, userId: string, sealed: string, code: string): Promise<boolean> {
  const step = matchStep(opened(d, userId, sealed), code, d.clock.now().getTime());
  return step !== undefined && (await d.people.useTotpStep(userId, step));
}

/** Removes the second factor, proven by a current code (400 `invalid_code` otherwise). */
export async function disableTotp(d: TotpDeps, userId: string, code: string): Promise<void> {
  const t = await d.people.totp(userId);
  if (t.secret === null) throw NotFound("no second factor is set", { code: "totp_not_enabled" });
  if (!(await checkTotp(d, userId, t.secret, code))) throw invalidCode();
  await d.people.clearTotp(userId);
}

/**
 * What sign-in needs after the password was right: "none" (no second factor), "ok" (the code matched
 * and is now used), "missing" or "wrong".
 */
export async function secondFactor(d: TotpDeps, user: UserRow, code: string | undefined): Promise<"none" | "ok" | "missing" | "wrong"> {
  const t = await d.people.totp(user.id);
  if (t.secret === null) return "none";
  if (code === undefined) return "missing";
  return (await checkTotp(d, user.id, t.secret, code)) ? "ok" : "wrong";
}

/** Drops a user's second factor without a code: the operator's way back for someone who lost their phone. */
export async function resetTotp(d: TotpDeps, userId: string): Promise<void> {
  await d.people.clearTotp(userId);
}
