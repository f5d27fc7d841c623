// The rules of people: users and memberships, one-time links (the first owner's setup, invitations,
// password resets, single-use sign-in codes), password sign-in with throttles and the second factor
// (totp.ts), and sessions. Plain functions over the stores; routes and the CLI
// call them. Every secret leaves here once (a link, a cookie value) and is kept only as its sha256.
import type { Clock } from "../../kernel/clock";
import { Conflict, Forbidden, Invalid, NotFound, RateLimited, Unauthorized } from "../../kernel/errors";
import { hashSecret, newId, newSecret } from "../../kernel/ids";
import { parseWith } from "../http/validate";
import { TenantSlug } from "../tenancy/model";
import { ROLE_SCOPES } from "../tenancy/roles";
import { SESSION_ABSOLUTE_MS } from "../tenancy/session";
import type { TenancyStore } from "../tenancy/store";
import { slugify } from "../tenancy/service";
import { Email, PersonName, RoleName, type SessionInfo, type UserInfo } from "./model";
import { checkPassword, hashPassword, verifyPassword } from "./passwords";
import type { InvitationRow, MembershipRow, PeopleStore, Redeemed, Role, SsoSessionRow, UserRow } from "./store";
import { secondFactor } from "./totp";

export interface PeopleDeps {
  people: PeopleStore;
  tenancy: TenancyStore;
  clock: Clock;
  /** Material of the key that seals TOTP secrets (the server's secret key); only the server's routes need it. */
  secretKey?: string;
}

/** How long an invitation link works. */
export const INVITE_TTL_MS = 7 * 24 * 3600_000;
/** How long the first owner's setup link works (a new start prints a new one while no user exists). */
export const SETUP_TTL_MS = 24 * 3600_000;
/** How long a password reset link works: long enough to pass on, short enough not to linger in a chat. */
export const RESET_TTL_MS = 3600_000;
/** How long a single-use sign-in code (the demo's link) works. */
export const SIGNIN_CODE_TTL_MS = 10 * 60_000;
/** Failed sign-ins are counted in windows this long, per account and per client address. */
export const THROTTLE_WINDOW_MS = 15 * 60_000;
export const ACCOUNT_FAILURES = 10;
export const ADDRESS_FAILURES = 20;

function userInfo(user: UserRow, memberships: { tenantId: string; role: string }[]): UserInfo {
  return { id: user.id, email: user.email, name: user.name, status: user.status, createdAt: user.createdAt, memberships: memberships.map((m) => ({ tenantId: m.tenantId, role: m.role })) };
}

async function newUser(clock: Clock, input: { email: string; name: string; password?: string }): Promise<UserRow> {
  const email = parseWith(Email, input.email, "email");
  const name = parseWith(PersonName, input.name, "name");
  if (input.password !== undefined) checkPassword(input.password);
  return {
    id: newId("usr"),
    email,
    emailKey: email.toLowerCase(),
    name,
    status: "active",
    passwordHash: input.password === undefined ? null : await hashPassword(input.password),
    createdAt: clock.now().toISOString(),
  };
}

async function tenantOf(d: PeopleDeps, ref: string) {
  const t = await d.tenancy.findTenant(ref);
  if (!t) throw NotFound(`no tenant "${ref}"`, { field: "tenant" });
  return t;
}

async function userOf(d: PeopleDeps, ref: string): Promise<UserRow> {
  const u = await d.people.findUser(ref);
  if (!u) throw NotFound(`no user "${ref}"`, { field: "user" });
  return u;
}

/** A user, with a role in a tenant when both are given. */
export async function createUser(d: PeopleDeps, input: { email: string; name: string; password?: string; tenant?: string; role?: string }): Promise<UserInfo> {
  const user = await newUser(d.clock, input);
  let membership: { tenantId: string; role: Role; createdAt: string } | undefined;
  if (input.tenant !== undefined || input.role !== undefined) {
    if (input.tenant === undefined || input.role === undefined) throw Invalid("--tenant and --role go together", { field: "role" });
    const role = parseWith(RoleName, input.role, "role");
    membership = { tenantId: (await tenantOf(d, input.tenant)).id, role, createdAt: user.createdAt };
  }
  if ((await d.people.createUser(user, membership)) === "email_taken") throw Conflict(`a user with the e-mail ${user.email} exists`, { field: "email", code: "already_exists" });
  return userInfo(user, membership ? [membership] : []);
}

