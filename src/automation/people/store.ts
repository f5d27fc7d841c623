// What people need from storage: users, their memberships (one role per tenant), browser sessions,
// one-time links (setup, invitations, password resets, sign-in codes), TOTP second factors, the
// tenant's people settings and sign-in throttles. db/sqlite/people.ts and db/pg/people.ts
// implement it; this module imports no implementation. Every secret arrives here already hashed
// (links, sessions, passwords) or sealed (TOTP secrets, which must be read back to check a code).
import type { TenantRow } from "../tenancy/store";

/** Every role, highest first (what each may do: tenancy/roles.ts). */
export const ROLES = ["owner", "admin", "developer", "reviewer", "viewer"] as const;
export type Role = (typeof ROLES)[number];
export type UserStatus = "active" | "disabled";

export interface UserRow {
  id: string;
  email: string;
  /** The e-mail lower-cased: unique, what sign-in looks up. */
  emailKey: string;
  name: string;
  status: UserStatus;
  /** argon2id (Bun.password); null until the user sets one. */
  passwordHash: string | null;
  createdAt: string;
}

export interface MembershipRow {
  userId: string;
  tenantId: string;
  role: Role;
  createdAt: string;
}

export interface SessionRow {
  /** Public `ses_` id (auth/check's keyId for a session); never the cookie's value. */
  id: string;
  /** sha256 of the cookie's value. */
  hash: string;
  userId: string;
  tenantId: string;
  csrf: string;
  createdAt: string;
  lastSeenAt: string;
  /** Absolute expiry. */
  expiresAt: string;
  /** The client that signed in (its User-Agent, cut to 200 characters), for "my sessions"; null when unknown. */
  userAgent?: string | null;
  /** The client's address at sign-in; null when unknown. */
  address?: string | null;
}

/**
 * `oidc`: a single sign-on in progress (its state, hashed), used once by the provider's callback;
 * `sso-link`: an operator's leave for the next SSO sign-in with a local user's e-mail to become that user.
 */
export type LinkKind = "setup" | "invite" | "reset" | "signin" | "oidc" | "sso-link";

export interface InvitationRow {
  id: string;
  /** sha256 of the link's token. */
  hash: string;
  /**
   * `setup` (the first owner), `invite` (e-mail, tenant, role), `reset` (a password reset for the user
   * with `email`), `signin` (a single-use sign-in code for `email` into `tenantId`).
   */
  kind: LinkKind;
  email: string | null;
  tenantId: string | null;
  role: Role | null;
  createdAt: string;
  expiresAt: string;
  usedAt: string | null;
}

/** A live session with everything a request needs: one indexed lookup per cookie request. */
export interface SessionLookup {
  session: SessionRow;
  user: UserRow;
  tenant: TenantRow;
  role: Role;
  /**
   * The tenant requires a second factor and the user has none confirmed: the session may only enroll
   * one (tenancy/enrollment.ts). Decided at each lookup, so turning the requirement on applies at once.
   */
  enrollTotp?: boolean;
}

/** A user's TOTP state: both secrets sealed (secrets.ts, bound to the user's id). */
export interface TotpRow {
  /** The confirmed secret; null when the user has no second factor. */
  secret: string | null;
  /** A secret enrolled but not yet confirmed with a code. */
  pending: string | null;
  /** The 30 s step of the last code accepted; a code is refused unless its step is later. */
  lastStep: number | null;
}

/** An OpenID Connect identity (the issuer and the `sub` it gives the person) and the user it is. */
export interface SsoIdentityRow {
  issuer: string;
  subject: string;
  userId: string;
  /** What the provider said at the last sign-in (informative: users are found by issuer and subject). */
  email: string;
  createdAt: string;
  lastSignInAt: string;
}

/** What a session made by single sign-on keeps of its provider (secrets sealed, bound to the session). */
export interface SsoSessionRow {
  sessionId: string;
  provider: string;
  issuer: string;
  subject: string;
  /** The provider's session id (`sid`), when it names one. */
  sid: string | null;
  refreshToken: string | null;
  idToken: string | null;
  /** When the role was last checked with the provider (sign-in, then each re-check). */
  checkedAt: string;
  createdAt: string;
}

/** A single sign-on provider a tenant's owner added (its secret sealed; role map and domains as JSON). */
export interface TenantProviderRow {
  id: string;
  tenantId: string;
  name: string;
  issuer: string;
  clientId: string;
  clientSecret: string;
  scopes: string;
  groupsClaim: string;
  roleMap: string;
  defaultRole: string | null;
  allowedDomains: string;
  /** Re-check its sessions' roles this often (ms); null = at sign-in only. */
  recheckMs: number | null;
  createdAt: string;
  updatedAt: string;
}

