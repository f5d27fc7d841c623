// HTTP of single sign-on: the providers the console's sign-in page lists, the start of a sign-in (a
// redirect to the provider, with the flow's state, nonce and PKCE verifier sealed in a short-lived
// HttpOnly cookie and the state recorded to be used once), and the provider's callback, which ends in the
// same session (and cookie) a password sign-in makes. A refusal makes no session: it answers with its
// status (so the audit trail records it as refused) and a small page that sends the browser on to the
// console's sign-in page, which says what went wrong.
import { Elysia } from "elysia";
import * as oauth from "oauth4webapi";
import { hashSecret, newId } from "../../kernel/ids";
import type { AutomationContext } from "../context";
import { noteAudit } from "../audit/http";
import { readLimited } from "../http/body";
import { publicUrlFor } from "../http/public-url";
import { cookieHeader, secure } from "../people/routes";
import { allowSsoLink, type PeopleDeps } from "../people/service";
import { SESSION_ABSOLUTE_MS, sessionCookie } from "../tenancy/session";
import { deriveKey, open, seal } from "../secrets";
import { forgetLogoutToken, OidcClient, SsoRefused } from "./oidc";
import { sessionIdToken, ssoSignIn } from "./service";
import { addTenantProvider, configOf, describe, removeTenantProvider } from "./tenant-providers";
import { authenticateRequest, requireScope } from "../tenancy/auth";
import { jsonParser } from "../http/body";
import { parseWith } from "../http/validate";
import { Invalid, NotFound } from "../../kernel/errors";
import * as v from "valibot";

const SsoLinkBody = v.strictObject({ provider: v.pipe(v.string("provider must be a provider's id"), v.minLength(1, "provider is required"), v.maxLength(40)) });

const TenantSsoBody = v.pipe(
  v.strictObject({ ssoOnly: v.optional(v.boolean("ssoOnly must be true or false")), trustEmails: v.optional(v.boolean("trustEmails must be true or false")) }),
  v.check((b) => b.ssoOnly !== undefined || b.trustEmails !== undefined, "give ssoOnly, trustEmails or both"),
);

export const FLOW_COOKIE = "automation_oidc";
/** How long a person may take at the provider. */
const FLOW_TTL_MS = 10 * 60_000;
const FLOW_PATH = "/v1/auth/oidc/";
const PRUNE_EVERY_MS = 60_000;

interface Flow {
  /** provider id */
  p: string;
  s: string;
  n: string;
  v: string;
  /** redirect URI sent at the start (the callback must send the same) */
  r: string;
  /** where the console goes after */
  x: string;
  /** expiry, ms */
  e: number;
}

const stateHash = (state: string) => hashSecret(`oidc:${state}`);

function flowCookie(header: string | null): string | undefined {
  for (const part of (header ?? "").split(";")) {
    const eq = part.indexOf("=");
    if (eq > 0 && part.slice(0, eq).trim() === FLOW_COOKIE) return part.slice(eq + 1).trim();
  }
  return undefined;
}

const escape = (s: string) => s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

const HERE = "http://console.invalid";

/**
 * Where the console may go after a sign-in: a path of this server, never another origin. A browser drops
 * tabs and newlines from an address and reads `\` as `/` (`/<tab>/evil.com` is `//evil.com`), so such
 * characters are refused, and what is left must resolve to this origin.
 */
function safeNext(raw: unknown): string {
  if (typeof raw !== "string" || raw.length > 500 || !raw.startsWith("/") || /[\u0000-\u001f\u007f\\]/.test(raw)) return "/";
  try {
    const u = new URL(raw, HERE);
    return u.origin === HERE ? u.pathname + u.search + u.hash : "/";
  } catch {
    return "/";
  }
}

