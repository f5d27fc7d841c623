// A report as a terminal table, CSV (one line per period, agent and model) or JSON.
import type { Group, Period, Report, Sum } from "./report";

const int = (n: number) => Math.round(n).toLocaleString("en-US");
export const usd = (n: number) => `$${n.toFixed(2)}`;
const time = (ms: number, offset: number) => new Date(ms + offset).toISOString().slice(11, 16);

export interface Meta {
  period: Period;
  timezone: string;
  pricing: { source: string; date: string };
  malformed: number;
  duplicates: number;
  files: number;
  quota: string[];
  index: { bytes_read: number; files_read: number; rebuilt: boolean };
}

const sumJson = (s: Sum) => ({
  input_tokens: s.input,
  output_tokens: s.output,
  cache_write_tokens: s.cacheWrite,
  cache_read_tokens: s.cacheRead,
  total_tokens: s.total,
  cost_usd: Math.round(s.cost * 1e6) / 1e6,
  entries: s.entries,
});

export function toJson(r: Report, m: Meta): string {
  return JSON.stringify(
    {
      period: m.period,
      timezone: m.timezone,
      groups: r.groups.map((g) => ({
        key: g.key,
        ...(g.start !== undefined ? { start: new Date(g.start).toISOString(), end: new Date(g.end!).toISOString(), active: g.active === true } : {}),
        ...sumJson(g.sum),
        ...(g.burn ? { burn: { tokens_per_minute: Math.round(g.burn.tokensPerMinute), cost_per_hour_usd: Math.round(g.burn.costPerHour * 1e4) / 1e4, projected_tokens: Math.round(g.burn.projectedTokens), projected_cost_usd: Math.round(g.burn.projectedCost * 1e4) / 1e4 } } : {}),
        models: g.models.map((x) => ({ agent: x.agent, model: x.model, ...sumJson(x) })),
      })),
      totals: sumJson(r.totals),
      unpriced_models: r.unpriced,
      malformed_lines: m.malformed,
      duplicate_entries: m.duplicates,
      files: m.files,
      pricing: m.pricing,
      quota: m.quota,
      index: m.index,
    },
    null,
    2,
  );
}

const csvCell = (s: string) => (/[",\n]/.test(s) ? `"${s.replace(/"/g, '""')}"` : s);

export function toCsv(r: Report, m: Meta): string {
  const lines = [`${m.period === "session" ? "session" : m.period === "blocks" ? "block_start" : "period"},agent,model,input_tokens,output_tokens,cache_write_tokens,cache_read_tokens,total_tokens,cost_usd`];
  for (const g of r.groups)
    for (const x of g.models) lines.push([g.key, x.agent, x.model, x.input, x.output, x.cacheWrite, x.cacheRead, x.total, x.cost.toFixed(6)].map((c) => csvCell(String(c))).join(","));
  return lines.join("\n") + "\n";
}

function table(head: string[], rows: string[][]): string {
  const w = head.map((h, c) => Math.max(h.length, ...rows.map((r) => r[c].length)));
  const line = (r: string[]) => r.map((x, c) => (c === 0 || c === r.length - 1 && head[c] === "Models" ? x.padEnd(w[c]) : x.padStart(w[c]))).join("  ").trimEnd();
  return [line(head), w.map((n) => "─".repeat(n)).join("  "), ...rows.map(line)].join("\n");
}

export function toText(r: Report, m: Meta, offset = 0): string {
  const first = m.period === "session" ? "Session" : m.period === "blocks" ? "Block" : m.period === "daily" ? "Date" : m.period === "weekly" ? "Week of" : "Month";
  const row = (key: string, s: Sum, models: string) => [key, int(s.input), int(s.output), int(s.cacheWrite), int(s.cacheRead), int(s.total), usd(s.cost), models];
  const name = (g: Group) => {
    if (m.period !== "blocks") return g.key;
    const d = new Date(g.start! + offset).toISOString();
    return `${d.slice(0, 10)} ${d.slice(11, 16)}-${time(g.end!, offset)}${g.active ? " (active)" : ""}`;
  };
  const rows = r.groups.map((g) => row(name(g), g.sum, [...new Set(g.models.map((x) => x.model))].join(", ")));
  rows.push(row("Total", r.totals, ""));
  const out = [table([first, "Input", "Output", "Cache write", "Cache read", "Total tokens", "Cost", "Models"], rows)];
  const active = r.groups.find((g) => g.active && g.burn);
  if (active?.burn) {
    const b = active.burn;
    out.push(`Active block: ${int(b.tokensPerMinute)} tokens/min, ${usd(b.costPerHour)}/h; by ${time(active.end!, offset)} about ${int(b.projectedTokens)} tokens, ${usd(b.projectedCost)}`);
  }
  out.push(...m.quota);
  const notes: string[] = [];
  if (r.unpriced.length) notes.push(`no price for ${r.unpriced.join(", ")} (counted at $0; see --pricing)`);
  if (m.malformed) notes.push(`${m.malformed} malformed line${m.malformed === 1 ? "" : "s"} skipped`);
  notes.push(`prices: ${m.pricing.source}${m.pricing.date ? ` as of ${m.pricing.date}` : ""}; time zone ${m.timezone}`);
  return out.join("\n") + "\n" + notes.map((n) => `  ${n}`).join("\n") + "\n";
}
