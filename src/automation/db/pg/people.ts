// People on PostgreSQL (db/automation/pg/0030_people.sql, 0032_people_totp.sql). A taken e-mail is the unique index's answer;
// a link is redeemed under a row lock on it, so two racing redemptions use it once. The per-request
// session lookup is one query, and its answer is kept in memory for SESSION_CACHE_MS, as API keys are
// (pg/tenancy.ts): every change that ends a session or changes what it may do (sign-out, disabling a
// user, a role or membership change, a password reset, a second factor set or cleared, the tenant's
// second-factor rule) sends `sessions.changed` with the session's, user's or tenant's id in the change's
// own transaction, and every instance forgets those lookups when it arrives (milliseconds after the
// commit). Should the listening connection drop, the memory is not used until it is back and emptied.
// An expiry is checked on every answer from memory; an idle expiry another instance kept alive is asked
// of the database again.
import type { TenantRow } from "../tables/foundation";
import type { InvitationRow, LinkKind, MembershipRow, PeopleStore, Redeemed, Role, SessionLookup, SessionRow, SsoIdentityRow, SsoSessionRow, TenantPeopleSettings, TenantProviderRow, TenantSsoSettings, TotpRow, Used, UserRow, UserStatus } from "../../people/store";
import type { Notifications } from "../../runs/store";
import { isUniqueViolation, type Pg, plain, plainRows } from "./rows";
import { keysMayHaveChanged } from "./tenancy";

const USER = `id, email, email_key AS "emailKey", name, status, password_hash AS "passwordHash", created_at AS "createdAt"`;
const MEMBER = `user_id AS "userId", tenant_id AS "tenantId", role, created_at AS "createdAt"`;
const SSO = `s.session_id AS "sessionId", s.provider, s.issuer, s.subject, s.sid, s.refresh_token AS "refreshToken", s.id_token AS "idToken", s.checked_at AS "checkedAt", s.created_at AS "createdAt"`;
const TENANT_IDP = `id, tenant_id AS "tenantId", name, issuer, client_id AS "clientId", client_secret AS "clientSecret", scopes, groups_claim AS "groupsClaim", role_map AS "roleMap", default_role AS "defaultRole", allowed_domains AS "allowedDomains", recheck_ms AS "recheckMs", created_at AS "createdAt", updated_at AS "updatedAt"`;
const INVITE = `id, hash, kind, email, tenant_id AS "tenantId", role, created_at AS "createdAt", expires_at AS "expiresAt", used_at AS "usedAt"`;

/** The longest a session lookup is answered from memory (changes arrive sooner, by `sessions.changed`). */
export const SESSION_CACHE_MS = 5_000;
/** Session lookups remembered at most; past it the memory starts over. */
const SESSION_CACHE_MAX = 10_000;

/** Whether a remembered session is still within its absolute and idle expiry at `now`. */
function unexpired(s: SessionRow, now: string, idleMs: number): boolean {
  const t = Date.parse(now);
  return Date.parse(s.expiresAt) > t && Date.parse(s.lastSeenAt) > t - idleMs;
}

export class PgPeopleStore implements PeopleStore {
  /** Session lookups by the cookie's hash, with when they were read; only while `sessions.changed` is listened to. */
  private readonly cache = new Map<string, { at: number; found: SessionLookup }>();
  private listening: "no" | "pending" | "yes" = "no";
  /** Changes heard so far: a lookup that overlapped one is not remembered (it may predate it). */
  private changes = 0;

  constructor(
    readonly pg: Pg,
    private readonly notifications: Notifications,
  ) {}

  /** Subscribes once to session changes; the memory is used only once that stands. */
  private listen(): void {
    if (this.listening !== "no") return;
    this.listening = "pending";
    this.notifications.onReconnect(() => {
      this.changes++;
      this.cache.clear();
    });
    this.notifications
      .subscribe("sessions.changed", (id) => this.forget(id))
      .then(
        () => void (this.listening = "yes"),
        () => void (this.listening = "no"), // tried again at the next lookup
      );
  }

