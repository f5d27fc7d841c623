// Which provider/profiles to show: enabled providers × their profiles, narrowed by `--provider`.
import { UsageError } from "../kernel/errors";
import type { Config } from "./config";
import type { Ctx } from "./context";
import type { Place } from "./discovery/credentials";
import { profilesOf } from "./discovery/profiles";
import { lookup, providerNames, providers } from "./providers";
import type { ProviderDef } from "./providers/provider";
import type { Target } from "./types";

export interface ResolvedTarget extends Target {
  def: ProviderDef;
  place: Place;
}

export interface Selector {
  provider: string;
  profile?: string;
}

/** Parses `--provider=a,b:work`; unknown names are a usage error listing the valid ones. */
export function parseSelectors(value: string | undefined): Selector[] | undefined {
  if (value === undefined) return undefined;
  const items = value.split(",").map((s) => s.trim()).filter(Boolean);
  if (items.length === 0) throw new UsageError(`--provider needs at least one name (valid: ${providerNames.join(", ")})`);
  return items.map((item) => {
    const [name, profile, ...rest] = item.split(":");
    const def = lookup(name);
    if (!def) throw new UsageError(`unknown provider "${name}" (valid: ${providerNames.join(", ")})`);
    if (rest.length || profile === "") throw new UsageError(`bad provider "${item}": use name or name:profile`);
    return { provider: def.id, profile };
  });
}

export const keyOf = (provider: string, profile: string) => `${provider}:${profile}`;

export function enabled(config: Config, provider: string, profile?: string): boolean {
  const on = config.providers.enabled;
  const off = config.providers.disabled;
  const key = profile ? keyOf(provider, profile) : undefined;
  const listed = (list: string[]) => list.includes(provider) || (key !== undefined && list.includes(key));
  if (listed(off)) return false;
  return on.includes("*") || listed(on);
}

export function displayName(def: ProviderDef, profile: string, config: Config): string {
  return config.profiles.entries[keyOf(def.id, profile)]?.name ?? (profile === "default" ? def.name : `${def.name} (${profile})`);
}

/**
 * Targets in registry order. Without selectors: the config's enabled providers (profile entries with
 * `enabled = false` are gone already). With selectors: exactly those, even if the config disables them.
 */
export function resolveTargets(ctx: Ctx, config: Config, selectors?: Selector[]): ResolvedTarget[] {
  const out: ResolvedTarget[] = [];
  for (const def of providers) {
    const wanted = selectors?.filter((s) => s.provider === def.id);
    if (selectors && wanted!.length === 0) continue;
    if (!selectors && !enabled(config, def.id)) continue;
    const places = profilesOf(ctx, def, config);
    for (const place of places) {
      if (wanted && !wanted.some((s) => s.profile === undefined || s.profile === place.profile)) continue;
      if (!selectors && !enabled(config, def.id, place.profile)) continue;
      out.push({ key: keyOf(def.id, place.profile), provider: def.id, profile: place.profile, name: displayName(def, place.profile, config), def, place });
    }
    for (const s of wanted ?? []) {
      if (s.profile && !places.some((p) => p.profile === s.profile)) {
        throw new UsageError(`unknown profile "${def.id}:${s.profile}" (known: ${places.map((p) => keyOf(def.id, p.profile)).join(", ")})`);
      }
    }
  }
  return out;
}
