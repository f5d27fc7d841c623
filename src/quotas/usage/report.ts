// From index rows to a report: periods (day, ISO week, month, session) in a time zone, filters, cost
// from a price table, and the 5-hour blocks with the active one's burn rate and projection.
import { priceOf, type Price, type PriceTable } from "./pricing";
import type { Agent } from "./sources";
import { BUCKET_MS, STRIDE, type Index } from "./store";
import { isoDay, type Zone } from "./tz";

export const PERIODS = ["daily", "weekly", "monthly", "session", "blocks"] as const;
export type Period = (typeof PERIODS)[number];

export interface Filter {
  /** local day numbers, inclusive */
  since?: number;
  until?: number;
  agents?: Agent[];
  /** case-insensitive substrings of model names */
  models?: string[];
}

export interface Sum {
  input: number;
  output: number;
  cacheWrite: number;
  cacheRead: number;
  total: number;
  cost: number;
  entries: number;
}

export interface ModelSum extends Sum {
  agent: Agent;
  model: string;
}

export interface Group {
  key: string;
  sum: Sum;
  models: ModelSum[];
  /** blocks: first and last entry, block end, and for the active block its rates */
  start?: number;
  end?: number;
  first?: number;
  last?: number;
  active?: boolean;
  burn?: { tokensPerMinute: number; costPerHour: number; projectedCost: number; projectedTokens: number };
}

export interface Report {
  groups: Group[];
  totals: Sum;
  unpriced: string[];
}

export const zero = (): Sum => ({ input: 0, output: 0, cacheWrite: 0, cacheRead: 0, total: 0, cost: 0, entries: 0 });

function addRow(s: Sum, a: Float64Array, i: number, cost: number): void {
  s.input += a[i + 4];
  s.output += a[i + 5];
  s.cacheRead += a[i + 6];
  s.cacheWrite += a[i + 7] + a[i + 8];
  s.total += a[i + 4] + a[i + 5] + a[i + 6] + a[i + 7] + a[i + 8];
  s.cost += cost;
  s.entries += a[i + 9];
}

/** A session's name: Claude Code's `<project>/<session id>`, Codex's rollout file name. */
export function sessionName(path: string): string {
  const parts = path.replace(/\.jsonl$/, "").split("/");
  const at = parts.lastIndexOf("projects");
  if (at !== -1 && at < parts.length - 2) return parts.slice(at + 1).join("/");
  return parts[parts.length - 1];
}

export interface Prepared {
  /** per row: cost, or -1 when the filter drops it */
  costs: Float64Array;
  unpriced: string[];
}

/** Costs per row under `filter` (-1 = filtered out). */
export function prepare(ix: Index, table: PriceTable, zone: Zone, filter: Filter): Prepared {
  const a = ix.rows;
  const n = a.length / STRIDE;
  const costs = new Float64Array(n);
  const prices: (Price | undefined)[] = ix.models.map((m) => priceOf(table, m));
  const modelOk = ix.models.map((m) => !filter.models || filter.models.some((x) => m.toLowerCase().includes(x.toLowerCase())));
  const fileOk = ix.files.map((f) => !filter.agents || filter.agents.includes(f.agent));
  const byDate = filter.since !== undefined || filter.until !== undefined;
  const since = filter.since ?? Number.NEGATIVE_INFINITY;
  const until = filter.until ?? Number.POSITIVE_INFINITY;
  const unpriced = new Set<string>();
  for (let r = 0, i = 0; r < n; r++, i += STRIDE) {
    const file = a[i];
    const model = a[i + 2];
    if (file < 0 || !fileOk[file] || !modelOk[model]) {
      costs[r] = -1;
      continue;
    }
    if (byDate) {
      const day = zone.day(a[i + 1] * BUCKET_MS);
      if (day < since || day > until) {
        costs[r] = -1;
        continue;
      }
    }
    const price = prices[model];
    if (!price) {
      if (a[i + 4] + a[i + 5] + a[i + 6] + a[i + 7] + a[i + 8] > 0) unpriced.add(ix.models[model]);
      costs[r] = 0;
      continue;
    }
    const p = a[i + 3] === 1 && price.long ? price.long : price;
    costs[r] = (a[i + 4] * p.input + a[i + 5] * p.output + a[i + 6] * p.cacheRead + a[i + 7] * p.cacheWrite + a[i + 8] * p.input * 2) / 1e6;
  }
  return { costs, unpriced: [...unpriced].sort() };
}

interface Acc {
  key: string;
  sum: Sum;
  models: Map<number, ModelSum>;
  last: number;
}

