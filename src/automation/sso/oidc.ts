// The OpenID Connect relying party, over oauth4webapi (never a hand-written JWT check): the issuer's
// discovery document (remembered for an hour, fetched again at once after a failure), the authorization
// request with PKCE (S256), state and nonce, and the callback: the code exchanged at the token endpoint,
// the ID token's claims checked (issuer, audience, expiry, nonce), its signature checked with jose against
// the issuer's JWKS as its HTTP cache headers let us keep it (jwks.ts: a key it does not know makes it ask
// again, so a rotation is followed), then the UserInfo endpoint asked for what the ID token left out
// (e-mail, groups). Refresh (the role re-checked within a session), back-channel logout tokens (checked
// with jose: the one token oauth4webapi has no check for) and the RP-initiated logout address are here too.
import { compactVerify, errors as jose, jwtVerify } from "jose";
import * as oauth from "oauth4webapi";
import type { OidcProviderConfig } from "../config/oidc";
import { guardedFetch } from "../http/outbound";
import { type Jwks, jwksAt, JwksUnavailable } from "./jwks";

type Fetch = (url: string, init?: RequestInit) => Promise<Response>;

/** A refusal of an SSO sign-in: `code` names it for the sign-in page, `message` says it to a person. */
export class SsoRefused extends Error {
  constructor(
    readonly code: SsoRefusal,
    message: string,
    readonly status: number,
  ) {
    super(message);
    this.name = "SsoRefused";
  }
}

export type SsoRefusal =
  | "provider_unknown"
  | "provider_down"
  | "provider_refused"
  | "flow_missing"
  | "state_mismatch"
  | "flow_used"
  | "code_rejected"
  | "token_issuer"
  | "token_audience"
  | "token_expired"
  | "token_nonce"
  | "token_signature"
  | "token_invalid"
  | "email_missing"
  | "email_unverified"
  | "domain_not_allowed"
  | "no_role"
  | "account_exists"
  | "user_disabled";

const DISCOVERY_TTL_MS = 3600_000;
const TIMEOUT_MS = 10_000;

/** What the sign-in needs from the provider, all of it checked. */
export interface VerifiedClaims {
  subject: string;
  email?: string;
  emailVerified: boolean;
  name?: string;
  /** The value at the groups claim's path (undefined when absent). */
  groups: unknown;
  /** The provider's session (`sid`), when it names one. */
  sid?: string;
  /** What the token endpoint gave besides: a refresh token (when the provider gives one) and the ID token itself. */
  refreshToken?: string;
  idToken: string;
}

export class OidcClient {
  private discovered?: { as: oauth.AuthorizationServer; at: number };
  private readonly client: oauth.Client;
  private readonly auth: oauth.ClientAuth;

  /** How this provider is reached: a tenant's provider only at addresses --outbound-allow lets it reach. */
  private readonly fetch: Fetch;

  constructor(readonly config: OidcProviderConfig) {
    this.client = { client_id: config.clientId };
    this.auth = oauth.ClientSecretBasic(config.clientSecret);
    this.fetch = config.outboundAllow ? guardedFetch(config.outboundAllow) : (url, init) => fetch(url, init);
  }

  private options(): { signal: (url: string) => AbortSignal; [oauth.allowInsecureRequests]?: boolean; [oauth.customFetch]?: Fetch } {
    // http is accepted only for an issuer on loopback (config/oidc.ts): tests and a provider beside the server.
    return {
      signal: () => AbortSignal.timeout(TIMEOUT_MS),
      ...(this.config.issuer.startsWith("http:") ? { [oauth.allowInsecureRequests]: true } : {}),
      ...(this.config.outboundAllow ? { [oauth.customFetch]: this.fetch } : {}),
    };
  }

