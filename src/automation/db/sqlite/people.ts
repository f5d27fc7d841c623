// People on SQLite (db/automation/0030_people.sql, 0032_people_totp.sql): users, memberships, sessions,
// one-time links, TOTP second factors, tenant settings and sign-in throttles. Writes that check first run in IMMEDIATE transactions; the per-request session
// lookup is one statement prepared once per connection.
import type { Database, Statement } from "bun:sqlite";
import type { TenantRow } from "../tables/foundation";
import { DataVersion } from "../../../kernel/data-version";
import { keysMayHaveChanged } from "./tenancy";
import type { InvitationRow, LinkKind, MembershipRow, PeopleStore, Redeemed, Role, SessionLookup, SessionRow, SsoIdentityRow, SsoSessionRow, TenantPeopleSettings, TenantProviderRow, TenantSsoSettings, TotpRow, Used, UserRow, UserStatus } from "../../people/store";

const USER = "id, email, email_key AS emailKey, name, status, password_hash AS passwordHash, created_at AS createdAt";
const MEMBER = "user_id AS userId, tenant_id AS tenantId, role, created_at AS createdAt";
const SSO = "s.session_id AS sessionId, s.provider, s.issuer, s.subject, s.sid, s.refresh_token AS refreshToken, s.id_token AS idToken, s.checked_at AS checkedAt, s.created_at AS createdAt";
const TENANT_IDP = "id, tenant_id AS tenantId, name, issuer, client_id AS clientId, client_secret AS clientSecret, scopes, groups_claim AS groupsClaim, role_map AS roleMap, default_role AS defaultRole, allowed_domains AS allowedDomains, recheck_ms AS recheckMs, created_at AS createdAt, updated_at AS updatedAt";
const INVITE = "id, hash, kind, email, tenant_id AS tenantId, role, created_at AS createdAt, expires_at AS expiresAt, used_at AS usedAt";

type LookupRow = SessionRow & {
  uEmail: string; uEmailKey: string; uName: string; uStatus: UserStatus; uPassword: string | null; uCreatedAt: string;
  tSlug: string; tName: string; tCreatedAt: string; role: Role; enrollTotp: number;
};

/**
 * Methods that never change what a session lookup answers. Every other method of the store forgets the
 * remembered lookups when it is called (a method added later is safe by default).
 */
const KEEP_LOOKUPS = new Set([
  "countUsers", "findUser", "listUsers", "memberships", "findInvitation", "session", "touchSession", "sessionsOf",
  "failures", "addFailure", "clearFailures", "totp", "tenantSettings", "addInvitation", "addSession", "setSessionClient", "useTotpStep",
  "ssoIdentity", "linkSsoIdentity", "pruneLinks", "deleteLink", "ssoSession", "dueSsoSessions", "claimSsoCheck", "setSsoTokens", "tenantSso", "tenantProviders", "tenantProvider", "addTenantProvider", "deleteTenantProvider",
  // private reads
  "user", "lookup",
]);
/** Sessions remembered at most; past it the memory starts over. */
const SESSION_CACHE_MAX = 10_000;

export class SqlitePeopleStore implements PeopleStore {
  private readonly byHash: Statement<LookupRow, [string, string, string]>;
  private readonly touch: Statement<unknown, [string, string]>;
  /**
   * Live session lookups by cookie hash, with the data version they were read at: a session costs what a
   * key does (issue 37 asks ≤ 1.1×). Another connection's commit (a `users disable` from the shell,
   * another server on the file) moves the version; this connection's own changes forget them all.
   * Expiry is checked against the remembered row on every hit.
   */
  private readonly cache = new Map<string, { version: number; found: SessionLookup }>();
  private readonly version: DataVersion;