export async function listUsers(d: PeopleDeps, tenant?: string): Promise<UserInfo[]> {
  const tenantId = tenant === undefined ? undefined : (await tenantOf(d, tenant)).id;
  return (await d.people.listUsers(tenantId)).map((u) => userInfo(u.user, u.memberships));
}

/** Disables (or enables) a user; disabling ends their sessions at once. */
export async function setStatus(d: PeopleDeps, ref: string, status: "active" | "disabled"): Promise<UserInfo> {
  const u = await userOf(d, ref);
  const after = await d.people.setStatus(u.id, status);
  if (!after) throw NotFound(`no user "${ref}"`, { field: "user" });
  return userInfo(after, await d.people.memberships(u.id));
}

export async function setRole(d: PeopleDeps, userRef: string, tenantRef: string, role: string, opts: { membersOnly?: boolean; mayTouchOwners?: boolean } = {}): Promise<UserInfo> {
  const r = parseWith(RoleName, role, "role");
  const u = await userOf(d, userRef);
  const t = await tenantOf(d, tenantRef);
  const current = (await d.people.memberships(u.id)).find((m) => m.tenantId === t.id);
  if (opts.membersOnly && !current) throw NotFound(`no member "${userRef}"`, { field: "user" });
  if (opts.mayTouchOwners === false && (r === "owner" || current?.role === "owner")) throw Forbidden("only an owner makes or changes owners", { code: "insufficient_scope" });
  const out = await d.people.setRole(u.id, t.id, r, d.clock.now().toISOString());
  if (out !== "ok") throw NotFound(out === "no_user" ? `no user "${userRef}"` : `no tenant "${tenantRef}"`, { field: out === "no_user" ? "user" : "tenant" });
  return userInfo(u, await d.people.memberships(u.id));
}

/** Removes a member from a tenant; their sessions there end at once. */
export async function removeMember(d: PeopleDeps, userRef: string, tenantId: string, opts: { mayTouchOwners?: boolean } = {}): Promise<void> {
  const u = await userOf(d, userRef);
  const current = (await d.people.memberships(u.id)).find((m) => m.tenantId === tenantId);
  if (opts.mayTouchOwners === false && current?.role === "owner") throw Forbidden("only an owner removes an owner", { code: "insufficient_scope" });
  if (!(await d.people.removeMembership(u.id, tenantId))) throw NotFound(`no member "${userRef}"`, { field: "user" });
}

/** A one-time invitation (7 days) for `email` to join `tenant` as `role`: the token, shown once. */
export async function invite(d: PeopleDeps, input: { email: string; role: string; tenant: string }): Promise<{ id: string; token: string; expiresAt: string; tenantId: string }> {
  const email = parseWith(Email, input.email, "email");
  const role = parseWith(RoleName, input.role, "role");
  const t = await tenantOf(d, input.tenant);
  const token = newSecret();
  const now = d.clock.now();
  const row: InvitationRow = {
    id: newId("inv"),
    hash: hashSecret(token),
    kind: "invite",
    email,
    tenantId: t.id,
    role,
    createdAt: now.toISOString(),
    expiresAt: new Date(now.getTime() + INVITE_TTL_MS).toISOString(),
    usedAt: null,
  };
  await d.people.addInvitation(row);
  return { id: row.id, token, expiresAt: row.expiresAt, tenantId: t.id };
}

/** The first owner's setup token, when no user exists yet (undefined otherwise); it replaces any earlier one. */
export async function setupToken(d: PeopleDeps): Promise<string | undefined> {
  if ((await d.people.countUsers()) > 0) return undefined;
  const token = newSecret();
  const now = d.clock.now();
  await d.people.addInvitation(
    { id: newId("inv"), hash: hashSecret(token), kind: "setup", email: null, tenantId: null, role: null, createdAt: now.toISOString(), expiresAt: new Date(now.getTime() + SETUP_TTL_MS).toISOString(), usedAt: null },
    true,
  );
  return token;
}

