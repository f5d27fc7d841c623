// cache.json: the last result per provider/profile. A network_error never replaces an older good
// result (it is kept and shown with its age); anything else, auth_required included, replaces it.
import { join } from "node:path";
import * as v from "valibot";
import { cacheDir, type Ctx } from "./context";
import { readText, withLock, writeAtomic } from "./files";
import type { ProviderResult } from "./types";

export interface CacheFile {
  version: 1;
  /** When a full refresh (all enabled providers) last finished; the statusline's staleness clock. */
  refreshed_at: string | null;
  results: Record<string, ProviderResult>;
}

const Result = v.looseObject({
  provider: v.string(),
  profile: v.string(),
  name: v.string(),
  status: v.picklist(["available", "auth_required", "unavailable", "network_error"]),
  plan: v.nullable(v.string()),
  windows: v.array(
    v.looseObject({
      window: v.string(),
      used: v.number(),
      limit: v.number(),
      remaining: v.number(),
      unit: v.string(),
      reset_at: v.nullable(v.string()),
      period_seconds: v.nullable(v.number()),
    }),
  ),
  fetched_at: v.string(),
  cached_at: v.nullable(v.string()),
  auth_source: v.nullable(v.string()),
});
const File = v.object({ version: v.literal(1), refreshed_at: v.nullable(v.string()), results: v.record(v.string(), Result) });

export const cachePath = (ctx: Ctx) => join(cacheDir(ctx), "cache.json");
const lockPath = (ctx: Ctx) => join(cacheDir(ctx), "cache.lock");

/** The cache, or an empty one when missing or unreadable (a broken cache is just a cold cache). */
export function readCache(ctx: Ctx): CacheFile {
  const text = readText(cachePath(ctx));
  if (text) {
    try {
      const r = v.safeParse(File, JSON.parse(text));
      if (r.success) return r.output as CacheFile;
    } catch {}
  }
  return { version: 1, refreshed_at: null, results: {} };
}

export const resultKey = (r: Pick<ProviderResult, "provider" | "profile">) => `${r.provider}:${r.profile}`;

/** What the cache keeps for a key after a fresh result arrives. */
export function keep(old: ProviderResult | undefined, fresh: ProviderResult): ProviderResult {
  if (fresh.status === "network_error" && old && old.status === "available") return old;
  const { raw: _raw, ...rest } = fresh;
  return { ...rest, cached_at: null };
}

/** What to show for a fresh result: a network_error with an older good result shows that one, aged. */
export function shown(old: ProviderResult | undefined, fresh: ProviderResult): ProviderResult {
  if (fresh.status === "network_error" && old && old.status === "available") {
    return { ...old, name: fresh.name, cached_at: old.fetched_at, message: `${fresh.message}; showing the result of ${old.fetched_at}` };
  }
  return fresh;
}

/** Merges fresh results into cache.json under a lock, written atomically. Returns the shown results. */
export async function record(ctx: Ctx, fresh: ProviderResult[], fullRefresh: boolean): Promise<ProviderResult[]> {
  return withLock(lockPath(ctx), () => {
    const cache = readCache(ctx);
    const out = fresh.map((r) => {
      const old = cache.results[resultKey(r)];
      cache.results[resultKey(r)] = keep(old, r);
      return shown(old, r);
    });
    if (fullRefresh) cache.refreshed_at = ctx.clock.now().toISOString();
    try {
      writeAtomic(cachePath(ctx), JSON.stringify(cache, null, 1) + "\n");
    } catch {
      // a read-only cache directory must not break the output
    }
    return out;
  });
}

/** Cached results as the UI shows them: `cached_at` says they come from the cache. */
export function cachedResults(cache: CacheFile): ProviderResult[] {
  return Object.values(cache.results).map((r) => ({ ...r, cached_at: r.cached_at ?? r.fetched_at }));
}