export const ssoRoutes = (ctx: AutomationContext) => {
  const providers = ctx.config.oidc ?? [];
  const clients = new Map(providers.map((p) => [p.id, new OidcClient(p)]));
  /** Providers tenants' owners added, made into clients when first asked for and again when changed. */
  const tenantClients = new Map<string, { updatedAt: string; client: OidcClient }>();
  const clientFor = async (id: string): Promise<OidcClient | undefined> => {
    const server = clients.get(id);
    if (server) return server;
    const row = await ctx.storage.people.tenantProvider(id);
    if (!row) return undefined;
    const had = tenantClients.get(id);
    if (had?.updatedAt === row.updatedAt) return had.client;
    try {
      const client = new OidcClient(configOf(row, ctx.config.secretKey ?? "", ctx.config.outboundAllow ?? []));
      tenantClients.set(id, { updatedAt: row.updatedAt, client });
      return client;
    } catch {
      // A secret sealed under another key (the server's key changed): the provider cannot be used.
      return undefined;
    }
  };
  const deps: PeopleDeps = { people: ctx.storage.people, tenancy: ctx.storage.tenancy, clock: ctx.clock, secretKey: ctx.config.secretKey };
  const key = () => deriveKey(ctx.config.secretKey ?? "");
  let prunedAt = 0;

  const flowHeader = (request: Request, value: string, maxAgeS: number) =>
    `${FLOW_COOKIE}=${value}; Path=${FLOW_PATH}; HttpOnly; SameSite=Lax; Max-Age=${maxAgeS}${secure(ctx, request) ? "; Secure" : ""}`;

  /** A refusal: its status, a short page that sends the browser to the console's sign-in page with the reason's code. */
  const refused = (request: Request, err: SsoRefused, providerName: string): Response => {
    const to = `/#/signin?sso_error=${encodeURIComponent(err.code)}`;
    const body = `<!doctype html><html><head><meta charset="utf-8"><meta http-equiv="refresh" content="0;url=${escape(to)}"><title>Sign-in refused</title></head><body><main><h1>Sign-in with ${escape(providerName)} refused</h1><p id="reason" data-code="${escape(err.code)}">${escape(err.message)}</p><p><a href="${escape(to)}">Back to sign-in</a></p></main></body></html>`;
    return new Response(body, {
      status: err.status,
      headers: {
        "content-type": "text/html; charset=utf-8",
        "content-security-policy": "default-src 'none'; frame-ancestors 'none'",
        "referrer-policy": "no-referrer",
        "cache-control": "no-store",
        "set-cookie": flowHeader(request, "", 0),
      },
    });
  };

  const authedParse = jsonParser(4096, (request) => authenticateRequest(ctx, request));
  return new Elysia()
    .get(
      "/tenant/sso",
      async ({ request }) => {
        const auth = await authenticateRequest(ctx, request);
        requireScope(auth, "members:read");
        return { ...(await ctx.storage.people.tenantSso(auth.tenantId)), providers: providers.map((p) => ({ id: p.id, name: p.name })) };
      },
      { detail: { summary: "The tenant's single sign-on settings (ssoOnly, trustEmails) and the server's providers", tags: ["People"] } },
    )
    .put(
      "/tenant/sso",
      async ({ body, request }) => {
        const auth = await authenticateRequest(ctx, request);
        // The owner's, like the tenant's other people settings: only `*` holds tenant:write.
        requireScope(auth, "tenant:write");
        const b = parseWith(TenantSsoBody, body);
        if (b.ssoOnly && providers.length === 0 && (await ctx.storage.people.tenantProviders(auth.tenantId)).length === 0) throw Invalid("this server has no single sign-on provider (--oidc-issuer): SSO-only would let nobody in", { field: "ssoOnly", code: "no_sso_provider" });
        // A field left out keeps its value.
        const settings = { ...(await ctx.storage.people.tenantSso(auth.tenantId)), ...(b.ssoOnly !== undefined ? { ssoOnly: b.ssoOnly } : {}), ...(b.trustEmails !== undefined ? { trustEmails: b.trustEmails } : {}) };
        await ctx.storage.people.setTenantSso(auth.tenantId, settings, ctx.clock.now().toISOString());
        return { ...settings, providers: providers.map((p) => ({ id: p.id, name: p.name })) };
      },
      { parse: authedParse, detail: { summary: "Set the tenant's single sign-on settings (owners): ssoOnly (passwords refused; API keys still work), trustEmails (existing accounts linked by verified e-mail)", tags: ["People"] } },
    )
    .get(
      "/tenant/sso/providers",
      async ({ request }) => {
        const auth = await authenticateRequest(ctx, request);
        requireScope(auth, "members:read");
        return { data: (await ctx.storage.people.tenantProviders(auth.tenantId)).map((r) => describe(r, publicUrlFor(ctx.config, request))) };
      },
      { detail: { summary: "The single sign-on providers this tenant's owners added (never their secrets)", tags: ["People"] } },
    )
    .post(
      "/tenant/sso/providers",
      async ({ body, request, set }) => {
        const auth = await authenticateRequest(ctx, request);
        requireScope(auth, "tenant:write");
        const row = await addTenantProvider(deps, auth.tenantId, body, providers.map((p) => p.id), ctx.config.outboundAllow ?? []);
        set.status = 201;
        return describe(row, publicUrlFor(ctx.config, request));
      },
      { parse: jsonParser(16 * 1024, (request) => authenticateRequest(ctx, request)), detail: { summary: "Add a single sign-on provider for this tenant (owners); its secret is sealed at rest", tags: ["People"] } },
    )
    .delete(
      "/tenant/sso/providers/:id",
      async ({ params, request, set }) => {
        const auth = await authenticateRequest(ctx, request);
        requireScope(auth, "tenant:write");
        await removeTenantProvider(deps, auth.tenantId, params.id);
        tenantClients.delete(params.id);
        set.status = 204;
      },
      { detail: { summary: "Remove one of this tenant's single sign-on providers (owners)", tags: ["People"] } },
    )
    .post(
      "/members/:userId/sso-link",
      async ({ body, params, request, set }) => {
        // An admin's leave for a member's local account to become their SSO identity at the next sign-in
        // (the console's Members page; the operator's `users link-sso`): never silently, always by someone.
        const auth = await authenticateRequest(ctx, request);
        requireScope(auth, "members:write");
        const b = parseWith(SsoLinkBody, body);
        const own = await ctx.storage.people.tenantProvider(b.provider);
        const provider = providers.find((p) => p.id === b.provider) ?? (own?.tenantId === auth.tenantId ? own : undefined);
        if (!provider) throw NotFound(`no single sign-on provider "${b.provider}" for this tenant`, { field: "provider" });
        const out = await allowSsoLink(deps, params.userId, provider.issuer, { tenantId: auth.tenantId, mayTouchOwners: auth.scopes.includes("*") });
        set.status = 201;
        return { ...out, provider: provider.id };
      },
      { parse: authedParse, detail: { summary: "Let a member's next sign-in through a provider (same verified e-mail) become their local account (admins; once, 7 days)", tags: ["People"] } },
    )
    .get(
      "/auth/providers",
      async ({ query }) => {
        const listed = providers.map((p) => ({ id: p.id, name: p.name, type: "oidc", start: `/v1/auth/oidc/${p.id}/start` }));
        // A tenant's own providers are listed when the sign-in page names the tenant (#/signin?tenant=slug):
        // the list is public, so it does not tell every tenant's providers to anyone who asks.
        const t = typeof query.tenant === "string" && query.tenant ? await ctx.storage.tenancy.findTenant(query.tenant) : undefined;
        const own = t ? (await ctx.storage.people.tenantProviders(t.id)).map((r) => ({ id: r.id, name: r.name, type: "oidc", start: `/v1/auth/oidc/${r.id}/start`, tenant: t.slug })) : [];
        return { data: [...listed, ...own] };
      },
      { detail: { summary: "The single sign-on providers people may sign in with (the console's sign-in page lists them)", tags: ["People"], security: [] } },
    )
    .get(
      "/auth/oidc/logout-url",
      async ({ request, set }) => {
        // RP-initiated logout: where the console sends the browser after ending a session made by SSO (the
        // provider's end_session_endpoint, with the ID token as hint and this server's address to come back
        // to). Null for password sessions, API keys, no session, or a provider without one.
        set.headers["cache-control"] = "no-store";
        const auth = await authenticateRequest(ctx, request).catch(() => undefined);
        if (!auth?.person) return { url: null };
        const sso = await sessionIdToken(deps, auth.person.sessionId);
        const client = sso ? await clientFor(sso.provider) : undefined;
        if (!sso || !client) return { url: null };
        const url = await client.endSessionUrl(ctx.clock.now().getTime(), { idToken: sso.idToken, postLogoutRedirectUri: `${publicUrlFor(ctx.config, request)}/` });
        return { url: url?.href ?? null };
      },
      { detail: { summary: "Where to send the browser to sign out at the SSO provider too (RP-initiated logout); null when there is nowhere", tags: ["People"] } },
    )
    .get(
      "/auth/oidc/:provider/start",
      async ({ params, query, request }) => {
        const client = await clientFor(params.provider);
        if (!client) {
          noteAudit(request, { actor: { type: "anonymous", id: null, name: null } });
          return refused(request, new SsoRefused("provider_unknown", `no single sign-on provider "${params.provider}" here`, 404), params.provider);
        }
        const nowMs = ctx.clock.now().getTime();
        const state = oauth.generateRandomState();
        const nonce = oauth.generateRandomNonce();
        const verifier = oauth.generateRandomCodeVerifier();
        const redirectUri = `${publicUrlFor(ctx.config, request)}/v1/auth/oidc/${client.config.id}/callback`;
        const loginHint = typeof query.login_hint === "string" && query.login_hint.length <= 254 ? query.login_hint : undefined;
        let url: URL;
        try {
          url = await client.authorizationUrl(nowMs, { redirectUri, state, nonce, verifier, loginHint });
        } catch (err) {
          if (!(err instanceof SsoRefused)) throw err;
          noteAudit(request, { actor: { type: "anonymous", id: null, name: null } });
          return refused(request, err, client.config.name);
        }
        const expiresAt = new Date(nowMs + FLOW_TTL_MS).toISOString();
        if (nowMs - prunedAt > PRUNE_EVERY_MS) {
          prunedAt = nowMs;
          await ctx.storage.people.pruneLinks("oidc", new Date(nowMs).toISOString()).catch(() => {});
        }
        // The state, recorded (hashed) to be used once by the callback, on whichever instance it lands.
        await ctx.storage.people.addInvitation({ id: newId("inv"), hash: stateHash(state), kind: "oidc", email: null, tenantId: null, role: null, createdAt: new Date(nowMs).toISOString(), expiresAt, usedAt: null });
        const flow: Flow = { p: client.config.id, s: state, n: nonce, v: verifier, r: redirectUri, x: safeNext(query.next), e: nowMs + FLOW_TTL_MS };
        return new Response(null, {
          status: 303,
          headers: { location: url.href, "set-cookie": flowHeader(request, encodeURIComponent(seal(key(), JSON.stringify(flow), `oidc-flow:${client.config.id}`)), FLOW_TTL_MS / 1000), "cache-control": "no-store", "referrer-policy": "no-referrer" },
        });
      },
      // A browser page (a redirect, or a page saying why not), as the setup and invitation pages: not in the API document.
      { detail: { hide: true, summary: "Start a single sign-on: redirects to the provider (PKCE S256, state, nonce)", tags: ["People"], security: [] } },
    )
    .get(
      "/auth/oidc/:provider/callback",
      async ({ params, request }) => {
        // Recorded as any sign-in attempt is: anonymous until it succeeds, with the e-mail once it is known.
        noteAudit(request, { actor: { type: "anonymous", id: null, name: null } });
        const client = await clientFor(params.provider);
        if (!client) return refused(request, new SsoRefused("provider_unknown", `no single sign-on provider "${params.provider}" here`, 404), params.provider);
        const name = client.config.name;
        try {
          const nowMs = ctx.clock.now().getTime();
          const flow = readFlow(flowCookie(request.headers.get("cookie")), client.config.id, nowMs);
          const callback = new URL(request.url);
          if (callback.searchParams.get("state") !== flow.s) {
            throw new SsoRefused("state_mismatch", `the answer from ${name} does not belong to the sign-in this browser started (wrong state); start again`, 400);
          }
          const used = await ctx.storage.people.useLink(stateHash(flow.s), new Date(nowMs).toISOString(), "oidc");
          if (used.outcome !== "ok") throw new SsoRefused("flow_used", "this sign-in was already completed (or it expired): a provider's answer works once; start again", 400);
          const claims = await client.finish(nowMs, callback, { redirectUri: flow.r, state: flow.s, nonce: flow.n, verifier: flow.v });
          let previous: string | undefined;
          try {
            previous = sessionCookie(request.headers.get("cookie"));
          } catch {
            previous = undefined;
          }
          const { cookie, info } = await ssoSignIn(deps, client.config, claims, previous, (email) =>
            noteAudit(request, { actor: { type: "anonymous", id: null, name: email }, email }),
          );
          noteAudit(request, { tenantId: info.tenant.id, actor: { type: "user", id: info.user.id, name: info.user.email } });
          const headers = new Headers({ location: flow.x, "cache-control": "no-store", "referrer-policy": "no-referrer" });
          headers.append("set-cookie", cookieHeader(ctx, request, cookie, SESSION_ABSOLUTE_MS / 1000));
          headers.append("set-cookie", flowHeader(request, "", 0));
          return new Response(null, { status: 303, headers });
        } catch (err) {
          if (!(err instanceof SsoRefused)) throw err;
          ctx.log.info("sso sign-in refused", { provider: client.config.id, code: err.code, reason: err.message });
          return refused(request, err, name);
        }
      },
      // A browser page (a redirect, or a page saying why not), as the setup and invitation pages: not in the API document.
      { detail: { hide: true, summary: "The provider's callback: checks the answer and signs in (sets the session cookie), or says why not", tags: ["People"], security: [] } },
    )
    .post(
      "/auth/oidc/:provider/backchannel-logout",
      async ({ params, request }) => {
        // OpenID Connect Back-Channel Logout 1.0: the provider posts a signed logout token; the sessions of
        // that provider session (or of that person at this issuer) end, in the database, so on every instance.
        const client = await clientFor(params.provider);
        const answer = (status: number, body?: object) =>
          new Response(body ? JSON.stringify(body) : null, { status, headers: { "cache-control": "no-store", ...(body ? { "content-type": "application/json" } : {}) } });
        if (!client) return answer(404, { error: "invalid_request", error_description: `no single sign-on provider "${params.provider}" here` });
        let token: string | null = null;
        try {
          token = new URLSearchParams(new TextDecoder().decode(await readLimited(request, 16 * 1024))).get("logout_token");
        } catch {
          token = null;
        }
        if (!token) return answer(400, { error: "invalid_request", error_description: "a form body with logout_token is expected" });
        let named: { sid?: string; subject?: string; jti: string };
        try {
          named = await client.logoutToken(ctx.clock.now().getTime(), token);
        } catch (err) {
          if (err instanceof SsoRefused) return answer(503, { error: "temporarily_unavailable", error_description: err.message });
          ctx.log.info("sso back-channel logout refused", { provider: client.config.id, reason: (err as Error).message });
          return answer(400, { error: "invalid_request", error_description: `the logout token is not valid: ${(err as Error).message}` });
        }
        // Both named: the sessions of that provider session of that person (the tighter reading of section 2.7).
        const ended = await ctx.storage.people.endSsoSessions(client.config.issuer, { sid: named.sid, subject: named.subject }).catch((err: unknown) => {
          forgetLogoutToken(client.config.issuer, named.jti);
          throw err;
        });
        ctx.log.info("sso back-channel logout", { provider: client.config.id, ended });
        return answer(200);
      },
      // The provider's endpoint (answers as OpenID Connect Back-Channel Logout 1.0 says, not in our envelope): not in the API document.
      { parse: "none", detail: { hide: true, summary: "OpenID Connect back-channel logout: the provider ends the sessions of one of its sessions", tags: ["People"], security: [] } },
    );

  function readFlow(raw: string | undefined, provider: string, nowMs: number): Flow {
    const missing = new SsoRefused("flow_missing", "this browser has no sign-in in progress (it took more than 10 minutes, or cookies are blocked); start again", 400);
    if (!raw) throw missing;
    let flow: Flow;
    try {
      flow = JSON.parse(open(key(), decodeURIComponent(raw), `oidc-flow:${provider}`)) as Flow;
    } catch {
      throw missing;
    }
    if (flow.p !== provider || typeof flow.e !== "number" || flow.e < nowMs) throw missing;
    return flow;
  }
};