function redeemed(r: Redeemed): Extract<Redeemed, { outcome: "ok" }> {
  switch (r.outcome) {
    case "ok":
      return r;
    case "used":
      throw Conflict("this link was already used", { field: "token", code: "link_used" });
    case "expired":
      throw Invalid("this link has expired: ask for a new one", { field: "token", code: "link_expired" });
    case "setup_done":
      throw Conflict("the server already has its first owner: sign in instead", { field: "token", code: "setup_done" });
    case "email_taken":
      throw Conflict("a user with this e-mail exists", { field: "email", code: "already_exists" });
    case "slug_taken":
      throw Conflict("a tenant with this slug exists", { field: "tenantSlug", code: "already_exists" });
    default:
      throw NotFound("unknown link: check it was copied whole", { field: "token", code: "link_unknown" });
  }
}

/** What a link is for (the form shows it), or the refusal a POST would get. */
export async function describeLink(d: PeopleDeps, token: string): Promise<InvitationRow> {
  const row = await d.people.findInvitation(hashSecret(token), d.clock.now().toISOString());
  if (!row) throw NotFound("unknown, used or expired link", { field: "token", code: "link_unknown" });
  return row;
}

/** Redeems the setup link: the first owner, and their tenant (made unless one with the slug exists). */
export async function completeSetup(d: PeopleDeps, input: { token: string; email: string; name: string; password: string; tenantName?: string; tenantSlug?: string }) {
  const user = await newUser(d.clock, input);
  const tenantName = input.tenantName ?? "default";
  const slug = parseWith(TenantSlug, input.tenantSlug ?? slugify(tenantName), "tenantSlug");
  const tenant = { id: newId("ten"), slug, name: tenantName, createdAt: user.createdAt };
  const r = redeemed(await d.people.redeem(hashSecret(input.token), d.clock.now().toISOString(), user, tenant));
  return { user: userInfo(r.user, [{ tenantId: r.tenant.id, role: r.role }]), tenant: { id: r.tenant.id, slug: r.tenant.slug, name: r.tenant.name }, role: r.role };
}

/** Redeems an invitation: a new user with its e-mail (or the existing one) joins the tenant with its role. */
export async function acceptInvitation(d: PeopleDeps, input: { token: string; name: string; password: string }) {
  const hash = hashSecret(input.token);
  const now = d.clock.now().toISOString();
  const inv = await d.people.findInvitation(hash, now);
  // Unknown, used and expired links get their own answers from the redeem below.
  const user = await newUser(d.clock, { email: inv?.email ?? "unknown@invalid.invalid", name: input.name, password: input.password });
  if (inv?.kind === "setup") throw NotFound("unknown link: check it was copied whole", { field: "token", code: "link_unknown" });
  const r = redeemed(await d.people.redeem(hash, now, user));
  return { user: userInfo(r.user, [{ tenantId: r.tenant.id, role: r.role }]), tenant: { id: r.tenant.id, slug: r.tenant.slug, name: r.tenant.name }, role: r.role };
}

/** Refuses (429) when the account or the address has failed too often in the current window. */
async function throttled(d: PeopleDeps, subjects: [string, string], nowMs: number): Promise<void> {
  const counts = await d.people.failures(subjects, nowMs, THROTTLE_WINDOW_MS);
  const limits = [ACCOUNT_FAILURES, ADDRESS_FAILURES];
  const over = counts.filter((c, i) => c.failures >= limits[i]!);
  if (!over.length) return;
  const until = Math.max(...over.map((c) => c.windowStartMs + THROTTLE_WINDOW_MS));
  const retryAfter = Math.max(1, Math.ceil((until - nowMs) / 1000));
  throw RateLimited(`too many failed sign-ins; retry after ${retryAfter} s`, retryAfter);
}

