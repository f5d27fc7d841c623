// What templates need from storage: templates and their immutable revisions. One async interface;
// db/sqlite/templates.ts and db/pg/templates.ts implement it. This module imports no implementation.
// Templates and revisions are drizzle-inferred rows (db/tables/templates.ts); callers take them from here.
import type { RevisionRow, TemplateRow } from "../db/tables/templates";

export type { RevisionRow, TemplateRow };

/** Templates (a name and a pointer to the current revision; DELETE is soft) and their immutable revisions. */
export interface TemplateStore {
  /** A new template and its first revision, in one transaction. */
  create(t: TemplateRow, r: RevisionRow): Promise<void>;
  /** Appends revision `r` (numbered after the last) and moves the pointer; null when the template went meanwhile. */
  addRevision(tenantId: string, templateId: string, r: Omit<RevisionRow, "number">, now: string): Promise<RevisionRow | null>;
  byId(tenantId: string, id: string): Promise<TemplateRow | undefined>;
  /** The newest live template of that name. */
  byName(tenantId: string, name: string): Promise<TemplateRow | undefined>;
  /** Live templates, newest first. */
  list(tenantId: string, limit: number, offset: number): Promise<{ rows: TemplateRow[]; total: number }>;
  softDelete(tenantId: string, id: string, now: string): Promise<boolean>;
  /** A revision by id, also of a deleted template (pinned `tmpr_` references keep working). */
  revision(tenantId: string, id: string): Promise<RevisionRow | undefined>;
  /** Newest first. */
  revisionsOf(templateId: string): Promise<RevisionRow[]>;
}
