// Templates and their revisions on SQLite (db/automation/0250_templates_email.sql), through drizzle.
import type { Database } from "bun:sqlite";
import { and, count, desc, eq, isNull, max } from "drizzle-orm";
import { templateRevisions, templates, type RevisionRow, type TemplateRow } from "../tables/templates";
import { dbOf, type Db } from "../client";
import type { TemplateStore } from "../../templates/store";

const live = (tenantId: string) => and(eq(templates.tenantId, tenantId), isNull(templates.deletedAt));

export class SqliteTemplateStore implements TemplateStore {
  private readonly db: Db;
  constructor(sqlite: Database) {
    this.db = dbOf(sqlite);
  }

  async create(t: TemplateRow, r: RevisionRow): Promise<void> {
    this.db.transaction((tx) => {
      tx.insert(templates).values(t).run();
      tx.insert(templateRevisions).values(r).run();
    });
  }

  async addRevision(tenantId: string, templateId: string, r: Omit<RevisionRow, "number">, now: string): Promise<RevisionRow | null> {
    return this.db.transaction((tx) => {
      const t = tx.select().from(templates).where(and(live(tenantId), eq(templates.id, templateId))).get();
      if (!t) return null;
      const last = tx.select({ n: max(templateRevisions.number) }).from(templateRevisions).where(eq(templateRevisions.templateId, templateId)).get();
      const row = { ...r, number: (last?.n ?? 0) + 1 };
      tx.insert(templateRevisions).values(row).run();
      tx.update(templates).set({ currentRevisionId: row.id, updatedAt: now }).where(eq(templates.id, templateId)).run();
      return row;
    });
  }

  async byId(tenantId: string, id: string): Promise<TemplateRow | undefined> {
    return this.db.select().from(templates).where(and(live(tenantId), eq(templates.id, id))).get();
  }

  async byName(tenantId: string, name: string): Promise<TemplateRow | undefined> {
    return this.db.select().from(templates).where(and(live(tenantId), eq(templates.name, name))).orderBy(desc(templates.createdAt)).get();
  }

  async list(tenantId: string, limit: number, offset: number): Promise<{ rows: TemplateRow[]; total: number }> {
    const rows = this.db.select().from(templates).where(live(tenantId)).orderBy(desc(templates.createdAt), desc(templates.id)).limit(limit).offset(offset).all();
    const total = this.db.select({ n: count() }).from(templates).where(live(tenantId)).get()?.n ?? 0;
    return { rows, total };
  }

  async softDelete(tenantId: string, id: string, now: string): Promise<boolean> {
    return this.db.update(templates).set({ deletedAt: now, updatedAt: now }).where(and(live(tenantId), eq(templates.id, id))).returning({ id: templates.id }).all().length > 0;
  }

  async revision(tenantId: string, id: string): Promise<RevisionRow | undefined> {
    return this.db.select().from(templateRevisions).where(and(eq(templateRevisions.tenantId, tenantId), eq(templateRevisions.id, id))).get();
  }

  async revisionsOf(templateId: string): Promise<RevisionRow[]> {
    return this.db.select().from(templateRevisions).where(eq(templateRevisions.templateId, templateId)).orderBy(desc(templateRevisions.number)).all();
  }
}
