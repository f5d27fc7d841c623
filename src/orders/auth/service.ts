import { timingSafeEqual } from "node:crypto";
import { DomainError, Unauthorized } from "../../kernel/errors";
import { hashSecret, newSecret } from "../../kernel/ids";
import { andThen } from "../../kernel/maybe";
import type { OrderConfig } from "../config";
import type { Caller } from "../users/model";
import { usernameKey } from "../users/service";
import type { UserStore } from "../users/store";
import type { TokenRequest, TokenResponse } from "./model";
import type { ThrottleStore, TokenStore } from "./store";
import { LoginThrottle } from "./throttle";

const oauth = (kind: "invalid" | "unauthorized", code: string, message: string) => new DomainError(kind, message, { code });

export class AuthService {
  private readonly throttle: LoginThrottle;
  /** Verified against for unknown usernames, so both failures take the same time. */
  private readonly dummyHash: Promise<string>;

  constructor(
    private readonly config: OrderConfig,
    private readonly users: UserStore,
    private readonly tokens: TokenStore,
    failures: ThrottleStore,
  ) {
    this.throttle = new LoginThrottle(failures, config.clock, config.throttle.maxFailures, config.throttle.windowMs);
    this.dummyHash = Bun.password.hash(newSecret(), { algorithm: "argon2id", ...config.password });
  }

  /** OAuth 2.0 password grant (RFC 6749 §4.3), errors as §5.2. */
  async issueToken(req: TokenRequest): Promise<TokenResponse> {
    this.checkClient(req.client_id, req.client_secret);
    if (!req.grant_type) throw oauth("invalid", "invalid_request", "Missing grant type");
    if (req.grant_type !== "password") {
      throw oauth("invalid", "unsupported_grant_type", `Unsupported grant type: ${req.grant_type}`);
    }
    if (req.username === undefined || req.username === "") throw oauth("invalid", "invalid_request", "Missing username");
    if (req.password === undefined || req.password === "") throw oauth("invalid", "invalid_request", "Missing password");

    const key = usernameKey(req.username);
    const wait = await this.throttle.begin(key);
    if (wait > 0) {
      this.config.events.login("throttled");
      throw new DomainError("rate_limited", `Too many failed logins for this username; retry in ${wait} s`, {
        code: "too_many_requests",
        retryAfter: wait,
      });
    }
    const user = await this.users.findByKey(key);
    const ok = await Bun.password.verify(req.password, user?.passwordHash ?? (await this.dummyHash));
    if (!user || !ok) {
      this.config.events.login("bad_credentials");
      throw oauth("invalid", "invalid_grant", "Bad credentials");
    }
    this.config.events.login("success");
    await this.throttle.reset(key);

    const token = newSecret(32);
    const now = this.config.clock.now().getTime();
    await this.tokens.insert(hashSecret(token), user.id, now, now + this.config.tokenTtlMs);
    return {
      access_token: token,
      token_type: "bearer",
      expires_in: Math.floor(this.config.tokenTtlMs / 1000),
      scope: "read write",
    };
  }

  /**
   * The caller behind a presented bearer token (see auth/guard.ts). No token → 401 `unauthorized`; a
   * malformed, unknown or expired one → 401 `invalid_token` (thrown, or the promise's rejection).
   * Synchronous when the store is (SQLite): a cached page then answers without a promise on its path.
   */
  authenticate(token: string | undefined): Caller | Promise<Caller> {
    if (token === undefined) throw Unauthorized("Full authentication is required to access this resource", { code: "unauthorized" });
    // RFC 6750 §2.1 b64token; anything else cannot be one of ours, so no lookup.
    if (!/^[A-Za-z0-9\-._~+/]+=*$/.test(token)) throw Unauthorized("Invalid access token", { code: "invalid_token" });
    const user = this.tokens.userFor(hashSecret(token), this.config.clock.now().getTime());
    return andThen(user, liveUser);
  }

  private checkClient(id: string | undefined, secret: string | undefined): void {
    if (!id) throw oauth("unauthorized", "invalid_client", "Client authentication failed: no client credentials");
    const client = this.config.clients.find((c) => c.id === id);
    if (!client || secret === undefined || !sameText(client.secret, secret)) {
      throw oauth("unauthorized", "invalid_client", "Client authentication failed: bad client credentials");
    }
  }
}

function liveUser(user: Caller | undefined): Caller {
  if (!user) throw Unauthorized("Invalid or expired access token", { code: "invalid_token" });
  return user;
}

function sameText(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
}

