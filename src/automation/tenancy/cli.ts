// `tenants create` and `keys create|list|revoke`: flags (or prompts in a terminal), --json output.
import * as p from "@clack/prompts";
import { systemClock } from "../../kernel/clock";
import { helpText, parseFlags } from "../../kernel/config";
import { FatalError, UsageError } from "../../kernel/errors";
import { askText, asCliError, interactive, openAdminStorage, printJson } from "../admin";
import { storageFlags } from "../config";
import { createKey, createTenant, listKeys, revokeKey } from "./service";

const common = {
  ...storageFlags,
  json: { type: "boolean", help: "print one JSON object" },
  help: { type: "boolean", short: "h", help: "show this help" },
} as const;

const tenantFlags = {
  name: { type: "string", value: "NAME", help: "tenant display name" },
  slug: { type: "string", value: "SLUG", help: "tenant slug (default: derived from the name)" },
  ...common,
} as const;

export async function tenantsCommand(argv: string[]): Promise<void> {
  const [sub, ...rest] = argv;
  const usage = "Usage: automation-server tenants create --name NAME [--slug SLUG] [--json]\n\nCreates a tenant and its first API key (scope *), shown once.";
  if (sub === "--help" || sub === "-h" || sub === undefined) {
    process.stdout.write(helpText(usage, tenantFlags));
    if (sub === undefined) throw new UsageError("missing subcommand: tenants create");
    return;
  }
  if (sub !== "create") throw new UsageError(`unknown command "tenants ${sub}"`);
  const { values, positionals } = parseFlags(rest, tenantFlags);
  if (values.help) return void process.stdout.write(helpText(usage, tenantFlags));
  if (positionals.length) throw new UsageError(`unexpected argument "${positionals[0]}"`);
  const name = values.name ?? (await askText("name", "Tenant name", "acme"));
  const db = await openAdminStorage(values);
  try {
    const t = await createTenant(db.storage.tenancy, systemClock, { name, slug: values.slug });
    if (values.json) return printJson({ id: t.id, slug: t.slug, name: t.name, key: t.key });
    process.stdout.write(`created tenant ${t.slug} (${t.id})\nAPI key ${t.keyId} with scope *, shown only once:\n\n  ${t.key}\n\n`);
  } catch (err) {
    asCliError(err);
  } finally {
    await db.close();
  }
}

const keyCreateFlags = {
  tenant: { type: "string", value: "SLUG", help: "tenant slug or id" },
  scopes: { type: "string", value: "LIST", help: "comma list of scopes, e.g. runs:read,runs:write (default *)" },
  name: { type: "string", value: "NAME", help: "a label for the key" },
  "expires-in-days": { type: "string", value: "N", help: "the key stops working N days from now (1-3650; default never)" },
  ...common,
} as const;
const keyListFlags = { tenant: keyCreateFlags.tenant, ...common } as const;
const keyRevokeFlags = { ...common } as const;

const KEYS_USAGE = `Usage: automation-server keys create --tenant SLUG [--scopes LIST] [--name NAME] [--expires-in-days N] [--json]
       automation-server keys list --tenant SLUG [--json]
       automation-server keys revoke KEY_ID [--json]`;

const SCOPE_CHOICES = ["*", "runs:read", "runs:write", "automations:write", "datasets:write", "reviews:write", "files:write", "templates:write", "email:write"];

export async function keysCommand(argv: string[]): Promise<void> {
  const [sub, ...rest] = argv;
  if (sub === "--help" || sub === "-h" || sub === undefined) {
    process.stdout.write(helpText(KEYS_USAGE, keyCreateFlags));
    if (sub === undefined) throw new UsageError("missing subcommand: keys create|list|revoke");
    return;
  }
  if (sub === "create") return keysCreate(rest);
  if (sub === "list") return keysList(rest);
  if (sub === "revoke") return keysRevoke(rest);
  throw new UsageError(`unknown command "keys ${sub}"`);
}

