// The pure view: `render(state, now, options) → lines`. Exactly `state.height` lines, each exactly
// `state.width` cells wide, styled with ANSI only when colour is on (NO_COLOR turns it off).
import pc from "picocolors";
import type { ProviderResult, QuotaWindow, Target } from "../types.ts";
import { ageText, bar, formatDuration, formatNumber, unitSuffix, levelOf, paceAhead, resetText, usageText, usedFraction, type Level } from "./format.ts";
import { DETAIL_HEADER, FOOTER, detailListHeight, effectiveLayout, gridColumns } from "./layout.ts";
import { cardWindows, detailWindows, everyText, isFavoriteTarget, orderedTargets, prefsOf, selectedTarget, type State } from "./state.ts";
import { fixed, line, seg, spread, width, type Seg, type Style } from "./text.ts";

export interface ViewOptions {
  color: boolean;
  version: string;
}

type Colors = ReturnType<typeof pc.createColors>;

const SPINNER = ["⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧", "⠇", "⠏"];
const STAR = "★";

export function render(s: State, now: Date, o: ViewOptions): string[] {
  const c = pc.createColors(o.color);
  const out = s.view === "detail" && selectedTarget(s) ? detail(s, now, c, o) : dashboard(s, now, c, o);
  return out.slice(0, s.height);
}

function spinner(s: State): string {
  return SPINNER[s.spin % SPINNER.length];
}

function levelStyle(level: Level, c: Colors): Style {
  if (level === "crit") return c.red;
  if (level === "warn") return c.yellow;
  if (level === "ok") return c.green;
  return c.dim;
}

function header(s: State, c: Colors, o: ViewOptions, crumb: string | null): string {
  const left = [seg(" quotas", c.bold), seg(` ${o.version}`, c.dim)];
  if (crumb) left.push(seg(" › "), seg(crumb, c.bold));
  const right: Seg[] = [];
  if (s.loading.length) right.push(seg(`${spinner(s)} refreshing ${s.loading.length}  `, c.cyan));
  right.push(seg(s.autoRefresh ? `auto-refresh every ${everyText(s.autoRefreshSeconds)} ` : "auto-refresh off ", c.dim));
  return spread(left, right, s.width);
}

function bottomLine(s: State, c: Colors, keys: string): string {
  if (s.message) return line([seg(" "), seg(s.message, c.bold)], s.width);
  return line([seg(` ${keys}`, c.dim)], s.width);
}

// ---------------------------------------------------------------------------------------------------
// Dashboard

const DASH_KEYS = "←↓↑→/hjkl move  Enter open  R refresh  A auto-refresh  F favourite  C copy JSON  Q quit";
const DASH_KEYS_SHORT = "←↓↑→ move  Enter open  R refresh  A auto  F fav  C copy  Q quit";

function dashboard(s: State, now: Date, c: Colors, o: ViewOptions): string[] {
  const lines = [header(s, c, o, null)];
  const bodyHeight = Math.max(0, s.height - 1 - FOOTER);
  lines.push(...grid(s, now, c, bodyHeight));
  lines.push(countsLine(s, c));
  lines.push(bottomLine(s, c, s.width < 100 ? DASH_KEYS_SHORT : DASH_KEYS));
  return lines;
}

function countsLine(s: State, c: Colors): string {
  const results = s.targets.map((t) => s.results[t.key]).filter((r): r is ProviderResult => !!r);
  const loaded = results.filter((r) => r.status === "available").length;
  const needKey = results.filter((r) => r.status === "auth_required").map((r) => r.name);
  const failed = results.filter((r) => r.status === "unavailable" || r.status === "network_error").length;
  const segs = [seg(` ${loaded} of ${s.targets.length} providers loaded`)];
  if (needKey.length) segs.push(seg(" · "), seg(`needs a key: ${needKey.join(", ")}`, c.yellow));
  if (failed) segs.push(seg(" · "), seg(`${failed} with errors`, c.red));
  return line(segs, s.width);
}

