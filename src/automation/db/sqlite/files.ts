// Files, blob pins and upload sessions on SQLite (db/automation/0050, 0060). The reads every request
// makes (metadata, session lookups, the expiry sweep on upload, "is this blob still used") are
// prepared once per connection: building a drizzle query costs far more than running it. Multi-step
// moves run in one synchronous transaction, so nothing interleaves with them.
import type { Database } from "bun:sqlite";
import { and, desc, eq, inArray, isNotNull, lte, ne, sql } from "drizzle-orm";
import { dbOf, type Db } from "../client";
import type { CompleteResult, FileStore, ReceiveResult } from "../../files/store";
import { blobRefs, files, uploadSessions, type BlobRefRow, type FileRow, type UploadSessionRow } from "../tables/files";

const p = sql.placeholder;
const one = sql<number>`1`;
const OPEN = ["pending", "uploaded"] as const;

function prepare(db: Db) {
  return {
    fileById: db.select().from(files).where(and(eq(files.tenantId, p("tenantId")), eq(files.id, p("id")))).prepare(),
    expired: db.select().from(files).where(and(isNotNull(files.expiresAt), lte(files.expiresAt, p("now")))).orderBy(files.expiresAt, files.id).limit(p("limit")).prepare(),
    sessionById: db.select().from(uploadSessions).where(and(eq(uploadSessions.tenantId, p("tenantId")), eq(uploadSessions.id, p("id")))).prepare(),
    sessionAnyTenant: db.select().from(uploadSessions).where(eq(uploadSessions.id, p("id"))).prepare(),
    sessionByKey: db.select().from(uploadSessions).where(and(eq(uploadSessions.tenantId, p("tenantId")), eq(uploadSessions.idempotencyKey, p("key")))).prepare(),
    abandoned: db.select().from(uploadSessions).where(and(ne(uploadSessions.status, "completed"), lte(uploadSessions.createdAt, p("before")))).orderBy(uploadSessions.createdAt, uploadSessions.id).limit(p("limit")).prepare(),
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
    refAdd: db.insert(blobRefs).values({ sha256: p("sha256"), owner: p("owner"), tenantId: p("tenantId"), createdAt: p("createdAt") }).onConflictDoNothing().prepare(),
    releaseOwner: db.delete(blobRefs).where(eq(blobRefs.owner, p("owner"))).returning({ sha256: blobRefs.sha256 }).prepare(),
    fileUses: db.select({ n: one }).from(files).where(eq(files.sha256, p("sha256"))).limit(1).prepare(),
    refUses: db.select({ n: one }).from(blobRefs).where(eq(blobRefs.sha256, p("sha256"))).limit(1).prepare(),
    sessionUses: db.select({ n: one }).from(uploadSessions).where(and(eq(uploadSessions.sha256, p("sha256")), inArray(uploadSessions.status, [...OPEN]))).limit(1).prepare(),
  };
}

export class SqliteFileStore implements FileStore {
  private readonly db: Db;
  private readonly q: ReturnType<typeof prepare>;
  constructor(private readonly sqlite: Database) {
    this.db = dbOf(sqlite);
    this.q = prepare(this.db);
  }

  async insertFile(row: FileRow): Promise<void> {
    this.q.fileInsert.run(row);
  }

  async file(tenantId: string, id: string): Promise<FileRow | undefined> {
    return this.q.fileById.get({ tenantId, id });
  }

  async removeFile(id: string): Promise<void> {
    this.q.fileRemove.run({ id });
  }

  async listFiles(tenantId: string, now: string, page: { limit: number; offset: number; purpose?: string }): Promise<{ rows: FileRow[]; total: number }> {
    const where = and(
      eq(files.tenantId, tenantId),
      sql`(${files.expiresAt} IS NULL OR ${files.expiresAt} > ${now})`,
      page.purpose === undefined ? undefined : eq(files.purpose, page.purpose),
    );
    const rows = this.db.select().from(files).where(where).orderBy(desc(files.createdAt), desc(files.id)).limit(page.limit).offset(page.offset).all();
    const total = this.db.select({ n: sql<number>`count(*)` }).from(files).where(where).get()?.n ?? 0;
    return { rows, total };
  }

  async expiredFiles(now: string, limit: number): Promise<FileRow[]> {
    return this.q.expired.all({ now, limit });
  }

  async snapshot(tenantId: string, fileId: string, owner: string, now: string): Promise<FileRow | undefined> {
    return this.sqlite.transaction(() => {
      const row = this.q.fileById.get({ tenantId, id: fileId });
      if (!row || (row.expiresAt !== null && row.expiresAt <= now)) return undefined;
      this.q.refAdd.run({ sha256: row.sha256, owner, tenantId, createdAt: now });
      return row;
    }).immediate();
  }

  async retain(ref: BlobRefRow): Promise<void> {
    this.q.refAdd.run(ref);
  }

  async releaseOwner(owner: string): Promise<string[]> {
    return this.q.releaseOwner.all({ owner }).map((r) => r.sha256);
  }

  async blobInUse(sha256: string): Promise<boolean> {
    return !!(this.q.fileUses.get({ sha256 }) ?? this.q.refUses.get({ sha256 }) ?? this.q.sessionUses.get({ sha256 }));
  }

  /** Tables (other than upload_sessions) with a `sha256` column: each row there holds its blob. */
  private blobTables(): string[] {
    const tables = this.sqlite.query<{ name: string }, []>("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'").all();
    return tables
      .map((t) => t.name)
      .filter((name) => name !== "upload_sessions" && this.sqlite.query<{ name: string }, []>(`SELECT name FROM pragma_table_info('${name.replace(/'/g, "''")}')`).all().some((c) => c.name === "sha256"));
  }

