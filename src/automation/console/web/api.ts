// The console's session: the API key in sessionStorage (gone when the tab closes), one client of our
// client library per key, and the key's scopes, which decide what the console shows and offers.
import { AutomationClient, AutomationError, type AuthCheck } from "../../client/index";

const STORAGE = "automation-console.key";

export interface Session {
  client: AutomationClient;
  /** The same key, marking the runs it starts as `manual` (the console's run form). */
  manual: AutomationClient;
  auth: AuthCheck;
  /** Whether the key grants `resource:read|write` (`*`, `resource:*`, and write implies read). */
  can(needed: string): boolean;
}

export function storedKey(): string | null {
  return sessionStorage.getItem(STORAGE);
}

export function forgetKey(): void {
  sessionStorage.removeItem(STORAGE);
}

/** Fired on `window` when any call of a signed-in session answers 401 (the key was revoked or expired). */
export const UNAUTHORIZED = "automation-console:unauthorized";

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

/** Checks the key against `/v1/auth/check`; only a key that works is stored. */
export async function signIn(key: string): Promise<Session> {
  // The environment argument is explicit: a browser has no process.env.
  const options = { baseUrl: location.origin, apiKey: key.trim(), maxRetries: 1, timeoutMs: 30_000 };
  const plain = new AutomationClient(options, {});
  // Checked unwatched: a key refused at sign-in is the sign-in form's error, not a session that ended.
  const auth = await plain.authCheck();
  const client = watchAuth(plain);
  const manual = watchAuth(new AutomationClient({ ...options, defaultHeaders: { "x-eigenpal-trigger": "manual" } }, {}));
  sessionStorage.setItem(STORAGE, key.trim());
  const scopes = auth.scope;
  const can = (needed: string) => {
    const [resource, action] = needed.split(":");
    return scopes.some((s) => s === "*" || s === needed || s === `${resource}:*` || (action === "read" && s === `${resource}:write`));
  };
  return { client, manual, auth, can };
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
