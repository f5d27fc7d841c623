// The only code touching the files, blob_refs and upload_sessions tables. The reads every request
// makes (metadata, content, session lookups, the expiry sweep on upload, "is this blob still used")
// are prepared once per connection: building a drizzle query costs far more than running it.
import { and, eq, isNotNull, lte, ne, or, sql } from "drizzle-orm";
import type { Database } from "bun:sqlite";
import type { Db } from "../db/client";
import { blobRefs, files, uploadSessions, type FileRow, type UploadSessionRow } from "./schema";

const p = sql.placeholder;
const one = sql<number>`1`;

function prepare(db: Db) {
  return {
    fileById: db.select().from(files).where(and(eq(files.tenantId, p("tenantId")), eq(files.id, p("id")))).prepare(),
    expired: db.select().from(files).where(and(isNotNull(files.expiresAt), lte(files.expiresAt, p("now")))).limit(p("limit")).prepare(),
    sessionById: db.select().from(uploadSessions).where(and(eq(uploadSessions.tenantId, p("tenantId")), eq(uploadSessions.id, p("id")))).prepare(),
    sessionAnyTenant: db.select().from(uploadSessions).where(eq(uploadSessions.id, p("id"))).prepare(),
    sessionByKey: db
      .select()
      .from(uploadSessions)
      .where(and(eq(uploadSessions.tenantId, p("tenantId")), eq(uploadSessions.idempotencyKey, p("key"))))
      .prepare(),
    abandoned: db
      .select()
      .from(uploadSessions)
      .where(and(ne(uploadSessions.status, "completed"), lte(uploadSessions.createdAt, p("before"))))
      .limit(p("limit"))
      .prepare(),
    fileInsert: db
      .insert(files)
      .values({
        id: p("id"),
        tenantId: p("tenantId"),
        filename: p("filename"),
        contentType: p("contentType"),
        size: p("size"),
        sha256: p("sha256"),
        purpose: p("purpose"),
        createdAt: p("createdAt"),
        expiresAt: p("expiresAt"),
      })
      .prepare(),
    fileRemove: db.delete(files).where(eq(files.id, p("id"))).prepare(),
    refAdd: db
      .insert(blobRefs)
      .values({ sha256: p("sha256"), owner: p("owner"), tenantId: p("tenantId"), createdAt: p("createdAt") })
      .onConflictDoNothing()
      .prepare(),
    releaseOwner: db.delete(blobRefs).where(eq(blobRefs.owner, p("owner"))).returning({ sha256: blobRefs.sha256 }).prepare(),
    fileUses: db.select({ n: one }).from(files).where(eq(files.sha256, p("sha256"))).limit(1).prepare(),
    refUses: db.select({ n: one }).from(blobRefs).where(eq(blobRefs.sha256, p("sha256"))).limit(1).prepare(),
    sessionUses: db
      .select({ n: one })
      .from(uploadSessions)
      .where(and(eq(uploadSessions.sha256, p("sha256")), or(eq(uploadSessions.status, "uploaded"), eq(uploadSessions.status, "pending"))))
      .limit(1)
      .prepare(),
  };
}
const cache = new WeakMap<Db, ReturnType<typeof prepare>>();
const q = (db: Db) => {
  let prepared = cache.get(db);
  if (!prepared) cache.set(db, (prepared = prepare(db)));
  return prepared;
};

export const fileStore = {
  insert(db: Db, row: FileRow): void {
    q(db).fileInsert.run(row);
  },
  byId(db: Db, tenantId: string, id: string): FileRow | undefined {
    return q(db).fileById.get({ tenantId, id });
  },
  remove(db: Db, id: string): void {
    q(db).fileRemove.run({ id });
  },
  /** Files whose expiry has passed (any tenant), oldest first. */
  expired(db: Db, now: string, limit = 500): FileRow[] {
    return q(db).expired.all({ now, limit });
  },
};

export const refStore = {
  add(db: Db, row: typeof blobRefs.$inferInsert): void {
    q(db).refAdd.run(row);
  },
  /** Removes every reference `owner` holds; returns the blobs it held. */
  releaseOwner(db: Db, owner: string): string[] {
    return q(db).releaseOwner.all({ owner }).map((r) => r.sha256);
  },
};

