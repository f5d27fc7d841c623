// What tenancy needs from storage: tenants and their API keys, and the per-key request budgets every
// instance on the database draws from. One async interface each; db/sqlite/tenancy.ts, db/pg/tenancy.ts
// and */rate-limits.ts implement them. This module imports no implementation.
// Tenants and keys are drizzle-inferred rows (db/tables/foundation.ts); callers take them from here.
import type { ApiKeyRow, TenantRow } from "../db/tables/foundation";

export type { ApiKeyRow, TenantRow };

/** A key to store: who made it and its expiry may be left out (null: the shell made it, it never expires). */
export type NewApiKey = Omit<ApiKeyRow, "createdByUser" | "createdByKey" | "expiresAt"> & Partial<Pick<ApiKeyRow, "createdByUser" | "createdByKey" | "expiresAt">>;

/** A key as `GET /v1/keys` lists it: the row and the name of whoever made it (the user's, or the maker key's). */
export type KeyLine = ApiKeyRow & { creatorName: string | null };

/**
 * A live key and its tenant. `makerRole` is the role its user (`createdByUser`) holds in the key's tenant
 * now, null for a key no person owns (made on the shell): the key never grants more than that role.
 */
export interface Authenticated {
  key: ApiKeyRow;
  tenant: TenantRow;
  makerRole: string | null;
}

/** Tenants and their API keys (only a key's sha256 is stored). */
export interface TenancyStore {
  /** A new tenant with its first key, in one transaction; "slug_taken" (nothing written) when a tenant has the slug. */
  createTenant(t: TenantRow, firstKey: NewApiKey): Promise<"ok" | "slug_taken">;
  /** By id (`ten_...`) or slug. */
  findTenant(ref: string): Promise<TenantRow | undefined>;
  /** Adds a key to the tenant named by id or slug; undefined (nothing written) when there is no such tenant. */
  addKey(tenantRef: string, key: Omit<NewApiKey, "tenantId">): Promise<ApiKeyRow | undefined>;
  /** The tenant's keys (revoked too), by id, with their makers' names. */
  keys(tenantId: string): Promise<KeyLine[]>;
  /**
   * Revokes a key once (the first time stays); the key as it is afterwards, undefined when unknown (or,
   * with `tenantId`, another tenant's: nothing is written then).
   */
  revokeKey(id: string, at: string, tenantId?: string): Promise<ApiKeyRow | undefined>;
  /**
   * The live key with this sha256 and its tenant: one indexed lookup, on every request. Live: unrevoked,
   * and, when a person owns it, that person is active and still a member of the key's tenant (so
   * disabling or removing them stops their keys at every instance's next request, and re-enabling or
   * re-adding them brings the keys back). Expiry is the caller's to check (the clock is injected).
   * Implementations that remember answers must forget them when a user's status, role or membership
   * changes, on every instance, before the change's caller hears back.
   */
  authenticate(hash: string): Promise<Authenticated | undefined>;
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
