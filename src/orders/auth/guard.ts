import { bearer } from "@elysiajs/bearer";
import { Elysia } from "elysia";
import type { AuthService } from "./service";

/** The bearer scheme, any case, followed by whitespace or nothing. */
const BEARER = /^bearer(?:[ \t]|$)/i;

/**
 * The token a request presents, from @elysiajs/bearer's extraction (`Authorization: Bearer <token>`,
 * else the `access_token` query parameter of RFC 6750 §2.3, which the original Spring service accepted
 * too). Two gaps of the plugin are closed so the 401s stay as specified: it matches the scheme
 * case-sensitively (RFC 7235 makes it case-insensitive: `bearer x` is still a bearer token), and it
 * takes `Bearerxyz` as the token "yz" (that is another scheme, so: no bearer credentials).
 * `undefined` means none at all (401 `unauthorized`); a string may still be malformed (`invalid_token`).
 */
export function presentedToken(extracted: string | undefined, authorization: string | undefined): string | undefined {
  if (authorization?.startsWith("Bearer")) return BEARER.test(authorization) ? (extracted ?? "").trim() : undefined;
  if (authorization !== undefined && BEARER.test(authorization)) return authorization.slice(6).trim();
  return extracted?.trim();
}

/**
 * `{ auth: true }` on a route resolves `caller` from the bearer token, or answers 401. A token sent in
 * the query string gets `Cache-Control: private` on the reply (RFC 6750 §2.3: a shared cache must not
 * keep a reply to a URL that carries a credential).
 */
export const authGuard = (auth: AuthService) =>
  new Elysia({ name: "orders.auth.guard" }).use(bearer()).macro({
    auth: {
      resolve({ bearer: extracted, headers: { authorization }, set }) {
        const token = presentedToken(extracted, authorization);
        const caller = auth.authenticate(token);
        if (token !== undefined && !(authorization !== undefined && BEARER.test(authorization))) set.headers["cache-control"] = "private";
        return { caller };
      },
    },
  });
