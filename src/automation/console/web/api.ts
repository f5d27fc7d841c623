// The console's session. A person signs in with e-mail and password: the server sets an HttpOnly
// session cookie the page never sees, and the console keeps only the session's CSRF token (in memory)
// for its writes. An operator of programs may still sign in with an API key, kept in sessionStorage
// (gone when the tab closes). Either way one client of our client library per session, and the
// scopes (the key's, or the person's role's) decide what the console shows and offers.
import { AutomationClient, AutomationError, type AuthCheck, type SignInInput, type SignInProvider } from "../../client/index";

const STORAGE = "automation-console.key";

/** The signed-in person of a cookie session (absent when signed in with an API key). */
export interface Person {
  id: string;
  email: string;
  name: string;
  role: string;
  /** The session's id (`ses_…`), to mark it in "My sessions". */
  sessionId: string | null;
  /** The tenant requires a second factor this person has not confirmed: the session may only enroll one. */
  mustEnroll: boolean;
}

export interface Session {
  client: AutomationClient;
  /** The same credentials, marking the runs it starts as `manual` (the console's run form). */
  manual: AutomationClient;
  auth: AuthCheck;
  person: Person | null;
  /** Whether the session grants `resource:read|write` (`*`, `resource:*`, and write implies read). */
  can(needed: string): boolean;
}

export function storedKey(): string | null {
  return sessionStorage.getItem(STORAGE);
}

export function forgetKey(): void {
  sessionStorage.removeItem(STORAGE);
}

/** Fired on `window` when any call of a signed-in session answers 401 (session ended, key revoked or expired). */
export const UNAUTHORIZED = "automation-console:unauthorized";

/** Fired on `window` by a page that ended this browser's own session (My sessions): back to sign-in. */
export const SIGNED_OUT = "automation-console:signed-out";

/**
 * The client, with every call of it and of its resources (`client.runs.list`, ...) watched for a 401,
 * which ends the session wherever it happens. The caller still gets the error as before.
 */
function watchAuth<T extends object>(target: T, depth = 0): T {
  return new Proxy(target, {
    get(t, prop) {
      const value: unknown = Reflect.get(t, prop, t);
      if (typeof value === "function") {
        return (...args: unknown[]) => {
          const out: unknown = value.apply(t, args);
          if (out instanceof Promise) {
            out.catch((err: unknown) => {
              if (err instanceof AutomationError && err.status === 401) dispatchEvent(new CustomEvent(UNAUTHORIZED, { detail: err }));
            });
          }
          return out;
        };
      }
      return depth === 0 && value && typeof value === "object" ? watchAuth(value, 1) : value;
    },
  });
}

// The environment argument is explicit: a browser has no process.env.
const base = { maxRetries: 1, timeoutMs: 30_000 };
const keyClient = (key: string, headers?: Record<string, string>) => new AutomationClient({ ...base, baseUrl: location.origin, apiKey: key, defaultHeaders: headers }, {});
const cookieClient = (csrfToken?: string, headers?: Record<string, string>) => new AutomationClient({ ...base, baseUrl: location.origin, session: { csrfToken }, defaultHeaders: headers }, {});

function canOf(scopes: string[]): (needed: string) => boolean {
  return (needed) => {
    const [resource, action] = needed.split(":");
    return scopes.some((s) => s === "*" || s === needed || s === `${resource}:*` || (action === "read" && s === `${resource}:write`));
  };
}

const MANUAL = { "x-eigenpal-trigger": "manual" };

/** Checks the key against `/v1/auth/check`; only a key that works is stored. */
export async function signInWithKey(key: string): Promise<Session> {
  const plain = keyClient(key.trim());
  // Checked unwatched: a key refused at sign-in is the sign-in form's error, not a session that ended.
  const auth = await plain.authCheck();
  sessionStorage.setItem(STORAGE, key.trim());
  return { client: watchAuth(plain), manual: watchAuth(keyClient(key.trim(), MANUAL)), auth, person: null, can: canOf(auth.scope) };
}

/** A cookie session's console session, from its CSRF token. */
async function personSession(csrfToken: string | undefined, person: Omit<Person, "sessionId" | "mustEnroll"> & { sessionId?: string | null; mustEnroll?: boolean }): Promise<Session> {
  const plain = cookieClient(csrfToken);
  const auth = await plain.authCheck();
  return {
    client: watchAuth(plain),
    manual: watchAuth(cookieClient(csrfToken, MANUAL)),
    auth,
    person: { ...person, sessionId: person.sessionId ?? auth.keyId ?? null, mustEnroll: person.mustEnroll ?? false },
    can: canOf(auth.scope),
  };
}

/**
 * Signs a person in (`POST /v1/auth/sessions`; the answer sets the cookie). A 401 whose issue code is
 * `totp_required` asks for the second factor: the caller asks for the code and calls again with it.
 */