function grid(s: State, now: Date, c: Colors, bodyHeight: number): string[] {
  const order = orderedTargets(s);
  if (order.length === 0) {
    const empty = [line([seg(" No providers to show: no credentials found and none configured.", c.dim)], s.width)];
    return pad(empty, bodyHeight, s.width);
  }
  const cols = gridColumns(s.width);
  const cardWidth = Math.floor(s.width / cols);
  const rows: string[][] = [];
  for (let i = 0; i < order.length; i += cols) {
    const rowTargets = order.slice(i, i + cols);
    const cards = rowTargets.map((t) => card(s, t, cardWidth, now, c));
    const height = Math.max(...cards.map((x) => x.length));
    const padded = cards.map((x, j) => padCard(x, height, cardWidth, rowTargets[j].key === s.selected, c));
    const rowLines: string[] = [];
    for (let y = 0; y < height; y++) {
      const rest = s.width - cardWidth * padded.length;
      rowLines.push(padded.map((x) => x[y]).join("") + " ".repeat(Math.max(0, rest)));
    }
    rows.push(rowLines);
  }
  // Scroll just far enough that the selected card's row is fully visible.
  const selRow = Math.floor(Math.max(0, order.findIndex((t) => t.key === s.selected)) / cols);
  let start = selRow;
  let used = rows[selRow].length;
  while (start > 0 && used + rows[start - 1].length <= bodyHeight) used += rows[--start].length;
  return pad(rows.slice(start).flat(), bodyHeight, s.width);
}

function pad(lines: string[], height: number, cols: number): string[] {
  const out = lines.slice(0, height);
  while (out.length < height) out.push(" ".repeat(cols));
  return out;
}

interface Border {
  tl: string; tr: string; bl: string; br: string; h: string; v: string; style: Style;
}

function border(selected: boolean, c: Colors): Border {
  return selected
    ? { tl: "┏", tr: "┓", bl: "┗", br: "┛", h: "━", v: "┃", style: (x) => c.bold(c.cyan(x)) }
    : { tl: "╭", tr: "╮", bl: "╰", br: "╯", h: "─", v: "│", style: c.dim };
}

function card(s: State, t: Target, w: number, now: Date, c: Colors): string[] {
  const selected = t.key === s.selected;
  const b = border(selected, c);
  const r = s.results[t.key];
  const loading = s.loading.includes(t.key);
  const inner = Math.max(0, w - 4);

  const left: Seg[] = [seg(`${b.tl}${b.h} `, b.style)];
  if (isFavoriteTarget(s, t)) left.push(seg(`${STAR} `, c.yellow));
  left.push(seg(r?.name ?? t.name, c.bold));
  if (r?.plan) left.push(seg(` · ${r.plan}`, c.dim));
  left.push(seg(" "));
  const right: Seg[] = [seg(" ")];
  if (loading) right.push(seg(`${spinner(s)} `, c.cyan));
  const age = r ? (r.cached_at ? `cached ${ageText(r.fetched_at, now)}` : ageText(r.fetched_at, now)) : "";
  if (age) right.push(seg(`${age} `, c.dim));
  right.push(seg(`${b.h}${b.tr}`, b.style));
  const top = spread(left, right, w, b.h, b.style);

  const body = cardBody(s, r, loading, inner, now, c);
  const lines = [top, ...body.map((segs) => line([seg(`${b.v} `, b.style), ...fit(segs, inner), seg(` ${b.v}`, b.style)], w))];
  lines.push(line([seg(b.bl + b.h.repeat(Math.max(0, w - 2)) + b.br, b.style)], w));
  return lines;
}

function fit(segs: Seg[], n: number): Seg[] {
  return [seg(line(segs, n))];
}

function padCard(lines: string[], height: number, w: number, selected: boolean, c: Colors): string[] {
  if (lines.length >= height) return lines;
  const b = border(selected, c);
  const filler = line([seg(b.v, b.style), seg(" ".repeat(Math.max(0, w - 2))), seg(b.v, b.style)], w);
  const out = lines.slice(0, -1);
  while (out.length < height - 1) out.push(filler);
  out.push(lines[lines.length - 1]);
  return out;
}

