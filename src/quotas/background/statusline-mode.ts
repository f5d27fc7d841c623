// `--statusline` end to end, kept apart from the rest of the tool so a prompt loads only this: it reads
// cache.json (never the network), forks a detached refresh when the cache is stale, and returns.
import { spawnDetached } from "./spawn";
import { readCacheFast, STALE_MS } from "../fetch/cache";
import { cacheDir, join, type Ctx } from "../core/context";
import { readTextFast, tryLock } from "../core/files";
import { lineFromCache } from "../output/cached-line";
import { readCostToday, wantsCostToday } from "../output/cost-today";
import { DEFAULT_FORMAT } from "../output/statusline";
import { statuslineConfig } from "../config/statusline-config";
import type { Selector } from "../model/selectors";
import type { ProviderResult } from "../model/types";
import { availableUpdate, readUpdateFast, updateDue, type UpdateState } from "../fetch/update";

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
    writeStatuslines(ctx, (await import("../config/config")).loadConfig(ctx).config, cache);
  }
  let update: string | null = null;
  if (a.updateCheck) {
    update = availableUpdate(state);
    startUpdateCheck(ctx, state);
  }
  const format = a.format ?? DEFAULT_FORMAT;
  const costToday = wantsCostToday(format) ? readCostToday(ctx, now.getTime()) : null;
  return lineFromCache(config, cache, { selectors: a.selectors, format, icons: a.icons, update, now, costToday });
}

/**
 * `--provider=x:unknown` is a usage error here as with `--json` (exit 2 with the valid list). A profile
 * the cache knows is valid, so the everyday prompt pays nothing; only an unseen one loads discovery.
 */
async function checkProfiles(ctx: Ctx, selectors: Selector[], results: Record<string, ProviderResult>): Promise<void> {
  for (const s of selectors) {
    if (s.profile === undefined || results[`${s.provider}:${s.profile}`]) continue;
    const [{ resolveTargets }, { loadConfig }] = await Promise.all([import("../fetch/targets"), import("../config/config")]);
    resolveTargets(ctx, loadConfig(ctx).config, selectors); // throws UsageError for an unknown profile
    return;
  }
}
