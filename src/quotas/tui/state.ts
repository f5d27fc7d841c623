// The TUI's pure core: `reduce(state, event) → { state, effects }`. It never touches the terminal,
// files or the network; the driver performs the returned effects and feeds results back as events.
import type { ProviderResult, QuotaWindow, Target, UsageSummary } from "../model/types.ts";
import { detailListHeight, effectiveLayout, gridColumns, linesPerWindow, type Layout } from "./layout.ts";

export type Key =
  | "up" | "down" | "left" | "right" | "enter" | "esc" | "tab" | "backtab"
  | "pgup" | "pgdn" | "home" | "end" | "ctrl-c" | "backspace" | "unknown"
  | (string & {}); // a printable character

export interface Prefs {
  favorites: string[];
  hidden: string[];
}

export interface State {
  targets: Target[];
  /** Latest result per target key (`provider:profile`). */
  results: Record<string, ProviderResult>;
  /** Target keys with a fetch in flight. */
  loading: string[];
  /** Key of the selected card. */
  selected: string | null;
  view: "dashboard" | "detail" | "usage";
  /** The usage view's data; null until loaded. */
  usage: UsageSummary | null;
  usageLoading: boolean;
  layout: Layout;
  /** Index of the focused window in the detail list (see `detailWindows`). */
  focus: number;
  /** First visible line of the detail window list. */
  scroll: number;
  autoRefresh: boolean;
  autoRefreshSeconds: number;
  /** `[favorites] providers`: provider names or provider:profile keys. */
  favorites: string[];
  /** `[quota_preferences.<provider>]` per provider. */
  prefs: Record<string, Prefs>;
  message: string | null;
  /** Spinner frame counter. */
  spin: number;
  width: number;
  height: number;
  quit: boolean;
  exitCode: number;
}

export type Event =
  | { type: "key"; key: Key }
  | { type: "resize"; width: number; height: number }
  | { type: "result"; key: string; result: ProviderResult }
  | { type: "tick" }
  | { type: "autoRefresh" }
  | { type: "message"; text: string }
  | { type: "usage"; summary: UsageSummary | null; error?: string };

export type Effect =
  | { type: "fetch"; targets: Target[] }
  | { type: "saveFavoriteProvider"; provider: string; on: boolean }
  | { type: "saveQuotaPreference"; provider: string; window: string; list: "favorites" | "hidden"; on: boolean }
  | { type: "copy"; text: string; label: string }
  | { type: "quit"; code: number }
  | { type: "loadUsage" };

export interface Step {
  state: State;
  effects: Effect[];
}

export interface InitOptions {
  targets: Target[];
  cached: ProviderResult[];
  favorites: string[];
  prefs: Record<string, Prefs>;
  autoRefreshSeconds: number;
  refreshOnStart: boolean;
  width: number;
  height: number;
}

/** Interval used when auto-refresh is switched on but the config sets no positive interval. */
export const DEFAULT_AUTO_REFRESH_SECONDS = 300;

export function keyOf(r: { provider: string; profile: string }): string {
  return `${r.provider}:${r.profile}`;
}

/** The first state: cached results at once, and (with refresh_on_start) a fetch of every target. */
export function init(o: InitOptions): Step {
  const keys = new Set(o.targets.map((t) => t.key));
  const results: Record<string, ProviderResult> = {};
  for (const r of o.cached) if (keys.has(keyOf(r))) results[keyOf(r)] = r;
  let state: State = {
    targets: o.targets,
    results,
    loading: [],
    selected: null,
    view: "dashboard",
    usage: null,
    usageLoading: false,
    layout: "auto",
    focus: 0,
    scroll: 0,
    autoRefresh: o.autoRefreshSeconds > 0,
    autoRefreshSeconds: o.autoRefreshSeconds > 0 ? o.autoRefreshSeconds : DEFAULT_AUTO_REFRESH_SECONDS,
    favorites: o.favorites,
    prefs: o.prefs,
    message: null,
    spin: 0,
    width: o.width,
    height: o.height,
    quit: false,
    exitCode: 0,
  };
  state = { ...state, selected: orderedTargets(state)[0]?.key ?? null };
  // Without a cached result a card has nothing to show, so fetch those even without refresh_on_start.
  const toFetch = o.refreshOnStart ? o.targets : o.targets.filter((t) => !results[t.key]);
  return startFetch(state, toFetch);
}

