// Wire and input shapes of tenants and API keys.
import * as v from "valibot";

/** `*`, or `<resource>:read|write|*` such as `runs:read`, `automations:write`. */
export const Scope = v.pipe(
  v.string(),
  v.regex(/^(\*|[a-z][a-z_-]{0,39}:(read|write|\*))$/, "scope must be * or <resource>:read|write|*, e.g. runs:read"),
);
export const Scopes = v.pipe(v.array(Scope), v.minLength(1, "at least one scope"), v.maxLength(50));

export const TenantSlug = v.pipe(
  v.string(),
  v.regex(/^[a-z0-9][a-z0-9_-]{0,62}$/, "slug must match ^[a-z0-9][a-z0-9_-]*$ (at most 63 characters)"),
);
export const TenantName = v.pipe(v.string(), v.trim(), v.minLength(1, "name is required"), v.maxLength(200));

/** `POST /v1/keys`: a key made by a person (or a key). At most one of the two expiries. */
export const KeyCreateBody = v.strictObject({
  name: v.pipe(v.string("name must be a string"), v.trim(), v.minLength(1, "name is required"), v.maxLength(100, "name is at most 100 characters")),
  scopes: Scopes,
  expiresAt: v.optional(v.pipe(v.string("expiresAt must be a string"), v.isoTimestamp("expiresAt must be an ISO 8601 date-time, e.g. 2027-01-31T00:00:00Z"))),
  expiresInDays: v.optional(
    v.pipe(v.number("expiresInDays must be a number"), v.integer("expiresInDays must be a whole number"), v.minValue(1, "expiresInDays is at least 1"), v.maxValue(3650, "expiresInDays is at most 3650")),
  ),
});
export type KeyCreateInput = v.InferOutput<typeof KeyCreateBody>;

/** What every authenticated route receives as `auth`. */
export interface Auth {
  tenantId: string;
  tenantSlug: string;
  tenantName: string;
  keyId: string;
  keyName: string | null;
  scopes: string[];
  /** The user an API key belongs to (its maker), null for a key made on the shell; unset for sessions. */
  keyUserId?: string | null;
  /** Set when a person's session cookie authenticated the request (keyId is then the session's `ses_` id). */
  person?: { userId: string; email: string; name: string; role: string; sessionId: string; csrf: string; createdAt: string; expiresAt: string };
}

/** Who made a key: a person (their session) or another key; null for keys made on the server's shell. */
export interface KeyCreator {
  type: "user" | "key";
  id: string;
  name: string | null;
}

export interface KeyInfo {
  id: string;
  tenantId: string;
  name: string | null;
  hint: string;
  scopes: string[];
  createdAt: string;
  expiresAt: string | null;
  lastUsedAt: string | null;
  revokedAt: string | null;
  createdBy: KeyCreator | null;
}

/** What `GET /v1/auth/check` answers: who the presented key is (the client returns it as is). */
export interface AuthCheck {
  ok: true;
  tenantId: string;
  tenantSlug: string;
  tenantName: string;
  /** API keys belong to tenants, not users, on this server. */
  userId: string | null;
  keyId: string;
  email: string | null;
  name: string | null;
  scope: string[];
  wildcardGranted: boolean;
}
