// `quotas usage [daily|weekly|monthly|session|blocks]`: tokens and cost from the coding agents' local
// logs, through the incremental index. Also the `cost today` figures the statusline pre-renders.
import { helpText, parseFlags, type FlagSpec } from "../../kernel/config";
import { FatalError, UsageError } from "../../kernel/errors";
import { cacheDir, join, type Ctx } from "../core/context";
import type { Io } from "../core/io";
import { readText, writeAtomic } from "../core/files";
import { readCache } from "../fetch/cache";
import { loadConfig } from "../config/config";
import { usesCostToday, writeStatuslines } from "../background/prerender";
import { costTodayPath } from "../output/cost-today";
import { EMBEDDED, LITELLM_URL, parseTable, type PriceTable } from "./pricing";
import { blocks, BLOCK_MS, costBetween, PERIODS, periods, prepare, type Filter, type Period, type Prepared, type Report } from "./report";
import { toCsv, toJson, toText, usd, type Meta } from "./render";
import { AGENTS, type Agent } from "./sources";
import { updateIndex, type Index } from "./store";
import { checkZone, parseDay, systemZone, Zone } from "./tz";

export const usageFlags = {
  since: { type: "string", value: "DATE", help: "from this day on (YYYY-MM-DD or YYYYMMDD, in --timezone)" },
  until: { type: "string", value: "DATE", help: "up to and including this day" },
  agent: { type: "string", value: "NAMES", help: `only these agents, comma-separated (${AGENTS.join(", ")})` },
  model: { type: "string", value: "NAMES", help: "only models whose name contains one of these, comma-separated" },
  json: { type: "boolean", help: "print JSON" },
  csv: { type: "boolean", help: "print CSV: one line per period, agent and model" },
  timezone: { type: "string", value: "ZONE", help: "IANA time zone for days, weeks and months (default: the system's, or $TZ)" },
  pricing: { type: "string", value: "FILE", help: "prices from this JSON file (our shape or LiteLLM's) instead of the embedded table" },
  "refresh-pricing": { type: "boolean", help: `download LiteLLM's price list (${LITELLM_URL}) into the cache, used from then on` },
  help: { type: "boolean", short: "h", help: "show this help" },
} satisfies Record<string, FlagSpec>;

const USAGE = `quotas usage: tokens and cost from the coding agents' local logs (Claude Code, Codex CLI)

Usage:
  quotas usage [daily|weekly|monthly|session|blocks] [--since=DATE] [--until=DATE]
               [--agent=claude,codex] [--model=NAMES] [--json|--csv] [--timezone=ZONE]
               [--pricing=FILE] [--refresh-pricing]`;

const EXTRA = `Logs: $CLAUDE_CONFIG_DIR (comma-separated) or ~/.config/claude and ~/.claude: projects/**/*.jsonl;
      $CODEX_HOME or ~/.codex: sessions/** and archived_sessions/**
Index: $XDG_CACHE_HOME/quotas/usage/ (a second run reads only what was appended)
Prices: embedded table dated ${EMBEDDED.date}; no network call unless --refresh-pricing

Examples:
  quotas usage                         today and the days before, per day
  quotas usage blocks                  5-hour windows; the active one with burn rate and projection
  quotas usage monthly --agent=codex --json
  quotas usage daily --since=2025-10-01 --timezone=Europe/Berlin --csv`;

export const usageHelp = () => helpText(USAGE, usageFlags, EXTRA);

const pricingCache = (ctx: Ctx) => join(cacheDir(ctx), "pricing.json");

/** --pricing FILE, else a refreshed list in the cache, else the embedded table. */
export function loadPricing(ctx: Ctx, file?: string): PriceTable {
  if (file) {
    const text = readText(file);
    if (text === undefined) throw new FatalError(`--pricing: cannot read ${file}`);
    try {
      return parseTable(text, file);
    } catch (err) {
      throw new FatalError(`--pricing: ${(err as Error).message}`);
    }
  }
  const cached = readText(pricingCache(ctx));
  if (cached) {
    try {
      const t = parseTable(cached, "LiteLLM (refreshed)");
      const date = /"quotas_fetched_at":\s*"([^"]+)"/.exec(cached)?.[1] ?? "";
      return { ...t, source: `LiteLLM, refreshed with --refresh-pricing`, date: date.slice(0, 10) };
    } catch {}
  }
  return EMBEDDED;
}

