// The thin terminal driver: feeds keys, resizes, timers and fetch results into the pure core, performs
// its effects through the host, and writes only the changed lines of each frame. Timers run only
// while needed (spinner while loading, auto-refresh while on, one wake-up a minute for countdowns), so
// an idle TUI uses no CPU. The terminal is restored on every way out: Q, Ctrl-C, signals, errors.
import { systemClock, type Clock } from "../../kernel/clock.ts";
import type { ProviderResult, Target, TuiHost } from "../model/types.ts";
import { decodeKeys } from "./keys.ts";
import { ENTER, LEAVE, diffFrame, osc52 } from "./screen.ts";
import { init, reduce, type Effect, type Event, type Prefs, type State } from "./state.ts";
import type { Terminal } from "./terminal.ts";
import { render } from "./view.ts";

const SPIN_MS = 100;
const ESC_WAIT_MS = 30;
const SIGNAL_CODES: Record<string, number> = { SIGINT: 130, SIGTERM: 143, SIGHUP: 129 };

/**
 * Runs the TUI on `term` until the user quits, a signal arrives or an error is thrown; resolves with
 * the exit code once the terminal is restored. `runTui` is this on the process's own terminal.
 */
export function runDriver(host: TuiHost, term: Terminal, clock: Clock = systemClock): Promise<number> {
  return new Promise<number>((resolve) => {
    let state: State;
    let prev: string[] | null = null;
    let done = false;
    let renderQueued = false;
    let spinTimer: ReturnType<typeof setInterval> | null = null;
    let autoTimer: ReturnType<typeof setInterval> | null = null;
    let autoEvery = 0;
    let clockTimer: ReturnType<typeof setTimeout> | null = null;
    const cleanups: (() => void)[] = [];

    const restore = () => {
      try {
        term.write(LEAVE);
      } catch {
        // The terminal is gone (hangup): nothing left to restore.
      }
      try {
        term.setRaw(false);
      } catch {
        // Same as above.
      }
    };
    // Last line of defence: an uncaught error elsewhere in the process (or a process.exit) while the
    // TUI runs still leaves the terminal usable: main screen, cursor, cooked mode.
    const onExit = () => {
      if (!done) restore();
    };

    const finish = (code: number, err?: unknown) => {
      if (done) return;
      done = true;
      if (spinTimer) clearInterval(spinTimer);
      if (autoTimer) clearInterval(autoTimer);
      if (clockTimer) clearTimeout(clockTimer);
      for (const c of cleanups) c();
      process.off("exit", onExit);
      restore();
      if (err) process.stderr.write(`quotas: ${err instanceof Error ? err.message : String(err)}\n`);
      resolve(code);
    };

    const guard = <A extends unknown[]>(fn: (...a: A) => void) => (...a: A) => {
      if (done) return;
      try {
        fn(...a);
      } catch (err) {
        finish(1, err);
      }
    };

    const paint = () => {
      renderQueued = false;
      if (done) return;
      const frame = render(state, clock.now(), { color: term.color, version: host.version });
      const out = diffFrame(prev, frame);
      if (out) term.write(out);
      prev = frame;
    };
    const schedulePaint = () => {
      if (renderQueued) return;
      renderQueued = true;
      queueMicrotask(guard(paint));
    };

    const syncTimers = () => {
      if (state.loading.length > 0 && !spinTimer) spinTimer = setInterval(guard(() => dispatch({ type: "tick" })), SPIN_MS);
      if (state.loading.length === 0 && spinTimer) {
        clearInterval(spinTimer);
        spinTimer = null;
      }
      const every = state.autoRefresh ? state.autoRefreshSeconds * 1000 : 0;
      if (autoTimer && every !== autoEvery) {
        clearInterval(autoTimer);
        autoTimer = null;
      }
      if (every && !autoTimer) {
        autoEvery = every;
        autoTimer = setInterval(guard(() => dispatch({ type: "autoRefresh" })), every);
      }
    };

    // "resets in 3h 12m" changes once a minute: repaint then (the diff writes nothing if it did not change).
    const armClock = () => {
      const ms = 60_000 - (clock.now().getTime() % 60_000) + 50;
      clockTimer = setTimeout(guard(() => {
        paint();
        armClock();
      }), ms);
    };

    const perform = (e: Effect) => {
      switch (e.type) {
        case "quit":
          return finish(e.code);
        case "fetch":
          for (const t of e.targets) void fetchOne(t);
          return;
        case "copy": {
          term.write(osc52(e.text));
          const bytes = Buffer.byteLength(e.text);
          host.copyToSystemClipboard(e.text).then(
            (ok) => dispatch({ type: "message", text: `Copied ${e.label} JSON (${bytes} bytes) via OSC 52${ok ? " and the system clipboard" : ""}` }),
            () => dispatch({ type: "message", text: `Copied ${e.label} JSON (${bytes} bytes) via OSC 52` }),
          );
          return;
        }
        case "loadUsage":
          if (!host.usage) return dispatch({ type: "usage", summary: null, error: "Usage from local logs is not available here" });
          host.usage().then(
            (summary) => dispatch({ type: "usage", summary }),
            (err) => dispatch({ type: "usage", summary: null, error: `Could not read the agents' logs: ${messageOf(err)}` }),
          );
          return;
        case "saveFavoriteProvider":
          host.setFavoriteProvider(e.provider, e.on).catch((err) => dispatch({ type: "message", text: `Could not save the favourite: ${messageOf(err)}` }));
          return;
        case "saveQuotaPreference":
          host.setQuotaPreference(e.provider, e.window, e.list, e.on).catch((err) => dispatch({ type: "message", text: `Could not save the preference: ${messageOf(err)}` }));
          return;
      }
    };

    const fetchOne = async (t: Target) => {
      let result: ProviderResult;
      try {
        result = await host.fetch(t);
      } catch (err) {
        result = failed(t, err, clock);
      }
      dispatch({ type: "result", key: t.key, result });
    };

    const apply = (step: { state: State; effects: Effect[] }) => {
      state = step.state;
      for (const e of step.effects) {
        if (done) return;
        perform(e);
      }
      if (done) return;
      syncTimers();
      schedulePaint();
    };

    function dispatch(e: Event) {
      if (done) return;
      try {
        apply(reduce(state, e));
      } catch (err) {
        finish(1, err);
      }
    }

    try {
      process.on("exit", onExit);
      for (const [sig, code] of Object.entries(SIGNAL_CODES)) {
        const h = () => finish(code);
        process.on(sig, h);
        cleanups.push(() => process.off(sig, h));
      }
      // An error thrown elsewhere in the process (a host callback, a timer) ends the TUI cleanly too.
      const crash = (err: unknown) => finish(1, err);
      for (const ev of ["uncaughtException", "unhandledRejection"] as const) {
        process.on(ev, crash);
        cleanups.push(() => process.off(ev, crash));
      }
      term.setRaw(true);
      term.write(ENTER);
      const targets = host.targets();
      const prefs: Record<string, Prefs> = {};
      for (const p of new Set(targets.map((t) => t.provider))) prefs[p] = host.quotaPreferences(p);
      const size = term.size();
      const first = init({
        targets,
        cached: host.cached(),
        favorites: host.favoriteProviders(),
        prefs,
        autoRefreshSeconds: host.tui.autoRefreshSeconds,
        refreshOnStart: host.tui.refreshOnStart,
        width: size.width,
        height: size.height,
      });
      state = first.state;
      paint(); // the first frame at once, from the cache
      apply(first);
      let pending = "";
      let escTimer: ReturnType<typeof setTimeout> | null = null;
      const feed = (chunk: string, final: boolean) => {
        if (escTimer) clearTimeout(escTimer);
        escTimer = null;
        const { keys, rest } = decodeKeys(pending + chunk, final);
        pending = rest;
        for (const key of keys) dispatch({ type: "key", key });
        // A lone ESC is the Esc key unless the rest of a sequence follows at once.
        if (pending && !done) escTimer = setTimeout(guard(() => feed("", true)), ESC_WAIT_MS);
      };
      cleanups.push(() => escTimer && clearTimeout(escTimer));
      cleanups.push(term.onInput(guard((chunk: string) => feed(chunk, false))));
      cleanups.push(term.onResize(guard(() => {
        const { width, height } = term.size();
        prev = null; // repaint everything: the terminal may have reflowed the old frame
        dispatch({ type: "resize", width, height });
      })));
      armClock();
    } catch (err) {
      finish(1, err);
    }
  });
}

function messageOf(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

/** `host.fetch` never throws by contract; if it does anyway, the card shows a network error. */
function failed(t: Target, err: unknown, clock: Clock): ProviderResult {
  return {
    provider: t.provider, profile: t.profile, name: t.name, status: "network_error", plan: null, windows: [],
    message: messageOf(err), fetched_at: clock.now().toISOString(), cached_at: null, auth_source: null,
  };
}