/**
 * Password sign-in: a new session (its cookie value returned once, only its hash stored). A session id
 * the client already had is ended, never kept (no fixation). Failures count per account and per address.
 */
export async function signIn(
  d: PeopleDeps,
  input: { email: string; password: string; tenant?: string; totp?: string },
  address: string,
  previous?: string,
): Promise<{ cookie: string; info: SessionInfo }> {
  const emailKey = input.email.trim().toLowerCase();
  const subjects: [string, string] = [`account:${emailKey}`, `address:${address}`];
  const nowMs = d.clock.now().getTime();
  await throttled(d, subjects, nowMs);
  const user = await d.people.findUser(emailKey);
  const ok = (await verifyPassword(input.password, user?.passwordHash ?? null)) && user?.status === "active";
  const memberships = ok && user ? await d.people.memberships(user.id) : [];
  let membership: (typeof memberships)[number] | undefined = memberships[0];
  if (ok && input.tenant !== undefined) {
    const t = await d.tenancy.findTenant(input.tenant);
    membership = memberships.find((m) => m.tenantId === t?.id);
  }
  if (!ok || !user || !membership) {
    if (!ok) {
      await d.people.addFailure(subjects, nowMs, THROTTLE_WINDOW_MS);
      await throttled(d, subjects, nowMs);
      throw Unauthorized("wrong e-mail or password", { code: "unauthorized" });
    }
    throw Unauthorized(input.tenant === undefined ? "this user is a member of no tenant" : `this user is not a member of "${input.tenant}"`, { field: "tenant", code: "unauthorized" });
  }
  // A tenant that lets its members in by single sign-on only refuses their passwords (keys still work).
  if ((await d.people.tenantSso(membership.tenantId)).ssoOnly) {
    throw Forbidden("this tenant signs its members in with single sign-on only: use the sign-in page's single sign-on button", { field: "tenant", code: "sso_only" });
  }
  // The second factor is asked only after the password was right; a wrong code counts as a failure.
  const factor = await secondFactor(d, user, input.totp);
  if (factor === "missing") throw Unauthorized("this account has a second factor: send the current code of its authenticator app as `totp`", { field: "totp", code: "totp_required" });
  if (factor === "wrong") {
    await d.people.addFailure(subjects, nowMs, THROTTLE_WINDOW_MS);
    await throttled(d, subjects, nowMs);
    throw Unauthorized("wrong, expired or already used code: enter the current code of your authenticator app", { field: "totp", code: "invalid_code" });
  }
  await d.people.clearFailures(subjects[0]);
  return newSession(d, user, membership, nowMs, previous);
}

/**
 * A new session of `user` in the membership's tenant; a session id the client already had is ended, never kept.
 * Every way in ends here: password sign-in, sign-in codes, single sign-on (sso/service.ts).
 */
export async function newSession(
  d: PeopleDeps,
  user: UserRow,
  membership: MembershipRow,
  nowMs: number,
  previous?: string,
  /** What an SSO session keeps of its provider, written with the session. */
  sso?: (sessionId: string, now: string) => SsoSessionRow,
): Promise<{ cookie: string; info: SessionInfo }> {
  if (previous !== undefined) {
    // Any unexpired session with that id (idle or not): a session is never older than its absolute expiry.
    const old = await d.people.session(hashSecret(previous), new Date(nowMs).toISOString(), SESSION_ABSOLUTE_MS);
    if (old) await d.people.deleteSession(old.session.id);
  }
  const tenant = await tenantOf(d, membership.tenantId);
  const cookie = newSecret();
  const csrf = newSecret();
  const now = new Date(nowMs).toISOString();
  const expiresAt = new Date(nowMs + SESSION_ABSOLUTE_MS).toISOString();
  const id = newId("ses");
  await d.people.addSession({ id, hash: hashSecret(cookie), userId: user.id, tenantId: tenant.id, csrf, createdAt: now, lastSeenAt: now, expiresAt }, sso?.(id, now));
  return {
    cookie,
    info: {
      user: { id: user.id, email: user.email, name: user.name },
      tenant: { id: tenant.id, slug: tenant.slug, name: tenant.name },
      role: membership.role,
      scopes: [...ROLE_SCOPES[membership.role]],
      csrfToken: csrf,
      expiresAt,
      ...(await enrollmentRequired(d, user.id, tenant.id)),
    },
  };
}

