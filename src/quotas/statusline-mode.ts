// `--statusline` end to end, kept apart from the rest of the tool so a prompt loads only this: it reads
// cache.json (never the network), forks a detached refresh when the cache is stale, and returns.
import { spawnDetached } from "./background";
import { readCacheFast, type CacheFile } from "./cache";
import type { Config } from "./config-defaults";
import { cacheDir, join, type Ctx } from "./context";
import { readTextFast, tryLock } from "./files";
import { identities } from "./names";
import { DEFAULT_FORMAT, statusline } from "./output/statusline";
import { statuslineConfig } from "./statusline-config";
import { enabled, selects, type Selector } from "./selectors";
import type { ProviderResult } from "./types";
import { availableUpdate, readUpdateFast, updateDue, type UpdateState } from "./update";

export const STALE_MS = 30 * 60 * 1000;
export const refreshLockPath = (ctx: Ctx) => join(cacheDir(ctx), "refresh.lock");
export const updateLockPath = (ctx: Ctx) => join(cacheDir(ctx), "update.lock");

export interface StatuslineArgs {
  selectors?: Selector[];
  format?: string;
  icons: boolean;
  updateCheck: boolean;
}

/** Starts the background version check when update.json is older than 24 h (one at a time). */
export function startUpdateCheck(ctx: Ctx, state: UpdateState | null): void {
  if (updateDue(ctx, state) && tryLock(updateLockPath(ctx), 60_000)) spawnDetached(["--refresh-update"]);
}

export async function runStatusline(ctx: Ctx, a: StatuslineArgs): Promise<string> {
  // Synchronous reads (see readTextFast). A config warning would end up in the prompt; --json reports it.
  const config = await statuslineConfig(ctx);
  const cache = readCacheFast(ctx);
  if (a.selectors) await checkProfiles(ctx, a.selectors, cache.results);
  const state = a.updateCheck ? readUpdateFast(ctx) : null;
  const now = ctx.clock.now();
  const refreshed = cache.refreshed_at ? Date.parse(cache.refreshed_at) : Number.NaN;
  // One refresh at a time: the lock is released by the child when it is done (or goes stale).
  if (!(now.getTime() - refreshed <= STALE_MS) && tryLock(refreshLockPath(ctx), 2 * ctx.timeoutMs + 30_000)) {
    spawnDetached(["--refresh-cache"]);
  } else if (readTextFast(join(cacheDir(ctx), "statusline.txt")) === undefined && Object.keys(cache.results).length) {
    // A fresh cache but no pre-rendered files yet (first run after an upgrade): write them now, once.
    const { writeStatuslines } = await import("./prerender");
    writeStatuslines(ctx, (await import("./config")).loadConfig(ctx).config, cache);
  }
  let update: string | null = null;
  if (a.updateCheck) {
    update = availableUpdate(state);
    startUpdateCheck(ctx, state);
  }
  return lineFromCache(config, cache, { selectors: a.selectors, format: a.format ?? DEFAULT_FORMAT, icons: a.icons, update, now });
}

export interface LineOptions {
  selectors?: Selector[];
  format: string;
  icons: boolean;
  update: string | null;
  now: Date;
}

/** The statusline for a cache: the prompt's `--statusline` and the pre-rendered files share it. */
export function lineFromCache(config: Config, cache: CacheFile, o: LineOptions): string {
  // Plain loops below, in this one function: an array builtin's first call (filter, sort, map) costs a
  // prompt ~0.1 ms, and JSC starts a compiler thread for any function called more than ~30 times.
  const results: ProviderResult[] = [];
  const order: string[] = []; // sort key per result: registry rank, then "" for the default profile
  for (const key in cache.results) {
    const r = cache.results[key];
    if (!(o.selectors ? selects(o.selectors, r.provider, r.profile) : enabled(config, r.provider, r.profile))) continue;
    // `[profiles.entries] name` applies at once, not only after the next refresh
    const name = config.profiles.entries[`${r.provider}:${r.profile}`]?.name;
    // plain string order, no localeCompare (its first call loads ICU: half a millisecond)
    const k = `${String.fromCharCode(65 + rank(r.provider))} ${r.profile === "default" ? "" : r.profile}`;
    let i = results.length;
    while (i > 0 && order[i - 1] > k) i--;
    results.splice(i, 0, name ? { ...r, name } : r);
    order.splice(i, 0, k);
  }
  return statusline(results, {
    format: o.format,
    icons: o.icons,
    now: o.now,
    hidden: (p) => config.quotaPreferences[p]?.hidden ?? [],
    update: o.update,
  });
}

/**
 * `--provider=x:unknown` is a usage error here as with `--json` (exit 2 with the valid list). A profile
 * the cache knows is valid, so the everyday prompt pays nothing; only an unseen one loads discovery.
 */
async function checkProfiles(ctx: Ctx, selectors: Selector[], results: Record<string, ProviderResult>): Promise<void> {
  for (const s of selectors) {
    if (s.profile === undefined || results[`${s.provider}:${s.profile}`]) continue;
    const [{ resolveTargets }, { loadConfig }] = await Promise.all([import("./targets"), import("./config")]);
    resolveTargets(ctx, loadConfig(ctx).config, selectors); // throws UsageError for an unknown profile
    return;
  }
}

function rank(provider: string): number {
  for (let i = 0; i < identities.length; i++) if (identities[i].id === provider) return i;
  return identities.length;
}
