// Drizzle tables of the templates feature. Migrations: db/automation/0250-0299.
import { integer, sqliteTable, text } from "drizzle-orm/sqlite-core";

/** A template is a name and a pointer to its current revision; DELETE sets `deletedAt`, revisions stay. */
export const templates = sqliteTable("templates", {
  id: text("id").primaryKey(),
  tenantId: text("tenant_id").notNull(),
  name: text("name").notNull(),
  description: text("description"),
  currentRevisionId: text("current_revision_id").notNull(),
  createdAt: text("created_at").notNull(),
  updatedAt: text("updated_at").notNull(),
  deletedAt: text("deleted_at"),
});

/** Immutable revisions; bytes live in the blob store under `sha256`, pinned by `template:<revision id>`. */
export const templateRevisions = sqliteTable("template_revisions", {
  id: text("id").primaryKey(),
  templateId: text("template_id").notNull(),
  tenantId: text("tenant_id").notNull(),
  number: integer("number").notNull(),
  filename: text("filename").notNull(),
  format: text("format").notNull(),
  mimeType: text("mime_type").notNull(),
  size: integer("size").notNull(),
  sha256: text("sha256").notNull(),
  /** JSON array of discovered tokens. */
  tokens: text("tokens").notNull(),
  createdAt: text("created_at").notNull(),
});

export type TemplateRow = typeof templates.$inferSelect;
export type RevisionRow = typeof templateRevisions.$inferSelect;