  /** The issuer's metadata; a provider that cannot be reached is a 503 `provider_down`. */
  async server(nowMs: number): Promise<oauth.AuthorizationServer> {
    if (this.discovered && nowMs - this.discovered.at < DISCOVERY_TTL_MS) return this.discovered.as;
    const issuer = new URL(this.config.issuer);
    try {
      const as = await oauth.processDiscoveryResponse(issuer, await oauth.discoveryRequest(issuer, { ...this.options(), algorithm: "oidc" }));
      if (!as.authorization_endpoint || !as.token_endpoint || !as.jwks_uri) throw new Error("the discovery document lacks an authorization, token or JWKS endpoint");
      // The keys come over https like everything else (http only from a provider on loopback, as the issuer).
      if (!new URL(as.jwks_uri).protocol.startsWith("https") && !this.config.issuer.startsWith("http:")) throw new Error(`its JWKS address is not https (${as.jwks_uri})`);
      this.discovered = { as, at: nowMs };
      return as;
    } catch (err) {
      this.discovered = undefined;
      throw new SsoRefused("provider_down", `${this.config.name} cannot be reached (${reason(err)}); sign in with a password or try again later`, 503);
    }
  }

  /** Where to send the browser: the authorization endpoint with PKCE S256, state and nonce. */
  async authorizationUrl(nowMs: number, f: { redirectUri: string; state: string; nonce: string; verifier: string; loginHint?: string }): Promise<URL> {
    const as = await this.server(nowMs);
    const url = new URL(as.authorization_endpoint!);
    url.searchParams.set("client_id", this.config.clientId);
    url.searchParams.set("redirect_uri", f.redirectUri);
    url.searchParams.set("response_type", "code");
    url.searchParams.set("scope", this.config.scopes.join(" "));
    url.searchParams.set("state", f.state);
    url.searchParams.set("nonce", f.nonce);
    url.searchParams.set("code_challenge", await oauth.calculatePKCECodeChallenge(f.verifier));
    url.searchParams.set("code_challenge_method", "S256");
    if (f.loginHint) url.searchParams.set("login_hint", f.loginHint);
    return url;
  }

  /** The callback: the code exchanged and every check made; a refusal names what failed. */
  async finish(nowMs: number, callback: URL, f: { redirectUri: string; state: string; nonce: string; verifier: string }): Promise<VerifiedClaims> {
    const as = await this.server(nowMs);
    let params: URLSearchParams;
    try {
      params = oauth.validateAuthResponse(as, this.client, callback.searchParams, f.state);
    } catch (err) {
      if (err instanceof oauth.AuthorizationResponseError) {
        const why = err.cause.get("error_description") ?? err.cause.get("error") ?? "no reason given";
        throw new SsoRefused("provider_refused", `${this.config.name} did not sign you in: ${why}`, 401);
      }
      throw new SsoRefused("state_mismatch", `the answer from ${this.config.name} does not belong to this sign-in (${reason(err)}); start again`, 400);
    }
    let response: Response;
    try {
      response = await oauth.authorizationCodeGrantRequest(as, this.client, this.auth, params, f.redirectUri, f.verifier, this.options());
    } catch (err) {
      throw new SsoRefused("provider_down", `${this.config.name}'s token endpoint cannot be reached (${reason(err)}); try again later`, 503);
    }
    unavailable(response, this.config.name);
    let tokens: oauth.TokenEndpointResponse;
    try {
      tokens = await oauth.processAuthorizationCodeResponse(as, this.client, response, { expectedNonce: f.nonce, requireIdToken: true });
      await this.signedByIssuer(as, tokens.id_token!);
    } catch (err) {
      throw refusalOf(err, this.config.name);
    }
    return this.verified(as, tokens);
  }

  /** The issuer's key set (one per JWKS address in the process). */
  private keys(as: oauth.AuthorizationServer): Jwks {
    return jwksAt(as.jwks_uri!, this.config.outboundAllow ? this.fetch : undefined);
  }

  /** The ID token's signature, by one of the issuer's keys with an algorithm it announces (never `none` or HMAC). */
  private async signedByIssuer(as: oauth.AuthorizationServer, idToken: string): Promise<void> {
    await compactVerify(idToken, this.keys(as).key, { algorithms: signingAlgorithms(as) });
  }

