// The only code touching the tenants and api_keys tables. Hot lookups (every request authenticates)
// are prepared once per connection: building and preparing a drizzle query costs ~100× running it.
import { and, asc, eq, isNull, or, sql } from "drizzle-orm";
import type { Db } from "../db/client";
import { apiKeys, tenants, type ApiKeyRow, type TenantRow } from "../db/schema";

function prepare(db: Db) {
  return {
    keyByHash: db.select().from(apiKeys).where(and(eq(apiKeys.hash, sql.placeholder("hash")), isNull(apiKeys.revokedAt))).prepare(),
    tenantById: db.select().from(tenants).where(eq(tenants.id, sql.placeholder("id"))).prepare(),
    touch: db.update(apiKeys).set({ lastUsedAt: sql`${sql.placeholder("at")}` }).where(eq(apiKeys.id, sql.placeholder("id"))).prepare(),
  };
}
const cache = new WeakMap<Db, ReturnType<typeof prepare>>();
const q = (db: Db) => {
  let p = cache.get(db);
  if (!p) cache.set(db, (p = prepare(db)));
  return p;
};

export const tenantStore = {
  insert(db: Db, row: TenantRow): void {
    db.insert(tenants).values(row).run();
  },
  /** By id (`ten_...`) or slug. */
  find(db: Db, ref: string): TenantRow | undefined {
    return db.select().from(tenants).where(or(eq(tenants.id, ref), eq(tenants.slug, ref))).get();
  },
  byId(db: Db, id: string): TenantRow | undefined {
    return q(db).tenantById.get({ id });
  },
};

export const keyStore = {
  insert(db: Db, row: ApiKeyRow): void {
    db.insert(apiKeys).values(row).run();
  },
  byHash(db: Db, hash: string): ApiKeyRow | undefined {
    return q(db).keyByHash.get({ hash });
  },
  byId(db: Db, id: string): ApiKeyRow | undefined {
    return db.select().from(apiKeys).where(eq(apiKeys.id, id)).get();
  },
  list(db: Db, tenantId: string): ApiKeyRow[] {
    return db.select().from(apiKeys).where(eq(apiKeys.tenantId, tenantId)).orderBy(asc(apiKeys.id)).all();
  },
  revoke(db: Db, id: string, at: string): void {
    db.update(apiKeys).set({ revokedAt: at }).where(eq(apiKeys.id, id)).run();
  },
  touch(db: Db, id: string, at: string): void {
    q(db).touch.run({ id, at });
  },
};