function statusText(r: ProviderResult): { text: string; level: Level } {
  switch (r.status) {
    case "auth_required":
      return { text: `needs a key${r.hint ? `: ${r.hint}` : ""}`, level: "warn" };
    case "unavailable":
      return { text: `unavailable${r.message ? `: ${r.message}` : ""}`, level: "crit" };
    case "network_error":
      return { text: `network error${r.message ? `: ${r.message}` : ""}`, level: "crit" };
    default:
      return { text: "", level: "none" };
  }
}

function cardBody(s: State, r: ProviderResult | undefined, loading: boolean, inner: number, now: Date, c: Colors): Seg[][] {
  if (!r) return [[seg(loading ? `${spinner(s)} loading…` : "no data yet", c.dim)]];
  if (r.status !== "available") {
    const st = statusText(r);
    return [[seg(st.text, levelStyle(st.level, c))]];
  }
  const windows = cardWindows(s, r);
  if (windows.length === 0) {
    const hidden = prefsOf(s, r.provider).hidden.length;
    return [[seg(hidden && r.windows.length ? "all quotas hidden (Enter, then X to show)" : "no quotas reported", c.dim)]];
  }
  return windowRows(windows, inner, now, c).map((x) => x.segs);
}

interface Row {
  w: QuotaWindow;
  segs: Seg[];
}

/** One line per window: `label  used/limit  bar  resets in 3h 12m`, columns aligned across lines. */
function windowRows(windows: QuotaWindow[], inner: number, now: Date, c: Colors, prefix: (w: QuotaWindow) => Seg[] = () => []): Row[] {
  const prefixW = Math.max(0, ...windows.map((w) => prefix(w).reduce((n, x) => n + width(x.t), 0)));
  const labelW = Math.min(16, Math.max(...windows.map((w) => width(w.window))));
  const usageW = Math.max(...windows.map((w) => width(usageText(w))));
  let resetW = Math.max(...windows.map((w) => width(resetText(w, now))));
  let barW = inner - prefixW - labelW - 2 - usageW - 2 - (resetW ? resetW + 2 : 0);
  if (barW < 6 && resetW) {
    resetW = 0;
    barW = inner - prefixW - labelW - 2 - usageW - 2;
  }
  if (barW < 3) barW = 0;
  return windows.map((w) => {
    const level = levelOf(w, now);
    const style = levelStyle(level, c);
    const frac = usedFraction(w);
    const segs: Seg[] = [...prefix(w), seg(fixed(w.window, labelW)), seg("  "), seg(fixed(usageText(w), usageW, true), style)];
    if (barW) {
      const b = frac === null ? { filled: "", empty: " ".repeat(barW) } : bar(frac, barW);
      segs.push(seg("  "), seg(b.filled, style), seg(b.empty, c.dim));
    }
    if (resetW) segs.push(seg("  "), seg(fixed(resetText(w, now), resetW), c.dim));
    return { w, segs };
  });
}

// ---------------------------------------------------------------------------------------------------
// Detail

const DETAIL_KEYS = "↑↓ focus  PgUp/PgDn scroll  Tab layout  F favourite  X hide  C copy JSON  R refresh  Esc back  Q quit";
const DETAIL_KEYS_SHORT = "↑↓ focus  PgUp/Dn  Tab layout  F fav  X hide  C copy  Esc back  Q quit";

