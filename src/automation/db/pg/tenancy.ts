// Tenants and API keys on PostgreSQL. A slug taken is the unique index's answer; the key lookup every
// request makes is one query (api_keys_hash_unique, then the tenant's primary key).
import type { ApiKeyRow, TenantRow } from "../tables/foundation";
import type { TenancyStore } from "../storage";
import { isUniqueViolation, type Pg, plain } from "./rows";

/** jsonb prints arrays with spaces (`["a", "b"]`): rows carry the compact text SQLite holds. */
function keyRow(r: Record<string, unknown>): ApiKeyRow {
  const k = plain<ApiKeyRow>(r);
  k.scopes = JSON.stringify(JSON.parse(k.scopes));
  return k;
}

const TENANT = `id, slug, name, created_at AS "createdAt"`;
const KEY = `id, tenant_id AS "tenantId", name, hash, hint, scopes::text AS scopes, created_at AS "createdAt", last_used_at AS "lastUsedAt", revoked_at AS "revokedAt"`;

export class PgTenancyStore implements TenancyStore {
  constructor(readonly pg: Pg) {}

  private async tenant(db: Pg, ref: string, lock = false): Promise<TenantRow | undefined> {
    const [r] = await db.unsafe(`SELECT ${TENANT} FROM tenants WHERE id = $1 OR slug = $1 LIMIT 1${lock ? " FOR SHARE" : ""}`, [ref]);
    return r ? plain<TenantRow>(r) : undefined;
  }

  private async insertKey(db: Pg, k: ApiKeyRow): Promise<void> {
    await db`INSERT INTO api_keys (id, tenant_id, name, hash, hint, scopes, created_at, last_used_at, revoked_at)
      VALUES (${k.id}, ${k.tenantId}, ${k.name}, ${k.hash}, ${k.hint}, CAST(${k.scopes} AS text)::jsonb, ${k.createdAt}, ${k.lastUsedAt}, ${k.revokedAt})`;
  }

  async createTenant(t: TenantRow, firstKey: ApiKeyRow): Promise<"ok" | "slug_taken"> {
    try {
      return await this.pg.begin(async (tx) => {
        // A slug equal to another tenant's id would make `findTenant` ambiguous: refused like a taken slug.
        if ((await tx`SELECT 1 FROM tenants WHERE id = ${t.slug}`).length) return "slug_taken" as const;
        await tx`INSERT INTO tenants (id, slug, name, created_at) VALUES (${t.id}, ${t.slug}, ${t.name}, ${t.createdAt})`;
        await this.insertKey(tx, firstKey);
        return "ok" as const;
      });
    } catch (err) {
      if (isUniqueViolation(err, "tenants_slug_unique")) return "slug_taken";
      throw err;
    }
  }

  findTenant(ref: string): Promise<TenantRow | undefined> {
    return this.tenant(this.pg, ref);
  }

  async addKey(tenantRef: string, key: Omit<ApiKeyRow, "tenantId">): Promise<ApiKeyRow | undefined> {
    return this.pg.begin(async (tx) => {
      const t = await this.tenant(tx, tenantRef, true);
      if (!t) return undefined;
      const row = { ...key, tenantId: t.id };
      await this.insertKey(tx, row);
      return row;
    });
  }

  async keys(tenantId: string): Promise<ApiKeyRow[]> {
    return (await this.pg.unsafe(`SELECT ${KEY} FROM api_keys WHERE tenant_id = $1 ORDER BY id`, [tenantId])).map(keyRow);
  }

  async revokeKey(id: string, at: string): Promise<ApiKeyRow | undefined> {
    await this.pg`UPDATE api_keys SET revoked_at = ${at} WHERE id = ${id} AND revoked_at IS NULL`;
    const [r] = await this.pg.unsafe(`SELECT ${KEY} FROM api_keys WHERE id = $1`, [id]);
    return r ? keyRow(r) : undefined;
  }

  async authenticate(hash: string): Promise<{ key: ApiKeyRow; tenant: TenantRow } | undefined> {
    const [r] = await this.pg`SELECT k.id, k.tenant_id AS "tenantId", k.name, k.hash, k.hint, k.scopes::text AS scopes, k.created_at AS "createdAt",
        k.last_used_at AS "lastUsedAt", k.revoked_at AS "revokedAt", t.slug AS "tSlug", t.name AS "tName", t.created_at AS "tCreatedAt"
      FROM api_keys k JOIN tenants t ON t.id = k.tenant_id WHERE k.hash = ${hash} AND k.revoked_at IS NULL`;
    if (!r) return undefined;
    const { tSlug, tName, tCreatedAt, ...key } = keyRow(r) as ApiKeyRow & { tSlug: string; tName: string; tCreatedAt: string };
    return { key, tenant: { id: key.tenantId, slug: tSlug, name: tName, createdAt: tCreatedAt } };
  }

  async touchKey(id: string, at: string): Promise<void> {
    await this.pg`UPDATE api_keys SET last_used_at = ${at} WHERE id = ${id}`;
  }
}
