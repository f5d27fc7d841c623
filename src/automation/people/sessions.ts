// "My sessions": the signed-in person's own sessions, listed, ended one by one, and the current one
// described (the console learns its CSRF token and role from it after a reload). Only people have
// sessions: an API key asking is refused with 403 `not_a_session`.
import { Forbidden, NotFound } from "../../kernel/errors";
import { hashSecret } from "../../kernel/ids";
import type { Auth } from "../tenancy/model";
import { SESSION_IDLE_MS } from "../tenancy/session";
import type { PeopleDeps } from "./service";
import type { SessionInfo } from "./model";

export interface SessionLine {
  id: string;
  createdAt: string;
  lastSeenAt: string;
  expiresAt: string;
  /** The session this request came with. */
  current: boolean;
  userAgent: string | null;
  address: string | null;
}

export interface CurrentSession extends SessionInfo {
  id: string;
  createdAt: string;
}

/** The person behind a session-authenticated request; a 403 for API keys. */
export function personOf(auth: Auth): NonNullable<Auth["person"]> {
  if (!auth.person) throw Forbidden("sessions belong to people: this request came with an API key, which has none", { code: "not_a_session" });
  return auth.person;
}

/** Records the client a new session signed in from (bookkeeping: a failure must not fail the sign-in). */
export async function noteClient(d: PeopleDeps, cookie: string, userAgent: string | null, address: string | null): Promise<void> {
  await d.people.setSessionClient(hashSecret(cookie), { userAgent: userAgent?.slice(0, 200) ?? null, address }).catch(() => {});
}

/** The person's live sessions (every tenant), newest first, the current one marked. */
export async function mySessions(d: PeopleDeps, auth: Auth): Promise<SessionLine[]> {
  const p = personOf(auth);
  const rows = await d.people.sessionsOf(p.userId, d.clock.now().toISOString(), SESSION_IDLE_MS);
  return rows.map((s) => ({
    id: s.id,
    createdAt: s.createdAt,
    lastSeenAt: s.lastSeenAt,
    expiresAt: s.expiresAt,
    current: s.id === p.sessionId,
    userAgent: s.userAgent ?? null,
    address: s.address ?? null,
  }));
}

/** Ends one of the person's own sessions; another person's (or an unknown id) is a 404. */
export async function endMySession(d: PeopleDeps, auth: Auth, id: string): Promise<void> {
  if (!(await d.people.endSession(personOf(auth).userId, id))) throw NotFound(`no session "${id}" of yours`, { field: "id" });
}

/** The current session: who, where, the role and its scopes, and the CSRF token the console sends. */
export function currentSession(auth: Auth): CurrentSession {
  const p = personOf(auth);
  return {
    id: p.sessionId,
    user: { id: p.userId, email: p.email, name: p.name },
    tenant: { id: auth.tenantId, slug: auth.tenantSlug, name: auth.tenantName },
    role: p.role,
    scopes: auth.scopes,
    csrfToken: p.csrf,
    expiresAt: p.expiresAt,
    createdAt: p.createdAt,
  };
}