  async referencedBlobs(): Promise<Set<string>> {
    const out = new Set<string>();
    for (const t of this.blobTables()) {
      for (const r of this.sqlite.query<{ sha256: string | null }, []>(`SELECT DISTINCT sha256 FROM "${t}"`).all()) if (r.sha256) out.add(r.sha256);
    }
    for (const r of this.sqlite.query<{ sha256: string }, []>("SELECT sha256 FROM upload_sessions WHERE sha256 IS NOT NULL AND status IN ('pending', 'uploaded')").all()) out.add(r.sha256);
    return out;
  }

  async blobReferenced(sha256: string): Promise<boolean> {
    const exists = [...this.blobTables().map((t) => `EXISTS (SELECT 1 FROM "${t}" WHERE sha256 = ?1)`), "EXISTS (SELECT 1 FROM upload_sessions WHERE sha256 = ?1 AND status IN ('pending', 'uploaded'))"];
    const r = this.sqlite.query<{ used: number }, [string]>(`SELECT (${exists.join(" OR ")}) AS used`).get(sha256);
    return r?.used === 1;
  }

  async createSession(row: UploadSessionRow): Promise<{ session: UploadSessionRow; created: boolean }> {
    return this.sqlite.transaction(() => {
      const inserted = this.db.insert(uploadSessions).values(row).onConflictDoNothing().returning({ id: uploadSessions.id }).all().length > 0;
      if (inserted) return { session: row, created: true };
      const earlier = row.idempotencyKey ? this.q.sessionByKey.get({ tenantId: row.tenantId, key: row.idempotencyKey }) : undefined;
      if (!earlier) throw new Error(`upload session ${row.id} was not stored`);
      return { session: earlier, created: false };
    }).immediate();
  }

  async session(tenantId: string, id: string): Promise<UploadSessionRow | undefined> {
    return this.q.sessionById.get({ tenantId, id });
  }

  async sessionAnyTenant(id: string): Promise<UploadSessionRow | undefined> {
    return this.q.sessionAnyTenant.get({ id });
  }

  async sessionByKey(tenantId: string, key: string): Promise<UploadSessionRow | undefined> {
    return this.q.sessionByKey.get({ tenantId, key });
  }

  async receive(id: string, sha256: string): Promise<ReceiveResult> {
    return this.sqlite.transaction((): ReceiveResult => {
      const s = this.q.sessionAnyTenant.get({ id });
      if (!s || s.status === "completed" || s.status === "aborted") return { kind: "closed", status: s?.status ?? null };
      this.db.update(uploadSessions).set({ status: "uploaded", sha256 }).where(eq(uploadSessions.id, id)).run();
      return { kind: "received", session: { ...s, status: "uploaded", sha256 }, previous: s.sha256 };
    }).immediate();
  }

  async staged(id: string, sha256: string): Promise<UploadSessionRow | undefined> {
    this.db.update(uploadSessions).set({ status: "uploaded", sha256 }).where(and(eq(uploadSessions.id, id), eq(uploadSessions.status, "pending"))).run();
    return this.q.sessionAnyTenant.get({ id });
  }

  async complete(tenantId: string, id: string, plan: (s: UploadSessionRow) => FileRow): Promise<CompleteResult> {
    return this.sqlite.transaction((): CompleteResult => {
      const s = this.q.sessionById.get({ tenantId, id });
      if (!s) return { kind: "not_found" };
      if (s.status === "completed") {
        const file = this.q.fileById.get({ tenantId, id: s.fileId });
        return file ? { kind: "again", file } : { kind: "file_gone" };
      }
      const file = plan(s);
      this.q.fileInsert.run(file);
      this.db.update(uploadSessions).set({ status: "completed", completedAt: file.createdAt }).where(eq(uploadSessions.id, id)).run();
      return { kind: "fresh", file };
    }).immediate();
  }

  async undoComplete(sessionId: string, fileId: string): Promise<void> {
    this.sqlite.transaction(() => {
      this.q.fileRemove.run({ id: fileId });
      this.db.update(uploadSessions).set({ status: "aborted", completedAt: null }).where(eq(uploadSessions.id, sessionId)).run();
    }).immediate();
  }

  async abort(tenantId: string, id: string): Promise<{ before: UploadSessionRow; aborted: boolean } | undefined> {
    return this.sqlite.transaction(() => {
      const s = this.q.sessionById.get({ tenantId, id });
      if (!s) return undefined;
      if (s.status === "completed" || s.status === "aborted") return { before: s, aborted: false };
      this.db.update(uploadSessions).set({ status: "aborted", sha256: null }).where(eq(uploadSessions.id, id)).run();
      return { before: s, aborted: true };
    }).immediate();
  }

  async abandonedSessions(before: string, limit: number): Promise<UploadSessionRow[]> {
    return this.q.abandoned.all({ before, limit });
  }

  async staleSessions(before: string, limit: number): Promise<UploadSessionRow[]> {
    return this.db.select().from(uploadSessions).where(and(eq(uploadSessions.status, "pending"), lte(uploadSessions.expiresAt, before))).orderBy(uploadSessions.expiresAt, uploadSessions.id).limit(limit).all();
  }

  async removeSession(id: string): Promise<void> {
    this.db.delete(uploadSessions).where(eq(uploadSessions.id, id)).run();
  }

  async liveStagingKeys(): Promise<Set<string>> {
    const rows = this.db.select({ k: uploadSessions.stagingKey }).from(uploadSessions).where(and(isNotNull(uploadSessions.stagingKey), inArray(uploadSessions.status, [...OPEN]))).all();
    return new Set(rows.map((r) => r.k!));
  }
}
