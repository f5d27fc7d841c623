// Tenants and API keys on SQLite (db/automation/0000_foundation.sql). The key lookup every request
// makes is one statement prepared once per connection (the key's hash index and the tenant's primary
// key), and its answer is kept in memory while the database's data version stands: our own connection
// changes keys only through this store (which forgets or updates what it kept), and a commit by any
// other connection (the CLI revoking a key, another server on the same file) moves `PRAGMA
// data_version`, read at most once per event-loop turn (src/kernel/data-version.ts). Writes that check
// first run in IMMEDIATE transactions.
import type { Database, Statement } from "bun:sqlite";
import { DataVersion } from "../../../kernel/data-version";
import type { ApiKeyRow, TenantRow } from "../tables/foundation";
import type { TenancyStore } from "../../tenancy/store";

const TENANT = "id, slug, name, created_at AS createdAt";
const KEY = "id, tenant_id AS tenantId, name, hash, hint, scopes, created_at AS createdAt, last_used_at AS lastUsedAt, revoked_at AS revokedAt";

type AuthRow = ApiKeyRow & { tSlug: string | null; tName: string; tCreatedAt: string };
type Authenticated = { key: ApiKeyRow; tenant: TenantRow };

/** Keys remembered at most; past it the memory starts over. */
const KEY_CACHE_MAX = 10_000;

export class SqliteTenancyStore implements TenancyStore {
  private readonly byHash: Statement<AuthRow, [string]>;
  private readonly touch: Statement<unknown, [string, string]>;
  private readonly version: DataVersion;
  /** Live keys by hash, with the data version they were read at. */
  private readonly cache = new Map<string, { version: number; found: Authenticated }>();

  constructor(readonly sqlite: Database) {
    this.version = new DataVersion(sqlite);
    this.byHash = sqlite.prepare<AuthRow, [string]>(
      // Scalar subqueries, not a JOIN: bun:sqlite runs this shape ~10x faster (1.5 µs against 17 µs measured).
      `SELECT k.id, k.tenant_id AS tenantId, k.name, k.hash, k.hint, k.scopes, k.created_at AS createdAt, k.last_used_at AS lastUsedAt, k.revoked_at AS revokedAt,
         (SELECT slug FROM tenants WHERE id = k.tenant_id) AS tSlug, (SELECT name FROM tenants WHERE id = k.tenant_id) AS tName,
         (SELECT created_at FROM tenants WHERE id = k.tenant_id) AS tCreatedAt
       FROM api_keys k WHERE k.hash = ? AND k.revoked_at IS NULL`,
    );
    this.touch = sqlite.prepare("UPDATE api_keys SET last_used_at = ? WHERE id = ?");
  }

  private tenant(ref: string): TenantRow | undefined {
    return this.sqlite.query<TenantRow, [string]>(`SELECT ${TENANT} FROM tenants WHERE id = ?1 OR slug = ?1 LIMIT 1`).get(ref) ?? undefined;
  }

  private key(id: string): ApiKeyRow | undefined {
    return this.sqlite.query<ApiKeyRow, [string]>(`SELECT ${KEY} FROM api_keys WHERE id = ?`).get(id) ?? undefined;
  }

  private insertKey(k: ApiKeyRow): void {
    this.sqlite
      .query("INSERT INTO api_keys (id, tenant_id, name, hash, hint, scopes, created_at, last_used_at, revoked_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)")
      .run(k.id, k.tenantId, k.name, k.hash, k.hint, k.scopes, k.createdAt, k.lastUsedAt, k.revokedAt);
  }

  async createTenant(t: TenantRow, firstKey: ApiKeyRow): Promise<"ok" | "slug_taken"> {
    return this.sqlite.transaction(() => {
      if (this.tenant(t.slug)) return "slug_taken" as const;
      this.sqlite.query("INSERT INTO tenants (id, slug, name, created_at) VALUES (?, ?, ?, ?)").run(t.id, t.slug, t.name, t.createdAt);
      this.insertKey(firstKey);
      return "ok" as const;
    }).immediate();
  }

  async findTenant(ref: string): Promise<TenantRow | undefined> {
    return this.tenant(ref);
  }

  async addKey(tenantRef: string, key: Omit<ApiKeyRow, "tenantId">): Promise<ApiKeyRow | undefined> {
    return this.sqlite.transaction(() => {
      const t = this.tenant(tenantRef);
      if (!t) return undefined;
      const row = { ...key, tenantId: t.id };
      this.insertKey(row);
      return row;
    }).immediate();
  }

  async keys(tenantId: string): Promise<ApiKeyRow[]> {
    return this.sqlite.query<ApiKeyRow, [string]>(`SELECT ${KEY} FROM api_keys WHERE tenant_id = ? ORDER BY id`).all(tenantId);
  }

  async revokeKey(id: string, at: string): Promise<ApiKeyRow | undefined> {
    this.cache.clear();
    this.sqlite.query("UPDATE api_keys SET revoked_at = ? WHERE id = ? AND revoked_at IS NULL").run(at, id);
    return this.key(id);
  }

  async authenticate(hash: string): Promise<Authenticated | undefined> {
    const version = this.version.current();
    const hit = this.cache.get(hash);
    if (hit?.version === version) return hit.found;
    const r = this.byHash.get(hash);
    if (!r || r.tSlug === null) return undefined;
    const { tSlug, tName, tCreatedAt, ...key } = r;
    const found = { key, tenant: { id: key.tenantId, slug: tSlug, name: tName, createdAt: tCreatedAt } };
    if (this.cache.size >= KEY_CACHE_MAX) this.cache.clear();
    this.cache.set(hash, { version, found });
    return found;
  }

  async touchKey(id: string, at: string): Promise<void> {
    this.touch.run(at, id);
    // The remembered row follows (our own write does not move the data version).
    for (const e of this.cache.values()) if (e.found.key.id === id) e.found.key.lastUsedAt = at;
  }
}
