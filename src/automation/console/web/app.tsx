// The console's shell: sign-in, navigation (only what the session's scopes allow) and the page per route.
import { useEffect, useRef, useState } from "preact/hooks";
import { errorText, forgetKey, restoreSession, SIGNED_OUT, signOut, storedKey, UNAUTHORIZED, type Session } from "./api";
import { parseHash, useRoute, type Route } from "./router";
import { Page, Problem, SessionContext } from "./ui";
import { SignIn } from "./pages/signin";
import { RunDetail, RunsList } from "./pages/runs";
import { AutomationsList } from "./pages/automations";
import { AutomationDetail } from "./pages/automation";
import { NewAutomation, NewVersion } from "./pages/authoring";
import { Versions } from "./pages/versions";
import { VersionDiff } from "./pages/diff";
import { Files } from "./pages/files";
import { HumanReviewQueue } from "./pages/human-reviews";
import { HumanReviewTaskPage } from "./pages/human-review";
import { Evaluation } from "./pages/evaluation";
import { Dataset } from "./pages/dataset";
import { ExampleEdit } from "./pages/example";
import { Evaluators } from "./pages/evaluators";
import { Experiments } from "./pages/experiments";
import { ExperimentDetail } from "./pages/experiment";
import { Compare } from "./pages/compare";
import { Backtests } from "./pages/backtests";
import { BacktestDetail } from "./pages/backtest";
import { Health } from "./pages/health";
import { Models } from "./pages/catalog";
import { Templates } from "./pages/templates";
import { EmailServers } from "./pages/email-servers";
import { Members } from "./pages/members";
import { Keys } from "./pages/keys";
import { Audit } from "./pages/audit";
import { MySessions } from "./pages/sessions";
import { EnrollRequired } from "./pages/second-factor";

const NAV: { label: string; to: string; first: string; scope?: string }[] = [
  { label: "Runs", to: "#/runs", first: "runs", scope: "runs:read" },
  { label: "Automations", to: "#/automations", first: "automations", scope: "automations:read" },
  { label: "Human review", to: "#/human-reviews", first: "human-reviews", scope: "reviews:read" },
  { label: "Evaluation", to: "#/evaluation", first: "evaluation", scope: "automations:read" },
  { label: "Files", to: "#/files", first: "files", scope: "files:read" },
  { label: "Templates", to: "#/templates", first: "templates", scope: "templates:read" },
  { label: "E-mail servers", to: "#/email-servers", first: "email-servers", scope: "email:read" },
  { label: "Models", to: "#/models", first: "models" },
  { label: "Members", to: "#/members", first: "members", scope: "members:read" },
  { label: "Keys", to: "#/keys", first: "keys", scope: "keys:read" },
  { label: "Audit", to: "#/audit", first: "audit", scope: "audit:read" },
];

/** The first page the session may read (Runs for most): where signing in and the bare address land. */
function home(s: Session): string {
  return NAV.find((n) => !n.scope || s.can(n.scope))?.to ?? "#/runs";
}

function Screen({ route }: { route: Route }) {
  const [a, b, c, d] = route.parts;
  if (a === "runs" && b) return <RunDetail id={b} />;
  if (a === "runs") return <RunsList query={route.query} />;
  if (a === "automations" && b && c === "dataset" && d) return <ExampleEdit automation={b} example={d} />;
  if (a === "automations" && b && c === "dataset") return <Dataset automation={b} />;
  if (a === "automations" && b && c === "evaluators") return <Evaluators automation={b} />;
  if (a === "automations" && b && c === "experiments" && d) return <ExperimentDetail automation={b} experiment={d} />;
  if (a === "automations" && b && c === "experiments") return <Experiments automation={b} />;
  if (a === "automations" && b && c === "backtests" && d) return <BacktestDetail automation={b} backtest={d} />;
  if (a === "automations" && b && c === "backtests") return <Backtests automation={b} />;
  if (a === "automations" && b && c === "compare") return <Compare automation={b} left={route.query.get("a")} right={route.query.get("b")} />;
  if (a === "automations" && b && c === "health") return <Health automation={b} query={route.query} />;
  if (a === "automations" && b === "new" && !c) return <NewAutomation />;
  if (a === "automations" && b && c === "edit") return <NewVersion automation={b} from={route.query.get("from")} />;
  if (a === "automations" && b && c === "versions") return <Versions automation={b} query={route.query} />;
  if (a === "automations" && b && c === "diff") return <VersionDiff automation={b} left={route.query.get("a")} right={route.query.get("b")} />;
  if (a === "automations" && b) return <AutomationDetail id={b} />;
  if (a === "automations") return <AutomationsList query={route.query} />;
  if (a === "human-reviews" && b) return <HumanReviewTaskPage id={b} />;
  if (a === "human-reviews") return <HumanReviewQueue query={route.query} />;
  if (a === "evaluation") return <Evaluation />;
  if (a === "files") return <Files query={route.query} />;
  if (a === "templates") return <Templates />;
  if (a === "email-servers") return <EmailServers />;
  if (a === "models") return <Models />;
  if (a === "members") return <Members />;
  if (a === "keys") return <Keys />;
  if (a === "audit") return <Audit query={route.query} />;
  if (a === "sessions") return <MySessions />;
  return (
    <Page title="Not found">
      <p>
        No console page at this address. <a href="#/runs">Go to runs</a>.
      </p>
    </Page>
  );
}

