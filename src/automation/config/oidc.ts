// Flags of single sign-on with an OpenID Connect provider (`serve --oidc-issuer URL --oidc-client-id ID
// --oidc-client-secret S …`, or AUTOMATION_OIDC_* in the environment), checked with valibot into the
// list of providers the server offers. One provider comes from the flags; the config is a list so that
// more (and per-tenant ones) can join it later without changing what the routes see.
import { readFileSync } from "node:fs";
import * as v from "valibot";
import type { FlagSpec } from "../../kernel/config";
import { UsageError } from "../../kernel/errors";
import { ROLES, type Role } from "../people/store";

export const oidcFlags = {
  "oidc-providers": {
    type: "string",
    env: "AUTOMATION_OIDC_PROVIDERS",
    value: "FILE",
    help: "single sign-on providers, any number: TOML with a [[provider]] table each (docs/automation/sso.md); the --oidc-* flags add one more",
  },
  "oidc-issuer": { type: "string", env: "AUTOMATION_OIDC_ISSUER", value: "URL", help: "single sign-on: the OpenID Connect issuer (https; http only on loopback), e.g. https://keycloak.example.com/realms/acme" },
  "oidc-client-id": { type: "string", env: "AUTOMATION_OIDC_CLIENT_ID", value: "ID", help: "the client id registered at the issuer (redirect URI: <public-url>/v1/auth/oidc/<oidc-id>/callback)" },
  "oidc-client-secret": { type: "string", env: "AUTOMATION_OIDC_CLIENT_SECRET", value: "SECRET", help: "the client's secret (prefer the environment: flags show in `ps`)" },
  "oidc-id": { type: "string", env: "AUTOMATION_OIDC_ID", default: "sso", value: "SLUG", help: "the provider's id in addresses (/v1/auth/oidc/<id>/…)" },
  "oidc-name": { type: "string", env: "AUTOMATION_OIDC_NAME", default: "Single sign-on", value: "NAME", help: "what the console's sign-in button says (\"Sign in with NAME\")" },
  "oidc-scopes": { type: "string", env: "AUTOMATION_OIDC_SCOPES", default: "openid email profile", value: "LIST", help: "scopes asked for (space or comma list; openid is always asked)" },
  "oidc-groups-claim": { type: "string", env: "AUTOMATION_OIDC_GROUPS_CLAIM", default: "groups", value: "PATH", help: "the claim holding the person's groups; a dotted path for nested ones (realm_access.roles)" },
  "oidc-role-map": { type: "string", env: "AUTOMATION_OIDC_ROLE_MAP", value: "LIST", help: "GROUP=ROLE@TENANT,… : members of GROUP get ROLE in the tenant with that slug (the highest rule wins)" },
  "oidc-default-role": { type: "string", env: "AUTOMATION_OIDC_DEFAULT_ROLE", value: "ROLE@TENANT", help: "the role of a person no rule matches (default: such a person is refused)" },
  "oidc-allowed-domains": { type: "string", env: "AUTOMATION_OIDC_ALLOWED_DOMAINS", value: "LIST", help: "comma list of e-mail domains that may sign in (default: any the issuer vouches for)" },
  "oidc-recheck": {
    type: "string",
    env: "AUTOMATION_OIDC_RECHECK",
    value: "MINUTES",
    help: "check each SSO session's role with the provider again this often (minutes, or a duration: 90s, 1h), with its refresh token (ask for offline_access where the provider needs it); default: only at sign-in",
  },
  "oidc-trust-email": {
    type: "boolean",
    env: "AUTOMATION_OIDC_TRUST_EMAIL",
    help: "a person who already has a local account with the same (verified) e-mail becomes that user at their first SSO sign-in; default: refused until linked with `users link-sso`",
  },
} satisfies Record<string, FlagSpec>;

export interface RoleRule {
  group: string;
  role: Role;
  /** A tenant's slug (or id). */
  tenant: string;
}

export interface OidcProviderConfig {
  /** In addresses: /v1/auth/oidc/<id>/start. */
  id: string;
  name: string;
  issuer: string;
  clientId: string;
  clientSecret: string;
  scopes: string[];
  /** Dotted path of the groups claim. */
  groupsClaim: string[];
  roleMap: RoleRule[];
  defaultRole?: { role: Role; tenant: string };
  /** Lower-case e-mail domains; empty = any. */
  allowedDomains: string[];
  /** A local user with the same verified e-mail is taken as this person (else refused until linked). */
  trustEmail: boolean;
  /** Re-check each session's role this often with its refresh token (--oidc-recheck); absent = at sign-in only. */
  recheckMs?: number;
  /**
   * Present for a provider a tenant's owner chose (not the operator): every address it is reached at (its
   * discovery document's endpoints too) must be public or in this list (--outbound-allow), as for e-mail
   * servers and action.http.
   */
  outboundAllow?: readonly string[];
}

