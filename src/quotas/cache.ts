// cache.json: the last result per provider/profile. A network_error never replaces an older good
// result (it is kept and shown with its age); anything else, auth_required included, replaces it.
import { cacheDir, join, type Ctx } from "./context";
import { readText, readTextFast, withLock, writeAtomic } from "./files";
import type { ProviderResult } from "./types";

export interface CacheFile {
  version: 1;
  /** When a full refresh (all enabled providers) last finished; the statusline's staleness clock. */
  refreshed_at: string | null;
  results: Record<string, ProviderResult>;
  /** Provider/profile → ISO time before which it is not asked again (it answered 429). */
  backoff?: Record<string, string>;
}

// cache.json is read on every prompt, so it is checked by hand rather than with a schema library (whose
// first use costs more than the whole statusline); anything malformed is dropped, never trusted.
const isStr = (x: unknown): x is string => typeof x === "string";
const isNum = (x: unknown): x is number => typeof x === "number" && Number.isFinite(x);
const STATUSES = new Set(["available", "auth_required", "unavailable", "network_error"]);

function isWindow(x: unknown): boolean {
  const w = x as Record<string, unknown>;
  return (
    !!w && typeof w === "object" && isStr(w.window) && isNum(w.used) && isNum(w.limit) && isNum(w.remaining) && isStr(w.unit) &&
    (w.reset_at === null || isStr(w.reset_at)) && (w.period_seconds === null || isNum(w.period_seconds))
  );
}

export function isResult(x: unknown): x is ProviderResult {
  const r = x as Record<string, unknown>;
  return (
    !!r && typeof r === "object" && isStr(r.provider) && isStr(r.profile) && isStr(r.name) && STATUSES.has(r.status as string) &&
    (r.plan === null || isStr(r.plan)) && Array.isArray(r.windows) && r.windows.every(isWindow) && isStr(r.fetched_at) &&
    (r.cached_at === null || isStr(r.cached_at)) && (r.auth_source === null || isStr(r.auth_source))
  );
}

export const cachePath = (ctx: Ctx) => join(cacheDir(ctx), "cache.json");
const lockPath = (ctx: Ctx) => join(cacheDir(ctx), "cache.lock");

/** The cache, or an empty one when missing or unreadable (a broken cache is just a cold cache). */
export function readCache(ctx: Ctx): CacheFile {
  return parseCache(readText(cachePath(ctx)));
}

export async function readCacheFast(ctx: Ctx): Promise<CacheFile> {
  return parseCache(await readTextFast(cachePath(ctx)));
}

export function parseCache(text: string | undefined): CacheFile {
  const empty: CacheFile = { version: 1, refreshed_at: null, results: {} };
  if (!text) return empty;
  let data: Record<string, unknown>;
  try {
    data = JSON.parse(text);
  } catch {
    return empty;
  }
  if (!data || data.version !== 1 || !data.results || typeof data.results !== "object") return empty;
  const results: Record<string, ProviderResult> = {};
  for (const [key, r] of Object.entries(data.results as Record<string, unknown>)) if (isResult(r)) results[key] = r;
  const backoff: Record<string, string> = {};
  if (data.backoff && typeof data.backoff === "object") {
    for (const [key, until] of Object.entries(data.backoff as Record<string, unknown>)) if (isStr(until)) backoff[key] = until;
  }
  return { version: 1, refreshed_at: isStr(data.refreshed_at) ? data.refreshed_at : null, results, backoff };
}

export const resultKey = (r: Pick<ProviderResult, "provider" | "profile">) => `${r.provider}:${r.profile}`;

/** What the cache keeps for a key after a fresh result arrives. */
export function keep(old: ProviderResult | undefined, fresh: ProviderResult): ProviderResult {
  if (fresh.status === "network_error" && old && old.status === "available") return old;
  const { raw: _raw, retry_at: _retry, ...rest } = fresh;
  return { ...rest, cached_at: null };
}

/** What to show for a fresh result: a network_error with an older good result shows that one, aged. */
export function shown(old: ProviderResult | undefined, fresh: ProviderResult): ProviderResult {
  if (fresh.status === "network_error" && old && old.status === "available") {
    return { ...old, name: fresh.name, cached_at: old.fetched_at, message: `${fresh.message}; showing the result of ${old.fetched_at}`, ...(fresh.retry_at ? { retry_at: fresh.retry_at } : {}) };
  }
  return fresh;
}

/** Merges fresh results into cache.json under a lock, written atomically. Returns the shown results. */
export async function record(ctx: Ctx, fresh: ProviderResult[], fullRefresh: boolean): Promise<ProviderResult[]> {
  return withLock(lockPath(ctx), () => {
    const cache = readCache(ctx);
    const backoff = (cache.backoff ??= {});
    const out = fresh.map((r) => {
      const key = resultKey(r);
      const old = cache.results[key];
      cache.results[key] = keep(old, r);
      if (r.retry_at) backoff[key] = r.retry_at;
      else if (r.status !== "network_error") delete backoff[key];
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
