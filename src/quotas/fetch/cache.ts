// cache.json: the last result per provider/profile. A network_error never replaces an older good
// result (it is kept and shown with its age); anything else, auth_required included, replaces it.
import { cacheDir, join, type Ctx } from "../core/context";
import { readText, readTextFast, withLock, writeAtomic } from "../core/files";
import type { ProviderResult } from "../model/types";

export interface CacheFile {
  version: 1;
  /** When a full refresh (all enabled providers) last finished; the statusline's staleness clock. */
  refreshed_at: string | null;
  results: Record<string, ProviderResult>;
  /** Provider/profile → ISO time before which it is not asked again (it answered 429). */
  backoff?: Record<string, string>;
}

// cache.json is read on every prompt, so it is checked by hand rather than with a schema library (whose
// first use costs more than the whole statusline); anything malformed is dropped, never trusted. The
// checks are loops in one function on purpose: JSC compiles a function to machine code (starting a
// compiler thread) after ~30 calls, and a small helper called per field would cost each prompt ~1 ms.
const STATUSES = ["available", "auth_required", "unavailable", "network_error"];

export function isResult(x: unknown): x is ProviderResult {
  const r = x as Record<string, unknown>;
  if (
    !(!!r && typeof r === "object" && typeof r.provider === "string" && typeof r.profile === "string" && typeof r.name === "string" &&
      STATUSES.includes(r.status as string) && (r.plan === null || typeof r.plan === "string") && typeof r.fetched_at === "string" &&
      (r.cached_at === null || typeof r.cached_at === "string") && (r.auth_source === null || typeof r.auth_source === "string") &&
      Array.isArray(r.windows))
  ) {
    return false;
  }
  for (const w of r.windows as Record<string, unknown>[]) {
    const ok =
      !!w && typeof w === "object" && typeof w.window === "string" && typeof w.unit === "string" &&
      typeof w.used === "number" && Number.isFinite(w.used) && typeof w.limit === "number" && Number.isFinite(w.limit) &&
      typeof w.remaining === "number" && Number.isFinite(w.remaining) && (w.reset_at === null || typeof w.reset_at === "string") &&
      (w.period_seconds === null || (typeof w.period_seconds === "number" && Number.isFinite(w.period_seconds)));
    if (!ok) return false;
  }
  return true;
}

/** A cache older than this is refreshed in the background by the next prompt. */
export const STALE_MS = 30 * 60 * 1000;

export const cachePath = (ctx: Ctx) => join(cacheDir(ctx), "cache.json");
const lockPath = (ctx: Ctx) => join(cacheDir(ctx), "cache.lock");

/** The cache, or an empty one when missing or unreadable (a broken cache is just a cold cache). */
export function readCache(ctx: Ctx): CacheFile {
  return parseCache(readText(cachePath(ctx)));
}

/** readCache for the statusline (see readTextFast). */
export function readCacheFast(ctx: Ctx): CacheFile {
  return parseCache(readTextFast(cachePath(ctx)));
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
  const found = data.results as Record<string, unknown>;
  for (const key in found) if (isResult(found[key])) results[key] = found[key];
  const backoff: Record<string, string> = {};
  if (data.backoff && typeof data.backoff === "object") {
    const b = data.backoff as Record<string, unknown>;
    for (const key in b) if (typeof b[key] === "string") backoff[key] = b[key];
  }
  return { version: 1, refreshed_at: typeof data.refreshed_at === "string" ? data.refreshed_at : null, results, backoff };
}

export const resultKey = (r: Pick<ProviderResult, "provider" | "profile">) => `${r.provider}:${r.profile}`;

/** What the cache keeps for a key after a fresh result arrives. */
export function keep(old: ProviderResult | undefined, fresh: ProviderResult): ProviderResult {
  if (fresh.status === "network_error" && old && old.status === "available") return old;
  const { raw: _raw, retry_at: _retry, spark: _spark, ...rest } = fresh;
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
