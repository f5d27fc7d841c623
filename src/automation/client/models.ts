// The model catalog: every model the operator configured, with health from configuration (never a
// live probe, never a key).
import type { Transport } from "./transport";

export type ModelCapability = "text" | "vision" | "ocr";

export interface CatalogModel {
  /** `provider/model`, as steps name it. */
  id: string;
  provider: string;
  capabilities: ModelCapability[];
  /** `unconfigured`: the provider needs a key the server does not have. */
  health: "configured" | "unconfigured";
  /** Capabilities this model is the server's default for. */
  defaultFor: ModelCapability[];
}

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
