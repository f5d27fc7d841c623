// Pieces both views draw with: colours, spinner, header and message lines, aligned window rows.
import pc from "picocolors";
import type { ProviderResult, QuotaWindow } from "../model/types.ts";
import { bar, levelOf, resetText, usageText, usedFraction, type Level } from "./format.ts";
import { everyText, type State } from "./state.ts";
import { fixed, line, seg, spread, width, type Seg, type Style } from "./text.ts";

export interface ViewOptions {
  color: boolean;
  version: string;
}

export type Colors = ReturnType<typeof pc.createColors>;

const SPINNER = ["⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧", "⠇", "⠏"];
export const STAR = "★";

export function spinner(s: State): string {
  return SPINNER[s.spin % SPINNER.length];
}

export function levelStyle(level: Level, c: Colors): Style {
  if (level === "crit") return c.red;
  if (level === "warn") return c.yellow;
  if (level === "ok") return c.green;
  return c.dim;
}

export function header(s: State, c: Colors, o: ViewOptions, crumb: string | null): string {
  const left = [seg(" quotas", c.bold), seg(` ${o.version}`, c.dim)];
  if (crumb) left.push(seg(" › "), seg(crumb, c.bold));
  const right: Seg[] = [];
  if (s.loading.length) right.push(seg(`${spinner(s)} refreshing ${s.loading.length}  `, c.cyan));
  right.push(seg(s.autoRefresh ? `auto-refresh every ${everyText(s.autoRefreshSeconds)} ` : "auto-refresh off ", c.dim));
  return spread(left, right, s.width);
}

export function bottomLine(s: State, c: Colors, keys: string): string {
  if (s.message) return line([seg(" "), seg(s.message, c.bold)], s.width);
  return line([seg(` ${keys}`, c.dim)], s.width);
}

export function pad(lines: string[], height: number, cols: number): string[] {
  const out = lines.slice(0, height);
  while (out.length < height) out.push(" ".repeat(cols));
  return out;
}

export function statusText(r: ProviderResult): { text: string; level: Level } {
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

export interface Row {
  w: QuotaWindow;
  segs: Seg[];
}

/** One line per window: `label  used/limit  bar  resets in 3h 12m`, columns aligned across lines. */
export function windowRows(windows: QuotaWindow[], inner: number, now: Date, c: Colors, prefix: (w: QuotaWindow) => Seg[] = () => []): Row[] {
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