async function refreshPricing(ctx: Ctx, io: Io): Promise<void> {
  const url = ctx.env.QUOTAS_PRICING_URL || LITELLM_URL;
  let text: string;
  try {
    const r = await fetch(url, { signal: AbortSignal.timeout(ctx.timeoutMs * 3) });
    if (!r.ok) throw new Error(`HTTP ${r.status}`);
    text = await r.text();
  } catch (err) {
    throw new FatalError(`--refresh-pricing: ${url}: ${(err as Error).message}`);
  }
  let table: PriceTable;
  try {
    table = parseTable(text, url);
  } catch (err) {
    throw new FatalError(`--refresh-pricing: ${(err as Error).message}`);
  }
  const json = JSON.parse(text) as Record<string, unknown>;
  json.quotas_fetched_at = ctx.clock.now().toISOString();
  writeAtomic(pricingCache(ctx), JSON.stringify(json));
  io.err(`quotas: prices for ${Object.keys(table.models).length} models saved to ${pricingCache(ctx)}\n`);
}

function list(s: string | undefined): string[] | undefined {
  const xs = s?.split(",").map((x) => x.trim()).filter(Boolean);
  return xs?.length ? xs : undefined;
}

function day(flag: string, s: string | undefined): number | undefined {
  if (s === undefined) return undefined;
  const d = parseDay(s);
  if (Number.isNaN(d)) throw new UsageError(`--${flag} must be a date like 2025-10-12 (got "${s}")`);
  return d;
}

/** The zone for days: --timezone, else $TZ, else the system's. */
function zoneOf(ctx: Ctx, flag: string | undefined): Zone {
  const name = flag ?? ctx.env.TZ ?? systemZone();
  if (!checkZone(name)) {
    if (flag !== undefined) throw new UsageError(`--timezone: unknown time zone "${flag}"`);
    return new Zone("UTC");
  }
  return new Zone(name);
}

/** "claude 5h window: 42% used …; at this rate it runs out at 16:40": the plan quota that quotas fetched, with the logs' burn rate. */
export function quotaLines(ctx: Ctx, ix: Index, p: Prepared, zone: Zone, now: number): string[] {
  const out: string[] = [];
  const results = readCache(ctx).results;
  const hhmm = (ms: number) => new Date(ms + zone.offset(ms)).toISOString().slice(11, 16);
  for (const agent of AGENTS) {
    const r = results[`${agent}:default`];
    const w = r?.status === "available" ? r.windows.find((x) => x.window === "5h") : undefined;
    if (!w || !w.reset_at || !(w.limit > 0)) continue;
    const reset = Date.parse(w.reset_at);
    const fetched = Date.parse(r!.fetched_at);
    if (!(reset > now) || Number.isNaN(fetched)) continue;
    const start = reset - BLOCK_MS;
    const spentAtFetch = costBetween(ix, p, start, fetched)[agent];
    const spentNow = costBetween(ix, p, start, now + 1)[agent];
    const used = (w.used / w.limit) * 100;
    let line = `${agent} 5h window: ${Math.round(used)}% used at ${hhmm(fetched)}, ${usd(spentNow)} spent in it so far, resets ${hhmm(reset)}`;
    if (used > 0 && spentAtFetch > 0) {
      const pctPerUsd = used / spentAtFetch;
      const usedNow = Math.min(100, spentNow * pctPerUsd);
      // burn rate over the last hour of the window (or what there is of it)
      const from = Math.max(start, now - 3_600_000);
      const rate = costBetween(ix, p, from, now + 1)[agent] / Math.max(1, (now - from) / 60_000); // $ per minute
      if (rate > 0) {
        const at = now + ((100 - usedNow) / pctPerUsd / rate) * 60_000;
        line += at < reset ? `; at this rate it runs out at ${hhmm(at)}` : `; at this rate it lasts until the reset (about ${Math.round(usedNow + (rate * (reset - now)) / 60_000 * pctPerUsd)}% by then)`;
      }
    }
    out.push(line);
  }
  return out;
}