  constructor(readonly sqlite: Database) {
    this.version = new DataVersion(sqlite);
    for (const name of Object.getOwnPropertyNames(SqlitePeopleStore.prototype)) {
      if (name === "constructor" || KEEP_LOOKUPS.has(name)) continue;
      const method = (this as unknown as Record<string, (...a: unknown[]) => unknown>)[name]!;
      if (typeof method !== "function") continue;
      (this as unknown as Record<string, unknown>)[name] = (...args: unknown[]) => {
        this.cache.clear();
        return method.apply(this, args);
      };
    }
    this.byHash = sqlite.prepare<LookupRow, [string, string, string]>(
      `SELECT s.id, s.hash, s.user_id AS userId, s.tenant_id AS tenantId, s.csrf, s.created_at AS createdAt, s.last_seen_at AS lastSeenAt, s.expires_at AS expiresAt,
         u.email AS uEmail, u.email_key AS uEmailKey, u.name AS uName, u.status AS uStatus, u.password_hash AS uPassword, u.created_at AS uCreatedAt,
         t.slug AS tSlug, t.name AS tName, t.created_at AS tCreatedAt, m.role,
         (u.totp_secret IS NULL AND coalesce(ts.require_totp, 0) = 1) AS enrollTotp
       FROM sessions s JOIN users u ON u.id = s.user_id JOIN memberships m ON m.user_id = s.user_id AND m.tenant_id = s.tenant_id
         JOIN tenants t ON t.id = s.tenant_id LEFT JOIN tenant_settings ts ON ts.tenant_id = s.tenant_id
       WHERE s.hash = ?1 AND s.expires_at > ?2 AND s.last_seen_at > ?3 AND u.status = 'active'`,
    );
    this.touch = sqlite.prepare("UPDATE sessions SET last_seen_at = ? WHERE id = ?");
  }

  private user(ref: string): UserRow | undefined {
    return this.sqlite.query<UserRow, [string, string]>(`SELECT ${USER} FROM users WHERE id = ?1 OR email_key = ?2`).get(ref, ref.toLowerCase()) ?? undefined;
  }

  private insertUser(u: UserRow): void {
    this.sqlite
      .query("INSERT INTO users (id, email, email_key, name, status, password_hash, created_at) VALUES (?, ?, ?, ?, ?, ?, ?)")
      .run(u.id, u.email, u.emailKey, u.name, u.status, u.passwordHash, u.createdAt);
  }

  private upsertMembership(m: MembershipRow): void {
    this.sqlite
      .query("INSERT INTO memberships (user_id, tenant_id, role, created_at) VALUES (?, ?, ?, ?) ON CONFLICT (user_id, tenant_id) DO UPDATE SET role = excluded.role")
      .run(m.userId, m.tenantId, m.role, m.createdAt);
  }

  private tenant(ref: string): TenantRow | undefined {
    return this.sqlite.query<TenantRow, [string]>("SELECT id, slug, name, created_at AS createdAt FROM tenants WHERE id = ?1 OR slug = ?1 LIMIT 1").get(ref) ?? undefined;
  }

  async countUsers(): Promise<number> {
    return (this.sqlite.query<{ n: number }, []>("SELECT count(*) AS n FROM users").get() as { n: number }).n;
  }

  async createUser(user: UserRow, membership?: Omit<MembershipRow, "userId">): Promise<"ok" | "email_taken"> {
    return this.sqlite.transaction(() => {
      if (this.user(user.emailKey)) return "email_taken" as const;
      this.insertUser(user);
      if (membership) this.upsertMembership({ ...membership, userId: user.id });
      return "ok" as const;
    }).immediate();
  }

  async findUser(ref: string): Promise<UserRow | undefined> {
    return this.user(ref);
  }

  async listUsers(tenantId?: string): Promise<{ user: UserRow; memberships: MembershipRow[] }[]> {
    const users = tenantId
      ? this.sqlite.query<UserRow, [string]>(`SELECT ${USER} FROM users WHERE id IN (SELECT user_id FROM memberships WHERE tenant_id = ?) ORDER BY id`).all(tenantId)
      : this.sqlite.query<UserRow, []>(`SELECT ${USER} FROM users ORDER BY id`).all();
    const all = this.sqlite.query<MembershipRow, []>(`SELECT ${MEMBER} FROM memberships ORDER BY tenant_id`).all();
    return users.map((user) => ({ user, memberships: all.filter((m) => m.userId === user.id) }));
  }

