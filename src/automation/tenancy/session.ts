// A person's browser session as a principal: the `automation_session` cookie (an opaque 256-bit
// secret, stored as its sha256) resolves to the same `Auth` an API key does, with the role's scopes
// (roles.ts), so `requireScope` decides for both. Read only when a request has no Authorization header:
// keys cost what they did. Checked against the database on every request, or against a lookup the store
// remembers until a change forgets it on every instance (SQLite: while the database's data version
// stands; PostgreSQL: at most 5 s, forgotten through `sessions.changed`), so a disabled user or a removed
// membership is refused by every instance at its next request.
import { Forbidden, Invalid, Unauthorized } from "../../kernel/errors";
import { hashSecret } from "../../kernel/ids";
import { pathOf } from "../../kernel/observe";
import { allowedWhileEnrolling } from "./enrollment";
import type { AutomationContext } from "../context";
import { publicUrlFor } from "../http/public-url";
import type { Auth } from "./model";
import { ROLE_SCOPES } from "./roles";

export const SESSION_COOKIE = "automation_session";
/** A session unused this long ends (idle expiry). */
export const SESSION_IDLE_MS = 12 * 3600_000;
/** A session ends this long after sign-in, however busy (absolute expiry). */
export const SESSION_ABSOLUTE_MS = 7 * 24 * 3600_000;
/** A Cookie header past this is refused (400) before it is parsed. */
const MAX_COOKIE_HEADER = 8192;

const SAFE_METHODS = new Set(["GET", "HEAD", "OPTIONS"]);

/**
 * The session cookie's value in a Cookie header: undefined when there is none, a 400 for a header too
 * large to be one, a 401 for a value that cannot be one of ours (so it is never looked up).
 */
export function sessionCookie(header: string | null): string | undefined {
  if (header === null) return undefined;
  if (header.length > MAX_COOKIE_HEADER) throw Invalid(`the Cookie header is larger than ${MAX_COOKIE_HEADER} bytes`, { field: "cookie", code: "invalid_cookie" });
  let value: string | undefined;
  for (const part of header.split(";")) {
    const eq = part.indexOf("=");
    if (eq < 0 || part.slice(0, eq).trim() !== SESSION_COOKIE) continue;
    if (value !== undefined) throw Unauthorized("more than one session cookie: sign in again", { field: "cookie", code: "unauthorized" });
    value = part.slice(eq + 1).trim();
  }
  if (value === undefined) return undefined;
  if (!/^[A-Za-z0-9_-]{43}$/.test(value)) throw Unauthorized("malformed session cookie: sign in again", { field: "cookie", code: "unauthorized" });
  return value;
}

/** The origins a cookie-authenticated write may come from: this server's, as the client reached it or as --public-url names it. */
function sameOrigin(ctx: AutomationContext, request: Request, origin: string): boolean {
  if (origin === new URL(request.url).origin) return true;
  try {
    return origin === new URL(publicUrlFor(ctx.config, request)).origin || origin === new URL(ctx.config.publicUrl).origin;
  } catch {
    return false;
  }
}

/** Resolves a session cookie's value to its principal, or a 401; a cross-site write is a 403. */
export async function authenticateSession(ctx: AutomationContext, request: Request, value: string): Promise<Auth> {
  const now = ctx.clock.now().toISOString();
  const found = await ctx.storage.people.session(hashSecret(value), now, SESSION_IDLE_MS);
  if (!found) throw Unauthorized("the session has expired or was signed out: sign in again", { field: "cookie", code: "unauthorized" });
  const { session, user, tenant, role } = found;
  if (found.enrollTotp && !allowedWhileEnrolling(request.method, pathOf(request.url))) {
    throw Forbidden("this tenant requires a second factor: enroll one first (POST /v1/auth/totp/enroll, then POST /v1/auth/totp/confirm)", { code: "totp_enrollment_required" });
  }
  if (!SAFE_METHODS.has(request.method)) {
    const token = request.headers.get("x-csrf-token");
    const origin = request.headers.get("origin");
    const tokenOk = token !== null && token === session.csrf;
    if (!tokenOk && (origin === null || !sameOrigin(ctx, request, origin))) {
      throw Forbidden("a cookie-authenticated change needs this server's Origin or the session's x-csrf-token", { code: "csrf_refused" });
    }
  }
  // Minute precision is enough for the idle expiry and spares a write per request.
  if (session.lastSeenAt.slice(0, 16) !== now.slice(0, 16)) await ctx.storage.people.touchSession(session.id, now).catch(() => {});
  return {
    tenantId: tenant.id,
    tenantSlug: tenant.slug,
    tenantName: tenant.name,
    keyId: session.id,
    keyName: user.email,
    scopes: [...ROLE_SCOPES[role]],
    person: { userId: user.id, email: user.email, name: user.name, role, sessionId: session.id, csrf: session.csrf, createdAt: session.createdAt, expiresAt: session.expiresAt },
  };
}