export const sessionStore = {
  insert(db: Db, row: UploadSessionRow): void {
    db.insert(uploadSessions).values(row).run();
  },
  byId(db: Db, tenantId: string, id: string): UploadSessionRow | undefined {
    return q(db).sessionById.get({ tenantId, id });
  },
  /** For the signed PUT, which carries no tenant: the signature already binds the id. */
  byIdAnyTenant(db: Db, id: string): UploadSessionRow | undefined {
    return q(db).sessionAnyTenant.get({ id });
  },
  byIdempotencyKey(db: Db, tenantId: string, key: string): UploadSessionRow | undefined {
    return q(db).sessionByKey.get({ tenantId, key });
  },
  update(db: Db, id: string, set: Partial<UploadSessionRow>): void {
    db.update(uploadSessions).set(set).where(eq(uploadSessions.id, id)).run();
  },
  /** Sessions never completed that were created before `before` (abandoned). */
  abandoned(db: Db, before: string, limit = 500): UploadSessionRow[] {
    return q(db).abandoned.all({ before, limit });
  },
  remove(db: Db, id: string): void {
    db.delete(uploadSessions).where(eq(uploadSessions.id, id)).run();
  },
};

/** Whether anything still needs the bytes of `sha256`: a live file, a reference, or an uncompleted upload. */
export function blobInUse(db: Db, sha256: string): boolean {
  const prepared = q(db);
  return !!(prepared.fileUses.get({ sha256 }) ?? prepared.refUses.get({ sha256 }) ?? prepared.sessionUses.get({ sha256 }));
}

/** Tables (other than upload_sessions) with a `sha256` column: each row there holds its blob. */
function blobTables(sqlite: Database): string[] {
  const tables = sqlite.query<{ name: string }, []>("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'").all();
  return tables
    .map((t) => t.name)
    .filter((name) => name !== "upload_sessions" && sqlite.query<{ name: string }, []>(`SELECT name FROM pragma_table_info('${name.replace(/'/g, "''")}')`).all().some((c) => c.name === "sha256"));
}

/**
 * Every blob some row still needs, for the sweeper: any table with a sha256 column (files, references,
 * run files, example files, template revisions, corrected files — and tables added later), plus
 * upload sessions not yet completed or aborted.
 */
export function referencedBlobs(sqlite: Database): Set<string> {
  const out = new Set<string>();
  for (const t of blobTables(sqlite)) {
    for (const r of sqlite.query<{ sha256: string | null }, []>(`SELECT DISTINCT sha256 FROM "${t}"`).all()) if (r.sha256) out.add(r.sha256);
  }
  for (const r of sqlite.query<{ sha256: string }, []>("SELECT sha256 FROM upload_sessions WHERE sha256 IS NOT NULL AND status IN ('pending', 'uploaded')").all()) out.add(r.sha256);
  return out;
}

/** The same question for one blob, asked again right before the sweeper deletes it. */
export function blobReferenced(sqlite: Database, db: Db, sha256: string): boolean {
  if (blobInUse(db, sha256)) return true;
  return blobTables(sqlite).some((t) => sqlite.query(`SELECT 1 FROM "${t}" WHERE sha256 = ? LIMIT 1`).get(sha256) !== null);
}

export const directSessions = {
  /** Pending sessions whose URLs expired before `before`: nobody can send them bytes any more. */
  stale(db: Db, before: string): UploadSessionRow[] {
    return db.select().from(uploadSessions).where(and(eq(uploadSessions.status, "pending"), lte(uploadSessions.expiresAt, before))).limit(500).all();
  },
  /** Staging keys of sessions that may still receive bytes or be completed. */
  liveKeys(db: Db): Set<string> {
    const rows = db.select({ k: uploadSessions.stagingKey }).from(uploadSessions).where(and(isNotNull(uploadSessions.stagingKey), or(eq(uploadSessions.status, "pending"), eq(uploadSessions.status, "uploaded")))).all();
    return new Set(rows.map((r) => r.k!));
  },
};