  /** Forgets the lookups of a session, of a user's sessions, or of a tenant's (by the id). */
  private forget(id: string): void {
    this.changes++;
    for (const [hash, e] of this.cache) {
      const s = e.found.session;
      if (s.id === id || s.userId === id || s.tenantId === id) this.cache.delete(hash);
    }
  }

  /** Sessions of `id` (a session, user or tenant) end or change in `tx`: every instance forgets them (this one at once). */
  private async sessionsChange(tx: Pg, id: string): Promise<void> {
    await tx`SELECT pg_notify('sessions.changed', ${id})`;
    this.forget(id);
  }

  private async user(db: Pg, ref: string): Promise<UserRow | undefined> {
    const [r] = await db.unsafe(`SELECT ${USER} FROM users WHERE id = $1 OR email_key = $2`, [ref, ref.toLowerCase()]);
    return r ? plain<UserRow>(r) : undefined;
  }

  private async insertUser(db: Pg, u: UserRow): Promise<void> {
    await db`INSERT INTO users (id, email, email_key, name, status, password_hash, created_at)
      VALUES (${u.id}, ${u.email}, ${u.emailKey}, ${u.name}, ${u.status}, ${u.passwordHash}, ${u.createdAt})`;
  }

  private async upsertMembership(db: Pg, m: MembershipRow): Promise<void> {
    await db`INSERT INTO memberships (user_id, tenant_id, role, created_at) VALUES (${m.userId}, ${m.tenantId}, ${m.role}, ${m.createdAt})
      ON CONFLICT (user_id, tenant_id) DO UPDATE SET role = excluded.role`;
  }

  private async tenant(db: Pg, ref: string): Promise<TenantRow | undefined> {
    const [r] = await db.unsafe(`SELECT id, slug, name, created_at AS "createdAt" FROM tenants WHERE id = $1 OR slug = $1 LIMIT 1`, [ref]);
    return r ? plain<TenantRow>(r) : undefined;
  }

  /**
   * The user's status, role or membership changes in `tx`: every instance forgets the lookups of their
   * keys (the notification goes out with the commit; this instance forgets at once, and again on arrival).
   */
  private async keysChange(tx: Pg, userId: string): Promise<void> {
    await tx`SELECT pg_notify('keys.revoked', ${userId})`;
    keysMayHaveChanged(this.pg, userId);
  }

  async countUsers(): Promise<number> {
    const [r] = await this.pg`SELECT count(*)::int AS n FROM users`;
    return Number(r.n);
  }

  async createUser(user: UserRow, membership?: Omit<MembershipRow, "userId">): Promise<"ok" | "email_taken"> {
    try {
      return await this.pg.begin(async (tx) => {
        await this.insertUser(tx, user);
        if (membership) await this.upsertMembership(tx, { ...membership, userId: user.id });
        return "ok" as const;
      });
    } catch (err) {
      if (isUniqueViolation(err, "users_email_key_unique")) return "email_taken";
      throw err;
    }
  }

  findUser(ref: string): Promise<UserRow | undefined> {
    return this.user(this.pg, ref);
  }

  async listUsers(tenantId?: string): Promise<{ user: UserRow; memberships: MembershipRow[] }[]> {
    const users = plainRows<UserRow>(
      tenantId
        ? await this.pg.unsafe(`SELECT ${USER} FROM users WHERE id IN (SELECT user_id FROM memberships WHERE tenant_id = $1) ORDER BY id`, [tenantId])
        : await this.pg.unsafe(`SELECT ${USER} FROM users ORDER BY id`),
    );
    const all = plainRows<MembershipRow>(await this.pg.unsafe(`SELECT ${MEMBER} FROM memberships ORDER BY tenant_id`));
    return users.map((user) => ({ user, memberships: all.filter((m) => m.userId === user.id) }));
  }

