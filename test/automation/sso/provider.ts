// A real OpenID Provider for the SSO tests: `oidc-provider` (the certified Node implementation) on
// loopback, with one confidential client, a few people (claims and groups the test may change), a login
// form a browser fills in (or `login_hint` naming a person, which signs them in at once for HTTP tests),
// and a switch that rewrites the ID token the token endpoint answers with, to show that our side refuses
// tokens a broken or hostile provider could send (another issuer or audience, expired, a wrong nonce,
// an unknown key, `alg: none`).
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import Provider, { type KoaContextWithOIDC } from "oidc-provider";
import * as jose from "jose";

export interface TestPerson {
  email: string;
  /** Absent: the claim is not sent at all (as Microsoft Entra does for work accounts). */
  email_verified?: boolean;
  /** Microsoft Entra's "e-mail domain owner verified" optional claim. */
  xms_edov?: boolean;
  name: string;
  groups: string[];
}

export type Forgery = "issuer" | "audience" | "expired" | "nonce" | "unknown-key" | "alg-none";

export interface TestProvider {
  issuer: string;
  /** Redirect URIs of the client: may be added to until the first request (the provider is made then). */
  redirectUris: string[];
  /** Where the provider posts back-channel logout tokens (set before the first request; absent: none). */
  backchannelUri?: string;
  clientId: string;
  clientSecret: string;
  people: Map<string, TestPerson>;
  /** Rewrites the next ID tokens of the token endpoint (undefined: untouched). */
  forge: Forgery | undefined;
  /** Endpoints that answer 503 while set (an outage of part of the provider). */
  down: Set<"token" | "userinfo">;
  /** Headers of the JWKS answers (cache-control, etag, ...); an `If-None-Match` equal to the etag answers 304. */
  jwksHeaders: Record<string, string>;
  /** The JWKS requests so far, with the status answered and the If-None-Match they carried. */
  jwksRequests: { status: number; ifNoneMatch: string | null }[];
  /** A new signing key: published in the JWKS beside the first, and the ID tokens are signed with it from now on. */
  rotate(): Promise<string>;
  /** Signs a token with the provider's current key (as its back-channel logout tokens are). */
  sign(claims: jose.JWTPayload): Promise<string>;
  close(): Promise<void>;
}

const escape = (s: string) => s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

