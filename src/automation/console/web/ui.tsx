// Shared pieces of every page: loading data with its error, messages, JSON, status badges, times.
// Everything renders through Preact's escaping: no page ever sets HTML from data.
import type { ComponentChildren } from "preact";
import { createContext } from "preact";
import { useCallback, useContext, useEffect, useLayoutEffect, useRef, useState } from "preact/hooks";
import { errorText, type Session } from "./api";

export const SessionContext = createContext<Session | null>(null);

export function useSession(): Session {
  const s = useContext(SessionContext);
  if (!s) throw new Error("no session");
  return s;
}

export interface Loaded<T> {
  data: T | undefined;
  error: unknown;
  loading: boolean;
  reload(): void;
}

/**
 * Runs `load` when `deps` change; a stale answer (deps moved on) is dropped. A layout effect: the
 * request leaves as soon as the page is in the DOM, not a frame later after the first paint.
 */
export function useLoad<T>(load: () => Promise<T>, deps: unknown[]): Loaded<T> {
  const [state, setState] = useState<{ data?: T; error?: unknown; loading: boolean }>({ loading: true });
  const [tick, setTick] = useState(0);
  useLayoutEffect(() => {
    let live = true;
    setState((s) => ({ data: s.data, loading: true }));
    load().then(
      (data) => live && setState({ data, loading: false }),
      (error) => live && setState({ error, loading: false }),
    );
    return () => {
      live = false;
    };
    // biome-ignore lint: deps are the caller's
  }, [...deps, tick]);
  const reload = useCallback(() => setTick((t) => t + 1), []);
  return { data: state.data, error: state.error, loading: state.loading, reload };
}

/** Calls `fn` every `ms` while `active`. */
export function useInterval(fn: () => void, ms: number, active: boolean): void {
  const saved = useRef(fn);
  saved.current = fn;
  useEffect(() => {
    if (!active) return;
    const t = setInterval(() => saved.current(), ms);
    return () => clearInterval(t);
  }, [ms, active]);
}

export function Problem({ error }: { error: unknown }) {
  if (!error) return null;
  return (
    <p class="problem" role="alert">
      {errorText(error)}
    </p>
  );
}

export function Notice({ children }: { children: ComponentChildren }) {
  return (
    <p class="notice" role="status">
      {children}
    </p>
  );
}

/** A page: its title (also the document's), optional actions, the body. */
export function Page({ title, actions, children }: { title: string; actions?: ComponentChildren; children: ComponentChildren }) {
  // In the commit that shows the heading (a layout effect), not a frame later: a reader of the page
  // (a screen reader, a test, a bookmark) never sees the new heading under the old page's title.
  useLayoutEffect(() => {
    document.title = `${title} · Automation console`;
  }, [title]);
  return (
    <section class="page" aria-labelledby="page-title">
      <header class="page-head">
        <h1 id="page-title" tabIndex={-1}>
          {title}
        </h1>
        {actions ? <div class="actions">{actions}</div> : null}
      </header>
      {children}
    </section>
  );
}

/** Placeholder rows of a fixed height, so a table does not jump when its rows arrive. */
export function Skeleton({ rows = 5 }: { rows?: number }) {
  return (
    <div class="skeleton" aria-busy="true" aria-label="Loading">
      {Array.from({ length: rows }, (_, i) => (
        <div key={i} class="skeleton-row" />
      ))}
    </div>
  );
}

export function Json({ value, label }: { value: unknown; label?: string }) {
  const text = value === undefined ? "—" : JSON.stringify(value, null, 2);
  return (
    <pre class="json" tabIndex={0} aria-label={label ?? "JSON"}>
      {text}
    </pre>
  );
}

const TONE: Record<string, string> = {
  completed: "ok", approved: "ok", correct: "ok", passed: "ok", configured: "ok",
  failed: "bad", rejected: "bad", incorrect: "bad", cancelled: "muted", unconfigured: "muted",
  running: "live", pending: "live", queued: "live", created: "live", finalizing: "live", waiting: "warn",
  improved: "ok", regressed: "bad", no_detectable_change: "muted",
  active: "ok", disabled: "muted", success: "ok", ok: "ok", failure: "bad", denied: "bad", error: "bad", throttled: "warn",
  revoked: "muted", expired: "muted",
};

export function Badge({ value }: { value: string | null | undefined }) {
  if (!value) return <span class="badge muted">—</span>;
  return <span class={`badge ${TONE[value] ?? "muted"}`}>{value}</span>;
}

// One formatter for every time on a page: building one per call costs more than the formatting.
const timeFormat = new Intl.DateTimeFormat(undefined, { dateStyle: "short", timeStyle: "medium" });

export function Time({ iso }: { iso: string | null | undefined }) {
  if (!iso) return <span class="muted">—</span>;
  return (
    <time dateTime={iso} title={iso}>
      {timeFormat.format(new Date(iso))}
    </time>
  );
}

export function duration(ms: number | null | undefined): string {
  if (ms === null || ms === undefined) return "—";
  if (ms < 1000) return `${Math.round(ms)} ms`;
  if (ms < 60_000) return `${(ms / 1000).toFixed(1)} s`;
  return `${Math.floor(ms / 60_000)} min ${Math.round((ms % 60_000) / 1000)} s`;
}

export const pct = (n: number | null | undefined) => (n === null || n === undefined ? "—" : `${(n * 100).toFixed(1)} %`);
export const score = (n: number | null | undefined) => (n === null || n === undefined ? "—" : n.toFixed(3));

export function bytes(n: number | null | undefined): string {
  if (n === null || n === undefined) return "—";
  if (n < 1024) return `${n} B`;
  if (n < 1024 * 1024) return `${(n / 1024).toFixed(1)} KiB`;
  return `${(n / 1024 / 1024).toFixed(1)} MiB`;
}

/** Saves a Blob under `filename` through a temporary object URL. */
export function saveBlob(blob: Blob, filename: string): void {
  const url = URL.createObjectURL(blob);
  const a = document.createElement("a");
  a.href = url;
  a.download = filename;
  document.body.append(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(url), 10_000);
}

/** A labelled definition list row set. */
export function Facts({ rows }: { rows: [string, ComponentChildren][] }) {
  return (
    <dl class="facts">
      {rows.map(([k, v]) => (
        <div key={k}>
          <dt>{k}</dt>
          <dd>{v}</dd>
        </div>
      ))}
    </dl>
  );
}

/** An action's outcome under its button row: its error, or its success message. */
export function Outcome({ action }: { action: { error: unknown; done: string | null } }) {
  return (
    <>
      <Problem error={action.error} />
      {action.done ? <Notice>{action.done}</Notice> : null}
    </>
  );
}

/** Runs an action, showing its error or its success message under the button row. */
export function useAction(): { busy: boolean; error: unknown; done: string | null; run(fn: () => Promise<string | void>): Promise<void> } {
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(null);
  const [done, setDone] = useState<string | null>(null);
  const run = async (fn: () => Promise<string | void>) => {
    setBusy(true);
    setError(null);
    setDone(null);
    try {
      const msg = await fn();
      if (msg) setDone(msg);
    } catch (err) {
      setError(err);
    } finally {
      setBusy(false);
    }
  };
  return { busy, error, done, run };
}
