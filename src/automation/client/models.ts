// The model catalog: every model the operator configured, with health from configuration (never a
// live probe, never a key).
import type { Transport } from "./transport";
import type { CatalogModel, ModelCapability } from "./types";

export class ModelsResource {
  constructor(private readonly http: Transport) {}

  /** The catalog, optionally only models with one capability. */
  async list(opts: { capability?: ModelCapability } = {}): Promise<CatalogModel[]> {
    return (await this.http.json<{ data: CatalogModel[] }>({ method: "GET", path: "/v1/models", query: { capability: opts.capability } })).data;
  }

  /** The providers behind the catalog, each with its models and whether it is configured. */
  async providers(): Promise<{ id: string; health: CatalogModel["health"]; models: string[] }[]> {
    const byId = new Map<string, { id: string; health: CatalogModel["health"]; models: string[] }>();
    for (const m of await this.list()) {
      const p = byId.get(m.provider) ?? { id: m.provider, health: m.health, models: [] };
      p.models.push(m.id);
      byId.set(m.provider, p);
    }
    return [...byId.values()];
  }
}
