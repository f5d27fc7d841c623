// The model catalog (`GET /v1/models`): every model the operator configured, with health taken from
// local configuration only (a provider that needs a key and has none is `unconfigured`). Never probes
// the provider and never includes a key.
import type { ModelsConfig } from "./config";
import type { ModelCapability } from "./contract";

/** One model of `GET /v1/models` (the wire type the client returns too). */
export interface CatalogEntry {
  /** `provider/model`, as steps name it. */
  id: string;
  provider: string;
  capabilities: ModelCapability[];
  /** `unconfigured`: the provider needs a key the server does not have. */
  health: "configured" | "unconfigured";
  /** Capabilities this model is the server's default for. */
  defaultFor: ModelCapability[];
}

export function catalog(config: ModelsConfig | undefined, capability?: ModelCapability): CatalogEntry[] {
  if (!config) return [];
  const entries = new Map<string, CatalogEntry>();
  for (const p of config.providers) {
    const health = !p.keyRequired || config.keys.has(p.id) ? "configured" : "unconfigured";
    for (const m of p.models) {
      entries.set(`${p.id}/${m.name}`, { id: `${p.id}/${m.name}`, provider: p.id, capabilities: [...m.capabilities], health, defaultFor: [] });
    }
  }
  for (const [cap, id] of Object.entries(config.defaults) as [ModelCapability, string][]) {
    let entry = entries.get(id);
    // A default the operator did not list under its provider is still a model the server uses.
    if (!entry) {
      const provider = config.providers.find((p) => p.id === id.split("/")[0])!;
      const health = !provider.keyRequired || config.keys.has(provider.id) ? "configured" : "unconfigured";
      entry = { id, provider: provider.id, capabilities: [], health, defaultFor: [] };
      entries.set(id, entry);
    }
    entry.defaultFor.push(cap);
    if (!entry.capabilities.includes(cap)) entry.capabilities.push(cap);
  }
  const all = [...entries.values()];
  return capability ? all.filter((e) => e.capabilities.includes(capability)) : all;
}
