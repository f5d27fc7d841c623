// The only code touching the files, blob_refs and upload_sessions tables.
import { and, eq, isNotNull, lte, ne, or, sql } from "drizzle-orm";
import type { Db } from "../db/client";
import { blobRefs, files, uploadSessions, type FileRow, type UploadSessionRow } from "./schema";

export const fileStore = {
  insert(db: Db, row: FileRow): void {
    db.insert(files).values(row).run();
  },
  byId(db: Db, tenantId: string, id: string): FileRow | undefined {
    return db.select().from(files).where(and(eq(files.tenantId, tenantId), eq(files.id, id))).get();
  },
  remove(db: Db, id: string): void {
    db.delete(files).where(eq(files.id, id)).run();
  },
  /** Files whose expiry has passed (any tenant), oldest first. */
  expired(db: Db, now: string, limit = 500): FileRow[] {
    return db.select().from(files).where(and(isNotNull(files.expiresAt), lte(files.expiresAt, now))).limit(limit).all();
  },
};

export const refStore = {
  add(db: Db, row: typeof blobRefs.$inferInsert): void {
    db.insert(blobRefs).values(row).onConflictDoNothing().run();
  },
  /** Removes every reference `owner` holds; returns the blobs it held. */
  releaseOwner(db: Db, owner: string): string[] {
    return db.delete(blobRefs).where(eq(blobRefs.owner, owner)).returning({ sha256: blobRefs.sha256 }).all().map((r) => r.sha256);
  },
};

export const sessionStore = {
  insert(db: Db, row: UploadSessionRow): void {
    db.insert(uploadSessions).values(row).run();
  },
  byId(db: Db, tenantId: string, id: string): UploadSessionRow | undefined {
    return db.select().from(uploadSessions).where(and(eq(uploadSessions.tenantId, tenantId), eq(uploadSessions.id, id))).get();
  },
  /** For the signed PUT, which carries no tenant: the signature already binds the id. */
  byIdAnyTenant(db: Db, id: string): UploadSessionRow | undefined {
    return db.select().from(uploadSessions).where(eq(uploadSessions.id, id)).get();
  },
  byIdempotencyKey(db: Db, tenantId: string, key: string): UploadSessionRow | undefined {
    return db
      .select()
      .from(uploadSessions)
      .where(and(eq(uploadSessions.tenantId, tenantId), eq(uploadSessions.idempotencyKey, key)))
      .get();
  },
  update(db: Db, id: string, set: Partial<UploadSessionRow>): void {
    db.update(uploadSessions).set(set).where(eq(uploadSessions.id, id)).run();
  },
  /** Sessions never completed that were created before `before` (abandoned). */
  abandoned(db: Db, before: string, limit = 500): UploadSessionRow[] {
    return db
      .select()
      .from(uploadSessions)
      .where(and(ne(uploadSessions.status, "completed"), lte(uploadSessions.createdAt, before)))
      .limit(limit)
      .all();
  },
  remove(db: Db, id: string): void {
    db.delete(uploadSessions).where(eq(uploadSessions.id, id)).run();
  },
};

/** Whether anything still needs the bytes of `sha256`: a live file, a reference, or an uncompleted upload. */
export function blobInUse(db: Db, sha256: string): boolean {
  const row = db
    .select({ n: sql<number>`1` })
    .from(files)
    .where(eq(files.sha256, sha256))
    .limit(1)
    .get();
  if (row) return true;
  if (db.select({ n: sql<number>`1` }).from(blobRefs).where(eq(blobRefs.sha256, sha256)).limit(1).get()) return true;
  return !!db
    .select({ n: sql<number>`1` })
    .from(uploadSessions)
    .where(and(eq(uploadSessions.sha256, sha256), or(eq(uploadSessions.status, "uploaded"), eq(uploadSessions.status, "pending"))))
    .limit(1)
    .get();
}
