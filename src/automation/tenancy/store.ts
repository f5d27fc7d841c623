// The only code touching the tenants and api_keys tables.
import { and, asc, eq, isNull, or } from "drizzle-orm";
import type { Db } from "../db/client";
import { apiKeys, tenants, type ApiKeyRow, type TenantRow } from "../db/schema";

export const tenantStore = {
  insert(db: Db, row: TenantRow): void {
    db.insert(tenants).values(row).run();
  },
  /** By id (`ten_...`) or slug. */
  find(db: Db, ref: string): TenantRow | undefined {
    return db.select().from(tenants).where(or(eq(tenants.id, ref), eq(tenants.slug, ref))).get();
  },
  byId(db: Db, id: string): TenantRow | undefined {
    return db.select().from(tenants).where(eq(tenants.id, id)).get();
  },
};

export const keyStore = {
  insert(db: Db, row: ApiKeyRow): void {
    db.insert(apiKeys).values(row).run();
  },
  byHash(db: Db, hash: string): ApiKeyRow | undefined {
    return db.select().from(apiKeys).where(and(eq(apiKeys.hash, hash), isNull(apiKeys.revokedAt))).get();
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
    db.update(apiKeys).set({ lastUsedAt: at }).where(eq(apiKeys.id, id)).run();
  },
};