  async setStatus(userId: string, status: UserStatus): Promise<UserRow | undefined> {
    return this.pg.begin(async (tx) => {
      await tx`UPDATE users SET status = ${status} WHERE id = ${userId}`;
      await this.keysChange(tx, userId);
      await this.sessionsChange(tx, userId);
      if (status === "disabled") await tx`DELETE FROM sessions WHERE user_id = ${userId}`;
      return this.user(tx, userId);
    });
  }

  async setRole(userId: string, tenantId: string, role: Role, at: string): Promise<"ok" | "no_user" | "no_tenant"> {
    return this.pg.begin(async (tx) => {
      if (!(await tx`SELECT 1 FROM users WHERE id = ${userId} FOR SHARE`).length) return "no_user" as const;
      if (!(await tx`SELECT 1 FROM tenants WHERE id = ${tenantId} FOR SHARE`).length) return "no_tenant" as const;
      await this.upsertMembership(tx, { userId, tenantId, role, createdAt: at });
      await this.keysChange(tx, userId);
      await this.sessionsChange(tx, userId);
      return "ok" as const;
    });
  }

  async removeMembership(userId: string, tenantId: string): Promise<boolean> {
    return this.pg.begin(async (tx) => {
      await tx`DELETE FROM sessions WHERE user_id = ${userId} AND tenant_id = ${tenantId}`;
      await this.keysChange(tx, userId);
      await this.sessionsChange(tx, userId);
      return (await tx`DELETE FROM memberships WHERE user_id = ${userId} AND tenant_id = ${tenantId} RETURNING 1`).length > 0;
    });
  }

  async memberships(userId: string): Promise<MembershipRow[]> {
    return plainRows<MembershipRow>(await this.pg.unsafe(`SELECT ${MEMBER} FROM memberships WHERE user_id = $1 ORDER BY created_at, tenant_id`, [userId]));
  }

  async addInvitation(row: InvitationRow, replaceKind = false): Promise<void> {
    await this.pg.begin(async (tx) => {
      if (replaceKind) await tx`DELETE FROM invitations WHERE kind = ${row.kind} AND used_at IS NULL`;
      await tx`INSERT INTO invitations (id, hash, kind, email, tenant_id, role, created_at, expires_at, used_at)
        VALUES (${row.id}, ${row.hash}, ${row.kind}, ${row.email}, ${row.tenantId}, ${row.role}, ${row.createdAt}, ${row.expiresAt}, ${row.usedAt})`;
    });
  }

  /** The link by hash under a row lock, and whether it may be used now (unused, unexpired, of `kind`). */
  private async usable(tx: Pg, hash: string, now: string, kind: LinkKind): Promise<{ outcome: "unknown" | "used" | "expired" } | InvitationRow> {
    const [r] = await tx.unsafe(`SELECT ${INVITE} FROM invitations WHERE hash = $1 FOR UPDATE`, [hash]);
    if (!r) return { outcome: "unknown" };
    const inv = plain<InvitationRow>(r);
    if (inv.kind !== kind) return { outcome: "unknown" };
    if (inv.usedAt) return { outcome: "used" };
    if (Date.parse(inv.expiresAt) <= Date.parse(now)) return { outcome: "expired" };
    return inv;
  }

  async useLink(hash: string, now: string, kind: LinkKind): Promise<Used> {
    return this.pg.begin(async (tx): Promise<Used> => {
      const inv = await this.usable(tx, hash, now, kind);
      if ("outcome" in inv) return inv;
      await tx`UPDATE invitations SET used_at = ${now} WHERE id = ${inv.id}`;
      return { outcome: "ok", link: { ...inv, usedAt: now } };
    });
  }