/** A tenant's single sign-on settings, set by its owner. */
export interface TenantSsoSettings {
  /** Members sign in by single sign-on only: their passwords are refused. */
  ssoOnly: boolean;
  /** The provider's verified e-mails are trusted: a local account whose tenants all trust them is linked at its first SSO sign-in. */
  trustEmails: boolean;
}

export interface TenantPeopleSettings {
  /** Every member must have a confirmed TOTP second factor. */
  requireTotp: boolean;
}

/** What using a single-use link of one kind decided; nothing is written unless "ok". */
export type Used = { outcome: "ok"; link: InvitationRow } | { outcome: "unknown" | "used" | "expired" };

/** What redeeming a one-time link decided; "ok" carries the user it made (or found) and the tenant. */
export type Redeemed =
  | { outcome: "ok"; user: UserRow; tenant: TenantRow; role: Role }
  | { outcome: "unknown" | "used" | "expired" | "email_taken" | "slug_taken" | "setup_done" };

export interface PeopleStore {
  /** How many users exist (0 on a fresh server: the setup link is printed). */
  countUsers(): Promise<number>;
  /** A user and, when given, their first membership, in one transaction; "email_taken" writes nothing. */
  createUser(user: UserRow, membership?: Omit<MembershipRow, "userId">): Promise<"ok" | "email_taken">;
  /** By id or e-mail (any case). */
  findUser(ref: string): Promise<UserRow | undefined>;
  /** Every user with their memberships; only the tenant's members when `tenantId` is given. */
  listUsers(tenantId?: string): Promise<{ user: UserRow; memberships: MembershipRow[] }[]>;
  /** Sets the status; disabling deletes the user's sessions in the same transaction. Undefined when unknown. */
  setStatus(userId: string, status: UserStatus): Promise<UserRow | undefined>;
  /** Sets (or adds) the user's role in the tenant. */
  setRole(userId: string, tenantId: string, role: Role, at: string): Promise<"ok" | "no_user" | "no_tenant">;
  /** Removes the membership and the user's sessions in that tenant, in one transaction; false when there was none. */
  removeMembership(userId: string, tenantId: string): Promise<boolean>;
  /** The user's memberships. */
  memberships(userId: string): Promise<MembershipRow[]>;

  /** Stores a one-time link; `replaceKind` first deletes the unused links of that kind (a new setup link voids the old). */
  addInvitation(row: InvitationRow, replaceKind?: boolean): Promise<void>;
  /**
   * Redeems a link in one transaction: it must exist, be unused and unexpired (`now`); it is marked used,
   * and the user (new: `user`; an invitation to an existing e-mail adds the membership) and membership are
   * written. A setup link also creates `tenant` when no tenant with its slug exists, and is refused once
   * any user exists ("setup_done"). Nothing is written unless the answer is "ok".
   */
  redeem(hash: string, now: string, user: UserRow, tenant?: TenantRow): Promise<Redeemed>;
  /**
   * Marks an unused, unexpired link of `kind` used (a sign-in code), in one transaction; a link of
   * another kind is "unknown".
   */
  useLink(hash: string, now: string, kind: LinkKind): Promise<Used>;
  /**
   * Redeems a password reset link in one transaction: the link is marked used, the user with its e-mail
   * gets `passwordHash`, and every session of theirs is deleted. "unknown" for a link of another kind
   * or a user that no longer exists; nothing is written unless "ok".
   */
  resetPassword(hash: string, now: string, passwordHash: string): Promise<{ outcome: "ok"; user: UserRow; ended: number } | { outcome: "unknown" | "used" | "expired" }>;
  /** Deletes the link with this hash, whatever its state (an operator's leave given again replaces the old). */
  deleteLink(hash: string): Promise<void>;
  /** Deletes the links of `kind` that expired before `before` (used or not); how many. */
  pruneLinks(kind: LinkKind, before: string): Promise<number>;
  /** An unused, unexpired link by hash (for the form that shows what it will do). */
  findInvitation(hash: string, now: string): Promise<InvitationRow | undefined>;

  /** Stores a session, and with it (one transaction) what an SSO session keeps of its provider. */
  addSession(row: SessionRow, sso?: SsoSessionRow): Promise<void>;
  /**
   * The session with this hash, when it is live at `now` (not past `expiresAt`, seen within `idleMs`),
   * its user is active and still a member of its tenant; undefined otherwise.
   */
  session(hash: string, now: string, idleMs: number): Promise<SessionLookup | undefined>;
  /** Records a session's last use (bookkeeping). */
  touchSession(id: string, at: string): Promise<void>;
  /** Deletes one session (sign-out). */
  deleteSession(id: string): Promise<void>;
  /** Deletes every session of the user (sign out everywhere); how many. */
  deleteSessions(userId: string): Promise<number>;
  /** The user's live sessions at `now` (unexpired, seen within `idleMs`), in every tenant, newest first. */
  sessionsOf(userId: string, now: string, idleMs: number): Promise<SessionRow[]>;
  /** Deletes one of the user's sessions; false when the user has none with that id (another's included). */
  endSession(userId: string, id: string): Promise<boolean>;
  /** Records the client the session with this hash signed in from. */
  setSessionClient(hash: string, client: { userAgent: string | null; address: string | null }): Promise<void>;