/** `{totpEnrollmentRequired: true}` when the tenant requires a second factor the user has not confirmed. */
async function enrollmentRequired(d: PeopleDeps, userId: string, tenantId: string): Promise<{ totpEnrollmentRequired?: true }> {
  if (!(await d.people.tenantSettings(tenantId)).requireTotp) return {};
  return (await d.people.totp(userId)).secret === null ? { totpEnrollmentRequired: true } : {};
}

export function signOut(d: PeopleDeps, sessionId: string): Promise<void> {
  return d.people.deleteSession(sessionId);
}

export function signOutEverywhere(d: PeopleDeps, userId: string): Promise<number> {
  return d.people.deleteSessions(userId);
}

/**
 * What a tenant's admin may do to a whole account (its password, its SSO identity): the user must be a
 * member of the admin's tenant and of no other (one tenant's admin cannot take over another tenant's
 * member), and only an owner touches an owner. No tenant (the CLI, the server's operator): anyone.
 */
async function onlyHere(d: PeopleDeps, userId: string, ref: string, opts: { tenantId?: string; mayTouchOwners?: boolean }, says: { elsewhere: string; owner: string }): Promise<void> {
  if (opts.tenantId === undefined) return;
  const ms = await d.people.memberships(userId);
  const here = ms.find((m) => m.tenantId === opts.tenantId);
  if (!here) throw NotFound(`no member "${ref}"`, { field: "user" });
  if (ms.some((m) => m.tenantId !== opts.tenantId)) throw Forbidden(`this person is a member of other tenants too: the server's operator makes ${says.elsewhere}`, { code: "member_elsewhere" });
  if (opts.mayTouchOwners === false && here.role === "owner") throw Forbidden(says.owner, { code: "insufficient_scope" });
}

/**
 * A one-time password reset link (1 hour) for a user, shown once. From the members API (`tenantId`: the
 * caller's tenant), the user must be a member there and nowhere else (a reset changes the password for
 * every tenant, so one tenant's admin cannot take over another tenant's member), and only an owner resets
 * an owner. The CLI (the server's operator) passes no tenant and may reset anyone.
 */
export async function resetLink(
  d: PeopleDeps,
  ref: string,
  opts: { tenantId?: string; mayTouchOwners?: boolean } = {},
): Promise<{ id: string; token: string; email: string; userId: string; expiresAt: string }> {
  const u = await userOf(d, ref);
  await onlyHere(d, u.id, ref, opts, { elsewhere: "their reset link (automation-server users reset-link)", owner: "only an owner resets an owner's password" });
  const token = newSecret();
  const now = d.clock.now();
  const row: InvitationRow = {
    id: newId("inv"),
    hash: hashSecret(token),
    kind: "reset",
    email: u.email,
    tenantId: opts.tenantId ?? null,
    role: null,
    createdAt: now.toISOString(),
    expiresAt: new Date(now.getTime() + RESET_TTL_MS).toISOString(),
    usedAt: null,
  };
  await d.people.addInvitation(row);
  return { id: row.id, token, email: u.email, userId: u.id, expiresAt: row.expiresAt };
}

/**
 * Redeems a reset link: the new password (the same rules as any) replaces the old, every session of the
 * user ends, and the account's failed sign-ins are forgotten, in one transaction with the link's use.
 */
export async function resetPassword(d: PeopleDeps, input: { token: string; password: string }): Promise<{ user: { id: string; email: string; name: string }; sessionsEnded: number }> {
  checkPassword(input.password);
  const passwordHash = await hashPassword(input.password);
  const r = await d.people.resetPassword(hashSecret(input.token), d.clock.now().toISOString(), passwordHash);
  if (r.outcome !== "ok") return redeemed(r) as never;
  await d.people.clearFailures(`account:${r.user.emailKey}`);
  return { user: { id: r.user.id, email: r.user.email, name: r.user.name }, sessionsEnded: r.ended };
}

