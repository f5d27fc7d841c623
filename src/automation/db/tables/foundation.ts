// Drizzle tables of the foundation (tenancy, automations, versions). Migrations: db/automation/0000-0049.
import { sqliteTable, text } from "drizzle-orm/sqlite-core";

export const tenants = sqliteTable("tenants", {
  id: text("id").primaryKey(),
  slug: text("slug").notNull().unique(),
  name: text("name").notNull(),
  createdAt: text("created_at").notNull(),
});

export const apiKeys = sqliteTable("api_keys", {
  id: text("id").primaryKey(),
  tenantId: text("tenant_id").notNull(),
  name: text("name"),
  /** sha256 hex of the key; the key itself is never stored. */
  hash: text("hash").notNull().unique(),
  /** Last four characters, so an operator can tell keys apart in `keys list`. */
  hint: text("hint").notNull(),
  /** JSON array of scope strings. */
  scopes: text("scopes").notNull(),
  createdAt: text("created_at").notNull(),
  lastUsedAt: text("last_used_at"),
  revokedAt: text("revoked_at"),
  /**
   * The user the key belongs to (0031): its maker, or the owner of the key that made it; null for keys
   * made on the server's shell. The key works only while this user is active and a member of the key's
   * tenant, and never beyond what their role there grants.
   */
  createdByUser: text("created_by_user"),
  /** The key that made this one (a key made with a key); null when a person or the shell made it. */
  createdByKey: text("created_by_key"),
  /** After this the key is refused like a revoked one; null: never. */
  expiresAt: text("expires_at"),
});

export const automations = sqliteTable("automations", {
  id: text("id").primaryKey(),
  tenantId: text("tenant_id").notNull(),
  type: text("type", { enum: ["workflow", "agent"] }).notNull(),
  slug: text("slug").notNull(),
  name: text("name"),
  description: text("description"),
  status: text("status").notNull(),
  currentVersionId: text("current_version_id"),
  createdAt: text("created_at").notNull(),
  updatedAt: text("updated_at").notNull(),
});

export const automationVersions = sqliteTable("automation_versions", {
  id: text("id").primaryKey(),
  tenantId: text("tenant_id").notNull(),
  automationId: text("automation_id").notNull(),
  /** Bare semver tag, or null for an untagged snapshot (a restore). */
  version: text("version"),
  yaml: text("yaml").notNull(),
  sourceRef: text("source_ref"),
  message: text("message"),
  name: text("name"),
  description: text("description"),
  /** JSON {api, email, manual, cron}. */
  triggers: text("triggers").notNull(),
  inputSchema: text("input_schema"),
  outputSchema: text("output_schema"),
  createdAt: text("created_at").notNull(),
});

export type TenantRow = typeof tenants.$inferSelect;
export type ApiKeyRow = typeof apiKeys.$inferSelect;
export type AutomationRow = typeof automations.$inferSelect;
export type VersionRow = typeof automationVersions.$inferSelect;