  /** The claims of a checked token response, with the UserInfo endpoint asked for what the ID token left out. */
  private async verified(as: oauth.AuthorizationServer, tokens: oauth.TokenEndpointResponse): Promise<VerifiedClaims> {
    const idToken = oauth.getValidatedIdTokenClaims(tokens)!;
    const claims: Record<string, unknown> = { ...idToken };
    const needEmail = claims.email === undefined || claims.email_verified === undefined;
    if (needEmail || at(claims, this.config.groupsClaim) === undefined) {
      // A UserInfo that cannot answer is not "no groups": deciding roles without them would demote or
      // remove people for an outage. The sign-in (or re-check) waits for the provider instead.
      let fromUserInfo: Record<string, unknown>;
      try {
        fromUserInfo = (await this.userInfo(as, tokens.access_token, idToken.sub)) ?? {};
      } catch (err) {
        throw new SsoRefused("provider_down", `${this.config.name}'s UserInfo endpoint did not answer (${reason(err)}); try again later`, 503);
      }
      for (const [k, val] of Object.entries(fromUserInfo)) if (claims[k] === undefined) claims[k] = val;
      // The e-mail and whether it is verified come as a pair from one source.
      if (needEmail && typeof fromUserInfo.email === "string") {
        claims.email = fromUserInfo.email;
        claims.email_verified = fromUserInfo.email_verified;
        claims.xms_edov = fromUserInfo.xms_edov ?? claims.xms_edov;
      }
    }
    return {
      refreshToken: tokens.refresh_token,
      idToken: tokens.id_token!,
      subject: idToken.sub,
      email: typeof claims.email === "string" ? claims.email : undefined,
      emailVerified: verifiedEmail(claims),
      name: typeof claims.name === "string" ? claims.name : undefined,
      groups: at(claims, this.config.groupsClaim),
      sid: typeof claims.sid === "string" ? claims.sid : undefined,
    };
  }

  /**
   * A re-check within a session's life: the refresh token exchanged (its ID token checked like a
   * sign-in's, the signature included), the person's claims read again. A refusal of the provider (the
   * person removed or their session ended there) is a `code_rejected` refusal; a provider that cannot be
   * reached, `provider_down` (the caller keeps the session and tries again later).
   */
  async refresh(nowMs: number, refreshToken: string, subject: string): Promise<VerifiedClaims> {
    const as = await this.server(nowMs);
    let response: Response;
    try {
      response = await oauth.refreshTokenGrantRequest(as, this.client, this.auth, refreshToken, this.options());
    } catch (err) {
      throw new SsoRefused("provider_down", `${this.config.name}'s token endpoint cannot be reached (${reason(err)})`, 503);
    }
    unavailable(response, this.config.name);
    let tokens: oauth.TokenEndpointResponse;
    try {
      tokens = await oauth.processRefreshTokenResponse(as, this.client, response);
      if (tokens.id_token) await this.signedByIssuer(as, tokens.id_token);
    } catch (err) {
      throw refusalOf(err, this.config.name);
    }
    if (tokens.id_token) return this.verified(as, tokens);
    // Without a new ID token (providers may leave it out on refresh) the claims come from UserInfo, for the same subject.
    let claims: Record<string, unknown> | undefined;
    try {
      claims = await this.userInfo(as, tokens.access_token, subject);
    } catch (err) {
      throw refusalOf(err, this.config.name);
    }
    if (!claims) throw new SsoRefused("token_invalid", `${this.config.name} gave no ID token on refresh and has no UserInfo endpoint`, 401);
    return {
      subject,
      email: typeof claims.email === "string" ? claims.email : undefined,
      emailVerified: verifiedEmail(claims),
      name: typeof claims.name === "string" ? claims.name : undefined,
      groups: at(claims, this.config.groupsClaim),
      refreshToken: tokens.refresh_token,
      idToken: "",
    };
  }