  async resetPassword(hash: string, now: string, passwordHash: string) {
    return this.pg.begin(async (tx) => {
      const inv = await this.usable(tx, hash, now, "reset");
      if ("outcome" in inv) return inv;
      const user = inv.email ? await this.user(tx, inv.email) : undefined;
      if (!user) return { outcome: "unknown" as const };
      await tx`UPDATE users SET password_hash = ${passwordHash} WHERE id = ${user.id}`;
      const ended = (await tx`DELETE FROM sessions WHERE user_id = ${user.id} RETURNING 1`).length;
      await this.sessionsChange(tx, user.id);
      await tx`UPDATE invitations SET used_at = ${now} WHERE id = ${inv.id}`;
      return { outcome: "ok" as const, user: { ...user, passwordHash }, ended };
    });
  }

  async deleteLink(hash: string): Promise<void> {
    await this.pg`DELETE FROM invitations WHERE hash = ${hash}`;
  }

  async pruneLinks(kind: LinkKind, before: string): Promise<number> {
    return (await this.pg`DELETE FROM invitations WHERE kind = ${kind} AND expires_at < ${before} RETURNING 1`).length;
  }

  async findInvitation(hash: string, now: string): Promise<InvitationRow | undefined> {
    const [r] = await this.pg.unsafe(`SELECT ${INVITE} FROM invitations WHERE hash = $1 AND used_at IS NULL AND expires_at > $2`, [hash, now]);
    return r ? plain<InvitationRow>(r) : undefined;
  }

  async redeem(hash: string, now: string, user: UserRow, tenant?: TenantRow): Promise<Redeemed> {
    try {
      return await this.pg.begin(async (tx): Promise<Redeemed> => {
        const [r] = await tx.unsafe(`SELECT ${INVITE} FROM invitations WHERE hash = $1 FOR UPDATE`, [hash]);
        if (!r) return { outcome: "unknown" };
        const inv = plain<InvitationRow>(r);
        if (inv.usedAt) return { outcome: "used" };
        if (Date.parse(inv.expiresAt) <= Date.parse(now)) return { outcome: "expired" };
        // A reset link or a sign-in code makes no member.
        if (inv.kind !== "setup" && inv.kind !== "invite") return { outcome: "unknown" };
        let target: TenantRow | undefined;
        let role: Role;
        let member = await this.user(tx, user.emailKey);
        if (inv.kind === "setup") {
          // Two setup links cannot both make an owner: the first user's insert is serialized by this lock.
          await tx`LOCK TABLE users IN SHARE ROW EXCLUSIVE MODE`;
          const [c] = await tx`SELECT count(*)::int AS n FROM users`;
          if (Number(c.n) > 0) return { outcome: "setup_done" };
          if (!tenant) return { outcome: "unknown" };
          target = await this.tenant(tx, tenant.slug);
          if (!target) {
            await tx`INSERT INTO tenants (id, slug, name, created_at) VALUES (${tenant.id}, ${tenant.slug}, ${tenant.name}, ${tenant.createdAt})`;
            target = tenant;
          }
          role = "owner";
        } else {
          target = inv.tenantId ? await this.tenant(tx, inv.tenantId) : undefined;
          if (!target || !inv.role) return { outcome: "unknown" };
          role = inv.role;
        }
        if (!member) {
          await this.insertUser(tx, user);
          member = user;
        }
        await this.upsertMembership(tx, { userId: member.id, tenantId: target.id, role, createdAt: now });
        await tx`UPDATE invitations SET used_at = ${now} WHERE id = ${inv.id}`;
        return { outcome: "ok", user: member, tenant: target, role };
      });
    } catch (err) {
      if (isUniqueViolation(err, "users_email_key_unique")) return { outcome: "email_taken" };
      if (isUniqueViolation(err, "tenants_slug_unique")) return { outcome: "slug_taken" };
      throw err;
    }
  }

