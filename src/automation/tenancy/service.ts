// Tenants and API keys: creation, listing, revocation and Bearer authentication. Keys are 256-bit
// random strings shown once; only their sha256 is stored.
import type { Database } from "bun:sqlite";
import * as v from "valibot";
import type { Clock } from "../../kernel/clock";
import { Conflict, Forbidden, NotFound, Unauthorized } from "../../kernel/errors";
import { hashSecret, newId, newSecret } from "../../kernel/ids";
import { dbOf } from "../db/client";
import type { ApiKeyRow } from "../db/schema";
import { parseWith } from "../http/validate";
import { Scopes, TenantName, TenantSlug, type Auth, type KeyInfo } from "./model";
import { keyStore, tenantStore } from "./store";

const KEY_PREFIX = "eak_";

export interface CreatedKey {
  id: string;
  key: string;
  tenantId: string;
  scopes: string[];
}

export interface CreatedTenant {
  id: string;
  slug: string;
  name: string;
  key: string;
  keyId: string;
}

/** A slug from a free-form name: lower case, runs of other characters become `-`. */
export function slugify(name: string): string {
  return name.toLowerCase().replace(/[^a-z0-9_-]+/g, "-").replace(/^[-_]+|-+$/g, "").slice(0, 63) || "tenant";
}

/** Creates a tenant with a first `*` key. `key` is only for the demo, which prints a known one. */
export function createTenant(
  sqlite: Database,
  clock: Clock,
  input: { name: string; slug?: string },
  opts: { key?: string } = {},
): CreatedTenant {
  const name = parseWith(TenantName, input.name, "name");
  const slug = parseWith(TenantSlug, input.slug ?? slugify(name), "slug");
  const db = dbOf(sqlite);
  return sqlite.transaction(() => {
    if (tenantStore.find(db, slug)) throw Conflict(`tenant "${slug}" already exists`, { field: "slug", code: "already_exists" });
    const now = clock.now().toISOString();
    const id = newId("ten");
    tenantStore.insert(db, { id, slug, name, createdAt: now });
    const key = insertKey(sqlite, clock, id, ["*"], "first key", opts.key);
    return { id, slug, name, key: key.key, keyId: key.id };
  }).immediate();
}

function insertKey(sqlite: Database, clock: Clock, tenantId: string, scopes: string[], name: string | null, fixed?: string): CreatedKey {
  const key = fixed ?? KEY_PREFIX + newSecret(32);
  const id = newId("key");
  keyStore.insert(dbOf(sqlite), {
    id,
    tenantId,
    name,
    hash: hashSecret(key),
    hint: key.slice(-4),
    scopes: JSON.stringify(scopes),
    createdAt: clock.now().toISOString(),
    lastUsedAt: null,
    revokedAt: null,
  });
  return { id, key, tenantId, scopes };
}

/** A tenant by id or slug, or undefined. */
export function findTenant(sqlite: Database, ref: string) {
  return tenantStore.find(dbOf(sqlite), ref);
}

export function requireTenant(sqlite: Database, ref: string) {
  const t = tenantStore.find(dbOf(sqlite), ref);
  if (!t) throw NotFound(`no tenant "${ref}"`, { field: "tenant" });
  return t;
}

export function createKey(
  sqlite: Database,
  clock: Clock,
  input: { tenant: string; scopes?: string[]; name?: string | null },
): CreatedKey {
  const scopes = parseWith(Scopes, input.scopes ?? ["*"], "scopes");
  const name = input.name == null ? null : parseWith(v.pipe(v.string(), v.maxLength(200)), input.name, "name");
  return sqlite.transaction(() => {
    const tenant = requireTenant(sqlite, input.tenant);
    return insertKey(sqlite, clock, tenant.id, [...new Set(scopes)], name);
  }).immediate();
}

function keyInfo(row: ApiKeyRow): KeyInfo {
  return {
    id: row.id,
    tenantId: row.tenantId,
    name: row.name,
    hint: row.hint,
    scopes: JSON.parse(row.scopes) as string[],
    createdAt: row.createdAt,
    lastUsedAt: row.lastUsedAt,
    revokedAt: row.revokedAt,
  };
}

export function listKeys(sqlite: Database, tenant: string): KeyInfo[] {
  const t = requireTenant(sqlite, tenant);
  return keyStore.list(dbOf(sqlite), t.id).map(keyInfo);
}

/** Revokes a key; revoking twice is harmless and answers the same. */
export function revokeKey(sqlite: Database, clock: Clock, keyId: string): KeyInfo {
  const db = dbOf(sqlite);
  return sqlite.transaction(() => {
    const row = keyStore.byId(db, keyId);
    if (!row) throw NotFound(`no API key "${keyId}"`, { field: "id" });
    if (!row.revokedAt) keyStore.revoke(db, keyId, clock.now().toISOString());
    return keyInfo(keyStore.byId(db, keyId)!);
  }).immediate();
}

/** Resolves an `Authorization` header to the key's tenant and scopes, or a 401. */
export function authenticate(sqlite: Database, clock: Clock, header: string | undefined | null): Auth {
  return authenticateKey(sqlite, clock, bearerKey(header));
}

/** The API key of an `Authorization: Bearer <key>` header (scheme case-insensitive), or a 401. */
export function bearerKey(header: string | undefined | null): string {
  const m = /^Bearer\s+(\S+)\s*$/i.exec(header ?? "");
  if (!m) {
    throw Unauthorized(header ? "Authorization must be `Bearer <api key>`" : "missing API key: send `Authorization: Bearer <api key>`", {
      code: "unauthorized",
    });
  }
  return m[1];
}

/** Resolves a presented API key to its tenant and scopes, or a 401. */
export function authenticateKey(sqlite: Database, clock: Clock, key: string): Auth {
  const db = dbOf(sqlite);
  const row = key.length <= 512 ? keyStore.byHash(db, hashSecret(key)) : undefined;
  if (!row) throw Unauthorized("invalid or revoked API key", { code: "unauthorized" });
  const tenant = tenantStore.byId(db, row.tenantId);
  if (!tenant) throw Unauthorized("invalid or revoked API key", { code: "unauthorized" });
  const now = clock.now().toISOString();
  // Minute precision is enough for "last used" and spares a write per request.
  if (row.lastUsedAt?.slice(0, 16) !== now.slice(0, 16)) {
    try {
      keyStore.touch(db, row.id, now);
    } catch {
      // Bookkeeping only: a busy database must not turn a valid key into a failed request.
    }
  }
  return {
    tenantId: tenant.id,
    tenantSlug: tenant.slug,
    tenantName: tenant.name,
    keyId: row.id,
    keyName: row.name,
    scopes: JSON.parse(row.scopes) as string[],
  };
}

/**
 * Whether `scopes` grant `needed` (`<resource>:read|write`): `*` grants everything, `<resource>:*`
 * the resource, and `:write` implies `:read`.
 */
export function hasScope(scopes: string[], needed: string): boolean {
  const [resource, action] = needed.split(":");
  return scopes.some(
    (s) => s === "*" || s === needed || s === `${resource}:*` || (action === "read" && s === `${resource}:write`),
  );
}

/** Throws 403 unless the key carries `needed`. */
export function requireScope(auth: Auth, needed: string): void {
  if (!hasScope(auth.scopes, needed)) {
    throw Forbidden(`this API key lacks the scope ${needed}`, { code: "insufficient_scope" });
  }
}
