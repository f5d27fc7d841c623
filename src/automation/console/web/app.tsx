// The console's shell: sign-in, navigation (only what the key's scopes allow) and the page per route.
import { useEffect, useState } from "preact/hooks";
import { errorText, forgetKey, signIn, storedKey, UNAUTHORIZED, type Session } from "./api";
import { href, parseHash, useRoute, type Route } from "./router";
import { Page, Problem, SessionContext } from "./ui";
import { SignIn } from "./pages/signin";
import { RunDetail, RunsList } from "./pages/runs";
import { AutomationDetail, AutomationsList } from "./pages/automations";
import { HumanReviewQueue, HumanReviewTaskPage } from "./pages/human-reviews";
import { Evaluation } from "./pages/evaluation";
import { Dataset, ExampleEdit } from "./pages/dataset";
import { Evaluators } from "./pages/evaluators";
import { ExperimentDetail, Experiments } from "./pages/experiments";
import { Compare } from "./pages/compare";
import { BacktestDetail, Backtests } from "./pages/backtests";
import { Health } from "./pages/health";
import { EmailServers, Models, Templates } from "./pages/catalog";

const NAV: { label: string; to: string; first: string; scope?: string }[] = [
  { label: "Runs", to: "#/runs", first: "runs", scope: "runs:read" },
  { label: "Automations", to: "#/automations", first: "automations", scope: "automations:read" },
  { label: "Human review", to: "#/human-reviews", first: "human-reviews", scope: "reviews:read" },
  { label: "Evaluation", to: "#/evaluation", first: "evaluation", scope: "automations:read" },
  { label: "Templates", to: "#/templates", first: "templates", scope: "templates:read" },
  { label: "E-mail servers", to: "#/email-servers", first: "email-servers", scope: "email:read" },
  { label: "Models", to: "#/models", first: "models" },
];

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
  if (a === "automations" && b) return <AutomationDetail id={b} />;
  if (a === "automations") return <AutomationsList query={route.query} />;
  if (a === "human-reviews" && b) return <HumanReviewTaskPage id={b} />;
  if (a === "human-reviews") return <HumanReviewQueue query={route.query} />;
  if (a === "evaluation") return <Evaluation />;
  if (a === "templates") return <Templates />;
  if (a === "email-servers") return <EmailServers />;
  if (a === "models") return <Models />;
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
  const [restoring, setRestoring] = useState(() => storedKey() !== null);
  const [error, setError] = useState<unknown>(null);

  // A stored key signs in again after a reload; one that stopped working is forgotten.
  useEffect(() => {
    const key = storedKey();
    if (!key) return;
    signIn(key).then(setSession, (err) => {
      forgetKey();
      setError(err);
    }).finally(() => setRestoring(false));
  }, []);

  // A key revoked (or expired) while signed in: back to the sign-in form, staying on this address,
  // so signing in again returns to the same page.
  useEffect(() => {
    const on = (e: Event) => {
      forgetKey();
      setSession(null);
      setError(new Error(`Signed out: ${errorText((e as CustomEvent).detail)}. Sign in again to come back to this page.`));
    };
    addEventListener(UNAUTHORIZED, on);
    return () => removeEventListener(UNAUTHORIZED, on);
  }, []);

  // Moving focus to the new page's heading tells screen readers the page changed.
  useEffect(() => {
    document.getElementById("page-title")?.focus({ preventScroll: true });
  }, [route.parts.join("/")]);

  const onSignedIn = (s: Session, next?: string) => {
    setSession(s);
    setError(null);
    // replaceState: the key in a sign-in link must not stay in the address bar or the history.
    history.replaceState(null, "", `${location.pathname}${next && next.startsWith("#/") && !next.startsWith("#/signin") ? next : "#/runs"}`);
    dispatchEvent(new HashChangeEvent("hashchange"));
  };

  if (restoring) return <p class="boot">Signing in…</p>;
  if (!session || route.parts[0] === "signin") {
    return (
      <main id="main" class="signin-main">
        <Problem error={error} />
        <SignIn route={route} session={session} next={nextAfterSignIn(route)} onSignedIn={onSignedIn} />
      </main>
    );
  }

  const first = route.parts[0] ?? "runs";
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
              {NAV.filter((n) => !n.scope || session.can(n.scope)).map((n) => (
                <li key={n.to}>
                  <a href={n.to} aria-current={first === n.first ? "page" : undefined}>
                    {n.label}
                  </a>
                </li>
              ))}
            </ul>
          </nav>
          <div class="who">
            <span title={`key ${session.auth.keyId}; scopes ${session.auth.scope.join(", ")}`}>
              {session.auth.tenantName} <span class="muted">({session.auth.scope.join(", ")})</span>
            </span>
            <button
              type="button"
              class="link"
              onClick={() => {
                forgetKey();
                setSession(null);
                location.hash = "#/signin";
              }}
            >
              Sign out
            </button>
          </div>
        </header>
        <main id="main" tabIndex={-1}>
          {route.parts.length === 0 ? <Screen route={parseHash(href(["runs"]))} /> : <Screen route={route} />}
        </main>
      </div>
    </SessionContext.Provider>
  );
}