const LOOPBACK = /^(localhost|127(?:\.\d{1,3}){3}|\[::1\])$/;
export const Slug = /^[a-z0-9][a-z0-9-]{0,39}$/;
export const RoleName = v.picklist(ROLES, `must name a role: ${ROLES.join(", ")}`);

/** Roles a default role may not be: everyone the provider vouches for (with Google, anyone) would get them. */
export const HIGH_ROLES: readonly string[] = ["owner", "admin"];

/** ROLE@TENANT */
const RoleAt = v.pipe(
  v.string(),
  v.trim(),
  v.regex(/^[^@\s]+@[^@\s]+$/, "must be ROLE@TENANT (e.g. viewer@acme)"),
  v.transform((s) => ({ role: s.slice(0, s.indexOf("@")), tenant: s.slice(s.indexOf("@") + 1) })),
  v.object({ role: RoleName, tenant: v.pipe(v.string(), v.minLength(1)) }),
);

const Rule = v.pipe(
  v.string(),
  v.trim(),
  v.regex(/^[^=]+=[^=@\s]+@[^@\s]+$/, "must be GROUP=ROLE@TENANT (e.g. automation-admins=admin@acme)"),
  v.transform((s) => {
    const eq = s.lastIndexOf("=");
    const [role, tenant] = s.slice(eq + 1).split("@") as [string, string];
    return { group: s.slice(0, eq).trim(), role, tenant };
  }),
  v.object({ group: v.pipe(v.string(), v.minLength(1, "GROUP must not be empty")), role: RoleName, tenant: v.pipe(v.string(), v.minLength(1)) }),
);

export const Issuer = v.pipe(
  v.string(),
  v.trim(),
  v.url("must be a URL such as https://login.example.com/realms/acme"),
  v.check((s) => {
    const u = new URL(s);
    return u.protocol === "https:" || (u.protocol === "http:" && LOOPBACK.test(u.hostname));
  }, "must be https (http only for a provider on loopback)"),
  v.check((s) => !new URL(s).search && !new URL(s).hash, "must have no query or fragment"),
);

