// Pure text helpers for the TUI: numbers, durations, usage levels and pace. No terminal, no colour.
import type { QuotaWindow } from "../model/types.ts";

export type Level = "ok" | "warn" | "crit" | "none";

const CURRENCIES = new Set(["usd", "cny", "eur", "gbp", "jpy"]);
const SHORT_UNIT: Record<string, string> = { requests: "req", tokens: "tok", credits: "cr" };

/** "3h 12m", "2d 4h", "45m", "<1m". */
export function formatDuration(ms: number): string {
  if (ms < 60_000) return "<1m";
  const minutes = Math.floor(ms / 60_000);
  const days = Math.floor(minutes / 1440);
  const hours = Math.floor((minutes % 1440) / 60);
  const mins = minutes % 60;
  if (days > 0) return hours > 0 ? `${days}d ${hours}h` : `${days}d`;
  if (hours > 0) return mins > 0 ? `${hours}h ${mins}m` : `${hours}h`;
  return `${mins}m`;
}

/** "resets in 3h 12m", or "" when the window has no reset time. */
export function resetText(w: QuotaWindow, now: Date): string {
  if (!w.reset_at) return "";
  const at = Date.parse(w.reset_at);
  if (Number.isNaN(at)) return "";
  const ms = at - now.getTime();
  return ms <= 0 ? "resets now" : `resets in ${formatDuration(ms)}`;
}

/** "2m ago" for a timestamp, "" when unknown. */
export function ageText(iso: string | null | undefined, now: Date): string {
  if (!iso) return "";
  const at = Date.parse(iso);
  if (Number.isNaN(at)) return "";
  const ms = now.getTime() - at;
  return ms < 60_000 ? "just now" : `${formatDuration(ms)} ago`;
}

/** A number for humans: money with two decimals, big counts as 1.2k/3.4M, percents as integers. */
export function formatNumber(n: number, unit: string): string {
  if (CURRENCIES.has(unit.toLowerCase())) return n.toFixed(2);
  if (unit === "percent") return String(Math.round(n * 10) / 10);
  const abs = Math.abs(n);
  if (abs >= 1_000_000_000) return `${trim(n / 1_000_000_000)}B`;
  if (abs >= 1_000_000) return `${trim(n / 1_000_000)}M`;
  if (abs >= 10_000) return `${trim(n / 1000)}k`;
  return String(Math.round(n * 100) / 100);
}

function trim(n: number): string {
  return (Math.round(n * 10) / 10).toString();
}

export function unitSuffix(unit: string): string {
  if (unit === "percent") return "%";
  if (CURRENCIES.has(unit.toLowerCase())) return ` ${unit.toUpperCase()}`;
  return ` ${SHORT_UNIT[unit] ?? unit}`;
}

/**
 * Windows with no usable limit show what is left instead of used/limit; so do balances (providers
 * report a balance as `limit = remaining = amount`, which has no "used" worth a bar).
 */
export function hasLimit(w: QuotaWindow): boolean {
  return Number.isFinite(w.limit) && w.limit > 0 && !w.window.startsWith("balance");
}

/** "42/100%", "12.50/100.00 USD", "120/500 req"; a balance without limit: "37.20 CNY". */
export function usageText(w: QuotaWindow): string {
  if (!hasLimit(w)) return `${formatNumber(w.remaining, w.unit)}${unitSuffix(w.unit)}`;
  return `${formatNumber(w.used, w.unit)}/${formatNumber(w.limit, w.unit)}${unitSuffix(w.unit)}`;
}

/** Used fraction 0..1, or null without a limit. */
export function usedFraction(w: QuotaWindow): number | null {
  if (!hasLimit(w)) return null;
  return Math.min(1, Math.max(0, w.used / w.limit));
}

/** How much of the window's period has passed, 0..1, or null when the window has no period. */
export function elapsedFraction(w: QuotaWindow, now: Date): number | null {
  if (!w.reset_at || !w.period_seconds || w.period_seconds <= 0) return null;
  const at = Date.parse(w.reset_at);
  if (Number.isNaN(at)) return null;
  const left = (at - now.getTime()) / 1000;
  return Math.min(1, Math.max(0, 1 - left / w.period_seconds));
}

/** Percentage points by which usage runs ahead of the elapsed part of the window (negative: behind). */
export function paceAhead(w: QuotaWindow, now: Date): number | null {
  const used = usedFraction(w);
  const elapsed = elapsedFraction(w, now);
  if (used === null || elapsed === null) return null;
  return Math.round((used - elapsed) * 100);
}

/** Colour level of a window: crit at 90 % used, warn at 70 % or when usage runs ahead of the clock. */
export function levelOf(w: QuotaWindow, now: Date): Level {
  const used = usedFraction(w);
  if (used === null) return "none";
  if (used >= 0.9) return "crit";
  if (used >= 0.7) return "warn";
  const ahead = paceAhead(w, now);
  if (ahead !== null && ahead > 0) return "warn";
  return "ok";
}

/** A bar of `width` cells, filled by the used fraction. */
export function bar(fraction: number, width: number): { filled: string; empty: string } {
  if (width <= 0) return { filled: "", empty: "" };
  const n = Math.round(Math.min(1, Math.max(0, fraction)) * width);
  return { filled: "█".repeat(n), empty: "░".repeat(width - n) };
}

const BARS = "▁▂▃▄▅▆▇█";

/** The current window's history (0..1 of the limit per point) as block characters; "" without history. */
export function sparkline(values: number[]): string {
  if (values.length < 2) return "";
  let out = "";
  for (const v of values) out += BARS[Math.max(0, Math.min(7, Math.round(v * 7)))];
  return out;
}

/**
 * The projection in words: "at this pace: 100 % in 2h 10m, before the reset in 3h", or where usage ends
 * up at the reset; "" while there is not enough history (see pace.ts).
 */
export function projectionText(w: QuotaWindow, now: Date): string {
  const p = w.pace;
  if (!p) return "";
  const until = (iso: string) => formatDuration(Math.max(0, Date.parse(iso) - now.getTime()));
  const reset = w.reset_at ? `the reset in ${until(w.reset_at)}` : "";
  if (p.exhausts_at && (p.before_reset || p.before_reset === null)) {
    return `at this pace: 100 % in ${until(p.exhausts_at)}${p.before_reset ? `, before ${reset}` : ""}`;
  }
  if (p.projected_used !== null && w.limit > 0) return `at this pace: ${Math.round((p.projected_used / w.limit) * 100)} % at ${reset}`;
  // no reset and no use (a balance that is only topped up): nothing worth a line
  return "";
}