export function isFavoriteTarget(s: State, t: Target): boolean {
  return s.favorites.includes(t.provider) || s.favorites.includes(t.key);
}

/** Cards in display order: favourites first, otherwise config order. */
export function orderedTargets(s: State): Target[] {
  const fav = s.targets.filter((t) => isFavoriteTarget(s, t));
  return [...fav, ...s.targets.filter((t) => !isFavoriteTarget(s, t))];
}

export function prefsOf(s: State, provider: string): Prefs {
  return s.prefs[provider] ?? { favorites: [], hidden: [] };
}

/** Every window of a result, favourite windows first (hidden ones included: the detail view lists them). */
export function detailWindows(s: State, r: ProviderResult | undefined): QuotaWindow[] {
  if (!r) return [];
  const p = prefsOf(s, r.provider);
  const fav = r.windows.filter((w) => p.favorites.includes(w.window));
  return [...fav, ...r.windows.filter((w) => !p.favorites.includes(w.window))];
}

/** The windows a dashboard card shows: detail order without the hidden ones. */
export function cardWindows(s: State, r: ProviderResult | undefined): QuotaWindow[] {
  if (!r) return [];
  const hidden = prefsOf(s, r.provider).hidden;
  return detailWindows(s, r).filter((w) => !hidden.includes(w.window));
}

export function selectedTarget(s: State): Target | undefined {
  return s.targets.find((t) => t.key === s.selected);
}

function startFetch(s: State, targets: Target[]): Step {
  const todo = targets.filter((t) => !s.loading.includes(t.key));
  if (todo.length === 0) return { state: s, effects: [] };
  return {
    state: { ...s, loading: [...s.loading, ...todo.map((t) => t.key)] },
    effects: [{ type: "fetch", targets: todo }],
  };
}

export function reduce(s: State, e: Event): Step {
  switch (e.type) {
    case "resize":
      return { state: clampDetail({ ...s, width: e.width, height: e.height }), effects: [] };
    case "tick":
      return { state: { ...s, spin: s.spin + 1 }, effects: [] };
    case "message":
      return { state: { ...s, message: e.text }, effects: [] };
    case "autoRefresh":
      return s.autoRefresh ? startFetch(s, s.targets) : { state: s, effects: [] };
    case "result":
      return { state: applyResult(s, e.key, e.result), effects: [] };
    case "key":
      return onKey({ ...s, message: null }, e.key);
    case "usage":
      return { state: { ...s, usage: e.summary ?? s.usage, usageLoading: false, message: e.error ?? s.message }, effects: [] };
  }
}

function applyResult(s: State, key: string, r: ProviderResult): State {
  const loading = s.loading.filter((k) => k !== key);
  const prev = s.results[key];
  // A network error never replaces an older good result: keep it, shown with its age.
  if (r.status === "network_error" && prev?.status === "available") {
    const kept = { ...prev, cached_at: prev.cached_at ?? prev.fetched_at };
    return {
      ...s,
      loading,
      results: { ...s.results, [key]: kept },
      message: `${prev.name}: ${r.message ?? "network error"} (showing the last good result)`,
    };
  }
  return clampDetail({ ...s, loading, results: { ...s.results, [key]: r } });
}

function onKey(s: State, key: Key): Step {
  const k = key.length === 1 ? key.toLowerCase() : key;
  if (k === "ctrl-c") return quit(s, 130);
  if (k === "q") return quit(s, 0);
  if (k === "u" && s.view !== "usage") return { state: { ...s, view: "usage", usageLoading: true }, effects: [{ type: "loadUsage" }] };
  if (s.view === "usage") return usageKey(s, k);
  if (k === "r") return refresh(s);
  if (k === "a") return toggleAuto(s);
  if (k === "c") return copy(s);
  return s.view === "dashboard" ? dashboardKey(s, k) : detailKey(s, k);
}

