// The only code touching the templates and template_revisions tables.
import { and, count, desc, eq, isNull, max } from "drizzle-orm";
import type { Db } from "../db/client";
import { templateRevisions, templates, type RevisionRow, type TemplateRow } from "./schema";

const live = (tenantId: string) => and(eq(templates.tenantId, tenantId), isNull(templates.deletedAt));

export const templateStore = {
  /** A new template and its first revision, in one transaction. */
  create(db: Db, t: TemplateRow, r: RevisionRow): void {
    db.transaction((tx) => {
      tx.insert(templates).values(t).run();
      tx.insert(templateRevisions).values(r).run();
    });
  },

  /** Appends revision `r` (numbered after the last) and moves the pointer; null when the template went meanwhile. */
  addRevision(db: Db, tenantId: string, templateId: string, r: Omit<RevisionRow, "number">, now: string): RevisionRow | null {
    return db.transaction((tx) => {
      const t = tx.select().from(templates).where(and(live(tenantId), eq(templates.id, templateId))).get();
      if (!t) return null;
      const last = tx.select({ n: max(templateRevisions.number) }).from(templateRevisions).where(eq(templateRevisions.templateId, templateId)).get();
      const row = { ...r, number: (last?.n ?? 0) + 1 };
      tx.insert(templateRevisions).values(row).run();
      tx.update(templates).set({ currentRevisionId: row.id, updatedAt: now }).where(eq(templates.id, templateId)).run();
      return row;
    });
  },

  byId(db: Db, tenantId: string, id: string): TemplateRow | undefined {
    return db.select().from(templates).where(and(live(tenantId), eq(templates.id, id))).get();
  },

  /** The newest live template of that name. */
  byName(db: Db, tenantId: string, name: string): TemplateRow | undefined {
    return db.select().from(templates).where(and(live(tenantId), eq(templates.name, name))).orderBy(desc(templates.createdAt)).get();
  },

  list(db: Db, tenantId: string, limit: number, offset: number): { rows: TemplateRow[]; total: number } {
    const rows = db.select().from(templates).where(live(tenantId)).orderBy(desc(templates.createdAt), desc(templates.id)).limit(limit).offset(offset).all();
    const total = db.select({ n: count() }).from(templates).where(live(tenantId)).get()?.n ?? 0;
    return { rows, total };
  },

  softDelete(db: Db, tenantId: string, id: string, now: string): boolean {
    return db.update(templates).set({ deletedAt: now, updatedAt: now }).where(and(live(tenantId), eq(templates.id, id))).returning({ id: templates.id }).all().length > 0;
  },

  revision(db: Db, tenantId: string, id: string): RevisionRow | undefined {
    return db.select().from(templateRevisions).where(and(eq(templateRevisions.tenantId, tenantId), eq(templateRevisions.id, id))).get();
  },

  revisionsOf(db: Db, templateId: string): RevisionRow[] {
    return db.select().from(templateRevisions).where(eq(templateRevisions.templateId, templateId)).orderBy(desc(templateRevisions.number)).all();
  },
};