async function keysCreate(argv: string[]): Promise<void> {
  const { values, positionals } = parseFlags(argv, keyCreateFlags);
  if (values.help) return void process.stdout.write(helpText("Usage: automation-server keys create --tenant SLUG [--scopes LIST] [--name NAME] [--expires-in-days N] [--json]\n\nCreates an API key, shown once. People with keys:write make theirs through POST /v1/keys.", keyCreateFlags));
  if (positionals.length) throw new UsageError(`unexpected argument "${positionals[0]}"`);
  const tenant = values.tenant ?? (await askText("tenant", "Tenant slug"));
  let scopes = values.scopes?.split(",").map((s) => s.trim()).filter(Boolean);
  if (!scopes && values.tenant === undefined && interactive()) {
    const picked = await p.multiselect({ message: "Scopes", options: SCOPE_CHOICES.map((s) => ({ value: s, label: s })), initialValues: ["*"], required: true });
    if (p.isCancel(picked)) throw new FatalError("cancelled");
    scopes = picked as string[];
  }
  const db = await openAdminStorage(values);
  try {
    const days = values["expires-in-days"];
    if (days !== undefined && !/^\d+$/.test(days)) throw new UsageError(`--expires-in-days must be a whole number of days, got "${days}"`);
    const k = await createKey(db.storage.tenancy, systemClock, { tenant, scopes: scopes ?? ["*"], name: values.name ?? null, expiresInDays: days === undefined ? undefined : Number(days) });
    if (values.json) return printJson({ id: k.id, key: k.key, tenantId: k.tenantId, scopes: k.scopes, expiresAt: k.expiresAt });
    const until = k.expiresAt ? `, until ${k.expiresAt}` : "";
    process.stdout.write(`created API key ${k.id} (scopes ${k.scopes.join(",")}${until}), shown only once:\n\n  ${k.key}\n\n`);
  } catch (err) {
    asCliError(err);
  } finally {
    await db.close();
  }
}

async function keysList(argv: string[]): Promise<void> {
  const { values, positionals } = parseFlags(argv, keyListFlags);
  if (values.help) return void process.stdout.write(helpText("Usage: automation-server keys list --tenant SLUG [--json]\n\nLists a tenant's API keys (never the keys themselves): those made here and those people made through POST /v1/keys (with who made them and their expiry). A person's keys work only while the person is an active member of the tenant.", keyListFlags));
  if (positionals.length) throw new UsageError(`unexpected argument "${positionals[0]}"`);
  const tenant = values.tenant ?? (await askText("tenant", "Tenant slug"));
  const db = await openAdminStorage(values);
  try {
    const keys = await listKeys(db.storage.tenancy, tenant);
    if (values.json) return printJson({ keys });
    if (!keys.length) return void process.stdout.write("no keys\n");
    const now = new Date().toISOString();
    for (const k of keys) {
      const state = k.revokedAt
        ? `revoked ${k.revokedAt}`
        : k.expiresAt && k.expiresAt <= now
          ? `expired ${k.expiresAt}`
          : `last used ${k.lastUsedAt ?? "never"}${k.expiresAt ? `  expires ${k.expiresAt}` : ""}`;
      const by = k.createdBy ? `  by ${k.createdBy.type} ${k.createdBy.name ?? k.createdBy.id}` : "";
      process.stdout.write(`${k.id}  …${k.hint}  ${k.scopes.join(",")}  ${k.name ?? ""}  created ${k.createdAt}${by}  ${state}\n`);
    }
  } catch (err) {
    asCliError(err);
  } finally {
    await db.close();
  }
}

async function keysRevoke(argv: string[]): Promise<void> {
  const { values, positionals } = parseFlags(argv, keyRevokeFlags);
  if (values.help) return void process.stdout.write(helpText("Usage: automation-server keys revoke KEY_ID [--json]\n\nRevokes an API key at once; revoking twice is harmless.", keyRevokeFlags));
  if (positionals.length > 1) throw new UsageError(`unexpected argument "${positionals[1]}"`);
  const id = positionals[0] ?? (await askText("KEY_ID", "Key id to revoke", "key_..."));
  const db = await openAdminStorage(values);
  try {
    const k = await revokeKey(db.storage.tenancy, systemClock, id);
    if (values.json) return printJson({ id: k.id, tenantId: k.tenantId, revoked: true, revokedAt: k.revokedAt });
    process.stdout.write(`revoked ${k.id} at ${k.revokedAt}\n`);
  } catch (err) {
    asCliError(err);
  } finally {
    await db.close();
  }
}