function usageKey(s: State, k: Key): Step {
  if (k === "esc" || k === "backspace" || k === "u") return { state: { ...s, view: "dashboard" }, effects: [] };
  if (k === "r") return { state: { ...s, usageLoading: true }, effects: [{ type: "loadUsage" }] };
  return { state: s, effects: [] };
}

function quit(s: State, code: number): Step {
  return { state: { ...s, quit: true, exitCode: code }, effects: [{ type: "quit", code }] };
}

function refresh(s: State): Step {
  const step = startFetch(s, s.targets);
  const n = step.state.loading.length;
  return { ...step, state: { ...step.state, message: n ? `Refreshing ${n} provider${n === 1 ? "" : "s"}…` : null } };
}

function toggleAuto(s: State): Step {
  const on = !s.autoRefresh;
  const message = on ? `Auto-refresh on: every ${everyText(s.autoRefreshSeconds)}` : "Auto-refresh off";
  return { state: { ...s, autoRefresh: on, message }, effects: [] };
}

export function everyText(seconds: number): string {
  if (seconds % 3600 === 0) return `${seconds / 3600}h`;
  if (seconds % 60 === 0) return `${seconds / 60}m`;
  return `${seconds}s`;
}

function copy(s: State): Step {
  const t = selectedTarget(s);
  const r = t ? s.results[t.key] : undefined;
  if (!t || !r) return { state: { ...s, message: "Nothing to copy yet" }, effects: [] };
  const { raw: _raw, ...shown } = r;
  const text = JSON.stringify(shown, null, 2);
  return { state: s, effects: [{ type: "copy", text, label: r.name }] };
}

function dashboardKey(s: State, k: string): Step {
  const order = orderedTargets(s);
  if (order.length === 0) return { state: s, effects: [] };
  const at = Math.max(0, order.findIndex((t) => t.key === s.selected));
  const cols = gridColumns(s.width);
  const move = (to: number) => ({
    state: { ...s, selected: order[Math.min(order.length - 1, Math.max(0, to))].key },
    effects: [],
  });
  switch (k) {
    case "left": case "h": return move(at % cols === 0 ? at : at - 1);
    case "right": case "l": return move(at % cols === cols - 1 ? at : at + 1);
    case "up": case "k": return move(at - cols < 0 ? at : at - cols);
    case "down": case "j": return move(down(at, cols, order.length - 1));
    case "home": return move(0);
    case "end": return move(order.length - 1);
    case "enter": return { state: { ...s, selected: order[at].key, view: "detail", focus: 0, scroll: 0 }, effects: [] };
    case "f": return toggleFavoriteProvider(s, order[at]);
    case "x": return { state: { ...s, message: "Open a card with Enter to hide its windows" }, effects: [] };
    default: return { state: s, effects: [] };
  }
}

/** One row down; from a row above a shorter last row, to that row's last card. */
function down(at: number, cols: number, last: number): number {
  if (at + cols <= last) return at + cols;
  return Math.floor(at / cols) < Math.floor(last / cols) ? last : at;
}

function toggleFavoriteProvider(s: State, t: Target): Step {
  const entry = s.favorites.includes(t.key) ? t.key : s.favorites.includes(t.provider) ? t.provider : null;
  if (entry) {
    return {
      state: { ...s, favorites: s.favorites.filter((f) => f !== entry), message: `${t.name} is no longer a favourite` },
      effects: [{ type: "saveFavoriteProvider", provider: entry, on: false }],
    };
  }
  const name = t.profile === "default" ? t.provider : t.key;
  return {
    state: { ...s, favorites: [...s.favorites, name], message: `${t.name} is a favourite` },
    effects: [{ type: "saveFavoriteProvider", provider: name, on: true }],
  };
}

