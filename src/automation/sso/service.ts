// The rules of single sign-on, after the provider's answer has been checked (oidc.ts): a verified e-mail
// in an allowed domain, the roles the person's groups give (the server's role map, or the default role),
// the user the identity is (known identity; else a local account with the same e-mail only when the
// provider's e-mails are trusted; else a new user, no password), memberships made to follow the groups
// in every tenant the map names, and then a session made exactly as a password sign-in makes one.
import { deriveKey, open, seal } from "../secrets";
import { newId } from "../../kernel/ids";
import { parseWith } from "../http/validate";
import { Email } from "../people/model";
import { newSession, ssoLinkHash, type PeopleDeps } from "../people/service";
import type { Role, SsoSessionRow, UserRow } from "../people/store";
import type { SessionInfo } from "../people/model";
import { ROLES } from "../people/store";
import type { OidcProviderConfig } from "../config/oidc";
import { type OidcClient, SsoRefused, type VerifiedClaims } from "./oidc";

/** Higher wins when two rules give one tenant a role. */
const RANK: Record<Role, number> = Object.fromEntries(ROLES.map((r, i) => [r, ROLES.length - i])) as Record<Role, number>;

/** The groups claim as a list of names: an array of strings, or one string. */
export function groupsOf(value: unknown): string[] {
  if (typeof value === "string") return [value];
  if (Array.isArray(value)) return value.filter((g): g is string => typeof g === "string");
  return [];
}

/**
 * The role in each tenant (by the rule's tenant reference) the groups give; the default role when no
 * rule matches and one is configured; empty when the person gets nothing.
 */
export function rolesFor(p: OidcProviderConfig, groups: string[]): Map<string, Role> {
  const out = new Map<string, Role>();
  for (const rule of p.roleMap) {
    if (!groups.includes(rule.group)) continue;
    const had = out.get(rule.tenant);
    if (!had || RANK[rule.role] > RANK[had]) out.set(rule.tenant, rule.role);
  }
  if (out.size === 0 && p.defaultRole) out.set(p.defaultRole.tenant, p.defaultRole.role);
  return out;
}

export interface SsoOutcome {
  cookie: string;
  info: SessionInfo;
}

/** The e-mail the refusal concerns, for the audit trail (set once the claims are read). */
export type Noted = (email: string) => void;

/**
 * Signs the person the provider vouched for in: refuses (SsoRefused, nothing written) an unverified or
 * missing e-mail, a domain not allowed, a person no rule gives a role, a local account not trusted to be
 * theirs, a disabled user. Otherwise the memberships follow the groups and a session is made.
 */
export async function ssoSignIn(d: PeopleDeps, p: OidcProviderConfig, claims: VerifiedClaims, previous: string | undefined, note: Noted = () => {}): Promise<SsoOutcome> {
  const email = checkedEmail(p, claims, note);
  const { follow, wanted } = await entitlements(d, p, claims);
  if (wanted.size === 0) {
    // Someone who signed in before and has lost their groups loses their memberships (and sessions) here too.
    const known = await d.people.ssoIdentity(p.issuer, claims.subject);
    const user = known ? await d.people.findUser(known.userId) : undefined;
    if (user) await follow(user.id);
    throw new SsoRefused("no_role", `your groups at ${p.name} give you no role here: ask an admin to add you to a group that does`, 403);
  }

  const user = await userFor(d, p, claims.subject, email, claims.name);
  if (user.status !== "active") throw new SsoRefused("user_disabled", "this account is disabled here", 403);
  await follow(user.id);
  const now = d.clock.now();
  const [tenantId, role] = [...wanted][0]!;
  return newSession(d, user, { userId: user.id, tenantId, role, createdAt: now.toISOString() }, now.getTime(), previous, (sessionId, at) => ssoRecord(d, p, claims, sessionId, at));
}

