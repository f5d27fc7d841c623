// Tenants and API keys on PostgreSQL. A slug taken is the unique index's answer; the key lookup every
// request makes is one query (api_keys_hash_unique, then the tenant's primary key), and its answer is
// kept in memory for KEY_CACHE_MS: a request then costs no round trip for its key. A revocation (any
// process: the CLI, another instance) sends `keys.revoked` in its own statement, and every instance drops
// the key from its memory on arrival; should that notification be lost (the listening connection was
// down), the memory is emptied when it comes back, and no answer is older than KEY_CACHE_MS anyway.
// A key a person owns lives only while they are active and a member of its tenant: the people store
// sends the user's id on the same channel in the transaction that changes their status, role or
// membership (every instance forgets that user's keys), and calls `keysMayHaveChanged` for this one.
import type { ApiKeyRow, TenantRow } from "../tables/foundation";
import type { Notifications } from "../../runs/store";
import type { Authenticated, KeyLine, NewApiKey, TenancyStore } from "../../tenancy/store";
import { isUniqueViolation, type Pg, plain } from "./rows";

/** jsonb prints arrays with spaces (`["a", "b"]`): rows carry the compact text SQLite holds. */
function keyRow(r: Record<string, unknown>): ApiKeyRow {
  const k = plain<ApiKeyRow>(r);
  k.scopes = JSON.stringify(JSON.parse(k.scopes));
  return k;
}

const TENANT = `id, slug, name, created_at AS "createdAt"`;
const KEY = `id, tenant_id AS "tenantId", name, hash, hint, scopes::text AS scopes, created_at AS "createdAt", last_used_at AS "lastUsedAt", revoked_at AS "revokedAt",
  created_by_user AS "createdByUser", created_by_key AS "createdByKey", expires_at AS "expiresAt"`;

/** The longest a key lookup is answered from memory (revocations arrive sooner, by notification). */
export const KEY_CACHE_MS = 5_000;
/** Keys remembered at most; past it the memory starts over. */
const KEY_CACHE_MAX = 10_000;

/** The tenancy store on each pool, so the people store on it can make it forget a user's keys at once. */
const onPool = new WeakMap<Pg, PgTenancyStore>();

/** A user's status, role or membership changed (the caller also notified `keys.revoked` with the user's id). */
export function keysMayHaveChanged(pg: Pg, userId: string): void {
  onPool.get(pg)?.forget(userId);
}

export class PgTenancyStore implements TenancyStore {
  /** Live keys by hash, with when they were read; only while `keys.revoked` is listened to. */
  private readonly cache = new Map<string, { at: number; found: Authenticated }>();
  private listening: "no" | "pending" | "yes" = "no";
  /** Revocations heard so far: a lookup that overlapped one is not remembered (it may predate it). */
  private revocations = 0;

  constructor(
    readonly pg: Pg,
    private readonly notifications: Notifications,
  ) {
    onPool.set(pg, this);
  }

  /** Subscribes once to revocations; the memory is used only once that stands. */
  private listen(): void {
    if (this.listening !== "no") return;
    this.listening = "pending";
    this.notifications.onReconnect(() => {
      this.revocations++;
      this.cache.clear();
    });
    this.notifications
      .subscribe("keys.revoked", (id) => this.forget(id))
      .then(
        () => void (this.listening = "yes"),
        () => void (this.listening = "no"), // tried again at the next lookup
      );
  }

  /** Forgets a key (by its id), or every key a user owns (by the user's id). */
  forget(id: string): void {
    this.revocations++;
    for (const [hash, e] of this.cache) if (e.found.key.id === id || e.found.key.createdByUser === id) this.cache.delete(hash);
  }

  private async tenant(db: Pg, ref: string, lock = false): Promise<TenantRow | undefined> {
    const [r] = await db.unsafe(`SELECT ${TENANT} FROM tenants WHERE id = $1 OR slug = $1 LIMIT 1${lock ? " FOR SHARE" : ""}`, [ref]);
    return r ? plain<TenantRow>(r) : undefined;
  }

  private async insertKey(db: Pg, k: NewApiKey): Promise<void> {
    await db`INSERT INTO api_keys (id, tenant_id, name, hash, hint, scopes, created_at, last_used_at, revoked_at, created_by_user, created_by_key, expires_at)
      VALUES (${k.id}, ${k.tenantId}, ${k.name}, ${k.hash}, ${k.hint}, CAST(${k.scopes} AS text)::jsonb, ${k.createdAt}, ${k.lastUsedAt}, ${k.revokedAt},
        ${k.createdByUser ?? null}, ${k.createdByKey ?? null}, ${k.expiresAt ?? null})`;
  }