function detailKey(s: State, k: string): Step {
  const t = selectedTarget(s);
  const r = t ? s.results[t.key] : undefined;
  const windows = detailWindows(s, r);
  const layout = effectiveLayout(s.layout, s.width, s.height);
  const perPage = Math.max(1, Math.floor(detailListHeight(s.height) / linesPerWindow(layout)));
  const focusTo = (i: number) => ({
    state: clampDetail({ ...s, focus: Math.min(Math.max(0, windows.length - 1), Math.max(0, i)) }, true),
    effects: [],
  });
  switch (k) {
    case "esc": case "backspace": return { state: { ...s, view: "dashboard" }, effects: [] };
    case "up": case "k": return focusTo(s.focus - 1);
    case "down": case "j": return focusTo(s.focus + 1);
    case "home": return focusTo(0);
    case "end": return focusTo(windows.length - 1);
    case "pgup": return scrollBy(s, windows.length, -perPage);
    case "pgdn": return scrollBy(s, windows.length, perPage);
    case "tab": return cycleLayout(s, 1);
    case "backtab": return cycleLayout(s, -1);
    case "f": return toggleWindow(s, r, windows[s.focus], "favorites");
    case "x": return toggleWindow(s, r, windows[s.focus], "hidden");
    default: return { state: s, effects: [] };
  }
}

/** PgUp/PgDn scroll a page of windows and carry the focus along, so the focus stays visible. */
function scrollBy(s: State, count: number, windows: number): Step {
  if (count === 0) return { state: s, effects: [] };
  const focus = Math.min(count - 1, Math.max(0, s.focus + windows));
  const per = linesPerWindow(effectiveLayout(s.layout, s.width, s.height));
  const scroll = s.scroll + windows * per;
  return { state: clampDetail({ ...s, focus, scroll }, true), effects: [] };
}

const LAYOUTS: Layout[] = ["auto", "normal", "compact"];

function cycleLayout(s: State, dir: number): Step {
  const layout = LAYOUTS[(LAYOUTS.indexOf(s.layout) + dir + LAYOUTS.length) % LAYOUTS.length];
  const shown = layout === "auto" ? `auto (${effectiveLayout(layout, s.width, s.height)})` : layout;
  return { state: clampDetail({ ...s, layout, message: `Layout: ${shown}` }, true), effects: [] };
}

function toggleWindow(s: State, r: ProviderResult | undefined, w: QuotaWindow | undefined, list: "favorites" | "hidden"): Step {
  if (!r || !w) return { state: { ...s, message: "No quota to change here" }, effects: [] };
  const p = prefsOf(s, r.provider);
  const on = !p[list].includes(w.window);
  const next: Prefs = { ...p, [list]: on ? [...p[list], w.window] : p[list].filter((x) => x !== w.window) };
  let state: State = { ...s, prefs: { ...s.prefs, [r.provider]: next } };
  // The favourite moves to the top of the list: keep the focus on the same window.
  const focus = detailWindows(state, r).findIndex((x) => x.window === w.window);
  const verb = list === "favorites" ? (on ? "is a favourite" : "is no longer a favourite") : on ? "is hidden on the dashboard" : "is shown on the dashboard";
  state = clampDetail({ ...state, focus: Math.max(0, focus), message: `${w.window} ${verb}` }, true);
  return { state, effects: [{ type: "saveQuotaPreference", provider: r.provider, window: w.window, list, on }] };
}

/** Keeps focus in range and (when `follow`) scrolls so the focused window is visible. */
function clampDetail(s: State, follow = false): State {
  const t = selectedTarget(s);
  const count = detailWindows(s, t ? s.results[t.key] : undefined).length;
  const per = linesPerWindow(effectiveLayout(s.layout, s.width, s.height));
  const height = detailListHeight(s.height);
  const focus = Math.min(Math.max(0, count - 1), Math.max(0, s.focus));
  const maxScroll = Math.max(0, count * per - height);
  let scroll = Math.min(maxScroll, Math.max(0, s.scroll));
  if (follow) {
    if (focus * per < scroll) scroll = focus * per;
    if ((focus + 1) * per > scroll + height) scroll = Math.min(maxScroll, (focus + 1) * per - height);
  }
  return focus === s.focus && scroll === s.scroll ? s : { ...s, focus, scroll };
}
