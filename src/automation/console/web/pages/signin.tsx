// Sign-in. People: e-mail and password, then the second factor's code when the server answers
// `totp_required`; optionally another tenant than their first. Operators of programs: "Sign in with
// an API key" (also `#/signin?with=key`); `#/signin?key=…` (the link `--demo` prints) signs in at once:
// the key sits after `#`, so it never reaches the server's logs, and is removed from the address bar.
// Single sign-on: a link per provider the server lists (`GET /v1/auth/providers`); a refused SSO sign-in
// comes back as `#/signin?sso_error=CODE`, and the page says what went wrong (fixed texts per code:
// nothing from the address is shown as it is).
import { useEffect, useRef, useState } from "preact/hooks";
import type { SignInProvider } from "../../../client/index";
import { errorText, signInProviders, signInWithKey, signInWithPassword, totpIssue, type Session } from "../api";
import type { Route } from "../router";

type Mode = "password" | "key";

/** What the sign-in page says for each refusal of a single sign-on (sso/oidc.ts names them). */
const SSO_REFUSALS: Record<string, string> = {
  provider_unknown: "That single sign-on provider is not configured here.",
  provider_down: "The single sign-on provider cannot be reached right now. Sign in with your password, or try again later.",
  provider_refused: "The single sign-on provider did not sign you in (cancelled or refused there).",
  flow_missing: "The single sign-on took too long or this browser blocked its cookie. Start again.",
  state_mismatch: "The answer from the single sign-on provider did not belong to this sign-in (wrong state). Start again.",
  flow_used: "That single sign-on answer was already used: each works once. Start again.",
  code_rejected: "The single sign-on provider refused the sign-in code (already used or expired). Start again.",
  token_issuer: "The sign-in was refused: the ID token came from another issuer.",
  token_audience: "The sign-in was refused: the ID token was issued for another application.",
  token_expired: "The sign-in was refused: the ID token has expired (check the clocks of this server and the provider).",
  token_nonce: "The sign-in was refused: the ID token belongs to another sign-in (wrong nonce).",
  token_signature: "The sign-in was refused: the ID token is not signed by the provider's keys.",
  token_invalid: "The sign-in was refused: the provider's answer could not be accepted.",
  email_missing: "The single sign-on provider did not give your e-mail address.",
  email_unverified: "Your e-mail address is not verified at the single sign-on provider. Verify it there first.",
  domain_not_allowed: "Your e-mail domain may not sign in here.",
  no_role: "Your groups at the single sign-on provider give you no role here. Ask an admin to add you to a group that does.",
  account_exists: "An account with your e-mail already exists here. Sign in with its password, or ask an admin to link it to single sign-on.",
  user_disabled: "This account is disabled here.",
};

export function SignIn({ route, session, next, preferKey, onSignedIn }: { route: Route; session: Session | null; next?: string; preferKey?: boolean; onSignedIn(s: Session, next?: string): void }) {
  const fromLink = route.query.get("key");
  const [mode, setMode] = useState<Mode>(() => (fromLink || preferKey || route.query.get("with") === "key" ? "key" : "password"));
  const [busy, setBusy] = useState(false);
  const ssoError = route.query.get("sso_error");
  const [error, setError] = useState<string | null>(ssoError ? (SSO_REFUSALS[ssoError] ?? "The single sign-on was refused.") : null);
  const [providers, setProviders] = useState<SignInProvider[]>([]);

  // `#/signin?tenant=acme` adds that tenant's own providers (a link its owner hands out).
  const tenantHint = route.query.get("tenant") ?? undefined;
  useEffect(() => {
    void signInProviders(tenantHint).then(setProviders);
  }, [tenantHint]);

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
      {providers.length ? (
        <div class="signin-providers">
          {providers.map((p) => (
            <p key={p.id}>
              <a class="button" id={`sso-${p.id}`} href={`${p.start}${next?.startsWith("#/") ? `?next=${encodeURIComponent(`/${next}`)}` : ""}`}>
                Sign in with {p.name}
              </a>
            </p>
          ))}
        </div>
      ) : null}
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
