import type { Caller } from "../users/model";
import type { AuthService } from "./service";
import { andThen } from "../../kernel/maybe";
import { noteRequest } from "../../kernel/observe";

/** The bearer scheme, any case, followed by whitespace or nothing. */
const BEARER = /^bearer(?:[ \t]|$)/i;

/**
 * The token a request presents: `Authorization: Bearer <token>` (the scheme in any case: RFC 7235), else
 * the `access_token` query parameter of RFC 6750 §2.3, which the original Spring service accepted too
 * (the first one; an empty one is none). `Bearerxyz` is another scheme: no bearer credentials, and no
 * fallback to the query. `undefined` means none at all (401 `unauthorized`); a string may still be
 * malformed (`invalid_token`).
 *
 * Read here, not by @elysiajs/bearer: that plugin's global derive reads the context's `headers` and
 * `query`, which made Elysia copy every request's headers into an object and parse its query string on
 * every route of the app, /health included (issue 42). The query is parsed only when it names the parameter.
 */
export function presentedToken(authorization: string | null, url: string): string | undefined {
  if (authorization !== null) {
    if (BEARER.test(authorization)) return authorization.slice(6).trim();
    if (authorization.startsWith("Bearer")) return undefined;
  }
  const q = url.indexOf("?");
  if (q === -1 || !url.includes("access_token", q)) return undefined;
  // As the plugin did: an empty parameter is none; a blank one is a (malformed) token.
  const token = new URLSearchParams(url.slice(q + 1)).get("access_token");
  return token ? token.trim() : undefined;
}

/**
 * The caller of a protected route, or a 401.
 * A token sent in the query string gets `Cache-Control: private` on the reply (RFC 6750 §2.3: a shared
 * cache must not keep a reply to a URL that carries a credential). A plain call rather than an Elysia
 * macro: a macro's resolve step cost ~5 µs per request, a third of a cached list reply.
 */
export function callerOf(auth: AuthService, request: Request, set: { headers: Record<string, unknown> }): Caller | Promise<Caller> {
  const authorization = request.headers.get("authorization");
  const token = presentedToken(authorization, request.url);
  const found = (caller: Caller): Caller => {
    noteRequest(request, { user: String(caller.id) });
    if (token !== undefined && !(authorization !== null && BEARER.test(authorization))) set.headers["cache-control"] = "private";
    return caller;
  };
  return andThen(auth.authenticate(token), found);
}