  async addSession(row: SessionRow, sso?: SsoSessionRow): Promise<void> {
    const session = (sql: typeof this.pg) => sql`INSERT INTO sessions (id, hash, user_id, tenant_id, csrf, created_at, last_seen_at, expires_at)
      VALUES (${row.id}, ${row.hash}, ${row.userId}, ${row.tenantId}, ${row.csrf}, ${row.createdAt}, ${row.lastSeenAt}, ${row.expiresAt})`;
    if (!sso) {
      await session(this.pg);
      return;
    }
    await this.pg.begin(async (tx) => {
      await session(tx as unknown as typeof this.pg);
      await tx`INSERT INTO sso_sessions (session_id, provider, issuer, subject, sid, refresh_token, id_token, checked_at, created_at)
        VALUES (${sso.sessionId}, ${sso.provider}, ${sso.issuer}, ${sso.subject}, ${sso.sid}, ${sso.refreshToken}, ${sso.idToken}, ${sso.checkedAt}, ${sso.createdAt})`;
    });
  }

  async session(hash: string, now: string, idleMs: number): Promise<SessionLookup | undefined> {
    const hit = this.cache.get(hash);
    if (hit && Date.now() - hit.at < SESSION_CACHE_MS && unexpired(hit.found.session, now, idleMs)) return hit.found;
    this.listen();
    const cacheable = this.listening === "yes";
    const at = Date.now();
    const seen = this.changes;
    const found = await this.lookup(hash, now, idleMs);
    if (found && cacheable && seen === this.changes) {
      if (this.cache.size >= SESSION_CACHE_MAX) this.cache.clear();
      this.cache.set(hash, { at, found });
    }
    return found;
  }

  private async lookup(hash: string, now: string, idleMs: number): Promise<SessionLookup | undefined> {
    const idleSince = new Date(Date.parse(now) - idleMs).toISOString();
    const [r] = await this.pg`SELECT s.id, s.hash, s.user_id AS "userId", s.tenant_id AS "tenantId", s.csrf, s.created_at AS "createdAt",
        s.last_seen_at AS "lastSeenAt", s.expires_at AS "expiresAt",
        u.email AS "uEmail", u.email_key AS "uEmailKey", u.name AS "uName", u.status AS "uStatus", u.password_hash AS "uPassword", u.created_at AS "uCreatedAt",
        t.slug AS "tSlug", t.name AS "tName", t.created_at AS "tCreatedAt", m.role,
        (u.totp_secret IS NULL AND coalesce(ts.require_totp, false)) AS "enrollTotp"
      FROM sessions s JOIN users u ON u.id = s.user_id JOIN memberships m ON m.user_id = s.user_id AND m.tenant_id = s.tenant_id
        JOIN tenants t ON t.id = s.tenant_id LEFT JOIN tenant_settings ts ON ts.tenant_id = s.tenant_id
      WHERE s.hash = ${hash} AND s.expires_at > ${now} AND s.last_seen_at > ${idleSince} AND u.status = 'active'`;
    if (!r) return undefined;
    const { uEmail, uEmailKey, uName, uStatus, uPassword, uCreatedAt, tSlug, tName, tCreatedAt, role, enrollTotp, ...session } = plain<Record<string, string>>(r);
    return {
      session: session as unknown as SessionRow,
      user: { id: session.userId, email: uEmail, emailKey: uEmailKey, name: uName, status: uStatus as UserStatus, passwordHash: uPassword ?? null, createdAt: uCreatedAt },
      tenant: { id: session.tenantId, slug: tSlug, name: tName, createdAt: tCreatedAt },
      role: role as Role,
      enrollTotp: (enrollTotp as unknown) === true,
    };
  }

  async touchSession(id: string, at: string): Promise<void> {
    await this.pg`UPDATE sessions SET last_seen_at = ${at} WHERE id = ${id}`;
    for (const e of this.cache.values()) if (e.found.session.id === id) e.found.session.lastSeenAt = at;
  }

  async deleteSession(id: string): Promise<void> {
    await this.pg.begin(async (tx) => {
      await tx`DELETE FROM sessions WHERE id = ${id}`;
      await this.sessionsChange(tx, id);
    });
  }

  async deleteSessions(userId: string): Promise<number> {
    return this.pg.begin(async (tx) => {
      const ended = (await tx`DELETE FROM sessions WHERE user_id = ${userId} RETURNING 1`).length;
      await this.sessionsChange(tx, userId);
      return ended;
    });
  }