  async setStatus(userId: string, status: UserStatus): Promise<UserRow | undefined> {
    return this.sqlite.transaction(() => {
      this.sqlite.query("UPDATE users SET status = ? WHERE id = ?").run(status, userId);
      // The user's keys live only while they are active: remembered lookups go.
      keysMayHaveChanged(this.sqlite);
      if (status === "disabled") this.sqlite.query("DELETE FROM sessions WHERE user_id = ?").run(userId);
      return this.user(userId);
    }).immediate();
  }

  async setRole(userId: string, tenantId: string, role: Role, at: string): Promise<"ok" | "no_user" | "no_tenant"> {
    return this.sqlite.transaction(() => {
      if (!this.sqlite.query("SELECT 1 FROM users WHERE id = ?").get(userId)) return "no_user" as const;
      if (!this.sqlite.query("SELECT 1 FROM tenants WHERE id = ?").get(tenantId)) return "no_tenant" as const;
      this.upsertMembership({ userId, tenantId, role, createdAt: at });
      // The user's keys never grant more than their role: remembered lookups go.
      keysMayHaveChanged(this.sqlite);
      return "ok" as const;
    }).immediate();
  }

  async removeMembership(userId: string, tenantId: string): Promise<boolean> {
    return this.sqlite.transaction(() => {
      keysMayHaveChanged(this.sqlite);
      this.sqlite.query("DELETE FROM sessions WHERE user_id = ? AND tenant_id = ?").run(userId, tenantId);
      return this.sqlite.query("DELETE FROM memberships WHERE user_id = ? AND tenant_id = ?").run(userId, tenantId).changes > 0;
    }).immediate();
  }

  async memberships(userId: string): Promise<MembershipRow[]> {
    return this.sqlite.query<MembershipRow, [string]>(`SELECT ${MEMBER} FROM memberships WHERE user_id = ? ORDER BY created_at, tenant_id`).all(userId);
  }

  async addInvitation(row: InvitationRow, replaceKind = false): Promise<void> {
    this.sqlite.transaction(() => {
      if (replaceKind) this.sqlite.query("DELETE FROM invitations WHERE kind = ? AND used_at IS NULL").run(row.kind);
      this.sqlite
        .query("INSERT INTO invitations (id, hash, kind, email, tenant_id, role, created_at, expires_at, used_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)")
        .run(row.id, row.hash, row.kind, row.email, row.tenantId, row.role, row.createdAt, row.expiresAt, row.usedAt);
    }).immediate();
  }

  /** The link by hash, and whether it may be used now (unused, unexpired, of `kind`). */
  private usable(hash: string, now: string, kind: LinkKind): { outcome: "unknown" | "used" | "expired" } | InvitationRow {
    const inv = this.sqlite.query<InvitationRow, [string]>(`SELECT ${INVITE} FROM invitations WHERE hash = ?`).get(hash);
    if (!inv || inv.kind !== kind) return { outcome: "unknown" };
    if (inv.usedAt) return { outcome: "used" };
    if (inv.expiresAt <= now) return { outcome: "expired" };
    return inv;
  }

  async useLink(hash: string, now: string, kind: LinkKind): Promise<Used> {
    return this.sqlite.transaction((): Used => {
      const inv = this.usable(hash, now, kind);
      if ("outcome" in inv) return inv;
      this.sqlite.query("UPDATE invitations SET used_at = ? WHERE id = ?").run(now, inv.id);
      return { outcome: "ok", link: { ...inv, usedAt: now } };
    }).immediate();
  }

  async resetPassword(hash: string, now: string, passwordHash: string) {
    return this.sqlite.transaction(() => {
      const inv = this.usable(hash, now, "reset");
      if ("outcome" in inv) return inv;
      const user = inv.email ? this.user(inv.email) : undefined;
      if (!user) return { outcome: "unknown" as const };
      this.sqlite.query("UPDATE users SET password_hash = ? WHERE id = ?").run(passwordHash, user.id);
      const ended = this.sqlite.query("DELETE FROM sessions WHERE user_id = ?").run(user.id).changes;
      this.sqlite.query("UPDATE invitations SET used_at = ? WHERE id = ?").run(now, inv.id);
      return { outcome: "ok" as const, user: { ...user, passwordHash }, ended };
    }).immediate();
  }

