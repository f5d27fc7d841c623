// The auth plugin every feature's routes `.use()`: resolves the Bearer key into `auth` (401 when
// missing or invalid), so handlers can filter by `auth.tenantId` and call `requireScope`.
import { bearer } from "@elysiajs/bearer";
import { Elysia } from "elysia";
import { Unauthorized } from "../../kernel/errors";
import { noteRequest } from "../../kernel/observe";
import type { AutomationContext } from "../context";
import type { Auth } from "./model";
import { takeToken } from "./rate-limit";
import { authenticate, authenticateKey } from "./service";
import { authenticateSession, sessionCookie } from "./session";

export { requireScope, hasScope } from "./service";
export type { Auth } from "./model";

/**
 * Authenticates a request by its `Authorization` header (401 when missing or invalid). `token` is
 * what @elysiajs/bearer extracted; routes that check the key before reading a body call this without
 * (jsonParser awaits it), and the route's `auth` then reuses that lookup.
 */
export function authenticateRequest(ctx: AutomationContext, request: Request, token?: string): Promise<Auth> {
  let auth = seen.get(request);
  if (!auth) {
    const asked: Lookup = identify(ctx, request, token).then(async (a) => {
      noteRequest(request, { tenant: a.tenantId });
      await takeToken(ctx, a.keyId);
      asked.settled = a;
      return a;
    });
    // A caller that does not wait (the rejection reaches the route's own await) must not make it unhandled.
    asked.catch(() => {
      asked.settled = null;
    });
    seen.set(request, (auth = asked));
  }
  return auth;
}

/** A request's lookup, and what it came to once settled (the principal, or null when refused). */
type Lookup = Promise<Auth> & { settled?: Auth | null };

/** One lookup per request: the body parser's check and the route's `auth` share it, and the request counts once. */
const seen = new WeakMap<Request, Lookup>();

/** The principal the request authenticated as (or the refusal), when it was asked for; the audit trail reads it after the response. */
export function authOf(request: Request): Promise<Auth> | undefined {
  return seen.get(request);
}

/**
 * What the request's authentication came to when it has settled: its principal, or null when it was
 * refused; undefined when it was never asked for or is still under way. Lets the audit trail gather an
 * entry without waiting on a promise that, once the answer is out, has settled in nearly every case.
 */
export function settledAuthOf(request: Request): Auth | null | undefined {
  return seen.get(request)?.settled;
}

async function identify(ctx: AutomationContext, request: Request, token?: string): Promise<Auth> {
  const header = request.headers.get("authorization");
  // @elysiajs/bearer also reads `?access_token=`. We refuse it: a key in a URL ends up in access
  // logs, proxies and shell history. Only the header is a credential.
  if (header === null && (token !== undefined || new URL(request.url).searchParams.has("access_token"))) {
    throw Unauthorized("API keys are not accepted in the access_token query parameter: send `Authorization: Bearer <api key>`", {
      field: "access_token",
      code: "unauthorized",
    });
  }
  // The plugin matches only the exact `Bearer ` prefix; other spellings (`bearer`, `Basic ...`)
  // go through the header parser, which accepts any case and explains a wrong scheme.
  if (token !== undefined && header?.startsWith("Bearer ") && /^\S+$/.test(token.trim())) {
    return authenticateKey(ctx.storage.tenancy, ctx.clock, token.trim());
  }
  // A person's session cookie is read only when there is no Authorization header: keys cost what they did.
  if (header === null) {
    const cookie = sessionCookie(request.headers.get("cookie"));
    if (cookie !== undefined) return authenticateSession(ctx, request, cookie);
  }
  return authenticate(ctx.storage.tenancy, ctx.clock, header);
}

/**
 * `new Elysia().use(authPlugin(ctx)).get("/x", ({ auth }) => ...)`: routes registered after the
 * `.use` in that plugin require a valid API key.
 */
export const authPlugin = (ctx: AutomationContext) =>
  new Elysia().use(bearer()).resolve({ as: "scoped" }, async ({ bearer: token, request }) => ({ auth: await authenticateRequest(ctx, request, token) }));
