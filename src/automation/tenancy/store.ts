// What tenancy needs from storage: tenants and their API keys, and the per-key request budgets every
// instance on the database draws from. One async interface each; db/sqlite/tenancy.ts, db/pg/tenancy.ts
// and */rate-limits.ts implement them. This module imports no implementation.
// Tenants and keys are drizzle-inferred rows (db/tables/foundation.ts); callers take them from here.
import type { ApiKeyRow, TenantRow } from "../db/tables/foundation";

export type { ApiKeyRow, TenantRow };

/** Tenants and their API keys (only a key's sha256 is stored). */
export interface TenancyStore {
  /** A new tenant with its first key, in one transaction; "slug_taken" (nothing written) when a tenant has the slug. */
  createTenant(t: TenantRow, firstKey: ApiKeyRow): Promise<"ok" | "slug_taken">;
  /** By id (`ten_...`) or slug. */
  findTenant(ref: string): Promise<TenantRow | undefined>;
  /** Adds a key to the tenant named by id or slug; undefined (nothing written) when there is no such tenant. */
  addKey(tenantRef: string, key: Omit<ApiKeyRow, "tenantId">): Promise<ApiKeyRow | undefined>;
  /** The tenant's keys (revoked too), by id. */
  keys(tenantId: string): Promise<ApiKeyRow[]>;
  /** Revokes a key once (the first time stays); the key as it is afterwards, undefined when unknown. */
  revokeKey(id: string, at: string): Promise<ApiKeyRow | undefined>;
  /** The live (unrevoked) key with this sha256 and its tenant: one indexed lookup, on every request. */
  authenticate(hash: string): Promise<{ key: ApiKeyRow; tenant: TenantRow } | undefined>;
  /** Records a key's last use (bookkeeping: callers ignore its failure). */
  touchKey(id: string, at: string): Promise<void>;
}

/** What `RateLimitStore.take` decided: the token was taken, or how long until one is free (µs). */
export type RateDecision = { allowed: true } | { allowed: false; retryAfterUs: number };

/**
 * Per-API-key request budgets, GCRA over one row per key (its theoretical arrival time). Every instance
 * on the database draws from the same row, so N instances allow what one would.
 */
export interface RateLimitStore {
  /**
   * Takes one request's token of `key` at `nowUs` (epoch µs): one conditional upsert, so racing takes
   * (other processes too) never allow more than `burstUs / intervalUs` at once plus one per `intervalUs`.
   */
  take(key: string, nowUs: number, intervalUs: number, burstUs: number): Promise<RateDecision>;
}