  async deleteLink(hash: string): Promise<void> {
    this.sqlite.query("DELETE FROM invitations WHERE hash = ?").run(hash);
  }

  async pruneLinks(kind: LinkKind, before: string): Promise<number> {
    return this.sqlite.query("DELETE FROM invitations WHERE kind = ? AND expires_at < ?").run(kind, before).changes;
  }

  async findInvitation(hash: string, now: string): Promise<InvitationRow | undefined> {
    return this.sqlite.query<InvitationRow, [string, string]>(`SELECT ${INVITE} FROM invitations WHERE hash = ? AND used_at IS NULL AND expires_at > ?`).get(hash, now) ?? undefined;
  }

  async redeem(hash: string, now: string, user: UserRow, tenant?: TenantRow): Promise<Redeemed> {
    return this.sqlite.transaction((): Redeemed => {
      const inv = this.sqlite.query<InvitationRow, [string]>(`SELECT ${INVITE} FROM invitations WHERE hash = ?`).get(hash);
      if (!inv) return { outcome: "unknown" };
      if (inv.usedAt) return { outcome: "used" };
      if (inv.expiresAt <= now) return { outcome: "expired" };
      // A reset link or a sign-in code makes no member.
      if (inv.kind !== "setup" && inv.kind !== "invite") return { outcome: "unknown" };
      let target: TenantRow | undefined;
      let role: Role;
      let member = this.user(user.emailKey);
      if (inv.kind === "setup") {
        if ((this.sqlite.query<{ n: number }, []>("SELECT count(*) AS n FROM users").get() as { n: number }).n > 0) return { outcome: "setup_done" };
        if (!tenant) return { outcome: "unknown" };
        target = this.tenant(tenant.slug);
        if (!target) {
          if (this.tenant(tenant.id)) return { outcome: "slug_taken" };
          this.sqlite.query("INSERT INTO tenants (id, slug, name, created_at) VALUES (?, ?, ?, ?)").run(tenant.id, tenant.slug, tenant.name, tenant.createdAt);
          target = tenant;
        }
        role = "owner";
      } else {
        target = inv.tenantId ? this.tenant(inv.tenantId) : undefined;
        if (!target || !inv.role) return { outcome: "unknown" };
        role = inv.role;
      }
      if (member && inv.kind === "setup") return { outcome: "email_taken" };
      if (!member) {
        this.insertUser(user);
        member = user;
      }
      this.upsertMembership({ userId: member.id, tenantId: target.id, role, createdAt: now });
      this.sqlite.query("UPDATE invitations SET used_at = ? WHERE id = ?").run(now, inv.id);
      return { outcome: "ok", user: member, tenant: target, role };
    }).immediate();
  }

  async addSession(row: SessionRow, sso?: SsoSessionRow): Promise<void> {
    this.sqlite.transaction(() => {
      this.sqlite
        .query("INSERT INTO sessions (id, hash, user_id, tenant_id, csrf, created_at, last_seen_at, expires_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)")
        .run(row.id, row.hash, row.userId, row.tenantId, row.csrf, row.createdAt, row.lastSeenAt, row.expiresAt);
      if (sso) {
        this.sqlite
          .query("INSERT INTO sso_sessions (session_id, provider, issuer, subject, sid, refresh_token, id_token, checked_at, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)")
          .run(sso.sessionId, sso.provider, sso.issuer, sso.subject, sso.sid, sso.refreshToken, sso.idToken, sso.checkedAt, sso.createdAt);
      }
    })();
  }

  async session(hash: string, now: string, idleMs: number): Promise<SessionLookup | undefined> {
    const idleCut = new Date(Date.parse(now) - idleMs).toISOString();
    const version = this.version.current();
    const hit = this.cache.get(hash);
    if (hit?.version === version) return hit.found.session.expiresAt > now && hit.found.session.lastSeenAt > idleCut ? hit.found : undefined;
    const found = this.lookup(hash, now, idleCut);
    if (found) {
      if (this.cache.size >= SESSION_CACHE_MAX) this.cache.clear();
      this.cache.set(hash, { version, found });
    }
    return found;
  }

