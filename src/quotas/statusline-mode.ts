// `--statusline` end to end, kept apart from the rest of the tool so a prompt loads only this: it reads
// cache.json (never the network), forks a detached refresh when the cache is stale, and returns.
import { spawnDetached } from "./background";
import { readCacheFast } from "./cache";
import { loadConfigFast } from "./config";
import { cacheDir, join, type Ctx } from "./context";
import { tryLock } from "./files";
import { identities } from "./names";
import { DEFAULT_FORMAT, statusline } from "./output/statusline";
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
  // Reads all three files at once. A config warning would end up in the prompt; --json reports it.
  const [{ config }, cache, state] = await Promise.all([loadConfigFast(ctx), readCacheFast(ctx), a.updateCheck ? readUpdateFast(ctx) : null]);
  const order = new Map(identities.map((p, i) => [p.id, i]));
  const results: ProviderResult[] = Object.values(cache.results)
    .filter((r) => (a.selectors ? selects(a.selectors, r.provider, r.profile) : enabled(config, r.provider, r.profile)))
    .sort(
      (x, y) =>
        (order.get(x.provider) ?? 99) - (order.get(y.provider) ?? 99) ||
        (x.profile === "default" ? -1 : y.profile === "default" ? 1 : x.profile.localeCompare(y.profile)),
    );
  const now = ctx.clock.now();
  const refreshed = cache.refreshed_at ? Date.parse(cache.refreshed_at) : Number.NaN;
  // One refresh at a time: the lock is released by the child when it is done (or goes stale).
  if (!(now.getTime() - refreshed <= STALE_MS) && tryLock(refreshLockPath(ctx), 2 * ctx.timeoutMs + 30_000)) {
    spawnDetached(["--refresh-cache"]);
  }
  let update: string | null = null;
  if (a.updateCheck) {
    update = availableUpdate(state);
    startUpdateCheck(ctx, state);
  }
  return statusline(results, {
    format: a.format ?? DEFAULT_FORMAT,
    icons: a.icons,
    now,
    hidden: (p) => config.quotaPreferences[p]?.hidden ?? [],
    update,
  });
}
