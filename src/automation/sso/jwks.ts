// An issuer's signing keys (its JWKS), kept as long as its HTTP cache headers say (http-cache-semantics,
// as a private cache: max-age, or Expires less Date, less Age; `no-cache`/`no-store`/`max-age=0`: asked
// again at each use, revalidated with ETag/Last-Modified when the provider gives them), at most 24 hours;
// a provider that says nothing about caching at all is asked again after 5 minutes. A token signed by a
// key the set in hand does not have (a rotation) makes it ask at once, whatever the headers said, but at
// most once per 10 seconds for such reasons, so tokens naming made-up keys (the back-channel logout
// endpoint is open to anyone) cannot make the server hammer the provider. Uses at the same moment share
// one request. One set per JWKS address in the process: sign-ins, re-checks and back-channel logout
// tokens of a provider all read the same.
import CachePolicy from "http-cache-semantics";
import { createLocalJWKSet, errors, type JSONWebKeySet, type JWTVerifyGetKey } from "jose";

const MAX_TTL_MS = 24 * 3600_000;
const SILENT_TTL_MS = 5 * 60_000;
const UNKNOWN_KEY_COOLDOWN_MS = 10_000;
const TIMEOUT_MS = 10_000;
const MAX_BYTES = 512 * 1024;

/** The JWKS could not be fetched (or was not a key set): the caller's provider is down. */
export class JwksUnavailable extends Error {
  override name = "JwksUnavailable";
}

interface Held {
  set: JSONWebKeySet;
  keys: ReturnType<typeof createLocalJWKSet>;
  policy: CachePolicy;
  /** When it stops being fresh (ms since the epoch). */
  until: number;
}

export class Jwks {
  private held?: Held;
  private pending?: Promise<Held>;
  private unknownKeyAt = -Infinity;
  /** How many times the provider was asked (a 304 included): what the tests count. */
  fetches = 0;

  constructor(
    readonly uri: string,
    private readonly get: (url: string, init?: RequestInit) => Promise<Response> = (url, init) => fetch(url, init),
  ) {}

  /** jose's key lookup over the current set (fetched first when stale); an unknown `kid` asks again once. */
  readonly key: JWTVerifyGetKey = async (header, token) => {
    const held = await this.current();
    try {
      return await held.keys(header, token);
    } catch (err) {
      if (!(err instanceof errors.JWKSNoMatchingKey) || Date.now() - this.unknownKeyAt < UNKNOWN_KEY_COOLDOWN_MS) throw err;
      this.unknownKeyAt = Date.now();
      const again = await this.refresh(held);
      return again.keys(header, token);
    }
  };

  private async current(): Promise<Held> {
    const held = this.held;
    if (held && Date.now() < held.until) return held;
    return this.refresh(held);
  }

  /** Asks the provider (once for everyone waiting), revalidating what is held. */
  private refresh(held: Held | undefined): Promise<Held> {
    this.pending ??= this.fetch(held).finally(() => (this.pending = undefined));
    return this.pending;
  }

  private async fetch(held: Held | undefined): Promise<Held> {
    const request = { url: this.uri, method: "GET", headers: { accept: "application/jwk-set+json, application/json" } as Record<string, string> };
    const headers = held ? { ...request.headers, ...(held.policy.revalidationHeaders(request) as Record<string, string>) } : request.headers;
    this.fetches++;
    let response: Response;
    try {
      response = await this.get(this.uri, { headers, redirect: "manual", signal: AbortSignal.timeout(TIMEOUT_MS) });
    } catch (err) {
      throw new JwksUnavailable(`its keys (${this.uri}) cannot be fetched: ${(err as Error).message}`);
    }
    const answer = { status: response.status, headers: Object.fromEntries(response.headers) };
    if (held && response.status === 304) {
      await response.body?.cancel();
      const { policy } = held.policy.revalidatedPolicy(request, answer);
      return (this.held = { ...held, policy, until: until(policy, answer.headers) });
    }
    if (response.status !== 200) {
      await response.body?.cancel();
      throw new JwksUnavailable(`its keys (${this.uri}) answered ${response.status}`);
    }
    let set: JSONWebKeySet;
    try {
      const text = await response.text();
      if (text.length > MAX_BYTES) throw new Error(`more than ${MAX_BYTES} bytes`);
      set = JSON.parse(text) as JSONWebKeySet;
      if (!set || !Array.isArray(set.keys) || !set.keys.every((k) => k && typeof k === "object")) throw new Error("no keys array");
    } catch (err) {
      throw new JwksUnavailable(`its keys (${this.uri}) are not a JSON Web Key Set: ${(err as Error).message}`);
    }
    const policy = new CachePolicy(request, answer, { shared: false });
    return (this.held = { set, keys: createLocalJWKSet(set), policy, until: until(policy, answer.headers) });
  }
}

/** Fresh for what the headers say (at most 24 h); 5 minutes when they say nothing about caching. */
function until(policy: CachePolicy, headers: Record<string, string>): number {
  const silent = headers["cache-control"] === undefined && headers.expires === undefined && headers["last-modified"] === undefined && headers.pragma === undefined;
  const ttl = silent ? SILENT_TTL_MS : Math.min(policy.storable() ? policy.timeToLive() : 0, MAX_TTL_MS);
  return Date.now() + ttl;
}

const sets = new Map<string, Jwks>();

/** The one key set of a JWKS address in this process (one more, fetched through `guarded`, for tenants' providers). */
export function jwksAt(uri: string, guarded?: (url: string, init?: RequestInit) => Promise<Response>): Jwks {
  const key = guarded ? `guarded ${uri}` : uri;
  let s = sets.get(key);
  if (!s) sets.set(key, (s = new Jwks(uri, guarded)));
  return s;
}