  async sessionsOf(userId: string, now: string, idleMs: number): Promise<SessionRow[]> {
    const idleSince = new Date(Date.parse(now) - idleMs).toISOString();
    return plainRows<SessionRow>(
      await this.pg`SELECT id, hash, user_id AS "userId", tenant_id AS "tenantId", csrf, created_at AS "createdAt", last_seen_at AS "lastSeenAt",
          expires_at AS "expiresAt", user_agent AS "userAgent", address
        FROM sessions WHERE user_id = ${userId} AND expires_at > ${now} AND last_seen_at > ${idleSince} ORDER BY created_at DESC, id DESC`,
    );
  }

  async endSession(userId: string, id: string): Promise<boolean> {
    return this.pg.begin(async (tx) => {
      const ended = (await tx`DELETE FROM sessions WHERE id = ${id} AND user_id = ${userId} RETURNING 1`).length > 0;
      if (ended) await this.sessionsChange(tx, id);
      return ended;
    });
  }

  async setSessionClient(hash: string, client: { userAgent: string | null; address: string | null }): Promise<void> {
    await this.pg`UPDATE sessions SET user_agent = ${client.userAgent}, address = ${client.address} WHERE hash = ${hash}`;
  }

  async failures(subjects: string[], nowMs: number, windowMs: number) {
    const rows = await this.pg`SELECT subject, failures, window_start_ms AS "windowStartMs" FROM sign_in_failures
      WHERE subject IN ${this.pg(subjects)} AND window_start_ms > ${nowMs - windowMs}`;
    return subjects.map((subject) => {
      const r = rows.find((x: { subject: string }) => x.subject === subject);
      return { subject, failures: r ? Number(r.failures) : 0, windowStartMs: r ? Number(r.windowStartMs) : nowMs };
    });
  }

  async addFailure(subjects: string[], nowMs: number, windowMs: number): Promise<void> {
    // Sorted: two sign-ins failing at once lock the rows in the same order.
    for (const s of [...subjects].sort()) {
      await this.pg`INSERT INTO sign_in_failures (subject, failures, window_start_ms) VALUES (${s}, 1, ${nowMs})
        ON CONFLICT (subject) DO UPDATE SET
          failures = CASE WHEN sign_in_failures.window_start_ms > ${nowMs - windowMs} THEN sign_in_failures.failures + 1 ELSE 1 END,
          window_start_ms = CASE WHEN sign_in_failures.window_start_ms > ${nowMs - windowMs} THEN sign_in_failures.window_start_ms ELSE ${nowMs} END`;
    }
  }

  async clearFailures(subject: string): Promise<void> {
    await this.pg`DELETE FROM sign_in_failures WHERE subject = ${subject}`;
  }

  async totp(userId: string): Promise<TotpRow> {
    const [r] = await this.pg`SELECT totp_secret AS secret, totp_pending AS pending, totp_last_step AS "lastStep" FROM users WHERE id = ${userId}`;
    if (!r) return { secret: null, pending: null, lastStep: null };
    return { secret: r.secret ?? null, pending: r.pending ?? null, lastStep: r.lastStep === null ? null : Number(r.lastStep) };
  }

  async setTotpPending(userId: string, sealed: string | null): Promise<void> {
    await this.pg`UPDATE users SET totp_pending = ${sealed} WHERE id = ${userId}`;
  }

  async confirmTotp(userId: string, sealed: string, step: number): Promise<boolean> {
    return this.pg.begin(async (tx) => {
      const r = await tx`UPDATE users SET totp_secret = totp_pending, totp_pending = NULL, totp_last_step = ${step}
        WHERE id = ${userId} AND totp_pending = ${sealed} RETURNING 1`;
      if (r.length > 0) await this.sessionsChange(tx, userId); // a session held at enrollment opens
      return r.length > 0;
    });
  }

