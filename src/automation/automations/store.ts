// The only code touching the automations and automation_versions tables. Lookups every request makes
// are prepared once per connection (building a drizzle query costs far more than running it); a list
// joins each automation's current version in the same query.
import { and, count, desc, eq, isNotNull, or, sql, type SQLWrapper } from "drizzle-orm";
import type { Db } from "../db/client";
import { automations, automationVersions, type AutomationRow, type VersionRow } from "../db/schema";

const escapeLike = (s: string) => s.replace(/[\\%_]/g, (c) => `\\${c}`);
/** Substring match with LIKE wildcards in the needle taken literally; a null needle matches all. */
const contains = (col: SQLWrapper) => sql`${col} LIKE ${sql.placeholder("pat")} ESCAPE '\\'`;

function prepare(db: Db) {
  const listWhere = and(
    eq(automations.tenantId, sql.placeholder("tenantId")),
    sql`(${sql.placeholder("type")} IS NULL OR ${automations.type} = ${sql.placeholder("type")})`,
    sql`(${sql.placeholder("pat")} IS NULL OR ${or(contains(automations.slug), contains(automations.name), contains(automations.description))})`,
  );
  // Tagged rows plus the current untagged one when `current` names it (`id = NULL` matches nothing).
  const versionsWhere = and(
    eq(automationVersions.automationId, sql.placeholder("automationId")),
    or(isNotNull(automationVersions.version), eq(automationVersions.id, sql.placeholder("current"))),
  );
  return {
    byId: db
      .select()
      .from(automations)
      .where(and(eq(automations.tenantId, sql.placeholder("tenantId")), eq(automations.id, sql.placeholder("id"))))
      .prepare(),
    bySlug: db
      .select()
      .from(automations)
      .where(
        and(
          eq(automations.tenantId, sql.placeholder("tenantId")),
          eq(automations.type, sql.placeholder("type")),
          eq(automations.slug, sql.placeholder("slug")),
        ),
      )
      .prepare(),
    versionById: db
      .select()
      .from(automationVersions)
      .where(and(eq(automationVersions.automationId, sql.placeholder("automationId")), eq(automationVersions.id, sql.placeholder("id"))))
      .prepare(),
    list: db
      .select({ a: automations, v: automationVersions })
      .from(automations)
      .leftJoin(automationVersions, eq(automationVersions.id, automations.currentVersionId))
      .where(listWhere)
      .orderBy(desc(automations.createdAt), desc(automations.id))
      .limit(sql.placeholder("limit"))
      .offset(sql.placeholder("offset"))
      .prepare(),
    count: db.select({ n: count() }).from(automations).where(listWhere).prepare(),
    versionByTag: db
      .select()
      .from(automationVersions)
      .where(and(eq(automationVersions.automationId, sql.placeholder("automationId")), eq(automationVersions.version, sql.placeholder("tag"))))
      .prepare(),
    versions: db
      .select()
      .from(automationVersions)
      .where(versionsWhere)
      .orderBy(desc(automationVersions.createdAt), desc(automationVersions.id))
      .limit(sql.placeholder("limit"))
      .offset(sql.placeholder("offset"))
      .prepare(),
    versionCount: db.select({ n: count() }).from(automationVersions).where(versionsWhere).prepare(),
  };
}
const cache = new WeakMap<Db, ReturnType<typeof prepare>>();
const q = (db: Db) => {
  let p = cache.get(db);
  if (!p) cache.set(db, (p = prepare(db)));
  return p;
};

export const automationStore = {
  insert(db: Db, row: AutomationRow): void {
    db.insert(automations).values(row).run();
  },
  byId(db: Db, tenantId: string, id: string): AutomationRow | undefined {
    return q(db).byId.get({ tenantId, id });
  },
  bySlug(db: Db, tenantId: string, type: "workflow" | "agent", slug: string): AutomationRow | undefined {
    return q(db).bySlug.get({ tenantId, type, slug });
  },
  /** A page of automations, each with its current version row (if any), newest first. */
  list(db: Db, tenantId: string, f: { search?: string; type?: "workflow" | "agent"; limit: number; offset: number }) {
    const params = { tenantId, type: f.type ?? null, pat: f.search ? `%${escapeLike(f.search)}%` : null };
    const rows = q(db).list.all({ ...params, limit: f.limit, offset: f.offset });
    const total = q(db).count.get(params)?.n ?? 0;
    return { rows: rows.map((r) => ({ automation: r.a, current: r.v ?? undefined })), total };
  },
  setStatus(db: Db, id: string, status: string, updatedAt: string): void {
    db.update(automations).set({ status, updatedAt }).where(eq(automations.id, id)).run();
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
    return q(db).versionById.get({ automationId, id });
  },
  byTag(db: Db, automationId: string, tag: string): VersionRow | undefined {
    return q(db).versionByTag.get({ automationId, tag });
  },
  /** Tagged rows plus (when given) the current untagged row, newest first. */
  list(db: Db, automationId: string, currentUntagged: string | null, page: { limit: number; offset: number }) {
    const params = { automationId, current: currentUntagged };
    const rows = q(db).versions.all({ ...params, limit: page.limit, offset: page.offset });
    const total = q(db).versionCount.get(params)?.n ?? 0;
    return { rows, total };
  },
};