  /**
   * The failures counted against each subject in its current window (`windowMs` from its first failure
   * at or after `nowMs - windowMs`): [failures, windowStartMs] per subject, 0 when none.
   */
  failures(subjects: string[], nowMs: number, windowMs: number): Promise<{ subject: string; failures: number; windowStartMs: number }[]>;
  /** Counts one failure against each subject (one upsert each; a window older than `windowMs` starts over). */
  addFailure(subjects: string[], nowMs: number, windowMs: number): Promise<void>;
  /** Forgets a subject's failures (a successful sign-in clears its account's count). */
  clearFailures(subject: string): Promise<void>;

  /** The user's TOTP state (all null when none). */
  totp(userId: string): Promise<TotpRow>;
  /** Stores (or with null drops) the pending, unconfirmed secret; the confirmed one is untouched. */
  setTotpPending(userId: string, sealed: string | null): Promise<void>;
  /**
   * Makes the pending secret the confirmed one, when it is still `sealed` (a newer enrollment voids an
   * older confirmation), and records `step` as used; false when the pending secret changed.
   */
  confirmTotp(userId: string, sealed: string, step: number): Promise<boolean>;
  /** Drops the user's second factor (confirmed and pending) and its last step. */
  clearTotp(userId: string): Promise<void>;
  /**
   * Records `step` as the last accepted one when it is later than the one recorded: one conditional
   * update, so a code is accepted once across instances even when two sign-ins race; false otherwise.
   */
  useTotpStep(userId: string, step: number): Promise<boolean>;

  /** The tenant's people settings (the defaults when never set). */
  tenantSettings(tenantId: string): Promise<TenantPeopleSettings>;
  /** Sets the tenant's people settings. */
  setTenantSettings(tenantId: string, settings: TenantPeopleSettings, at: string): Promise<void>;

  /** The identity with this issuer and subject; undefined when unknown. */
  ssoIdentity(issuer: string, subject: string): Promise<SsoIdentityRow | undefined>;
  /**
   * Records the identity as `userId`'s, or refreshes its e-mail and last sign-in when it is theirs
   * already; "taken" (nothing written) when it is another user's, or when `userId` already has another
   * identity at this issuer (a new subject with an old e-mail is another person, never that account).
   */
  linkSsoIdentity(row: SsoIdentityRow): Promise<"ok" | "taken">;

  /** The SSO record of a session; undefined for a password session. */
  ssoSession(sessionId: string): Promise<SsoSessionRow | undefined>;
  /**
   * Ends the sessions at that issuer of a provider's session (`sid`), of a subject, or, both given, of
   * that subject's provider session (back-channel logout); how many (none when neither is given).
   */
  endSsoSessions(issuer: string, by: { sid?: string; subject?: string }): Promise<number>;
  /** Live SSO sessions with a refresh token last checked before `before` (the oldest first, at most `limit`). */
  dueSsoSessions(now: string, before: string, limit: number): Promise<(SsoSessionRow & { userId: string; tenantId: string; email: string })[]>;
  /** Takes a re-check: moves `checkedAt` from `from` to `to`; false when another instance took it first. */
  claimSsoCheck(sessionId: string, from: string, to: string): Promise<boolean>;
  /** Stores the tokens a re-check got (a provider may rotate the refresh token). */
  setSsoTokens(sessionId: string, tokens: { refreshToken: string | null; idToken: string | null }): Promise<void>;

  /** The tenant's single sign-on settings (both false when never set). */
  tenantSso(tenantId: string): Promise<TenantSsoSettings>;
  /** Sets the tenant's single sign-on settings. */
  setTenantSso(tenantId: string, settings: TenantSsoSettings, at: string): Promise<void>;

  /** The providers tenants' owners added: one tenant's, or every tenant's. */
  tenantProviders(tenantId?: string): Promise<TenantProviderRow[]>;
  /** One added provider by its id. */
  tenantProvider(id: string): Promise<TenantProviderRow | undefined>;
  /** Adds a provider; "taken" (nothing written) when its id is in use. */
  addTenantProvider(row: TenantProviderRow): Promise<"ok" | "taken">;
  /** Removes one of the tenant's providers; false when it has none with that id. */
  deleteTenantProvider(tenantId: string, id: string): Promise<boolean>;
}
