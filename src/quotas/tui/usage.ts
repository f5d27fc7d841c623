// The usage view (U): what the agents' local logs say was spent today, this week, per model, and a
// sparkline of the last 30 days.
import type { UsageSummary } from "../model/types.ts";
import { bottomLine, header, spinner, type Colors, type ViewOptions } from "./parts.ts";
import type { State } from "./state.ts";
import { line, seg } from "./text.ts";

const BARS = "▁▂▃▄▅▆▇█";
const usd = (n: number) => `$${n.toFixed(2)}`;
const tokens = (n: number) => (n >= 1e9 ? `${(n / 1e9).toFixed(1)}B` : n >= 1e6 ? `${(n / 1e6).toFixed(1)}M` : n >= 1e3 ? `${(n / 1e3).toFixed(1)}k` : String(n));

/** One character per day, scaled to the busiest day; a day without use is a space. */
export function sparkline(values: number[]): string {
  const max = Math.max(0, ...values);
  return values.map((v) => (v <= 0 || max <= 0 ? " " : BARS[Math.min(BARS.length - 1, Math.floor((v / max) * (BARS.length - 1) + 0.5))])).join("");
}

function body(u: UsageSummary, c: Colors, width: number): string[] {
  const out: string[] = [];
  const row = (label: string, x: { cost: number; tokens: number }) => line([seg(`  ${label.padEnd(12)}`), seg(usd(x.cost).padStart(10), c.bold), seg(`  ${tokens(x.tokens)} tokens`, c.dim)], width);
  out.push(row("Today", u.today), row("This week", u.week), "");
  const spark = sparkline(u.daily.map((d) => d.cost));
  const max = Math.max(0, ...u.daily.map((d) => d.cost));
  out.push(line([seg("  Last 30 days  ", c.dim), seg(spark, c.cyan), seg(`  max ${usd(max)}/day`, c.dim)], width));
  if (u.daily.length) out.push(line([seg(`                ${u.daily[0].day.slice(5)}`, c.dim), seg(`${" ".repeat(Math.max(1, u.daily.length - 10))}${u.daily[u.daily.length - 1].day.slice(5)}`, c.dim)], width));
  out.push("", line([seg("  This week per model", c.bold)], width));
  if (!u.models.length) out.push(line([seg("  nothing in the logs this week", c.dim)], width));
  for (const m of u.models) out.push(line([seg(`  ${`${m.model} (${m.agent})`.padEnd(40)}`), seg(usd(m.cost).padStart(10), c.bold), seg(`  ${tokens(m.tokens)} tokens`, c.dim)], width));
  return out;
}

export function usageView(s: State, c: Colors, o: ViewOptions): string[] {
  const top = [header(s, c, o, "usage from local logs"), line([], s.width)];
  const middle = s.usage ? body(s.usage, c, s.width) : [line([seg(`  ${s.usageLoading ? `${spinner(s)} reading the agents' logs…` : "no usage data"}`, c.dim)], s.width)];
  if (s.usage && s.usageLoading) middle.push(line([seg(`  ${spinner(s)} updating…`, c.dim)], s.width));
  const foot = s.usage ? line([seg(`  days in ${s.usage.timezone}; prices per the embedded table (see quotas usage --help)`, c.dim)], s.width) : line([], s.width);
  const lines = [...top, ...middle.map((l) => (l === "" ? line([], s.width) : l))];
  while (lines.length < s.height - 2) lines.push(line([], s.width));
  return [...lines.slice(0, Math.max(0, s.height - 2)), foot, bottomLine(s, c, "Esc back  R reload  Q quit")];
}
