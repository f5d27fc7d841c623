// `--statusline` end to end, kept apart from the rest of the tool so a prompt loads only this: it reads
// cache.json (never the network), forks a detached refresh when the cache is stale, and returns.
import { spawnDetached } from "./background";
import { readCacheFast } from "./cache";
import { cacheDir, join, type Ctx } from "./context";
import { tryLock } from "./files";
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
  const state = a.updateCheck ? readUpdateFast(ctx) : null;
  // Plain loops below: each array builtin's first call (filter, sort, map) costs a prompt ~0.1 ms.
  const results: ProviderResult[] = [];
  for (const key in cache.results) {
    const r = cache.results[key];
    if (!(a.selectors ? selects(a.selectors, r.provider, r.profile) : enabled(config, r.provider, r.profile))) continue;
    // `[profiles.entries] name` applies at once, not only after the next refresh
    const name = config.profiles.entries[`${r.provider}:${r.profile}`]?.name;
    insertSorted(results, name ? { ...r, name } : r);
  }
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

const rank = (provider: string) => {
  for (let i = 0; i < identities.length; i++) if (identities[i].id === provider) return i;
  return identities.length;
};

/** Registry order, then the default profile, then profile names (no localeCompare: it loads ICU). */
function before(x: ProviderResult, y: ProviderResult): boolean {
  const d = rank(x.provider) - rank(y.provider);
  if (d !== 0) return d < 0;
  if (x.profile === "default" || y.profile === "default") return x.profile === "default" && y.profile !== "default";
  return x.profile < y.profile;
}

function insertSorted(list: ProviderResult[], r: ProviderResult): void {
  let i = list.length;
  while (i > 0 && before(r, list[i - 1])) i--;
  list.splice(i, 0, r);
}