export async function signInWithPassword(input: SignInInput): Promise<Session> {
  const info = await cookieClient().sessions.create(input);
  forgetKey();
  return personSession(info.csrfToken, { ...info.user, role: info.role, mustEnroll: info.totpEnrollmentRequired === true });
}

/** The server's single sign-on providers for the sign-in page (none when the list cannot be read). */
export async function signInProviders(tenant?: string): Promise<SignInProvider[]> {
  return cookieClient().sessions.providers(tenant).catch(() => []);
}

/**
 * The session this browser already has, if any: a key of this tab, else the session cookie, asked
 * with `GET /v1/auth/sessions/current` (null when it answers 401: signed out).
 */
export async function restoreSession(): Promise<Session | null> {
  const key = storedKey();
  if (key) return signInWithKey(key);
  const plain = cookieClient();
  try {
    const cur = await plain.sessions.current();
    // Whether the session is held at enrollment: the answer says so when the server puts it there,
    // else the second factor's state (asked while the identity check runs, so no extra wait).
    const held =
      cur.totpEnrollmentRequired !== undefined
        ? Promise.resolve(cur.totpEnrollmentRequired === true)
        : plain.sessions.secondFactor().then((f) => f.required && !f.enabled, () => false);
    const [session, mustEnroll] = await Promise.all([personSession(cur.csrfToken, { ...cur.user, role: cur.role, sessionId: cur.id }), held]);
    return mustEnroll && session.person ? { ...session, person: { ...session.person, mustEnroll } } : session;
  } catch (err) {
    if (!(err instanceof AutomationError)) throw err;
    if (err.status === 401) return null;
    // Held at enrollment (the tenant requires a second factor): only who it is and enrolling answer.
    // Its writes pass on the same-origin check (the browser sends Origin).
    if (err.status === 403 && err.issues.some((i) => i.code === "totp_enrollment_required")) {
      const auth = await plain.authCheck();
      return personSession(undefined, { id: auth.userId ?? "", email: auth.email ?? "", name: auth.name ?? "", role: "", sessionId: auth.keyId, mustEnroll: true });
    }
    // A server without /v1/auth/sessions/current: who the cookie is comes from /v1/auth/check, and
    // writes pass on the same-origin check (the browser sends Origin).
    if (err.status !== 404) throw err;
    try {
      const auth = await plain.authCheck();
      if (!auth.userId) return null;
      return await personSession(undefined, { id: auth.userId, email: auth.email ?? "", name: auth.name ?? "", role: "", sessionId: auth.keyId });
    } catch (e) {
      if (e instanceof AutomationError && e.status === 401) return null;
      throw e;
    }
  }
}

/**
 * Ends the session: a person's on the server (`DELETE /v1/auth/sessions/current`), a key's in this tab.
 * A session made by single sign-on then sends the browser to the provider to sign out there too
 * (RP-initiated logout), which comes back to the console.
 */
export async function signOut(session: Session): Promise<void> {
  forgetKey();
  if (!session.person) return;
  const atProvider = await cookieClient(undefined).sessions.logoutUrl().catch(() => null);
  try {
    await cookieClient(undefined).sessions.signOut();
  } catch (err) {
    if (!(err instanceof AutomationError && err.status === 401)) throw err; // already ended
  }
  if (atProvider) location.assign(atProvider);
}

/** Whether a failed sign-in asks for the second factor (or the factor given was wrong). */
export function totpIssue(err: unknown): "totp_required" | "invalid_code" | undefined {
  if (!(err instanceof AutomationError) || err.status !== 401) return undefined;
  const code = err.issues.find((i) => i.code === "totp_required" || i.code === "invalid_code")?.code;
  return code as "totp_required" | "invalid_code" | undefined;
}

/** One line for a failed call: the server's issues (with the field they name) and the request id. */
export function errorText(err: unknown): string {
  if (err instanceof AutomationError) {
    const issues = err.issues.map((i) => (i.field && i.field !== "<root>" ? `${i.field}: ${i.message}` : i.message));
    const what = issues.length ? issues.join("; ") : err.message;
    const status = err.status ? `${err.status} ` : "";
    return `${status}${what}${err.requestId ? ` (request ${err.requestId})` : ""}`;
  }
  return err instanceof Error ? err.message : String(err);
}

export { AutomationError };

/**
 * A fresh idempotency key for one user action (one click or shortcut). A key made from the task and
 * its version would be the same on a stale page as on the page that acted first: the server would
 * replay the other person's answer as if it were this one, and silently drop this person's edits.
 * crypto.getRandomValues, not randomUUID: the console may be served over plain HTTP on a LAN, where
 * randomUUID (secure contexts only) is missing.
 */
export function newActionKey(): string {
  const b = crypto.getRandomValues(new Uint8Array(16));
  return `console-${Array.from(b, (x) => x.toString(16).padStart(2, "0")).join("")}`;
}