/** Writes usage-today.json (cost per agent since local midnight) for the pre-rendered statusline. */
export function writeToday(ctx: Ctx, ix: Index, table: PriceTable): void {
  const zone = zoneOf(ctx, undefined);
  const now = ctx.clock.now().getTime();
  const today = zone.day(now);
  const p = prepare(ix, table, zone, { since: today, until: today });
  const byAgent = costBetween(ix, p, 0, Number.MAX_SAFE_INTEGER);
  try {
    const day = new Date(today * 86_400_000).toISOString().slice(0, 10);
    writeAtomic(costTodayPath(ctx), JSON.stringify({ day, valid_until: zone.dayStart(today + 1), computed_at: new Date(now).toISOString(), cost_usd: byAgent }) + "\n");
  } catch {}
}

/** Updates the index and usage-today.json: what the background refresh runs when a statusline wants {cost_today}. */
export async function refreshToday(ctx: Ctx): Promise<void> {
  writeToday(ctx, await updateIndex(ctx), loadPricing(ctx));
}

export async function runUsage(ctx: Ctx, argv: string[], io: Io): Promise<number> {
  const { values: f, positionals } = parseFlags(argv, usageFlags, {});
  if (f.help) {
    io.out(usageHelp());
    return 0;
  }
  if (positionals.length > 1) throw new UsageError(`unexpected argument "${positionals[1]}"`);
  const period = (positionals[0] ?? "daily") as Period;
  if (!PERIODS.includes(period)) throw new UsageError(`unknown report "${positionals[0]}" (reports: ${PERIODS.join(", ")})`);
  if (f.json && f.csv) throw new UsageError("--json and --csv cannot be combined");
  const agents = list(f.agent);
  for (const a of agents ?? []) if (!(AGENTS as readonly string[]).includes(a)) throw new UsageError(`unknown agent "${a}" (agents: ${AGENTS.join(", ")})`);
  const zone = zoneOf(ctx, f.timezone);
  const filter: Filter = { since: day("since", f.since), until: day("until", f.until), agents: agents as Agent[] | undefined, models: list(f.model) };
  if (f["refresh-pricing"]) await refreshPricing(ctx, io);
  const table = loadPricing(ctx, f.pricing);
  const ix = await updateIndex(ctx);
  const now = ctx.clock.now().getTime();
  const p = prepare(ix, table, zone, filter);
  const report: Report = period === "blocks" ? blocks(ix, p, now) : periods(ix, p, zone, period);
  if (!f.pricing) {
    writeToday(ctx, ix, table);
    // the pre-rendered prompt lines show {cost_today}: bring them up to date with it
    const { config } = loadConfig(ctx);
    const cache = readCache(ctx);
    if (usesCostToday(config) && Object.keys(cache.results).length) writeStatuslines(ctx, config, cache);
  }
  const meta: Meta = {
    period,
    timezone: zone.name,
    pricing: { source: table.source, date: table.date },
    malformed: ix.files.reduce((n, x) => n + x.malformed, 0),
    duplicates: ix.files.reduce((n, x) => n + x.duplicates, 0),
    files: ix.files.length,
    index: { bytes_read: ix.stats.bytesRead, files_read: ix.stats.filesRead, rebuilt: ix.stats.rebuilt },
    quota: period === "blocks" ? quotaLines(ctx, ix, prepare(ix, table, zone, { agents: filter.agents }), zone, now) : [],
  };
  io.out(f.json ? toJson(report, meta) + "\n" : f.csv ? toCsv(report, meta) : toText(report, meta, zone.offset(now)));
  return 0;
}