/** Where to go after signing in: `#/signin?next=…`, or the page whose address was opened signed out. */
function nextAfterSignIn(route: Route): string | undefined {
  if (route.parts[0] === "signin") return route.query.get("next") ?? undefined;
  return route.parts.length ? location.hash : undefined;
}

export function App() {
  const route = useRoute();
  const [session, setSession] = useState<Session | null>(null);
  // A `#/signin?key=…` link signs in by itself; any other address first asks who this browser is.
  const [restoring, setRestoring] = useState(() => !(route.parts[0] === "signin" && route.query.has("key")));
  const [error, setError] = useState<unknown>(null);
  // The way the last session was signed in, so the form offers the same again (a key's operator gets the key field).
  const [preferKey, setPreferKey] = useState(false);
  const current = useRef<Session | null>(null);
  current.current = session;

  // After a reload: the tab's key, else the session cookie (`GET /v1/auth/sessions/current`).
  // A stored key that stopped working is forgotten.
  useEffect(() => {
    if (!restoring) return;
    const hadKey = storedKey() !== null;
    restoreSession()
      .then(setSession, (err) => {
        setPreferKey(hadKey);
        forgetKey();
        setError(err);
      })
      .finally(() => setRestoring(false));
  }, []);

  // A session ended or a key revoked (or expired) while signed in: back to the sign-in form, staying
  // on this address, so signing in again returns to the same page.
  useEffect(() => {
    const on = (e: Event) => {
      // Several calls can answer 401 at once: only the first (the session still set) decides the form.
      if (current.current) setPreferKey(current.current.person === null);
      forgetKey();
      setSession(null);
      setError(new Error(`Signed out: ${errorText((e as CustomEvent).detail)}. Sign in again to come back to this page.`));
    };
    // This browser's session ended from "My sessions": the sign-in form, nothing to come back to.
    const out = () => {
      setPreferKey(false);
      setError(null);
      setSession(null);
      location.hash = "#/signin";
    };
    addEventListener(UNAUTHORIZED, on);
    addEventListener(SIGNED_OUT, out);
    return () => {
      removeEventListener(UNAUTHORIZED, on);
      removeEventListener(SIGNED_OUT, out);
    };
  }, []);

  // Moving focus to the new page's heading tells screen readers the page changed.
  useEffect(() => {
    document.getElementById("page-title")?.focus({ preventScroll: true });
  }, [route.parts.join("/")]);

  const onSignedIn = (s: Session, next?: string) => {
    setSession(s);
    setError(null);
    // replaceState: the key in a sign-in link must not stay in the address bar or the history.
    history.replaceState(null, "", `${location.pathname}${next && next.startsWith("#/") && !next.startsWith("#/signin") ? next : home(s)}`);
    dispatchEvent(new HashChangeEvent("hashchange"));
  };

  const leave = async (s: Session) => {
    setPreferKey(s.person === null);
    try {
      await signOut(s);
      setError(null);
    } catch (err) {
      setError(err);
    }
    setSession(null);
    location.hash = "#/signin";
  };

  if (restoring) return <p class="boot">Signing in…</p>;
  if (!session || route.parts[0] === "signin") {
    return (
      <main id="main" class="signin-main">
        <Problem error={error} />
        <SignIn key={preferKey ? "key" : "password"} route={route} session={session} next={nextAfterSignIn(route)} preferKey={preferKey} onSignedIn={onSignedIn} />
      </main>
    );
  }

  const first = route.parts[0] ?? "runs";
  // Held at enrollment: the server answers nothing else, so the console offers nothing else.
  const held = session.person?.mustEnroll === true;
  return (
    <SessionContext.Provider value={session}>
      <a class="skip" href="#main" onClick={(e) => (e.preventDefault(), document.getElementById("main")?.focus())}>
        Skip to content
      </a>
      <div class="shell">
        <header class="top">
          <a class="brand" href="#/runs">
            Automation console
          </a>
          <nav aria-label="Main">
            <ul>
              {NAV.filter((n) => !held && (!n.scope || session.can(n.scope))).map((n) => (
                <li key={n.to}>
                  <a href={n.to} aria-current={first === n.first ? "page" : undefined}>
                    {n.label}
                  </a>
                </li>
              ))}
            </ul>
          </nav>
          <div class="who">
            {session.person ? (
              <>
                <span title={`${session.person.email} in ${session.auth.tenantName}; role ${session.person.role || "?"}; scopes ${session.auth.scope.join(", ")}`}>
                  {session.person.name || session.person.email} <span class="muted">({session.person.role ? `${session.person.role}, ` : ""}{session.auth.tenantName})</span>
                </span>
                <a href="#/sessions" aria-current={first === "sessions" ? "page" : undefined}>
                  My sessions
                </a>
              </>
            ) : (
              <span title={`key ${session.auth.keyId}; scopes ${session.auth.scope.join(", ")}`}>
                {session.auth.tenantName} <span class="muted">({session.auth.scope.join(", ")})</span>
              </span>
            )}
            <button type="button" class="link" onClick={() => void leave(session)}>
              Sign out
            </button>
          </div>
        </header>
        <main id="main" tabIndex={-1}>
          {held ? <EnrollRequired /> : route.parts.length === 0 ? <Screen route={parseHash(home(session))} /> : <Screen route={route} />}
        </main>
      </div>
    </SessionContext.Provider>
  );
}