/** Daily, weekly (ISO weeks, Monday first), monthly or per-session groups, oldest first. */
export function periods(ix: Index, p: Prepared, zone: Zone, period: Exclude<Period, "blocks">): Report {
  const a = ix.rows;
  const groups = new Map<string, Acc>();
  const totals = zero();
  const byBucket = new Map<number, Acc>();
  const byFile: (Acc | undefined)[] = [];
  const keyOfDay = new Map<number, string>();
  const acc = (key: string) => {
    let g = groups.get(key);
    if (!g) groups.set(key, (g = { key, sum: zero(), models: new Map(), last: 0 }));
    return g;
  };
  for (let r = 0, i = 0; r < p.costs.length; r++, i += STRIDE) {
    const cost = p.costs[r];
    if (cost < 0) continue;
    const fileIdx = a[i];
    const file = ix.files[fileIdx];
    let g: Acc | undefined;
    if (period === "session") {
      g = byFile[fileIdx];
      if (!g) byFile[fileIdx] = g = acc(`${file.agent}:${sessionName(file.path)}`);
    } else {
      const b = a[i + 1];
      g = byBucket.get(b);
      if (!g) {
        const day = zone.day(b * BUCKET_MS);
        let k = keyOfDay.get(day);
        if (k === undefined) {
          k = period === "daily" ? isoDay(day) : period === "monthly" ? isoDay(day).slice(0, 7) : isoDay(day - ((day + 3) % 7));
          keyOfDay.set(day, k);
        }
        g = acc(k);
        byBucket.set(b, g);
      }
    }
    const mk = (file.agent === "claude" ? 0 : 1) * 1e6 + a[i + 2];
    let ms = g.models.get(mk);
    if (!ms) g.models.set(mk, (ms = { agent: file.agent, model: ix.models[a[i + 2]], ...zero() }));
    addRow(g.sum, a, i, cost);
    addRow(ms, a, i, cost);
    addRow(totals, a, i, cost);
    if (a[i + 11] > g.last) g.last = a[i + 11];
  }
  const out: Group[] = [...groups.values()].map((g) => ({ key: g.key, sum: g.sum, models: [...g.models.values()].sort((x, y) => y.cost - x.cost || (x.model < y.model ? -1 : 1)), ...(period === "session" ? { last: g.last } : {}) }));
  out.sort((x, y) => (period === "session" ? (x.last ?? 0) - (y.last ?? 0) : x.key < y.key ? -1 : x.key > y.key ? 1 : 0));
  return { groups: out, totals, unpriced: p.unpriced };
}

export const BLOCK_MS = 5 * 3_600_000;

/**
 * 5-hour blocks as Claude's plan counts them: a block starts at the hour of its first entry and ends
 * five hours later; an entry after the end, or after five idle hours, starts the next. The index's
 * 15-minute buckets keep their first and last entry time, and block edges fall on bucket edges, so this
 * is exact. The active block (now inside it) gets burn rate and projection.
 */
export function blocks(ix: Index, p: Prepared, now: number): Report {
  const a = ix.rows;
  const order: number[] = [];
  for (let r = 0; r < p.costs.length; r++) if (p.costs[r] >= 0) order.push(r);
  order.sort((x, y) => a[x * STRIDE + 10] - a[y * STRIDE + 10]);
  const out: Group[] = [];
  const totals = zero();
  let g: Group | undefined;
  let models = new Map<string, ModelSum>();
  const close = () => {
    if (g) g.models = [...models.values()].sort((x, y) => y.cost - x.cost);
  };
  for (const r of order) {
    const i = r * STRIDE;
    const first = a[i + 10];
    if (!g || first >= g.end! || first - g.last! > BLOCK_MS) {
      close();
      const start = Math.floor(first / 3_600_000) * 3_600_000;
      g = { key: new Date(start).toISOString(), sum: zero(), models: [], start, end: start + BLOCK_MS, first, last: first };
      models = new Map();
      out.push(g);
    }
    const file = ix.files[a[i]];
    const model = ix.models[a[i + 2]];
    const mk = `${file.agent}\u0000${model}`;
    let ms = models.get(mk);
    if (!ms) models.set(mk, (ms = { agent: file.agent, model, ...zero() }));
    addRow(g.sum, a, i, p.costs[r]);
    addRow(ms, a, i, p.costs[r]);
    addRow(totals, a, i, p.costs[r]);
    if (a[i + 11] > g.last!) g.last = a[i + 11];
  }
  close();
  const last = out[out.length - 1];
  if (last && now < last.end! && now - last.last! < BLOCK_MS) {
    last.active = true;
    const minutes = Math.max(1, (Math.max(now, last.last!) - last.first!) / 60_000);
    const left = (last.end! - now) / 60_000;
    const tpm = last.sum.total / minutes;
    const cpm = last.sum.cost / minutes;
    last.burn = { tokensPerMinute: tpm, costPerHour: cpm * 60, projectedTokens: last.sum.total + tpm * left, projectedCost: last.sum.cost + cpm * left };
  }
  return { groups: out, totals, unpriced: p.unpriced };
}

/** Cost per agent between two instants (for quota projections and the statusline's cost today). */
export function costBetween(ix: Index, p: Prepared, from: number, to: number): Record<Agent, number> {
  const a = ix.rows;
  const out: Record<Agent, number> = { claude: 0, codex: 0 };
  for (let r = 0; r < p.costs.length; r++) {
    const i = r * STRIDE;
    if (p.costs[r] < 0 || a[i + 11] < from || a[i + 10] >= to) continue;
    out[ix.files[a[i]].agent] += p.costs[r];
  }
  return out;
}
