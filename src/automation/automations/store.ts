// The only code touching the automations and automation_versions tables.
import { and, count, desc, eq, isNotNull, or, sql, type SQL, type SQLWrapper } from "drizzle-orm";
import type { Db } from "../db/client";
import { automations, automationVersions, type AutomationRow, type VersionRow } from "../db/schema";

const escapeLike = (s: string) => s.replace(/[\\%_]/g, (c) => `\\${c}`);
/** Substring match with LIKE wildcards in the needle taken literally. */
const contains = (col: SQLWrapper, pat: string) => sql`${col} LIKE ${pat} ESCAPE '\\'`;

export const automationStore = {
  insert(db: Db, row: AutomationRow): void {
    db.insert(automations).values(row).run();
  },
  byId(db: Db, tenantId: string, id: string): AutomationRow | undefined {
    return db.select().from(automations).where(and(eq(automations.tenantId, tenantId), eq(automations.id, id))).get();
  },
  bySlug(db: Db, tenantId: string, type: "workflow" | "agent", slug: string): AutomationRow | undefined {
    return db
      .select()
      .from(automations)
      .where(and(eq(automations.tenantId, tenantId), eq(automations.type, type), eq(automations.slug, slug)))
      .get();
  },
  list(db: Db, tenantId: string, q: { search?: string; type?: "workflow" | "agent"; limit: number; offset: number }) {
    const conds: SQL[] = [eq(automations.tenantId, tenantId)];
    if (q.type) conds.push(eq(automations.type, q.type));
    if (q.search) {
      const pat = `%${escapeLike(q.search)}%`;
      conds.push(
        or(
          contains(automations.slug, pat),
          contains(automations.name, pat),
          contains(automations.description, pat),
        )!,
      );
    }
    const where = and(...conds);
    const rows = db.select().from(automations).where(where).orderBy(desc(automations.createdAt), desc(automations.id)).limit(q.limit).offset(q.offset).all();
    const total = db.select({ n: count() }).from(automations).where(where).get()?.n ?? 0;
    return { rows, total };
  },
  setCurrent(db: Db, id: string, versionId: string, fields: Pick<AutomationRow, "name" | "description" | "updatedAt">): void {
    db.update(automations).set({ currentVersionId: versionId, ...fields }).where(eq(automations.id, id)).run();
  },
};

export const versionStore = {
  insert(db: Db, row: VersionRow): void {
    db.insert(automationVersions).values(row).run();
  },
  byId(db: Db, automationId: string, id: string): VersionRow | undefined {
    return db
      .select()
      .from(automationVersions)
      .where(and(eq(automationVersions.automationId, automationId), eq(automationVersions.id, id)))
      .get();
  },
  byTag(db: Db, automationId: string, tag: string): VersionRow | undefined {
    return db
      .select()
      .from(automationVersions)
      .where(and(eq(automationVersions.automationId, automationId), eq(automationVersions.version, tag)))
      .get();
  },
  /** Tagged rows plus (when given) the current untagged row, newest first. */
  list(db: Db, automationId: string, currentUntagged: string | null, page: { limit: number; offset: number }) {
    const where = and(
      eq(automationVersions.automationId, automationId),
      currentUntagged ? or(isNotNull(automationVersions.version), eq(automationVersions.id, currentUntagged)) : isNotNull(automationVersions.version),
    );
    const rows = db
      .select()
      .from(automationVersions)
      .where(where)
      .orderBy(desc(automationVersions.createdAt), desc(automationVersions.id))
      .limit(page.limit)
      .offset(page.offset)
      .all();
    const total = db.select({ n: count() }).from(automationVersions).where(where).get()?.n ?? 0;
    return { rows, total };
  },
};
