// The detail view of one card: plan, status, credential source, console link, then every window
// (hidden ones dimmed), with a focused quota, a scrolling list and two layouts.
import type { QuotaWindow } from "../model/types.ts";
import { ageText, formatDuration, formatNumber, paceAhead, projectionText, sparkline, unitSuffix } from "./format.ts";
import { DETAIL_HEADER, detailListHeight, effectiveLayout } from "./layout.ts";
import { bottomLine, header, levelStyle, pad, spinner, STAR, statusText, windowRows, type Colors, type ViewOptions } from "./parts.ts";
import { detailWindows, isFavoriteTarget, prefsOf, selectedTarget, type State } from "./state.ts";
import { line, seg, spread, type Seg } from "./text.ts";

const DETAIL_KEYS = "↑↓ focus  PgUp/PgDn scroll  Tab layout  F favourite  X hide  C copy JSON  R refresh  Esc back  Q quit";
const DETAIL_KEYS_SHORT = "↑↓ focus  PgUp/Dn  Tab layout  F fav  X hide  C copy  Esc back  Q quit";

export function detail(s: State, now: Date, c: Colors, o: ViewOptions): string[] {
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
      const spark = sparkline(s.results[selectedTarget(s)!.key]?.spark?.[w.window] ?? []);
      const projection = projectionText(w, now);
      if (spark || projection) out.push(line([seg("       "), seg(spark, c.cyan), seg(spark && projection ? "  " : ""), seg(projection, isHidden ? c.dim : undefined)], W));
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
