// Which provider/profiles to show: enabled providers × their profiles, narrowed by `--provider`.
import { UsageError } from "../../kernel/errors";
import type { Config } from "../config/config";
import type { Ctx } from "../core/context";
import type { Place } from "../discovery/credentials";
import { profilesOf } from "../discovery/profiles";
import { providers } from "../providers";
import type { ProviderDef } from "../providers/provider";
import { enabled, keyOf, type Selector } from "../model/selectors";
import type { Target } from "../model/types";

export interface ResolvedTarget extends Target {
  def: ProviderDef;
  place: Place;
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