  private lookup(hash: string, now: string, idleCut: string): SessionLookup | undefined {
    const r = this.byHash.get(hash, now, idleCut);
    if (!r) return undefined;
    const { uEmail, uEmailKey, uName, uStatus, uPassword, uCreatedAt, tSlug, tName, tCreatedAt, role, enrollTotp, ...session } = r;
    return {
      session,
      user: { id: session.userId, email: uEmail, emailKey: uEmailKey, name: uName, status: uStatus, passwordHash: uPassword, createdAt: uCreatedAt },
      tenant: { id: session.tenantId, slug: tSlug, name: tName, createdAt: tCreatedAt },
      role,
      enrollTotp: enrollTotp === 1,
    };
  }

  async touchSession(id: string, at: string): Promise<void> {
    this.touch.run(at, id);
    // The remembered row follows (our own write does not move the data version).
    for (const e of this.cache.values()) if (e.found.session.id === id) e.found.session.lastSeenAt = at;
  }

  async deleteSession(id: string): Promise<void> {
    this.sqlite.query("DELETE FROM sessions WHERE id = ?").run(id);
  }

  async deleteSessions(userId: string): Promise<number> {
    return this.sqlite.query("DELETE FROM sessions WHERE user_id = ?").run(userId).changes;
  }

  async sessionsOf(userId: string, now: string, idleMs: number): Promise<SessionRow[]> {
    return this.sqlite
      .query<SessionRow, [string, string, string]>(
        `SELECT id, hash, user_id AS userId, tenant_id AS tenantId, csrf, created_at AS createdAt, last_seen_at AS lastSeenAt, expires_at AS expiresAt,
           user_agent AS userAgent, address
         FROM sessions WHERE user_id = ? AND expires_at > ? AND last_seen_at > ? ORDER BY created_at DESC, id DESC`,
      )
      .all(userId, now, new Date(Date.parse(now) - idleMs).toISOString());
  }

  async endSession(userId: string, id: string): Promise<boolean> {
    return this.sqlite.query("DELETE FROM sessions WHERE id = ? AND user_id = ?").run(id, userId).changes > 0;
  }

  async setSessionClient(hash: string, client: { userAgent: string | null; address: string | null }): Promise<void> {
    this.sqlite.query("UPDATE sessions SET user_agent = ?, address = ? WHERE hash = ?").run(client.userAgent, client.address, hash);
  }

  async failures(subjects: string[], nowMs: number, windowMs: number) {
    const q = this.sqlite.query<{ failures: number; windowStartMs: number }, [string, number]>(
      "SELECT failures, window_start_ms AS windowStartMs FROM sign_in_failures WHERE subject = ? AND window_start_ms > ?",
    );
    return subjects.map((subject) => {
      const r = q.get(subject, nowMs - windowMs);
      return { subject, failures: r?.failures ?? 0, windowStartMs: r?.windowStartMs ?? nowMs };
    });
  }

  async addFailure(subjects: string[], nowMs: number, windowMs: number): Promise<void> {
    const q = this.sqlite.query(
      `INSERT INTO sign_in_failures (subject, failures, window_start_ms) VALUES (?1, 1, ?2)
       ON CONFLICT (subject) DO UPDATE SET
         failures = CASE WHEN sign_in_failures.window_start_ms > ?2 - ?3 THEN sign_in_failures.failures + 1 ELSE 1 END,
         window_start_ms = CASE WHEN sign_in_failures.window_start_ms > ?2 - ?3 THEN sign_in_failures.window_start_ms ELSE ?2 END`,
    );
    this.sqlite.transaction(() => {
      for (const s of subjects) q.run(s, nowMs, windowMs);
    }).immediate();
  }

  async clearFailures(subject: string): Promise<void> {
    this.sqlite.query("DELETE FROM sign_in_failures WHERE subject = ?").run(subject);
  }

  async totp(userId: string): Promise<TotpRow> {
    const r = this.sqlite
      .query<TotpRow, [string]>("SELECT totp_secret AS secret, totp_pending AS pending, totp_last_step AS lastStep FROM users WHERE id = ?")
      .get(userId);
    return r ?? { secret: null, pending: null, lastStep: null };
  }

