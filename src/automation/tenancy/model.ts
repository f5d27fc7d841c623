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

/** What every authenticated route receives as `auth`. */
export interface Auth {
  tenantId: string;
  tenantSlug: string;
  tenantName: string;
  keyId: string;
  keyName: string | null;
  scopes: string[];
  /** Set when a person's session cookie authenticated the request (keyId is then the session's `ses_` id). */
  person?: { userId: string; email: string; name: string; role: string; sessionId: string; csrf: string };
}

export interface KeyInfo {
  id: string;
  tenantId: string;
  name: string | null;
  hint: string;
  scopes: string[];
  createdAt: string;
  lastUsedAt: string | null;
  revokedAt: string | null;
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