function detail(s: State, now: Date, c: Colors, o: ViewOptions): string[] {
  const t = selectedTarget(s)!;
  const r = s.results[t.key];
  const name = r?.name ?? t.name;
  const W = s.width;
  const lines = [header(s, c, o, name)];

  const title: Seg[] = [seg(" ")];
  if (isFavoriteTarget(s, t)) title.push(seg(`${STAR} `, c.yellow));
  title.push(seg(name, c.bold));
  if (r?.plan) title.push(seg(` · plan ${r.plan}`));
  if (r) title.push(seg(` · ${r.status}`, r.status === "available" ? c.green : c.yellow));
  if (r) title.push(seg(r.cached_at ? ` · last good result from ${ageText(r.fetched_at, now)}` : ` · fetched ${ageText(r.fetched_at, now)}`, c.dim));
  if (s.loading.includes(t.key)) title.push(seg(` ${spinner(s)} refreshing`, c.cyan));
  lines.push(line(title, W));
  lines.push(line([seg(" source ", c.dim), seg(r?.auth_source ?? "none found")], W));
  const note: Seg[] = [seg(" ")];
  if (r && r.status !== "available") {
    const st = statusText(r);
    note.push(seg(st.text, levelStyle(st.level, c)), seg("  "));
  }
  if (r?.console_url) note.push(seg("console ", c.dim), seg(r.console_url, c.underline));
  lines.push(line(note, W));

  const windows = detailWindows(s, r);
  const hidden = prefsOf(s, t.provider).hidden;
  const layout = effectiveLayout(s.layout, s.width, s.height);
  const hiddenCount = windows.filter((w) => hidden.includes(w.window)).length;
  const ruleText = ` ${windows.length} quota${windows.length === 1 ? "" : "s"}${hiddenCount ? ` · ${hiddenCount} hidden` : ""} · layout ${s.layout === "auto" ? `auto (${layout})` : layout} `;
  lines.push(spread([seg("──", c.dim), seg(ruleText)], [seg("──", c.dim)], W, "─", c.dim));
  while (lines.length < DETAIL_HEADER) lines.push(" ".repeat(W));

  const listH = detailListHeight(s.height);
  const list = !r && s.loading.includes(t.key)
    ? [line([seg(` ${spinner(s)} loading…`, c.dim)], W)]
    : detailList(s, windows, hidden, layout, now, c);
  const visible = list.slice(s.scroll, s.scroll + listH);
  lines.push(...pad(visible, listH, W));

  const pos: Seg[] = [seg(windows.length ? ` quota ${s.focus + 1} of ${windows.length}` : " no quotas", c.dim)];
  if (s.scroll > 0) pos.push(seg(" · ↑ more above", c.dim));
  if (s.scroll + listH < list.length) pos.push(seg(" · ↓ more below", c.dim));
  lines.push(line(pos, W));
  lines.push(bottomLine(s, c, s.width < 100 ? DETAIL_KEYS_SHORT : DETAIL_KEYS));
  return lines;
}

function detailList(s: State, windows: QuotaWindow[], hidden: string[], layout: "normal" | "compact", now: Date, c: Colors): string[] {
  const W = s.width;
  if (windows.length === 0) return [line([seg(" no quotas to show", c.dim)], W)];
  const favs = prefsOf(s, selectedTarget(s)!.provider).favorites;
  const prefix = (w: QuotaWindow): Seg[] => {
    const i = windows.indexOf(w);
    return [
      seg(i === s.focus ? " › " : "   ", c.cyan),
      seg(favs.includes(w.window) ? `${STAR} ` : "  ", c.yellow),
    ];
  };
  const tagW = hidden.length ? 9 : 0;
  const rows = windowRows(windows, W - 1 - tagW, now, c, prefix);
  const out: string[] = [];
  for (const { w, segs } of rows) {
    const isHidden = hidden.includes(w.window);
    const focused = windows.indexOf(w) === s.focus;
    let main = segs;
    if (focused) main = [segs[0], ...segs.slice(1).map((x) => seg(x.t, (y) => c.bold(x.s ? x.s(y) : y)))];
    if (isHidden) main = segs.map((x, i) => (i === 0 ? x : seg(x.t, c.dim)));
    const tag = isHidden ? [seg("  (hidden)", c.dim)] : [];
    out.push(line([...main, ...tag], W));
    if (layout === "normal") {
      out.push(line([seg("       "), seg(detailNote(w, now), isHidden ? c.dim : undefined)], W));
      out.push(" ".repeat(W));
    }
  }
  return out;
}

function detailNote(w: QuotaWindow, now: Date): string {
  const parts: string[] = [];
  parts.push(`${formatNumber(w.remaining, w.unit)}${unitSuffix(w.unit)} left`);
  if (w.reset_at) parts.push(`resets ${w.reset_at.slice(0, 16).replace("T", " ")} UTC`);
  if (w.period_seconds) parts.push(`${formatDuration(w.period_seconds * 1000)} window`);
  const ahead = paceAhead(w, now);
  if (ahead !== null) parts.push(ahead > 0 ? `${ahead} pts ahead of pace` : `${-ahead} pts under pace`);
  return parts.join(" · ");
}