  /**
   * A back-channel logout token (OpenID Connect Back-Channel Logout 1.0, section 2.6), checked with jose
   * against the issuer's JWKS: signed by the issuer for this client, recent, with the logout event, a
   * `sub` or `sid`, and no nonce. What it names; throws when anything fails.
   */
  async logoutToken(nowMs: number, token: string): Promise<{ sid?: string; subject?: string; jti: string }> {
    const as = await this.server(nowMs);
    // Wall-clock time, as oauth4webapi uses for ID tokens: token times are the provider's, not the server's clock's.
    let payload: Record<string, unknown>;
    try {
      ({ payload } = await jwtVerify(token, this.keys(as).key, { issuer: as.issuer, audience: this.config.clientId, algorithms: signingAlgorithms(as), maxTokenAge: "10m" }));
    } catch (err) {
      if (err instanceof JwksUnavailable) throw new SsoRefused("provider_down", `${this.config.name}: ${err.message}`, 503);
      throw err;
    }
    const events = payload.events as Record<string, unknown> | undefined;
    const event = events && typeof events === "object" ? events["http://schemas.openid.net/event/backchannel-logout"] : undefined;
    if (!event || typeof event !== "object" || Array.isArray(event)) throw new Error("not a logout token: no back-channel logout event");
    if (payload.nonce !== undefined) throw new Error("a logout token carries no nonce");
    if (typeof payload.jti !== "string" || !payload.jti) throw new Error("a logout token has a jti");
    const sid = typeof payload.sid === "string" ? payload.sid : undefined;
    const subject = typeof payload.sub === "string" ? payload.sub : undefined;
    if (!sid && !subject) throw new Error("a logout token names a sid or a sub");
    if (!firstUse(`${as.issuer} ${payload.jti}`, Date.now())) throw new Error("this logout token was used already (its jti was seen)");
    return { ...(sid ? { sid } : {}), ...(subject ? { subject } : {}), jti: payload.jti };
  }

  /** Where RP-initiated logout sends the browser (undefined when the provider has no end_session_endpoint). */
  async endSessionUrl(nowMs: number, f: { idToken?: string; postLogoutRedirectUri: string }): Promise<URL | undefined> {
    const as = await this.server(nowMs).catch(() => undefined);
    if (!as?.end_session_endpoint) return undefined;
    const url = new URL(as.end_session_endpoint);
    url.searchParams.set("client_id", this.config.clientId);
    if (f.idToken) url.searchParams.set("id_token_hint", f.idToken);
    url.searchParams.set("post_logout_redirect_uri", f.postLogoutRedirectUri);
    return url;
  }

  private async userInfo(as: oauth.AuthorizationServer, accessToken: string, subject: string): Promise<Record<string, unknown> | undefined> {
    if (!as.userinfo_endpoint) return undefined;
    const response = await oauth.userInfoRequest(as, this.client, accessToken, this.options());
    return (await oauth.processUserInfoResponse(as, this.client, subject, response)) as Record<string, unknown>;
  }
}

/**
 * Whether the provider vouches for the e-mail: `email_verified` true (some providers send "true"), or,
 * only when a token carries no `email_verified` at all, Microsoft Entra's `xms_edov` optional claim (the
 * e-mail's domain is verified by its owner: Entra sends no `email_verified` for work accounts).
 */
function verifiedEmail(claims: Record<string, unknown>): boolean {
  const v = claims.email_verified;
  if (v !== undefined) return v === true || v === "true";
  return claims.xms_edov === true || claims.xms_edov === "true" || claims.xms_edov === 1 || claims.xms_edov === "1";
}

/** The value at a dotted path of the claims (`realm_access.roles`). */
export function at(claims: Record<string, unknown>, path: string[]): unknown {
  let cur: unknown = claims;
  for (const key of path) {
    if (cur === null || typeof cur !== "object" || Array.isArray(cur)) return undefined;
    cur = (cur as Record<string, unknown>)[key];
  }
  return cur;
}

function reason(err: unknown): string {
  const e = err as { cause?: { code?: string; message?: string }; message?: string; name?: string };
  if (e?.name === "TimeoutError" || e?.name === "AbortError") return "no answer in time";
  return e?.cause?.code ?? e?.message ?? String(err);
}

