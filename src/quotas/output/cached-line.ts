// The statusline for a cache.json: the prompt's `--statusline` and the pre-rendered files share it.
import type { Config } from "../config/defaults";
import type { CacheFile } from "../fetch/cache";
import { identities } from "../model/names";
import { enabled, selects, type Selector } from "../model/selectors";
import type { ProviderResult } from "../model/types";
import { statusline } from "./statusline";

export interface LineOptions {
  selectors?: Selector[];
  format: string;
  icons: boolean;
  update: string | null;
  now: Date;
  costToday?: Record<string, number> | null;
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
    costToday: o.costToday,
  });
}

function rank(provider: string): number {
  for (let i = 0; i < identities.length; i++) if (identities[i].id === provider) return i;
  return identities.length;
}