  async setTotpPending(userId: string, sealed: string | null): Promise<void> {
    this.sqlite.query("UPDATE users SET totp_pending = ? WHERE id = ?").run(sealed, userId);
  }

  async confirmTotp(userId: string, sealed: string, step: number): Promise<boolean> {
    return (
      this.sqlite
        .query("UPDATE users SET totp_secret = totp_pending, totp_pending = NULL, totp_last_step = ? WHERE id = ? AND totp_pending = ?")
        .run(step, userId, sealed).changes > 0
    );
  }

  async clearTotp(userId: string): Promise<void> {
    this.sqlite.query("UPDATE users SET totp_secret = NULL, totp_pending = NULL, totp_last_step = NULL WHERE id = ?").run(userId);
  }

  async useTotpStep(userId: string, step: number): Promise<boolean> {
    return (
      this.sqlite
        .query("UPDATE users SET totp_last_step = ?1 WHERE id = ?2 AND totp_secret IS NOT NULL AND (totp_last_step IS NULL OR totp_last_step < ?1)")
        .run(step, userId).changes > 0
    );
  }

  async tenantSettings(tenantId: string): Promise<TenantPeopleSettings> {
    const r = this.sqlite.query<{ requireTotp: number }, [string]>("SELECT require_totp AS requireTotp FROM tenant_settings WHERE tenant_id = ?").get(tenantId);
    return { requireTotp: r?.requireTotp === 1 };
  }

  async setTenantSettings(tenantId: string, settings: TenantPeopleSettings, at: string): Promise<void> {
    this.sqlite
      .query(
        `INSERT INTO tenant_settings (tenant_id, require_totp, updated_at) VALUES (?1, ?2, ?3)
         ON CONFLICT (tenant_id) DO UPDATE SET require_totp = excluded.require_totp, updated_at = excluded.updated_at`,
      )
      .run(tenantId, settings.requireTotp ? 1 : 0, at);
  }

  async ssoIdentity(issuer: string, subject: string): Promise<SsoIdentityRow | undefined> {
    return (
      this.sqlite
        .query<SsoIdentityRow, [string, string]>(
          "SELECT issuer, subject, user_id AS userId, email, created_at AS createdAt, last_sign_in_at AS lastSignInAt FROM sso_identities WHERE issuer = ? AND subject = ?",
        )
        .get(issuer, subject) ?? undefined
    );
  }

  async linkSsoIdentity(row: SsoIdentityRow): Promise<"ok" | "taken"> {
    const r = this.sqlite
      .query(
        `INSERT INTO sso_identities (issuer, subject, user_id, email, created_at, last_sign_in_at) SELECT ?1, ?2, ?3, ?4, ?5, ?6
         WHERE NOT EXISTS (SELECT 1 FROM sso_identities WHERE issuer = ?1 AND user_id = ?3 AND subject <> ?2)
         ON CONFLICT (issuer, subject) DO UPDATE SET email = excluded.email, last_sign_in_at = excluded.last_sign_in_at WHERE sso_identities.user_id = excluded.user_id`,
      )
      .run(row.issuer, row.subject, row.userId, row.email, row.createdAt, row.lastSignInAt);
    return r.changes > 0 ? "ok" : "taken";
  }

  async ssoSession(sessionId: string): Promise<SsoSessionRow | undefined> {
    return this.sqlite.query<SsoSessionRow, [string]>(`SELECT ${SSO} FROM sso_sessions s WHERE s.session_id = ?`).get(sessionId) ?? undefined;
  }

  async endSsoSessions(issuer: string, by: { sid?: string; subject?: string }): Promise<number> {
    if (by.sid === undefined && by.subject === undefined) return 0;
    return this.sqlite
      .query(`DELETE FROM sessions WHERE id IN (SELECT session_id FROM sso_sessions WHERE issuer = ? AND (? IS NULL OR sid = ?) AND (? IS NULL OR subject = ?))`)
      .run(issuer, by.sid ?? null, by.sid ?? null, by.subject ?? null, by.subject ?? null).changes;
  }