export const Domain = v.pipe(v.string(), v.regex(/^(?:[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?\.)+[a-z]{2,63}$/, "must be an e-mail domain such as example.com"));

const ProviderFlags = v.object({
  id: v.pipe(v.string(), v.regex(Slug, "must be a slug: lower-case letters, digits and -")),
  name: v.pipe(v.string(), v.trim(), v.minLength(1, "must not be empty"), v.maxLength(80, "must be at most 80 characters")),
  issuer: Issuer,
  clientId: v.pipe(v.string(), v.trim(), v.minLength(1, "must not be empty")),
  clientSecret: v.pipe(v.string(), v.minLength(1, "must not be empty")),
  scopes: v.array(v.pipe(v.string(), v.regex(/^[\x21\x23-\x5b\x5d-\x7e]+$/, "must be scope names"))),
  groupsClaim: v.pipe(v.string(), v.trim(), v.regex(/^[^.\s]+(\.[^.\s]+)*$/, "must be a claim name or a dotted path such as realm_access.roles")),
  roleMap: v.array(Rule),
  defaultRole: v.optional(RoleAt),
  allowedDomains: v.array(Domain),
  trustEmail: v.boolean(),
});

const FLAG_OF: Record<string, string> = {
  id: "oidc-id",
  name: "oidc-name",
  issuer: "oidc-issuer",
  clientId: "oidc-client-id",
  clientSecret: "oidc-client-secret",
  scopes: "oidc-scopes",
  groupsClaim: "oidc-groups-claim",
  roleMap: "oidc-role-map",
  defaultRole: "oidc-default-role",
  allowedDomains: "oidc-allowed-domains",
  recheck: "oidc-recheck",
};

type OidcValues = {
  "oidc-issuer"?: string;
  "oidc-client-id"?: string;
  "oidc-client-secret"?: string;
  "oidc-id": string;
  "oidc-name": string;
  "oidc-scopes": string;
  "oidc-groups-claim": string;
  "oidc-role-map"?: string;
  "oidc-default-role"?: string;
  "oidc-allowed-domains"?: string;
  "oidc-trust-email"?: boolean;
  "oidc-recheck"?: string;
};

const list = (s: string | undefined, sep = /,/) => (s ?? "").split(sep).map((x) => x.trim()).filter(Boolean);

/**
 * The providers the flags (one) and `--oidc-providers FILE` (any number) configure: none without either;
 * a clear one-line error for anything wrong.
 */
export function oidcConfig(f: OidcValues & { "oidc-providers"?: string }): { oidc?: OidcProviderConfig[] } {
  const fromFile = f["oidc-providers"] === undefined ? [] : providersFile(f["oidc-providers"]);
  const fromFlags = flagsProvider(f);
  const all = [...fromFile, ...(fromFlags ? [fromFlags] : [])];
  const seen = new Set<string>();
  for (const p of all) {
    if (seen.has(p.id)) throw new UsageError(`two single sign-on providers have the id "${p.id}": give each its own (--oidc-id, or id in --oidc-providers)`);
    seen.add(p.id);
  }
  return all.length ? { oidc: all } : {};
}

function flagsProvider(f: OidcValues): OidcProviderConfig | undefined {
  const given = (["oidc-issuer", "oidc-client-id", "oidc-client-secret"] as const).filter((k) => f[k] !== undefined);
  const mapping = (["oidc-role-map", "oidc-default-role", "oidc-allowed-domains", "oidc-recheck"] as const).filter((k) => f[k] !== undefined);
  if (given.length === 0) {
    if (mapping.length) throw new UsageError(`--${mapping[0]} needs --oidc-issuer, --oidc-client-id and --oidc-client-secret`);
    return undefined;
  }
  if (given.length < 3) {
    const missing = (["oidc-issuer", "oidc-client-id", "oidc-client-secret"] as const).filter((k) => f[k] === undefined);
    throw new UsageError(`--${given[0]} needs --${missing.join(" and --")} (or AUTOMATION_${missing[0]!.toUpperCase().replace(/-/g, "_")})`);
  }
  return oneProvider(f, (key) => `--${FLAG_OF[key] ?? key}`, "");
}

/** One provider from flag-shaped values; `name(key)` says how the user wrote a field, `where` prefixes every error. */
function oneProvider(f: OidcValues, name: (key: string) => string, where: string): OidcProviderConfig {
  const scopes = list(f["oidc-scopes"], /[\s,]+/);
  const raw = {
    id: f["oidc-id"],
    name: f["oidc-name"],
    issuer: f["oidc-issuer"],
    clientId: f["oidc-client-id"],
    clientSecret: f["oidc-client-secret"],
    scopes: scopes.includes("openid") ? scopes : ["openid", ...scopes],
    groupsClaim: f["oidc-groups-claim"],
    roleMap: list(f["oidc-role-map"]),
    defaultRole: f["oidc-default-role"],
    allowedDomains: list(f["oidc-allowed-domains"]).map((d) => d.toLowerCase().replace(/^@/, "")),
    trustEmail: f["oidc-trust-email"] ?? false,
  };
  const out = v.safeParse(ProviderFlags, raw);
  if (!out.success) {
    const issue = out.issues[0];
    const path = issue.path ?? [];
    const key = String(path[0]?.key ?? "");
    const index = typeof path[1]?.key === "number" ? path[1].key : undefined;
    const item = index !== undefined ? ` (${JSON.stringify((raw as unknown as Record<string, string[]>)[key]![index])})` : key === "clientSecret" ? "" : ` (got ${JSON.stringify((raw as Record<string, unknown>)[key])})`;
    throw new UsageError(`${where}${name(key)} ${issue.message}${item}`);
  }
  const p = out.output;
  const recheck = recheckMs(f["oidc-recheck"], `${where}${name("recheck")}`);
  if (p.roleMap.length === 0 && !p.defaultRole) {
    throw new UsageError(`${where}${name("issuer")} needs ${name("roleMap")} GROUP=ROLE@TENANT,… or ${name("defaultRole")} ROLE@TENANT: otherwise nobody could get in`);
  }
  if (p.defaultRole && HIGH_ROLES.includes(p.defaultRole.role)) {
    throw new UsageError(`${where}${name("defaultRole")} may be developer, reviewer or viewer: owners and admins are given by a group rule (${name("roleMap")}), never to everyone the provider vouches for`);
  }
  return {
    ...p,
    issuer: p.issuer.trim(),
    groupsClaim: p.groupsClaim.split("."),
    roleMap: p.roleMap as RoleRule[],
    ...(p.defaultRole ? { defaultRole: p.defaultRole as { role: Role; tenant: string } } : {}),
    ...(recheck ? { recheckMs: recheck } : {}),
  };
}

/** What each field is called in the providers file. */
const FILE_KEY: Record<string, string> = {
  id: "id",
  name: "name",
  issuer: "issuer",
  clientId: "client_id",
  clientSecret: "client_secret",
  scopes: "scopes",
  groupsClaim: "groups_claim",
  roleMap: "role_map",
  defaultRole: "default_role",
  allowedDomains: "allowed_domains",
  recheck: "recheck",
};

const FILE_FIELDS = new Set([...Object.values(FILE_KEY), "client_secret_env", "trust_email"]);

/**
 * `--oidc-providers FILE`: TOML with one `[[provider]]` table per provider, the fields of the flags in
 * snake case (lists as arrays or comma strings). The secret is `client_secret_env = "VAR"` (read from the
 * environment: a file is copied around more than an environment is) or `client_secret`.
 */
function providersFile(path: string, env: Record<string, string | undefined> = process.env): OidcProviderConfig[] {
  let text: string;
  try {
    text = readFileSync(path, "utf8");
  } catch (err) {
    throw new UsageError(`--oidc-providers: cannot read ${path}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`);
  }
  let data: unknown;
  try {
    data = (require("toml") as typeof import("toml")).parse(text);
  } catch (err) {
    const e = err as { line?: number; message: string };
    throw new UsageError(`--oidc-providers ${path}${e.line ? ` line ${e.line}` : ""}: invalid TOML: ${e.message}`);
  }
  const tables = (data as { provider?: unknown }).provider;
  if (!Array.isArray(tables) || tables.length === 0) throw new UsageError(`--oidc-providers ${path}: no [[provider]] table`);
  return tables.map((t: Record<string, unknown>, i) => {
    const where = `--oidc-providers ${path}: provider ${i + 1}${typeof t.id === "string" ? ` (${t.id})` : ""}: `;
    const unknown = Object.keys(t).find((k) => !FILE_FIELDS.has(k));
    if (unknown) throw new UsageError(`${where}unknown field ${unknown} (fields: ${[...FILE_FIELDS].join(", ")})`);
    const str = (k: string): string | undefined => {
      const val = t[k];
      if (val === undefined) return undefined;
      if (Array.isArray(val)) return val.map(String).join(",");
      return String(val);
    };
    let secret = str("client_secret");
    const secretEnv = str("client_secret_env");
    if (secretEnv !== undefined) {
      secret = env[secretEnv];
      if (!secret) throw new UsageError(`${where}client_secret_env names ${secretEnv}, which is not set`);
    }
    for (const k of ["issuer", "client_id"]) if (t[k] === undefined) throw new UsageError(`${where}${k} is required`);
    if (secret === undefined) throw new UsageError(`${where}client_secret_env (or client_secret) is required`);
    return oneProvider(
      {
        "oidc-id": str("id") ?? `sso-${i + 1}`,
        "oidc-name": str("name") ?? "Single sign-on",
        "oidc-issuer": str("issuer"),
        "oidc-client-id": str("client_id"),
        "oidc-client-secret": secret,
        "oidc-scopes": str("scopes") ?? "openid email profile",
        "oidc-groups-claim": str("groups_claim") ?? "groups",
        "oidc-role-map": str("role_map"),
        "oidc-default-role": str("default_role"),
        "oidc-allowed-domains": str("allowed_domains"),
        "oidc-trust-email": t.trust_email === true,
        "oidc-recheck": str("recheck"),
      },
      (key) => FILE_KEY[key] ?? key,
      where,
    );
  });
}

/** `--oidc-recheck`: minutes (`15`), or a duration (`90s`, `1h`); 1 s to 7 days. */
function recheckMs(raw: string | undefined, flag = "--oidc-recheck"): number | undefined {
  if (raw === undefined) return undefined;
  const m = /^\s*(\d+(?:\.\d+)?)\s*(s|m|h|d)?\s*$/.exec(raw);
  const ms = m ? Number(m[1]) * { s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 }[m[2] ?? "m"]! : NaN;
  if (!(ms >= 1000 && ms <= 7 * 86_400_000)) throw new UsageError(`${flag} must be minutes (15) or a duration such as 90s or 1h, from 1s to 7d (got ${raw})`);
  return Math.round(ms);
}
