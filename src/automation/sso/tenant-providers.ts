// Single sign-on providers a tenant's owner adds (issue 43): the same settings as the server's flags, with
// the role map into this tenant only and no e-mail trust of their own (the tenant's trustEmails setting
// applies). The client secret is sealed at rest under the server's secret key, bound to the provider's id,
// like the e-mail servers' passwords; it leaves here only into the provider's client, never in an answer.
import * as v from "valibot";
import { Conflict, Invalid, NotFound } from "../../kernel/errors";
import { literalRefusal } from "../http/outbound";
import { parseWith } from "../http/validate";
import type { PeopleDeps } from "../people/service";
import type { Role, TenantProviderRow } from "../people/store";
import { deriveKey, open, seal } from "../secrets";
import { Domain, HIGH_ROLES, Issuer, RoleName, Slug, type OidcProviderConfig } from "../config/oidc";

export const TenantProviderBody = v.strictObject({
  id: v.pipe(v.string("id must be a string"), v.regex(Slug, "id must be a slug: lower-case letters, digits and -")),
  name: v.pipe(v.string(), v.trim(), v.minLength(1, "name is required"), v.maxLength(80)),
  issuer: Issuer,
  clientId: v.pipe(v.string(), v.trim(), v.minLength(1, "clientId is required"), v.maxLength(500)),
  clientSecret: v.pipe(v.string(), v.minLength(1, "clientSecret is required"), v.maxLength(2000)),
  scopes: v.optional(v.array(v.pipe(v.string(), v.regex(/^[\x21\x23-\x5b\x5d-\x7e]+$/, "scopes must be scope names"))), ["openid", "email", "profile"]),
  groupsClaim: v.optional(v.pipe(v.string(), v.trim(), v.regex(/^[^.\s]+(\.[^.\s]+)*$/, "groupsClaim must be a claim name or a dotted path")), "groups"),
  roleMap: v.optional(v.array(v.strictObject({ group: v.pipe(v.string(), v.minLength(1), v.maxLength(500)), role: RoleName })), []),
  defaultRole: v.optional(RoleName),
  allowedDomains: v.optional(v.array(Domain), []),
  /** Re-check each session's role this often with its refresh token, as --oidc-recheck does. */
  recheckMinutes: v.optional(v.pipe(v.number("recheckMinutes must be a number"), v.integer("recheckMinutes must be whole minutes"), v.minValue(1, "recheckMinutes must be 1-10080"), v.maxValue(10080, "recheckMinutes must be 1-10080"))),
});

/** What an answer shows of a provider: never its secret. */
export function describe(row: TenantProviderRow, publicUrl: string) {
  return {
    id: row.id,
    name: row.name,
    issuer: row.issuer,
    clientId: row.clientId,
    scopes: row.scopes.split(" "),
    groupsClaim: row.groupsClaim,
    roleMap: JSON.parse(row.roleMap) as { group: string; role: Role }[],
    defaultRole: row.defaultRole,
    allowedDomains: JSON.parse(row.allowedDomains) as string[],
    recheckMinutes: row.recheckMs === null ? null : Math.round(Number(row.recheckMs) / 60_000),
    redirectUri: `${publicUrl}/v1/auth/oidc/${row.id}/callback`,
    createdAt: row.createdAt,
  };
}

const aad = (id: string) => `tenant-oidc:${id}`;

/** Adds a provider to the tenant; its id must be free on the whole server (its addresses are). */
export async function addTenantProvider(d: PeopleDeps, tenantId: string, body: unknown, serverIds: string[], outboundAllow: readonly string[]): Promise<TenantProviderRow> {
  const b = parseWith(TenantProviderBody, body);
  // An address inside this server's network is refused now; a name is checked at each connection.
  const inside = literalRefusal(new URL(b.issuer.trim()).hostname, outboundAllow);
  if (inside) throw Invalid(`issuer is a ${inside} address: this server does not connect there for a tenant unless its operator allows it with --outbound-allow`, { field: "issuer", code: "outbound_refused" });
  if (b.roleMap.length === 0 && !b.defaultRole) throw Conflict("give roleMap [{group, role}] or defaultRole: otherwise nobody could get in", { field: "roleMap", code: "no_role_rule" });
  if (b.defaultRole && HIGH_ROLES.includes(b.defaultRole)) {
    throw Invalid("defaultRole may be developer, reviewer or viewer: owners and admins are given by a group rule (roleMap), never to everyone the provider vouches for", { field: "defaultRole", code: "default_role_too_high" });
  }
  if (serverIds.includes(b.id)) throw Conflict(`a provider "${b.id}" exists on this server: choose another id`, { field: "id", code: "already_exists" });
  if (!d.secretKey) throw new Error("no secret key: provider secrets cannot be sealed");
  const now = d.clock.now().toISOString();
  const scopes = b.scopes.includes("openid") ? b.scopes : ["openid", ...b.scopes];
  const row: TenantProviderRow = {
    id: b.id,
    tenantId,
    name: b.name,
    issuer: b.issuer.trim(),
    clientId: b.clientId,
    clientSecret: seal(deriveKey(d.secretKey), b.clientSecret, aad(b.id)),
    scopes: scopes.join(" "),
    groupsClaim: b.groupsClaim,
    roleMap: JSON.stringify(b.roleMap),
    defaultRole: b.defaultRole ?? null,
    allowedDomains: JSON.stringify(b.allowedDomains.map((x) => x.toLowerCase())),
    recheckMs: b.recheckMinutes === undefined ? null : b.recheckMinutes * 60_000,
    createdAt: now,
    updatedAt: now,
  };
  if ((await d.people.addTenantProvider(row)) === "taken") throw Conflict(`a provider "${b.id}" exists on this server: choose another id`, { field: "id", code: "already_exists" });
  return row;
}

export async function removeTenantProvider(d: PeopleDeps, tenantId: string, id: string): Promise<void> {
  if (!(await d.people.deleteTenantProvider(tenantId, id))) throw NotFound(`no provider "${id}" in this tenant`, { field: "id" });
}

/** The provider as the sign-in uses it: its role map and default role into its own tenant. */
export function configOf(row: TenantProviderRow, secretKey: string, outboundAllow: readonly string[]): OidcProviderConfig {
  const roleMap = (JSON.parse(row.roleMap) as { group: string; role: Role }[]).map((r) => ({ ...r, tenant: row.tenantId }));
  return {
    id: row.id,
    name: row.name,
    issuer: row.issuer,
    clientId: row.clientId,
    clientSecret: open(deriveKey(secretKey), row.clientSecret, aad(row.id)),
    scopes: row.scopes.split(" "),
    groupsClaim: row.groupsClaim.split("."),
    roleMap,
    ...(row.defaultRole ? { defaultRole: { role: row.defaultRole as Role, tenant: row.tenantId } } : {}),
    allowedDomains: JSON.parse(row.allowedDomains) as string[],
    trustEmail: false,
    ...(row.recheckMs ? { recheckMs: Number(row.recheckMs) } : {}),
    outboundAllow,
  };
}