  async clearTotp(userId: string): Promise<void> {
    await this.pg.begin(async (tx) => {
      await tx`UPDATE users SET totp_secret = NULL, totp_pending = NULL, totp_last_step = NULL WHERE id = ${userId}`;
      await this.sessionsChange(tx, userId);
    });
  }

  async useTotpStep(userId: string, step: number): Promise<boolean> {
    const r = await this.pg`UPDATE users SET totp_last_step = ${step}
      WHERE id = ${userId} AND totp_secret IS NOT NULL AND (totp_last_step IS NULL OR totp_last_step < ${step}) RETURNING 1`;
    return r.length > 0;
  }

  async tenantSettings(tenantId: string): Promise<TenantPeopleSettings> {
    const [r] = await this.pg`SELECT require_totp AS "requireTotp" FROM tenant_settings WHERE tenant_id = ${tenantId}`;
    return { requireTotp: r?.requireTotp === true };
  }

  async setTenantSettings(tenantId: string, settings: TenantPeopleSettings, at: string): Promise<void> {
    await this.pg.begin(async (tx) => {
      await tx`INSERT INTO tenant_settings (tenant_id, require_totp, updated_at) VALUES (${tenantId}, ${settings.requireTotp}, ${at})
        ON CONFLICT (tenant_id) DO UPDATE SET require_totp = excluded.require_totp, updated_at = excluded.updated_at`;
      await this.sessionsChange(tx, tenantId);
    });
  }

  async ssoIdentity(issuer: string, subject: string): Promise<SsoIdentityRow | undefined> {
    const [r] = await this.pg.unsafe(
      `SELECT issuer, subject, user_id AS "userId", email, created_at AS "createdAt", last_sign_in_at AS "lastSignInAt" FROM sso_identities WHERE issuer = $1 AND subject = $2`,
      [issuer, subject],
    );
    return r ? plain<SsoIdentityRow>(r) : undefined;
  }

  async linkSsoIdentity(row: SsoIdentityRow): Promise<"ok" | "taken"> {
    const r = await this.pg`INSERT INTO sso_identities (issuer, subject, user_id, email, created_at, last_sign_in_at)
      SELECT ${row.issuer}::text, ${row.subject}::text, ${row.userId}::text, ${row.email}::text, ${row.createdAt}::timestamptz, ${row.lastSignInAt}::timestamptz
      WHERE NOT EXISTS (SELECT 1 FROM sso_identities WHERE issuer = ${row.issuer} AND user_id = ${row.userId} AND subject <> ${row.subject})
      ON CONFLICT (issuer, subject) DO UPDATE SET email = excluded.email, last_sign_in_at = excluded.last_sign_in_at WHERE sso_identities.user_id = excluded.user_id
      RETURNING 1`;
    return r.length > 0 ? "ok" : "taken";
  }

  async ssoSession(sessionId: string): Promise<SsoSessionRow | undefined> {
    const [r] = await this.pg.unsafe(`SELECT ${SSO} FROM sso_sessions s WHERE s.session_id = $1`, [sessionId]);
    return r ? plain<SsoSessionRow>(r) : undefined;
  }

  async endSsoSessions(issuer: string, by: { sid?: string; subject?: string }): Promise<number> {
    return this.pg.begin(async (tx) => {
      if (by.sid === undefined && by.subject === undefined) return 0;
      const [sid, subject] = [by.sid ?? null, by.subject ?? null];
      const rows = (await tx`DELETE FROM sessions WHERE id IN (SELECT session_id FROM sso_sessions WHERE issuer = ${issuer}
        AND (${sid}::text IS NULL OR sid = ${sid}) AND (${subject}::text IS NULL OR subject = ${subject})) RETURNING id`) as { id: string }[];
      // Every instance forgets the ended sessions' lookups (the notification goes out with the commit).
      for (const r of rows) await this.sessionsChange(tx, r.id);
      return rows.length;
    });
  }