/**
 * A token endpoint answering 5xx is down, not refusing: a re-check keeps the session and tries again
 * (only the provider's refusal of the grant, or a token that fails its checks, ends it).
 */
function unavailable(response: Response, name: string): void {
  if (response.status >= 500) throw new SsoRefused("provider_down", `${name}'s token endpoint answered ${response.status}; try again later`, 503);
}

/** oauth4webapi's errors about the token response, as refusals a person can read. */
/**
 * Logout tokens seen in the last 10 minutes (their accepted age), by issuer and `jti`: a replayed token is
 * refused. In this process only: a replay at another instance ends sessions that are already ended.
 */
const seenLogoutTokens = new Map<string, number>();
const SEEN_MS = 10 * 60_000;
const SEEN_MAX = 10_000;

/** Forgets a logout token whose sessions could not be ended, so the provider's retry is not a replay. */
export function forgetLogoutToken(issuer: string, jti: string): void {
  seenLogoutTokens.delete(`${issuer} ${jti}`);
}

function firstUse(key: string, nowMs: number): boolean {
  if (seenLogoutTokens.has(key)) return false;
  for (const [k, at] of seenLogoutTokens) {
    if (at > nowMs - SEEN_MS && seenLogoutTokens.size < SEEN_MAX) break;
    seenLogoutTokens.delete(k);
  }
  seenLogoutTokens.set(key, nowMs);
  return true;
}

/** What the issuer signs ID and logout tokens with, as it announces (RS256 when it does not): never `none` or HMAC. */
function signingAlgorithms(as: oauth.AuthorizationServer): string[] {
  return (as.id_token_signing_alg_values_supported ?? ["RS256"]).filter((a) => a !== "none" && !a.startsWith("HS"));
}

function refusalOf(err: unknown, name: string): SsoRefused {
  if (err instanceof JwksUnavailable) return new SsoRefused("provider_down", `${name}: ${err.message}; try again later`, 503);
  if (err instanceof jose.JOSEError && !(err instanceof jose.JWTClaimValidationFailed)) {
    return new SsoRefused("token_signature", `the ID token is not signed by one of ${name}'s keys (unknown key, bad signature or an unsigned token)`, 401);
  }
  if (err instanceof oauth.ResponseBodyError && (err.error === "server_error" || err.error === "temporarily_unavailable")) {
    return new SsoRefused("provider_down", `${name} is unavailable (${err.error}); try again later`, 503);
  }
  if (err instanceof oauth.ResponseBodyError) {
    const why = typeof err.cause.error_description === "string" ? err.cause.error_description : err.error;
    return new SsoRefused("code_rejected", `${name} refused the sign-in's code (${why}): a code works once; start again`, 401);
  }
  if (err instanceof oauth.OperationProcessingError) {
    const claim = (err.cause as { claim?: string } | undefined)?.claim;
    if (err.code === oauth.JWT_CLAIM_COMPARISON && claim === "iss") return new SsoRefused("token_issuer", `the ID token was issued by another issuer than ${name}`, 401);
    if (err.code === oauth.JWT_CLAIM_COMPARISON && (claim === "aud" || claim === "azp")) return new SsoRefused("token_audience", `the ID token was issued for another client than this server`, 401);
    if (err.code === oauth.JWT_CLAIM_COMPARISON && claim === "nonce") return new SsoRefused("token_nonce", "the ID token belongs to another sign-in (its nonce does not match); start again", 401);
    if (err.code === oauth.JWT_TIMESTAMP_CHECK) return new SsoRefused("token_expired", "the ID token has expired or is not valid yet (check the clocks of this server and the provider)", 401);
    if (err.code === oauth.KEY_SELECTION || /signature|"alg"/.test(err.message)) {
      return new SsoRefused("token_signature", `the ID token is not signed by one of ${name}'s keys (unknown key, bad signature or an unsigned token)`, 401);
    }
  }
  return new SsoRefused("token_invalid", `${name}'s answer could not be accepted (${reason(err)})`, 401);
}
