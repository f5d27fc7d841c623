// Sign-in. People: e-mail and password, then the second factor's code when the server answers
// `totp_required`; optionally another tenant than their first. Operators of programs: "Sign in with
// an API key" (also `#/signin?with=key`); `#/signin?key=…` (the link `--demo` prints) signs in at once:
// the key sits after `#`, so it never reaches the server's logs, and is removed from the address bar.
import { useEffect, useRef, useState } from "preact/hooks";
import { errorText, signInWithKey, signInWithPassword, totpIssue, type Session } from "../api";
import type { Route } from "../router";

type Mode = "password" | "key";

export function SignIn({ route, session, next, preferKey, onSignedIn }: { route: Route; session: Session | null; next?: string; preferKey?: boolean; onSignedIn(s: Session, next?: string): void }) {
  const fromLink = route.query.get("key");
  const [mode, setMode] = useState<Mode>(() => (fromLink || preferKey || route.query.get("with") === "key" ? "key" : "password"));
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);

  // `quiet`: a refusal the form answers itself (the second factor asked for) shows no error.
  const attempt = async (fn: () => Promise<Session>, quiet?: (err: unknown) => boolean) => {
    setBusy(true);
    setError(null);
    try {
      onSignedIn(await fn(), next);
    } catch (err) {
      if (!quiet?.(err)) setError(errorText(err));
      throw err;
    } finally {
      setBusy(false);
    }
  };

  useEffect(() => {
    if (fromLink) {
      history.replaceState(null, "", `${location.pathname}#/signin`);
      setMode("key");
      attempt(() => signInWithKey(fromLink)).catch(() => {});
    }
  }, [fromLink]);

  useEffect(() => {
    document.title = "Sign in · Automation console";
  }, []);

  return (
    <section class="signin" aria-labelledby="signin-title">
      <h1 id="signin-title">Automation console</h1>
      {session ? <p>Signed in to {session.auth.tenantName}{session.person ? ` as ${session.person.email}` : ""}. Sign in again:</p> : null}
      {mode === "password" ? <PasswordForm busy={busy} attempt={attempt} /> : <KeyForm busy={busy} attempt={attempt} />}
      {error ? (
        <p class="problem" role="alert">
          {error}
        </p>
      ) : null}
      <p class="signin-switch">
        {mode === "password" ? (
          <button type="button" class="link" id="use-key" onClick={() => (setMode("key"), setError(null))}>
            Sign in with an API key
          </button>
        ) : (
          <button type="button" class="link" id="use-password" onClick={() => (setMode("password"), setError(null))}>
            Sign in with e-mail and password
          </button>
        )}
      </p>
    </section>
  );
}

type Attempt = (fn: () => Promise<Session>, quiet?: (err: unknown) => boolean) => Promise<void>;

function PasswordForm({ busy, attempt }: { busy: boolean; attempt: Attempt }) {
  const [email, setEmail] = useState("");
  const [password, setPassword] = useState("");
  const [tenant, setTenant] = useState("");
  const [totp, setTotp] = useState("");
  const [askTotp, setAskTotp] = useState(false);
  const totpRef = useRef<HTMLInputElement>(null);

  useEffect(() => {
    if (askTotp) totpRef.current?.focus();
  }, [askTotp]);

  const submit = () =>
    attempt(() => signInWithPassword({ email: email.trim(), password, tenant: tenant.trim() || undefined, totp: askTotp && totp.trim() ? totp.replace(/\s/g, "") : undefined }), (err) => totpIssue(err) === "totp_required").catch((err: unknown) => {
      if (totpIssue(err)) setAskTotp(true);
      if (totpIssue(err) === "invalid_code") setTotp("");
    });

  return (
    <form
      onSubmit={(e) => {
        e.preventDefault();
        void submit();
      }}
    >
      <label for="email">E-mail</label>
      <input id="email" type="email" autoComplete="username" spellcheck={false} value={email} onInput={(e) => setEmail(e.currentTarget.value)} required />
      <label for="password">Password</label>
      <input id="password" type="password" autoComplete="current-password" value={password} onInput={(e) => setPassword(e.currentTarget.value)} required />
      {askTotp ? (
        <>
          <label for="totp">Code from your authenticator app</label>
          <input ref={totpRef} id="totp" inputMode="numeric" autoComplete="one-time-code" pattern="[0-9 ]{6,8}" value={totp} onInput={(e) => setTotp(e.currentTarget.value)} required />
          <p class="hint">Your account has a second factor: enter the 6-digit code it shows now.</p>
        </>
      ) : null}
      <details class="signin-tenant">
        <summary>Another tenant</summary>
        <label for="tenant">Tenant (slug or id; empty: your first)</label>
        <input id="tenant" type="text" spellcheck={false} value={tenant} onInput={(e) => setTenant(e.currentTarget.value)} />
      </details>
      <button type="submit" disabled={busy}>
        {busy ? "Signing in…" : "Sign in"}
      </button>
    </form>
  );
}

function KeyForm({ busy, attempt }: { busy: boolean; attempt: Attempt }) {
  const [key, setKey] = useState("");
  return (
    <form
      onSubmit={(e) => {
        e.preventDefault();
        if (key.trim()) attempt(() => signInWithKey(key)).catch(() => {});
      }}
    >
      <label for="api-key">API key</label>
      <input id="api-key" type="password" autoComplete="off" spellcheck={false} value={key} onInput={(e) => setKey(e.currentTarget.value)} required />
      <p class="hint">For operators of programs. Kept in this tab only (sessionStorage); closing the tab signs you out. The key's scopes decide what you can see and do.</p>
      <button type="submit" disabled={busy}>
        {busy ? "Signing in…" : "Sign in"}
      </button>
    </form>
  );
}
