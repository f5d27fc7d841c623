// What every refresh does with fresh results, whoever asked (--json, the prompt's background refresh,
// the daemon, the dashboard): append them to the history, attach each window's pace, merge them into
// cache.json, rewrite the pre-rendered statusline files, and decide the threshold alerts.
import { checkAlerts, notify, type Alert } from "../model/alerts";
import { readCache, record } from "./cache";
import type { Config } from "../config/defaults";
import type { Ctx } from "../core/context";
import { historyPath, openHistory, type HistoryStore } from "./history";
import { lookbackMs, pace, sampleOf, sparkValues } from "../model/pace";
import { writeStatuslines } from "../background/prerender";
import type { ProviderResult } from "../model/types";

export interface Refreshed {
  results: ProviderResult[];
  alerts: Alert[];
}

/** Opens history.db; undefined when it cannot be opened (read-only disk): the rest still works. */
export function tryHistory(ctx: Ctx): HistoryStore | undefined {
  try {
    return openHistory(historyPath(ctx));
  } catch {
    return undefined;
  }
}

function safely<T>(fn: () => T, fallback: T): T {
  try {
    return fn();
  } catch {
    return fallback;
  }
}

/** How far back a window's history is read: its period (the current window) plus a margin. */
const horizonMs = (periodSeconds: number | null) => Math.max((periodSeconds ?? 0) * 1000, lookbackMs(periodSeconds)) + 3_600_000;

/** Appends the available results to the history and returns them with `pace` on every window. */
export function withPace(store: HistoryStore | undefined, fresh: ProviderResult[], now: number): ProviderResult[] {
  return fresh.map((r) => {
    if (r.status !== "available") return r;
    const key = `${r.provider}:${r.profile}`;
    const at = Date.parse(r.fetched_at) || now;
    if (!store) return { ...r, windows: r.windows.map((w) => ({ ...w, pace: null })) };
    try {
      const current = r.windows.map((w) => ({ window: w.window, sample: sampleOf(w, at) }));
      // Stored samples of earlier minutes; this minute's (stored rounded) is the exact current one.
      const minute = Math.floor(at / 60_000) * 60_000;
      const before = r.windows.map((w) => store.samples(key, w.window, at - horizonMs(w.period_seconds)).filter((s) => s.t < minute));
      store.append(key, current, at);
      return { ...r, windows: r.windows.map((w, i) => ({ ...w, pace: pace([...before[i], current[i].sample], w.period_seconds) })) };
    } catch {
      // history is an extra: a database busy beyond its timeout costs this sample, never the refresh
      return { ...r, windows: r.windows.map((w) => ({ ...w, pace: null })) };
    }
  });
}

/** The current window's sparkline values per window name, for the dashboard's detail view. */
export function sparks(store: HistoryStore | undefined, r: ProviderResult, now: number): Record<string, number[]> | undefined {
  if (!store || r.status !== "available") return undefined;
  const key = `${r.provider}:${r.profile}`;
  const out: Record<string, number[]> = {};
  for (const w of r.windows) out[w.window] = sparkValues(store.samples(key, w.window, now - horizonMs(w.period_seconds)), w.period_seconds);
  return out;
}

/**
 * The whole refresh step. `fullRefresh`: every enabled provider was asked (the statusline's staleness
 * clock restarts). Desktop notifications are sent here when `[alerts] notify`; callers print the
 * alerts where they have a place for them (stderr of --json).
 */
export async function refreshWith(ctx: Ctx, config: Config, fresh: ProviderResult[], fullRefresh: boolean): Promise<Refreshed> {
  const store = tryHistory(ctx);
  try {
    const now = ctx.clock.now().getTime();
    const paced = store ? safely(() => store.batch(() => withPace(store, fresh, now)), withPace(undefined, fresh, now)) : withPace(undefined, fresh, now);
    const results = await record(ctx, paced, fullRefresh);
    writeStatuslines(ctx, config, readCache(ctx));
    const alerts = store ? paced.flatMap((r) => safely(() => checkAlerts(store, r, config.alerts.thresholds), [])) : [];
    if (config.alerts.notify) await notify(alerts, ctx.env);
    return { results, alerts };
  } finally {
    store?.close();
  }
}