  async createTenant(t: TenantRow, firstKey: NewApiKey): Promise<"ok" | "slug_taken"> {
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

  async addKey(tenantRef: string, key: Omit<NewApiKey, "tenantId">): Promise<ApiKeyRow | undefined> {
    return this.pg.begin(async (tx) => {
      const t = await this.tenant(tx, tenantRef, true);
      if (!t) return undefined;
      const row: ApiKeyRow = { createdByUser: null, createdByKey: null, expiresAt: null, ...key, tenantId: t.id };
      await this.insertKey(tx, row);
      return row;
    });
  }

  async keys(tenantId: string): Promise<KeyLine[]> {
    const rows = await this.pg.unsafe(
      `SELECT ${KEY}, CASE WHEN k.created_by_key IS NOT NULL THEN (SELECT name FROM api_keys WHERE id = k.created_by_key)
         ELSE (SELECT name FROM users WHERE id = k.created_by_user) END AS "creatorName"
       FROM api_keys k WHERE tenant_id = $1 ORDER BY id`,
      [tenantId],
    );
    return rows.map((r: Record<string, unknown>) => keyRow(r) as KeyLine);
  }

  async revokeKey(id: string, at: string, tenantId?: string): Promise<ApiKeyRow | undefined> {
    // The notification goes out with the update's commit: every instance forgets the key (KEY_CACHE_MS).
    await this.pg`WITH u AS (UPDATE api_keys SET revoked_at = ${at} WHERE id = ${id} AND revoked_at IS NULL
        AND (${tenantId ?? null}::text IS NULL OR tenant_id = ${tenantId ?? null}) RETURNING id)
      SELECT pg_notify('keys.revoked', id) FROM u`;
    this.forget(id);
    const [r] = await this.pg.unsafe(`SELECT ${KEY} FROM api_keys WHERE id = $1`, [id]);
    if (!r || (tenantId !== undefined && r.tenantId !== tenantId)) return undefined;
    return keyRow(r);
  }

  async authenticate(hash: string): Promise<Authenticated | undefined> {
    const hit = this.cache.get(hash);
    if (hit && Date.now() - hit.at < KEY_CACHE_MS) return hit.found;
    this.listen();
    const cacheable = this.listening === "yes";
    const at = Date.now();
    const seen = this.revocations;
    const [r] = await this.pg`SELECT k.id, k.tenant_id AS "tenantId", k.name, k.hash, k.hint, k.scopes::text AS scopes, k.created_at AS "createdAt",
        k.last_used_at AS "lastUsedAt", k.revoked_at AS "revokedAt", k.created_by_user AS "createdByUser", k.created_by_key AS "createdByKey",
        k.expires_at AS "expiresAt", t.slug AS "tSlug", t.name AS "tName", t.created_at AS "tCreatedAt", m.role AS "makerRole"
      FROM api_keys k JOIN tenants t ON t.id = k.tenant_id
        LEFT JOIN users u ON u.id = k.created_by_user AND u.status = 'active'
        LEFT JOIN memberships m ON m.user_id = u.id AND m.tenant_id = k.tenant_id
      WHERE k.hash = ${hash} AND k.revoked_at IS NULL`;
    if (!r) return undefined;
    const { tSlug, tName, tCreatedAt, makerRole, ...key } = keyRow(r) as ApiKeyRow & { tSlug: string; tName: string; tCreatedAt: string; makerRole: string | null };
    // A person's key lives while its person is active and a member of the key's tenant.
    if (key.createdByUser !== null && makerRole === null) return undefined;
    const found = { key, tenant: { id: key.tenantId, slug: tSlug, name: tName, createdAt: tCreatedAt }, makerRole };
    if (cacheable && seen === this.revocations) {
      if (this.cache.size >= KEY_CACHE_MAX) this.cache.clear();
      this.cache.set(hash, { at, found });
    }
    return found;
  }

  async touchKey(id: string, at: string): Promise<void> {
    await this.pg`UPDATE api_keys SET last_used_at = ${at} WHERE id = ${id}`;
    // The remembered row says so too, or every lookup answered from memory would touch again.
    for (const e of this.cache.values()) if (e.found.key.id === id) e.found.key.lastUsedAt = at;
  }
}
