// Sign-in with an API key. `#/signin?key=…` (the link `--demo` prints) signs in at once; the key sits
// after `#`, so it never reaches the server's logs, and is removed from the address bar right away.
import { useEffect, useState } from "preact/hooks";
import { errorText, signIn, type Session } from "../api";
import type { Route } from "../router";

export function SignIn({ route, session, next, onSignedIn }: { route: Route; session: Session | null; next?: string; onSignedIn(s: Session, next?: string): void }) {
  const [key, setKey] = useState("");
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);

  const submit = async (value: string) => {
    setBusy(true);
    setError(null);
    try {
      onSignedIn(await signIn(value), next);
    } catch (err) {
      setError(errorText(err));
    } finally {
      setBusy(false);
    }
  };

  const fromLink = route.query.get("key");
  useEffect(() => {
    if (fromLink) {
      history.replaceState(null, "", `${location.pathname}#/signin`);
      void submit(fromLink);
    }
  }, [fromLink]);

  useEffect(() => {
    document.title = "Sign in · Automation console";
  }, []);

  return (
    <section class="signin" aria-labelledby="signin-title">
      <h1 id="signin-title">Automation console</h1>
      {session ? <p>Signed in to {session.auth.tenantName}. Sign in with another key:</p> : <p>Sign in with an API key of your tenant.</p>}
      <form
        onSubmit={(e) => {
          e.preventDefault();
          if (key.trim()) void submit(key);
        }}
      >
        <label for="api-key">API key</label>
        <input id="api-key" type="password" autoComplete="off" spellcheck={false} value={key} onInput={(e) => setKey(e.currentTarget.value)} required />
        <p class="hint">Kept in this tab only (sessionStorage); closing the tab signs you out. The key's scopes decide what you can see and do.</p>
        <button type="submit" disabled={busy}>
          {busy ? "Signing in…" : "Sign in"}
        </button>
      </form>
      {error ? (
        <p class="problem" role="alert">
          {error}
        </p>
      ) : null}
    </section>
  );
}
