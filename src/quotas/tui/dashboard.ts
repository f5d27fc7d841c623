// The dashboard: a grid of cards, one per provider/profile, favourites first, scrolled so the
// selected card is visible; a footer counting loaded providers and naming those that need a key.
import type { ProviderResult, Target } from "../model/types.ts";
import { ageText } from "./format.ts";
import { FOOTER, gridColumns } from "./layout.ts";
import { bottomLine, header, levelStyle, pad, spinner, STAR, statusText, windowRows, type Colors, type ViewOptions } from "./parts.ts";
import { cardWindows, isFavoriteTarget, orderedTargets, prefsOf, type State } from "./state.ts";
import { line, seg, spread, type Seg, type Style } from "./text.ts";

const DASH_KEYS = "←↓↑→/hjkl move  Enter open  R refresh  A auto-refresh  F favourite  C copy JSON  U usage  Q quit";
const DASH_KEYS_SHORT = "←↓↑→ move  Enter open  R refresh  A auto  F fav  C copy  U usage  Q quit";

export function dashboard(s: State, now: Date, c: Colors, o: ViewOptions): string[] {
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
