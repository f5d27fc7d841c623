// Tenants and API keys: creation, listing, revocation and Bearer authentication. Keys are 256-bit
// random strings shown once; only their sha256 is stored.
import * as v from "valibot";
import type { Clock } from "../../kernel/clock";
import { Conflict, Forbidden, Invalid, NotFound, Unauthorized } from "../../kernel/errors";
import { hashSecret, newId, newSecret } from "../../kernel/ids";
import type { ApiKeyRow, KeyLine, TenancyStore, TenantRow } from "./store";
import { parseWith } from "../http/validate";
import { KeyCreateBody, Scopes, TenantName, TenantSlug, type Auth, type KeyInfo } from "./model";
import { isRole, ROLE_SCOPES } from "./roles";

const KEY_PREFIX = "eak_";

export interface CreatedKey {
  id: string;
  key: string;
  tenantId: string;
  scopes: string[];
  expiresAt: string | null;
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
export async function createTenant(store: TenancyStore, clock: Clock, input: { name: string; slug?: string }, opts: { key?: string } = {}): Promise<CreatedTenant> {
  const name = parseWith(TenantName, input.name, "name");
  const slug = parseWith(TenantSlug, input.slug ?? slugify(name), "slug");
  const now = clock.now().toISOString();
  const id = newId("ten");
  const { row, key } = newKey(clock, ["*"], "first key", opts.key);
  if ((await store.createTenant({ id, slug, name, createdAt: now }, { ...row, tenantId: id })) === "slug_taken") {
    throw Conflict(`tenant "${slug}" already exists`, { field: "slug", code: "already_exists" });
  }
  return { id, slug, name, key, keyId: row.id };
}

function newKey(clock: Clock, scopes: string[], name: string | null, fixed?: string): { row: Omit<ApiKeyRow, "tenantId">; key: string } {
  const key = fixed ?? KEY_PREFIX + newSecret(32);
  return {
    key,
    row: {
      id: newId("key"),
      name,
      hash: hashSecret(key),
      hint: key.slice(-4),
      scopes: JSON.stringify(scopes),
      createdAt: clock.now().toISOString(),
      lastUsedAt: null,
      revokedAt: null,
      createdByUser: null,
      createdByKey: null,
      expiresAt: null,
    },
  };
}

/** A tenant by id or slug, or undefined. */
export function findTenant(store: TenancyStore, ref: string): Promise<TenantRow | undefined> {
  return store.findTenant(ref);
}

export async function requireTenant(store: TenancyStore, ref: string): Promise<TenantRow> {
  const t = await store.findTenant(ref);
  if (!t) throw NotFound(`no tenant "${ref}"`, { field: "tenant" });
  return t;
}

/** A key made on the server's shell: no person owns it; it expires after `expiresInDays` (1-3650) when given. */
export async function createKey(
  store: TenancyStore,
  clock: Clock,
  input: { tenant: string; scopes?: string[]; name?: string | null; expiresInDays?: number },
): Promise<CreatedKey> {
  const scopes = [...new Set(parseWith(Scopes, input.scopes ?? ["*"], "scopes"))];
  const name = input.name == null ? null : parseWith(v.pipe(v.string(), v.maxLength(200)), input.name, "name");
  const days = input.expiresInDays === undefined ? undefined : parseWith(KeyCreateBody.entries.expiresInDays, input.expiresInDays, "expiresInDays");
  const { row, key } = newKey(clock, scopes, name);
  const expiresAt = days === undefined ? null : new Date(clock.now().getTime() + days * 86_400_000).toISOString();
  const added = await store.addKey(input.tenant, { ...row, expiresAt });
  if (!added) throw NotFound(`no tenant "${input.tenant}"`, { field: "tenant" });
  return { id: added.id, key, tenantId: added.tenantId, scopes, expiresAt };
}

function keyInfo(row: KeyLine): KeyInfo {
  const createdBy: KeyInfo["createdBy"] = row.createdByKey
    ? { type: "key", id: row.createdByKey, name: row.creatorName }
    : row.createdByUser
      ? { type: "user", id: row.createdByUser, name: row.creatorName }
      : null;
  return {
    id: row.id,
    tenantId: row.tenantId,
    name: row.name,
    hint: row.hint,
    scopes: JSON.parse(row.scopes) as string[],
    createdAt: row.createdAt,
    expiresAt: row.expiresAt,
    lastUsedAt: row.lastUsedAt,
    revokedAt: row.revokedAt,
    createdBy,
  };
}

export async function listKeys(store: TenancyStore, tenant: string): Promise<KeyInfo[]> {
  const t = await requireTenant(store, tenant);
  return (await store.keys(t.id)).map(keyInfo);
}

/** Whether `scopes` grant everything `scope` grants (`runs:*` needs `runs:*` or `*`; `*` needs `*`). */
export function covers(scopes: readonly string[], scope: string): boolean {
  if (scope === "*") return scopes.includes("*");
  if (scope.endsWith(":*")) return scopes.includes("*") || scopes.includes(scope);
  return hasScope([...scopes], scope);
}

/**
 * What a person's key may do now: its scopes cut down to what its owner's role grants today, so a
 * demotion narrows the person's keys as it narrows their sessions (`runs:*` under `runs:read` is `runs:read`).
 */
export function limitScopes(keyScopes: readonly string[], roleScopes: readonly string[]): string[] {
  const out = new Set<string>();
  for (const s of keyScopes) {
    if (covers(roleScopes, s)) out.add(s);
    else for (const r of roleScopes) if (covers([s], r)) out.add(r);
  }
  return [...out];
}

export interface MadeKey extends KeyInfo {
  /** The secret: in this answer only (only its sha256 is kept). */
  key: string;
}

/**
 * A key made through the API by `auth` (a person's session, or a key) in its own tenant. It never
 * grants more than its maker holds (403 naming the first scope that would), and it belongs to the
 * maker's person (a key made with a key, to that key's person), so it lives only while they are active
 * members of the tenant, within their role.
 */
export async function makeKey(store: TenancyStore, clock: Clock, auth: Auth, input: unknown): Promise<MadeKey> {
  const b = parseWith(KeyCreateBody, input);
  const scopes = [...new Set(b.scopes)];
  const who = auth.person ? `the role ${auth.person.role}` : "this API key";
  for (const s of scopes) {
    if (!covers(auth.scopes, s)) {
      throw Forbidden(`a key cannot grant more than its maker holds: ${who} lacks the scope ${s}`, { field: "scopes", code: "insufficient_scope" });
    }
  }
  const now = clock.now().getTime();
  let expiresAt: string | null = null;
  if (b.expiresAt !== undefined && b.expiresInDays !== undefined) throw Invalid("give expiresAt or expiresInDays, not both", { field: "expiresInDays" });
  if (b.expiresAt !== undefined) {
    const at = Date.parse(b.expiresAt);
    if (!(at > now)) throw Invalid("expiresAt must be in the future", { field: "expiresAt" });
    expiresAt = new Date(at).toISOString();
  }
  if (b.expiresInDays !== undefined) expiresAt = new Date(now + b.expiresInDays * 86_400_000).toISOString();
  const { row, key } = newKey(clock, scopes, b.name);
  const owner = auth.person ? auth.person.userId : (auth.keyUserId ?? null);
  const made = { ...row, createdByUser: owner, createdByKey: auth.person ? null : auth.keyId, expiresAt };
  const added = await store.addKey(auth.tenantId, made);
  if (!added) throw NotFound(`no tenant "${auth.tenantId}"`, { field: "tenant" });
  const creatorName = auth.person ? auth.person.name : auth.keyName;
  return { ...keyInfo({ ...added, creatorName }), key };
}

/** The tenant's keys, newest first (revoked too; never a secret or a hash). */
export async function tenantKeys(store: TenancyStore, tenantId: string): Promise<KeyInfo[]> {
  // Ids grow with their creation time.
  return (await store.keys(tenantId)).map(keyInfo).reverse();
}

/** Revokes one of the tenant's keys (another tenant's is a 404); the first revocation time stays. */
export async function revokeTenantKey(store: TenancyStore, clock: Clock, tenantId: string, keyId: string): Promise<KeyInfo> {
  const row = await store.revokeKey(keyId, clock.now().toISOString(), tenantId);
  const line = row && (await store.keys(tenantId)).find((k) => k.id === keyId);
  if (!line) throw NotFound(`no API key "${keyId}"`, { field: "id" });
  return keyInfo(line);
}

/** Revokes a key; revoking twice is harmless and answers the same. */
export async function revokeKey(store: TenancyStore, clock: Clock, keyId: string): Promise<KeyInfo> {
  const row = await store.revokeKey(keyId, clock.now().toISOString());
  if (!row) throw NotFound(`no API key "${keyId}"`, { field: "id" });
  return keyInfo({ ...row, creatorName: null });
}

/** Resolves an `Authorization` header to the key's tenant and scopes, or a 401. */
export function authenticate(store: TenancyStore, clock: Clock, header: string | undefined | null): Promise<Auth> {
  return authenticateKey(store, clock, bearerKey(header));
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
export async function authenticateKey(store: TenancyStore, clock: Clock, key: string): Promise<Auth> {
  const found = key.length <= 512 ? await store.authenticate(hashSecret(key)) : undefined;
  if (!found) throw Unauthorized("invalid or revoked API key", { code: "unauthorized" });
  const { key: row, tenant, makerRole } = found;
  const now = clock.now().toISOString();
  if (row.expiresAt !== null && Date.parse(row.expiresAt) <= Date.parse(now)) throw Unauthorized("this API key has expired", { code: "unauthorized" });
  // Minute precision is enough for "last used" and spares a write per request.
  if (row.lastUsedAt?.slice(0, 16) !== now.slice(0, 16)) {
    // Bookkeeping only: a busy database must not turn a valid key into a failed request.
    await store.touchKey(row.id, now).catch(() => {});
  }
  return {
    tenantId: tenant.id,
    tenantSlug: tenant.slug,
    tenantName: tenant.name,
    keyId: row.id,
    keyName: row.name,
    keyUserId: row.createdByUser,
    scopes: keyScopes(row, makerRole),
  };
}

/** A key's scopes; a person's key never beyond what their role in its tenant grants now. */
function keyScopes(row: ApiKeyRow, makerRole: string | null): string[] {
  const scopes = JSON.parse(row.scopes) as string[];
  if (row.createdByUser === null) return scopes;
  return makerRole !== null && isRole(makerRole) ? limitScopes(scopes, ROLE_SCOPES[makerRole]) : [];
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

/** Throws 403 unless the key carries `needed`; a session carries its role's scopes (roles.ts), so this one check decides both. */
export function requireScope(auth: Auth, needed: string): void {
  if (!hasScope(auth.scopes, needed)) {
    const who = auth.person ? `the role ${auth.person.role}` : "this API key";
    throw Forbidden(`${who} lacks the scope ${needed}`, { code: "insufficient_scope" });
  }
}