/** The e-mail the provider vouches for, checked: present, verified there, in an allowed domain. */
function checkedEmail(p: OidcProviderConfig, claims: VerifiedClaims, note: Noted = () => {}): string {
  if (!claims.email) throw new SsoRefused("email_missing", `${p.name} did not say your e-mail address (ask for the email scope)`, 403);
  let email: string;
  try {
    email = parseWith(Email, claims.email, "email");
  } catch {
    throw new SsoRefused("email_missing", `${p.name} gave an e-mail address that is not one`, 403);
  }
  note(email);
  if (!claims.emailVerified) throw new SsoRefused("email_unverified", `${p.name} has not verified the e-mail ${email}: verify it there first`, 403);
  const domain = email.slice(email.lastIndexOf("@") + 1).toLowerCase();
  if (p.allowedDomains.length && !p.allowedDomains.includes(domain)) {
    throw new SsoRefused("domain_not_allowed", `e-mail addresses at ${domain} may not sign in here`, 403);
  }
  return email;
}

/**
 * The roles the claims' groups give (tenant id → role) and `follow`, which makes a user's memberships
 * match them in every tenant the map names: given, changed or taken away (their sessions there end).
 */
async function entitlements(d: PeopleDeps, p: OidcProviderConfig, claims: VerifiedClaims): Promise<{ wanted: Map<string, Role>; follow(userId: string): Promise<void> }> {
  // The tenants the map names, resolved; a rule naming a tenant that does not exist gives nothing.
  const managed = new Map<string, string>();
  for (const ref of new Set([...p.roleMap.map((r) => r.tenant), ...(p.defaultRole ? [p.defaultRole.tenant] : [])])) {
    const t = await d.tenancy.findTenant(ref);
    if (t) managed.set(ref, t.id);
  }
  const wanted = new Map<string, Role>();
  for (const [ref, role] of rolesFor(p, groupsOf(claims.groups))) {
    const t = managed.get(ref);
    if (t) wanted.set(t, role);
  }
  const follow = async (userId: string) => {
    const now = d.clock.now().toISOString();
    const current = await d.people.memberships(userId);
    for (const t of new Set(managed.values())) {
      const role = wanted.get(t);
      const had = current.find((m) => m.tenantId === t);
      if (role && had?.role !== role) await d.people.setRole(userId, t, role, now);
      if (!role && had) await d.people.removeMembership(userId, t);
    }
  };
  return { wanted, follow };
}

const sealFor = (d: PeopleDeps, sessionId: string, value: string | undefined) => (value === undefined || !d.secretKey ? null : seal(deriveKey(d.secretKey), value, `sso-session:${sessionId}`));
const openFor = (d: PeopleDeps, sessionId: string, value: string | null) => (value === null || !d.secretKey ? undefined : open(deriveKey(d.secretKey), value, `sso-session:${sessionId}`));

/**
 * What the new session keeps of its provider (written with the session, in its transaction): the
 * provider's session (back-channel logout), the ID token (RP-initiated logout's hint), and the refresh
 * token when the role is to be re-checked (--oidc-recheck), the two tokens sealed under the server's secret key.
 */
function ssoRecord(d: PeopleDeps, p: OidcProviderConfig, claims: VerifiedClaims, sessionId: string, now: string): SsoSessionRow {
  return {
    sessionId,
    provider: p.id,
    issuer: p.issuer,
    subject: claims.subject,
    sid: claims.sid ?? null,
    refreshToken: p.recheckMs ? sealFor(d, sessionId, claims.refreshToken) : null,
    idToken: sealFor(d, sessionId, claims.idToken),
    checkedAt: now,
    createdAt: now,
  };
}

/** The ID token an SSO session signed in with (RP-initiated logout's hint); undefined for other sessions. */
export async function sessionIdToken(d: PeopleDeps, sessionId: string): Promise<{ provider: string; idToken?: string } | undefined> {
  const row = await d.people.ssoSession(sessionId);
  if (!row) return undefined;
  try {
    return { provider: row.provider, idToken: openFor(d, sessionId, row.idToken) };
  } catch {
    return { provider: row.provider };
  }
}

/**
 * The re-check of one SSO session (--oidc-recheck): its refresh token exchanged, the person's claims
 * checked as at sign-in, and the memberships made to follow the groups (a person who lost every group
 * loses the memberships, and so this session). A provider that refuses (the person removed or their
 * session ended there), a token that fails a check or another subject end the session; a provider that
 * cannot be reached leaves it as it is until the next round. What happened, for the log.
 */