  async dueSsoSessions(now: string, before: string, limit: number): Promise<(SsoSessionRow & { userId: string; tenantId: string; email: string })[]> {
    const rows = await this.pg.unsafe(
      `SELECT ${SSO}, x.user_id AS "userId", x.tenant_id AS "tenantId", u.email FROM sso_sessions s JOIN sessions x ON x.id = s.session_id JOIN users u ON u.id = x.user_id
       WHERE s.refresh_token IS NOT NULL AND x.expires_at > $1 AND s.checked_at < $2 ORDER BY s.checked_at LIMIT $3`,
      [now, before, limit],
    );
    return plainRows<SsoSessionRow & { userId: string; tenantId: string; email: string }>(rows);
  }

  async claimSsoCheck(sessionId: string, from: string, to: string): Promise<boolean> {
    return (await this.pg`UPDATE sso_sessions SET checked_at = ${to} WHERE session_id = ${sessionId} AND checked_at = ${from} RETURNING 1`).length > 0;
  }

  async setSsoTokens(sessionId: string, tokens: { refreshToken: string | null; idToken: string | null }): Promise<void> {
    await this.pg`UPDATE sso_sessions SET refresh_token = ${tokens.refreshToken}, id_token = coalesce(${tokens.idToken}, id_token) WHERE session_id = ${sessionId}`;
  }

  async tenantSso(tenantId: string): Promise<TenantSsoSettings> {
    const [r] = await this.pg`SELECT sso_only AS "ssoOnly", trust_emails AS "trustEmails" FROM tenant_sso WHERE tenant_id = ${tenantId}`;
    return { ssoOnly: r?.ssoOnly === true, trustEmails: r?.trustEmails === true };
  }

  async setTenantSso(tenantId: string, settings: TenantSsoSettings, at: string): Promise<void> {
    await this.pg`INSERT INTO tenant_sso (tenant_id, sso_only, trust_emails, updated_at) VALUES (${tenantId}, ${settings.ssoOnly}, ${settings.trustEmails}, ${at})
      ON CONFLICT (tenant_id) DO UPDATE SET sso_only = excluded.sso_only, trust_emails = excluded.trust_emails, updated_at = excluded.updated_at`;
  }

  async tenantProviders(tenantId?: string): Promise<TenantProviderRow[]> {
    const rows =
      tenantId === undefined
        ? await this.pg.unsafe(`SELECT ${TENANT_IDP} FROM tenant_oidc_providers ORDER BY created_at, id`)
        : await this.pg.unsafe(`SELECT ${TENANT_IDP} FROM tenant_oidc_providers WHERE tenant_id = $1 ORDER BY created_at, id`, [tenantId]);
    return plainRows<TenantProviderRow>(rows);
  }

  async tenantProvider(id: string): Promise<TenantProviderRow | undefined> {
    const [r] = await this.pg.unsafe(`SELECT ${TENANT_IDP} FROM tenant_oidc_providers WHERE id = $1`, [id]);
    return r ? plain<TenantProviderRow>(r) : undefined;
  }

  async addTenantProvider(r: TenantProviderRow): Promise<"ok" | "taken"> {
    const out = await this.pg`INSERT INTO tenant_oidc_providers (id, tenant_id, name, issuer, client_id, client_secret, scopes, groups_claim, role_map, default_role, allowed_domains, recheck_ms, created_at, updated_at)
      VALUES (${r.id}, ${r.tenantId}, ${r.name}, ${r.issuer}, ${r.clientId}, ${r.clientSecret}, ${r.scopes}, ${r.groupsClaim}, ${r.roleMap}, ${r.defaultRole}, ${r.allowedDomains}, ${r.recheckMs}, ${r.createdAt}, ${r.updatedAt})
      ON CONFLICT (id) DO NOTHING RETURNING 1`;
    return out.length > 0 ? "ok" : "taken";
  }

  async deleteTenantProvider(tenantId: string, id: string): Promise<boolean> {
    return (await this.pg`DELETE FROM tenant_oidc_providers WHERE tenant_id = ${tenantId} AND id = ${id} RETURNING 1`).length > 0;
  }
}
