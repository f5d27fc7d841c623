// The TuiHost: everything the interactive UI needs from the rest of the tool (targets, cache, fetch,
// preferences, clipboard). The TUI itself never touches files or the network.
import { readCache, cachedResults } from "./cache";
import { copyToClipboard } from "../output/clipboard";
import { loadConfig, type Config } from "../config/config";
import type { Ctx } from "../core/context";
import { fetchTarget } from "./fetcher";
import * as prefs from "../config/preferences";
import { refreshWith, sparks, tryHistory } from "./refresh";
import type { Selector } from "../model/selectors";
import { resolveTargets, type ResolvedTarget } from "./targets";
import type { ProviderResult, Target, TuiHost } from "../model/types";
import { VERSION } from "../core/version";

export function createHost(ctx: Ctx, initial: Config, selectors?: Selector[]): TuiHost {
  let config = initial;
  const resolved = resolveTargets(ctx, config, selectors);
  const byKey = new Map(resolved.map((t) => [t.key, t]));
  // Cache writes from one process go one after another; across processes the lock file orders them.
  let chain: Promise<unknown> = Promise.resolve();
  const reload = () => {
    config = loadConfig(ctx).config;
  };
  return {
    version: VERSION,
    targets: (): Target[] => resolved.map(({ key, provider, profile, name }) => ({ key, provider, profile, name })),
    cached: () => {
      const keys = new Set(byKey.keys());
      return withSparks(ctx, cachedResults(readCache(ctx)).filter((r) => keys.has(`${r.provider}:${r.profile}`)));
    },
    async fetch(target: Target): Promise<ProviderResult> {
      const t: ResolvedTarget | undefined = byKey.get(target.key);
      if (!t) {
        return {
          provider: target.provider, profile: target.profile, name: target.name, status: "unavailable", plan: null, windows: [],
          message: `unknown target ${target.key}`, fetched_at: ctx.clock.now().toISOString(), cached_at: null, auth_source: null,
        };
      }
      const fresh = await fetchTarget(ctx, config, t, readCache(ctx).backoff?.[t.key]);
      const next = chain.then(() => refreshWith(ctx, config, [fresh], false)).then((r) => withSparks(ctx, r.results)[0], () => fresh);
      chain = next;
      return next;
    },
    tui: { ...config.tui },
    favoriteProviders: () => [...config.favorites],
    quotaPreferences: (provider: string) => {
      const p = config.quotaPreferences[provider];
      return { favorites: [...(p?.favorites ?? [])], hidden: [...(p?.hidden ?? [])] };
    },
    async setFavoriteProvider(provider, on) {
      await prefs.setFavoriteProvider(ctx, provider, on);
      reload();
    },
    async setQuotaPreference(provider, window, list, on) {
      await prefs.setQuotaPreference(ctx, provider, window, list, on);
      reload();
    },
    copyToSystemClipboard: (text) => copyToClipboard(text, ctx.env),
    usage: async () => (await import("../usage/summary")).usageSummary(ctx),
  };
}

/** Results with the history of their current windows (the detail view's sparklines). */
function withSparks(ctx: Ctx, results: ProviderResult[]): ProviderResult[] {
  const store = tryHistory(ctx);
  if (!store) return results;
  try {
    const now = ctx.clock.now().getTime();
    return results.map((r) => {
      const spark = sparks(store, r, now);
      return spark ? { ...r, spark } : r;
    });
  } catch {
    return results; // a busy history costs the sparklines, never the dashboard
  } finally {
    store.close();
  }
}