export async function recheckSession(d: PeopleDeps, p: OidcProviderConfig, client: OidcClient, row: SsoSessionRow & { userId: string }): Promise<"kept" | "ended" | "unreachable"> {
  const refreshToken = (() => {
    try {
      return openFor(d, row.sessionId, row.refreshToken);
    } catch {
      return undefined;
    }
  })();
  if (!refreshToken) {
    await d.people.deleteSession(row.sessionId);
    return "ended";
  }
  try {
    const claims = await client.refresh(d.clock.now().getTime(), refreshToken, row.subject);
    if (claims.subject !== row.subject) throw new SsoRefused("token_invalid", "the refreshed ID token names another person", 401);
    checkedEmail(p, claims);
    const { wanted, follow } = await entitlements(d, p, claims);
    await follow(row.userId);
    await d.people.setSsoTokens(row.sessionId, { refreshToken: sealFor(d, row.sessionId, claims.refreshToken ?? refreshToken), idToken: claims.idToken ? sealFor(d, row.sessionId, claims.idToken) : null });
    return wanted.size ? "kept" : "ended";
  } catch (err) {
    if (err instanceof SsoRefused && err.code === "provider_down") return "unreachable";
    if (!(err instanceof SsoRefused)) throw err;
    await d.people.deleteSession(row.sessionId);
    return "ended";
  }
}

/** Whether every tenant the user is a member of (at least one) trusts the provider's verified e-mails. */
async function tenantsTrust(d: PeopleDeps, userId: string): Promise<boolean> {
  const ms = await d.people.memberships(userId);
  if (!ms.length) return false;
  for (const m of ms) if (!(await d.people.tenantSso(m.tenantId)).trustEmails) return false;
  return true;
}

/** The user this identity is: known, linked by a trusted e-mail, or new. */
async function userFor(d: PeopleDeps, p: OidcProviderConfig, subject: string, email: string, name: string | undefined): Promise<UserRow> {
  const now = d.clock.now().toISOString();
  const link = async (user: UserRow) => {
    if ((await d.people.linkSsoIdentity({ issuer: p.issuer, subject, userId: user.id, email, createdAt: now, lastSignInAt: now })) === "taken") {
      throw new SsoRefused("account_exists", `this identity cannot become the account of ${email}: it is another account's, or that account is already linked to another identity at this provider`, 409);
    }
    return user;
  };
  const known = await d.people.ssoIdentity(p.issuer, subject);
  if (known) {
    const user = await d.people.findUser(known.userId);
    if (user) return link(user);
  }
  const local = await d.people.findUser(email);
  if (local) {
    // Trusted when the server trusts the provider's e-mails, or every tenant the account is a member of
    // does (linking hands the SSO person all of the account's memberships); else an operator's leave
    // (users link-sso), which works once: this identity is then the user for good.
    const trusted = p.trustEmail || (await tenantsTrust(d, local.id));
    const leave = trusted ? undefined : await d.people.useLink(ssoLinkHash(p.issuer, local.emailKey), now, "sso-link");
    if (!trusted && leave?.outcome !== "ok") {
      throw new SsoRefused(
        "account_exists",
        `an account with the e-mail ${email} already exists here: sign in with its password, or ask the server's operator to link it (automation-server users link-sso), or your tenant's owner to trust the provider's e-mails`,
        409,
      );
    }
    return link(local);
  }
  const user: UserRow = {
    id: newId("usr"),
    email,
    emailKey: email.toLowerCase(),
    name: (name?.trim() || email.slice(0, email.indexOf("@"))).slice(0, 200),
    status: "active",
    passwordHash: null,
    createdAt: now,
  };
  if ((await d.people.createUser(user)) === "email_taken") {
    // Another instance made them a moment ago (two first sign-ins at once): that user, if the identity is theirs.
    const again = await d.people.ssoIdentity(p.issuer, subject);
    const made = again ? await d.people.findUser(again.userId) : undefined;
    if (made) return made;
    throw new SsoRefused("account_exists", `an account with the e-mail ${email} already exists here`, 409);
  }
  return link(user);
}