export async function startProvider(opts: { redirectUris?: string[]; people?: Record<string, TestPerson> }): Promise<TestProvider> {
  const people = new Map(Object.entries(opts.people ?? {}));
  const signing = await jose.generateKeyPair("RS256", { extractable: true });
  const jwk = { ...(await jose.exportJWK(signing.privateKey)), kid: "test-key-1", alg: "RS256", use: "sig" };
  const clientId = "automation-test";
  const clientSecret = "test-secret-" + crypto.randomUUID();
  const server: Server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const state: TestProvider = {
    issuer,
    redirectUris: [...(opts.redirectUris ?? [])],
    clientId,
    clientSecret,
    people,
    forge: undefined,
    down: new Set(),
    jwksHeaders: {},
    jwksRequests: [],
    rotate: async () => {
      const next = await jose.generateKeyPair("RS256", { extractable: true });
      const kid = `test-key-${rotated.length + 2}`;
      rotated.push({ kid, privateKey: next.privateKey, public: { ...(await jose.exportJWK(next.publicKey)), kid, alg: "RS256", use: "sig" } });
      return kid;
    },
    sign: async (claims) => {
      const now = rotated.at(-1);
      return new jose.SignJWT(claims).setProtectedHeader({ alg: "RS256", kid: now?.kid ?? jwk.kid }).setIssuedAt().sign(now?.privateKey ?? signing.privateKey);
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };

  /** Keys made by rotate(), the last one signing. */
  const rotated: { kid: string; privateKey: CryptoKey; public: jose.JWK }[] = [];
  // Made at the first request, so a test can register the redirect URI of a server it starts after this.
  let made: ReturnType<typeof make> | undefined;
  const make = () => {
    const provider = new Provider(issuer, {
      clients: [
        {
          client_id: clientId,
          client_secret: clientSecret,
          redirect_uris: state.redirectUris,
          post_logout_redirect_uris: state.redirectUris.map((u) => new URL("/", u).href),
          grant_types: ["authorization_code", "refresh_token"],
          response_types: ["code"],
          ...(state.backchannelUri ? { backchannel_logout_uri: state.backchannelUri, backchannel_logout_session_required: true } : {}),
        },
      ],
      // Refresh tokens for every sign-in (as Keycloak gives them), so the server can re-check roles.
      issueRefreshToken: async () => true,
      jwks: { keys: [jwk] },
      pkce: { required: () => true },
      claims: { openid: ["sub"], email: ["email", "email_verified", "xms_edov"], profile: ["name"], groups: ["groups", "realm_access"] },
      scopes: ["openid", "email", "profile", "groups", "offline_access"],
      features: { devInteractions: { enabled: false }, backchannelLogout: { enabled: true }, rpInitiatedLogout: {
          enabled: true,
          // No outside resources (the default page loads a web font).
          async logoutSource(ctx: KoaContextWithOIDC, form: string) {
            ctx.body = `<!doctype html><title>Test provider: sign out</title><h1>Sign out of the test provider?</h1>${form}<button id="logout-yes" type="submit" form="op.logoutForm" value="yes" name="logout">Yes, sign me out</button>`;
          },
          async postLogoutSuccessSource(ctx: KoaContextWithOIDC) {
            ctx.body = `<!doctype html><title>Test provider: signed out</title><p id="signed-out">Signed out.</p>`;
          },
        },
      },
      interactions: { url: (_ctx: KoaContextWithOIDC, interaction: { uid: string }) => `/interaction/${interaction.uid}` },
      async findAccount(_ctx: KoaContextWithOIDC, id: string) {
        const p = people.get(id);
        if (!p) return undefined;
        return {
          accountId: id,
          async claims() {
            const now = people.get(id) ?? p;
            return { sub: id, email: now.email, email_verified: now.email_verified, xms_edov: now.xms_edov, name: now.name, groups: now.groups, realm_access: { roles: now.groups } };
          },
        };
      },
      // First-party: consent is given (the scopes asked for) without a page.
      async loadExistingGrant(ctx: KoaContextWithOIDC) {
        const client = ctx.oidc.client!;
        const existing = ctx.oidc.result?.consent?.grantId ?? ctx.oidc.session!.grantIdFor(client.clientId);
        if (existing) return ctx.oidc.provider.Grant.find(existing);
        const grant = new ctx.oidc.provider.Grant({ clientId: client.clientId, accountId: ctx.oidc.session!.accountId! });
        grant.addOIDCScope("openid email profile groups offline_access");
        await grant.save();
        return grant;
      },
      ttl: { Session: 600, Interaction: 600, Grant: 600, AuthorizationCode: 60, AccessToken: 600, IdToken: 600, RefreshToken: 3600 },
    });
    provider.proxy = false;

    // The token endpoint's answer, rewritten when the test asks; endpoints down while the test says so.
    provider.use(async (ctx, next) => {
      if ((ctx.path === "/token" && state.down.has("token")) || (ctx.path === "/me" && state.down.has("userinfo"))) {
        ctx.status = 503;
        ctx.body = "<html><body>Service Unavailable</body></html>";
        return;
      }
      if (ctx.path === "/jwks") {
        const ifNoneMatch = ctx.get("if-none-match") || null;
        if (state.jwksHeaders.etag && ifNoneMatch === state.jwksHeaders.etag) {
          state.jwksRequests.push({ status: 304, ifNoneMatch });
          ctx.set(state.jwksHeaders);
          ctx.status = 304;
          return;
        }
        await next();
        (ctx.body as { keys: jose.JWK[] }).keys.push(...rotated.map((k) => k.public));
        ctx.set(state.jwksHeaders);
        state.jwksRequests.push({ status: ctx.status, ifNoneMatch });
        return;
      }
      await next();
      if (ctx.path !== "/token" || ctx.status !== 200) return;
      const body = ctx.body as { id_token?: string };
      if (body.id_token && state.forge) body.id_token = await forged(state.forge, body.id_token, jwk, issuer);
      else if (body.id_token && rotated.length) body.id_token = await state.sign(jose.decodeJwt(body.id_token));
    });

    return { provider, callback: provider.callback() };
  };

  server.on("request", async (req, res) => {
    made ??= make();
    const { provider, callback } = made;
    const url = new URL(req.url ?? "/", issuer);
    const m = /^\/interaction\/([^/]+)(\/login)?$/.exec(url.pathname);
    if (!m) return callback(req, res);
    try {
      const details = await provider.interactionDetails(req, res);
      let login = details.params.login_hint as string | undefined;
      if (m[2] && req.method === "POST") {
        const body = await new Promise<string>((resolve) => {
          let s = "";
          req.on("data", (c) => (s += c));
          req.on("end", () => resolve(s));
        });
        login = new URLSearchParams(body).get("login") ?? undefined;
      }
      if (login && people.has(login)) {
        await provider.interactionFinished(req, res, { login: { accountId: login } }, { mergeWithLastSubmission: false });
        return;
      }
      res.writeHead(200, { "content-type": "text/html; charset=utf-8" });
      res.end(
        `<!doctype html><title>Test provider: sign in</title><h1>Test provider</h1>${login ? `<p id="unknown">No such person: ${escape(login)}</p>` : ""}<form method="post" action="/interaction/${escape(m[1]!)}/login"><label>Login <input id="login" name="login" autofocus></label><button id="submit">Sign in</button></form>`,
      );
    } catch (err) {
      res.writeHead(400, { "content-type": "text/plain" });
      res.end(String(err));
    }
  });
  return state;
}

async function forged(how: Forgery, idToken: string, jwk: jose.JWK, issuer: string): Promise<string> {
  const claims = jose.decodeJwt(idToken);
  const now = Math.floor(Date.now() / 1000);
  if (how === "alg-none") return new jose.UnsecuredJWT(claims).encode();
  const changed = { ...claims };
  if (how === "issuer") changed.iss = "http://127.0.0.1:1/another-issuer";
  if (how === "audience") changed.aud = "another-client";
  if (how === "expired") Object.assign(changed, { iat: now - 7200, exp: now - 3600 });
  if (how === "nonce") changed.nonce = "not-the-nonce-we-sent";
  if (how === "unknown-key") {
    const other = await jose.generateKeyPair("RS256");
    return new jose.SignJWT(changed).setProtectedHeader({ alg: "RS256", kid: "unknown-kid" }).sign(other.privateKey);
  }
  const key = await jose.importJWK(jwk, "RS256");
  void issuer;
  return new jose.SignJWT(changed).setProtectedHeader({ alg: "RS256", kid: "test-key-1" }).sign(key);
}
