// What people need from storage: users, their memberships (one role per tenant), browser sessions,
// one-time links (setup, invitations) and sign-in throttles. db/sqlite/people.ts and db/pg/people.ts
// implement it; this module imports no implementation. Every secret arrives here already hashed.
import type { TenantRow } from "../tenancy/store";

export type Role = "owner" | "admin" | "developer" | "reviewer" | "viewer";
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
}

export interface InvitationRow {
  id: string;
  /** sha256 of the link's token. */
  hash: string;
  kind: "setup" | "invite";
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
}

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
  /** An unused, unexpired link by hash (for the form that shows what it will do). */
  findInvitation(hash: string, now: string): Promise<InvitationRow | undefined>;

  /** Stores a session. */
  addSession(row: SessionRow): Promise<void>;
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

  /**
   * The failures counted against each subject in its current window (`windowMs` from its first failure
   * at or after `nowMs - windowMs`): [failures, windowStartMs] per subject, 0 when none.
   */
  failures(subjects: string[], nowMs: number, windowMs: number): Promise<{ subject: string; failures: number; windowStartMs: number }[]>;
  /** Counts one failure against each subject (one upsert each; a window older than `windowMs` starts over). */
  addFailure(subjects: string[], nowMs: number, windowMs: number): Promise<void>;
  /** Forgets a subject's failures (a successful sign-in clears its account's count). */
  clearFailures(subject: string): Promise<void>;
}
