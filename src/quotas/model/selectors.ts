// `--provider` selectors and the config's enabled/disabled rules: names only, no provider code.
import { UsageError } from "../../kernel/errors";
import type { Config } from "../config/config";
import { identify, providerNames } from "./names";

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
    const p = identify(name);
    if (!p) throw new UsageError(`unknown provider "${name}" (valid: ${providerNames.join(", ")})`);
    if (rest.length || profile === "") throw new UsageError(`bad provider "${item}": use name or name:profile`);
    return { provider: p.id, profile };
  });
}

export const keyOf = (provider: string, profile: string) => `${provider}:${profile}`;

export function selects(selectors: Selector[], provider: string, profile: string): boolean {
  for (const s of selectors) if (s.provider === provider && (s.profile === undefined || s.profile === profile)) return true;
  return false;
}

/** `[providers] enabled/disabled` (names or provider:profile keys) and `[profiles.entries] enabled`. */
export function enabled(config: Config, provider: string, profile?: string): boolean {
  const key = profile ? keyOf(provider, profile) : undefined;
  const listed = (list: string[]) => list.includes(provider) || (key !== undefined && list.includes(key));
  if (listed(config.providers.disabled)) return false;
  if (key && config.profiles.entries[key]?.enabled === false) return false;
  return config.providers.enabled.includes("*") || listed(config.providers.enabled);
}