  async dueSsoSessions(now: string, before: string, limit: number): Promise<(SsoSessionRow & { userId: string; tenantId: string; email: string })[]> {
    return this.sqlite
      .query<SsoSessionRow & { userId: string; tenantId: string; email: string }, [string, string, number]>(
        `SELECT ${SSO}, x.user_id AS userId, x.tenant_id AS tenantId, u.email FROM sso_sessions s JOIN sessions x ON x.id = s.session_id JOIN users u ON u.id = x.user_id
         WHERE s.refresh_token IS NOT NULL AND x.expires_at > ? AND s.checked_at < ? ORDER BY s.checked_at LIMIT ?`,
      )
      .all(now, before, limit);
  }

  async claimSsoCheck(sessionId: string, from: string, to: string): Promise<boolean> {
    return this.sqlite.query("UPDATE sso_sessions SET checked_at = ? WHERE session_id = ? AND checked_at = ?").run(to, sessionId, from).changes > 0;
  }

  async setSsoTokens(sessionId: string, tokens: { refreshToken: string | null; idToken: string | null }): Promise<void> {
    this.sqlite.query("UPDATE sso_sessions SET refresh_token = ?, id_token = coalesce(?, id_token) WHERE session_id = ?").run(tokens.refreshToken, tokens.idToken, sessionId);
  }

  async tenantSso(tenantId: string): Promise<TenantSsoSettings> {
    const r = this.sqlite.query<{ ssoOnly: number; trustEmails: number }, [string]>("SELECT sso_only AS ssoOnly, trust_emails AS trustEmails FROM tenant_sso WHERE tenant_id = ?").get(tenantId);
    return { ssoOnly: r?.ssoOnly === 1, trustEmails: r?.trustEmails === 1 };
  }

  async setTenantSso(tenantId: string, settings: TenantSsoSettings, at: string): Promise<void> {
    this.sqlite
      .query(
        `INSERT INTO tenant_sso (tenant_id, sso_only, trust_emails, updated_at) VALUES (?1, ?2, ?3, ?4)
         ON CONFLICT (tenant_id) DO UPDATE SET sso_only = excluded.sso_only, trust_emails = excluded.trust_emails, updated_at = excluded.updated_at`,
      )
      .run(tenantId, settings.ssoOnly ? 1 : 0, settings.trustEmails ? 1 : 0, at);
  }

  async tenantProviders(tenantId?: string): Promise<TenantProviderRow[]> {
    if (tenantId === undefined) return this.sqlite.query<TenantProviderRow, []>(`SELECT ${TENANT_IDP} FROM tenant_oidc_providers ORDER BY created_at, id`).all();
    return this.sqlite.query<TenantProviderRow, [string]>(`SELECT ${TENANT_IDP} FROM tenant_oidc_providers WHERE tenant_id = ? ORDER BY created_at, id`).all(tenantId);
  }

  async tenantProvider(id: string): Promise<TenantProviderRow | undefined> {
    return this.sqlite.query<TenantProviderRow, [string]>(`SELECT ${TENANT_IDP} FROM tenant_oidc_providers WHERE id = ?`).get(id) ?? undefined;
  }

  async addTenantProvider(r: TenantProviderRow): Promise<"ok" | "taken"> {
    const out = this.sqlite
      .query(
        `INSERT INTO tenant_oidc_providers (id, tenant_id, name, issuer, client_id, client_secret, scopes, groups_claim, role_map, default_role, allowed_domains, recheck_ms, created_at, updated_at)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (id) DO NOTHING`,
      )
      .run(r.id, r.tenantId, r.name, r.issuer, r.clientId, r.clientSecret, r.scopes, r.groupsClaim, r.roleMap, r.defaultRole, r.allowedDomains, r.recheckMs, r.createdAt, r.updatedAt);
    return out.changes > 0 ? "ok" : "taken";
  }

  async deleteTenantProvider(tenantId: string, id: string): Promise<boolean> {
    return this.sqlite.query("DELETE FROM tenant_oidc_providers WHERE tenant_id = ? AND id = ?").run(tenantId, id).changes > 0;
  }
}