/** A single-use sign-in code (10 minutes) for a member of a tenant: the demo's link. Shown once, kept hashed. */
export async function signInCode(d: PeopleDeps, input: { email: string; tenant: string }): Promise<{ code: string; expiresAt: string }> {
  const u = await userOf(d, input.email);
  const t = await tenantOf(d, input.tenant);
  if (!(await d.people.memberships(u.id)).some((m) => m.tenantId === t.id)) throw NotFound(`${u.email} is not a member of "${input.tenant}"`, { field: "tenant" });
  const code = newSecret();
  const now = d.clock.now();
  await d.people.addInvitation({
    id: newId("inv"),
    hash: hashSecret(code),
    kind: "signin",
    email: u.email,
    tenantId: t.id,
    role: null,
    createdAt: now.toISOString(),
    expiresAt: new Date(now.getTime() + SIGNIN_CODE_TTL_MS).toISOString(),
    usedAt: null,
  });
  return { code, expiresAt: new Date(now.getTime() + SIGNIN_CODE_TTL_MS).toISOString() };
}

/**
 * Redeems a sign-in code: a session exactly as a password sign-in makes one (used twice → 409
 * `link_used`, expired → 400 `link_expired`, unknown → 404 `link_unknown`). The code is spent even when
 * the user was disabled or left the tenant since: it is good for one attempt.
 */
export async function redeemSignInCode(d: PeopleDeps, code: string, previous?: string): Promise<{ cookie: string; info: SessionInfo }> {
  const nowMs = d.clock.now().getTime();
  const r = await d.people.useLink(hashSecret(code), new Date(nowMs).toISOString(), "signin");
  if (r.outcome !== "ok") return redeemed(r) as never;
  const user = r.link.email ? await d.people.findUser(r.link.email) : undefined;
  const membership = user ? (await d.people.memberships(user.id)).find((m) => m.tenantId === r.link.tenantId) : undefined;
  if (!user || user.status !== "active" || !membership) throw Unauthorized("this sign-in code's user is disabled or no longer a member", { field: "code", code: "unauthorized" });
  return newSession(d, user, membership, nowMs, previous);
}

/** How long an operator's leave to link a local account waits for its SSO sign-in. */
export const SSO_LINK_TTL_MS = 7 * 24 * 3600_000;

/** The one-time link of an operator's leave for the SSO identity of `issuer` with this e-mail to become the local user. */
export const ssoLinkHash = (issuer: string, emailKey: string) => hashSecret(`sso-link:${issuer.replace(/\/+$/, "")}:${emailKey}`);

/**
 * Leave for a local user to be linked (`users link-sso` by the operator, or a tenant's admin for a member
 * of that tenant alone, as for a reset link): the next SSO sign-in through `issuer` with the user's
 * e-mail, verified there, becomes this user (once, within 7 days). Giving it again replaces the earlier one.
 */
export async function allowSsoLink(
  d: PeopleDeps,
  userRef: string,
  issuer: string,
  opts: { tenantId?: string; mayTouchOwners?: boolean } = {},
): Promise<{ userId: string; email: string; issuer: string; expiresAt: string }> {
  const user = await d.people.findUser(userRef);
  if (!user) throw NotFound(`no user "${userRef}"`, { field: "user" });
  await onlyHere(d, user.id, userRef, opts, { elsewhere: "their link (automation-server users link-sso)", owner: "only an owner links an owner's account" });
  const hash = ssoLinkHash(issuer, user.emailKey);
  const now = d.clock.now();
  const expiresAt = new Date(now.getTime() + SSO_LINK_TTL_MS).toISOString();
  await d.people.deleteLink(hash);
  await d.people.addInvitation({ id: newId("inv"), hash, kind: "sso-link", email: user.email, tenantId: null, role: null, createdAt: now.toISOString(), expiresAt, usedAt: null });
  return { userId: user.id, email: user.email, issuer, expiresAt };
}
