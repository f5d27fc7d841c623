// Drizzle table of the agents feature: where each agent's releases come from. Migrations: db/automation/0350-0399.
import { sqliteTable, text } from "drizzle-orm/sqlite-core";

export const agentSources = sqliteTable("agent_sources", {
  automationId: text("automation_id").primaryKey(),
  tenantId: text("tenant_id").notNull(),
  /** As registered: an absolute local path, or a URL. */
  repo: text("repo").notNull(),
  /** Bare mirror under the registering instance's data dir for a URL (each instance syncs its own, `<data dir>/agents/<id>.git`); null for a local path (read in place). */
  mirror: text("mirror"),
  /** The latest release the last sync read. */
  releaseTag: text("release_tag"),
  releaseCommit: text("release_commit"),
  syncedAt: text("synced_at"),
  createdAt: text("created_at").notNull(),
});

export type AgentSourceRow = typeof agentSources.$inferSelect;
