// Files, blob pins and upload sessions on PostgreSQL. A session's moves lock its row (FOR UPDATE), so
// concurrent completes in any number of processes make one file; a pin of a file locks the file row
// (FOR SHARE), so a concurrent delete waits for the pin and then sees it before releasing the bytes;
// the unique (tenant, idempotency key) index makes one session of racing creates.
import type { CompleteResult, FileStore, ReceiveResult } from "../../files/store";
import type { BlobRefRow, FileRow, UploadSessionRow } from "../tables/files";
import { type Pg, plainRows } from "./rows";

const FILE_COLS = `id, tenant_id AS "tenantId", filename, content_type AS "contentType", size::float8 AS size, sha256, purpose, created_at AS "createdAt", expires_at AS "expiresAt"`;
const SESSION_COLS = `id, tenant_id AS "tenantId", file_id AS "fileId", filename, content_type AS "contentType", size::float8 AS size, purpose,
  idempotency_key AS "idempotencyKey", status, sha256, created_at AS "createdAt", expires_at AS "expiresAt", completed_at AS "completedAt",
  staging_key AS "stagingKey", multipart_id AS "multipartId", part_size::float8 AS "partSize"`;
const OPEN = `status IN ('pending', 'uploaded')`;

async function insertFile(tx: Pg, r: FileRow): Promise<void> {
  await tx`INSERT INTO files (id, tenant_id, filename, content_type, size, sha256, purpose, created_at, expires_at)
    VALUES (${r.id}, ${r.tenantId}, ${r.filename}, ${r.contentType}, ${r.size}, ${r.sha256}, ${r.purpose}, ${r.createdAt}, ${r.expiresAt})`;
}

async function addRef(tx: Pg, r: BlobRefRow): Promise<void> {
  await tx`INSERT INTO blob_refs (sha256, owner, tenant_id, created_at) VALUES (${r.sha256}, ${r.owner}, ${r.tenantId}, ${r.createdAt}) ON CONFLICT DO NOTHING`;
}

export class PgFileStore implements FileStore {
  constructor(readonly pg: Pg) {}

  private async files(where: string, args: unknown[], tx: Pg = this.pg): Promise<FileRow[]> {
    return plainRows<FileRow>(await tx.unsafe(`SELECT ${FILE_COLS} FROM files WHERE ${where}`, args));
  }

  private async sessions(where: string, args: unknown[], tx: Pg = this.pg): Promise<UploadSessionRow[]> {
    return plainRows<UploadSessionRow>(await tx.unsafe(`SELECT ${SESSION_COLS} FROM upload_sessions WHERE ${where}`, args));
  }

  insertFile(row: FileRow): Promise<void> {
    return insertFile(this.pg, row);
  }

  async file(tenantId: string, id: string): Promise<FileRow | undefined> {
    return (await this.files("tenant_id = $1 AND id = $2", [tenantId, id]))[0];
  }

  async listFiles(tenantId: string, now: string, page: { limit: number; offset: number; purpose?: string }): Promise<{ rows: FileRow[]; total: number }> {
    const where = `tenant_id = $1 AND (expires_at IS NULL OR expires_at > $2)${page.purpose === undefined ? "" : " AND purpose = $3"}`;
    const args: unknown[] = page.purpose === undefined ? [tenantId, now] : [tenantId, now, page.purpose];
    const rows = await this.files(`${where} ORDER BY created_at DESC, id DESC LIMIT ${page.limit} OFFSET ${page.offset}`, args);
    const [{ n }] = plainRows<{ n: number }>(await this.pg.unsafe(`SELECT count(*)::float8 AS n FROM files WHERE ${where}`, args));
    return { rows, total: n };
  }

  async removeFile(id: string): Promise<void> {
    await this.pg`DELETE FROM files WHERE id = ${id}`;
  }

  expiredFiles(now: string, limit: number): Promise<FileRow[]> {
    return this.files("expires_at IS NOT NULL AND expires_at <= $1 ORDER BY expires_at, id LIMIT $2", [now, limit]);
  }

  snapshot(tenantId: string, fileId: string, owner: string, now: string): Promise<FileRow | undefined> {
    return this.pg.begin(async (tx) => {
      const [row] = await this.files("tenant_id = $1 AND id = $2 AND (expires_at IS NULL OR expires_at > $3) FOR SHARE", [tenantId, fileId, now], tx);
      if (!row) return undefined;
      await addRef(tx, { sha256: row.sha256, owner, tenantId, createdAt: now });
      return row;
    });
  }

  retain(ref: BlobRefRow): Promise<void> {
    return addRef(this.pg, ref);
  }

  async releaseOwner(owner: string): Promise<string[]> {
    const rows = await this.pg`DELETE FROM blob_refs WHERE owner = ${owner} RETURNING sha256`;
    return rows.map((r: { sha256: string }) => r.sha256);
  }

  async blobInUse(sha256: string): Promise<boolean> {
    const [r] = await this.pg.unsafe(
      `SELECT EXISTS (SELECT 1 FROM files WHERE sha256 = $1) OR EXISTS (SELECT 1 FROM blob_refs WHERE sha256 = $1)
        OR EXISTS (SELECT 1 FROM upload_sessions WHERE sha256 = $1 AND ${OPEN}) AS used`,
      [sha256],
    );
    return r.used === true;
  }

  /** Tables (other than upload_sessions) with a `sha256` column: each row there holds its blob. */
  private async blobTables(): Promise<string[]> {
    const rows = await this.pg`SELECT c.table_name AS name FROM information_schema.columns c
      JOIN information_schema.tables t ON t.table_schema = c.table_schema AND t.table_name = c.table_name AND t.table_type = 'BASE TABLE'
      WHERE c.table_schema = current_schema() AND c.column_name = 'sha256' AND c.table_name <> 'upload_sessions' ORDER BY 1`;
    return rows.map((r: { name: string }) => r.name);
  }

  private static ident(name: string): string {
    return `"${name.replace(/"/g, '""')}"`;
  }

  async referencedBlobs(): Promise<Set<string>> {
    const selects = (await this.blobTables()).map((t) => `SELECT sha256 FROM ${PgFileStore.ident(t)} WHERE sha256 IS NOT NULL`);
    selects.push(`SELECT sha256 FROM upload_sessions WHERE sha256 IS NOT NULL AND ${OPEN}`);
    const rows = await this.pg.unsafe(selects.join(" UNION "));
    return new Set(rows.map((r: { sha256: string }) => r.sha256));
  }

  async blobReferenced(sha256: string): Promise<boolean> {
    const exists = (await this.blobTables()).map((t) => `EXISTS (SELECT 1 FROM ${PgFileStore.ident(t)} WHERE sha256 = $1)`);
    exists.push(`EXISTS (SELECT 1 FROM upload_sessions WHERE sha256 = $1 AND ${OPEN})`);
    const [r] = await this.pg.unsafe(`SELECT (${exists.join(" OR ")}) AS used`, [sha256]);
    return r.used === true;
  }

  async createSession(row: UploadSessionRow): Promise<{ session: UploadSessionRow; created: boolean }> {
    const r = row;
    const inserted = await this.pg`INSERT INTO upload_sessions (id, tenant_id, file_id, filename, content_type, size, purpose, idempotency_key, status, sha256,
        created_at, expires_at, completed_at, staging_key, multipart_id, part_size)
      VALUES (${r.id}, ${r.tenantId}, ${r.fileId}, ${r.filename}, ${r.contentType}, ${r.size}, ${r.purpose}, ${r.idempotencyKey}, ${r.status}, ${r.sha256},
        ${r.createdAt}, ${r.expiresAt}, ${r.completedAt}, ${r.stagingKey}, ${r.multipartId}, ${r.partSize})
      ON CONFLICT DO NOTHING RETURNING id`;
    if (inserted.length) return { session: row, created: true };
    const earlier = row.idempotencyKey ? await this.sessionByKey(row.tenantId, row.idempotencyKey) : undefined;
    if (!earlier) throw new Error(`upload session ${row.id} was not stored`);
    return { session: earlier, created: false };
  }

  async session(tenantId: string, id: string): Promise<UploadSessionRow | undefined> {
    return (await this.sessions("tenant_id = $1 AND id = $2", [tenantId, id]))[0];
  }

  async sessionAnyTenant(id: string): Promise<UploadSessionRow | undefined> {
    return (await this.sessions("id = $1", [id]))[0];
  }

  async sessionByKey(tenantId: string, key: string): Promise<UploadSessionRow | undefined> {
    return (await this.sessions("tenant_id = $1 AND idempotency_key = $2", [tenantId, key]))[0];
  }

  receive(id: string, sha256: string): Promise<ReceiveResult> {
    return this.pg.begin(async (tx): Promise<ReceiveResult> => {
      const [s] = await this.sessions("id = $1 FOR UPDATE", [id], tx);
      if (!s || s.status === "completed" || s.status === "aborted") return { kind: "closed", status: s?.status ?? null };
      await tx`UPDATE upload_sessions SET status = 'uploaded', sha256 = ${sha256} WHERE id = ${id}`;
      return { kind: "received", session: { ...s, status: "uploaded", sha256 }, previous: s.sha256 };
    });
  }

  async staged(id: string, sha256: string): Promise<UploadSessionRow | undefined> {
    await this.pg`UPDATE upload_sessions SET status = 'uploaded', sha256 = ${sha256} WHERE id = ${id} AND status = 'pending'`;
    return this.sessionAnyTenant(id);
  }

  complete(tenantId: string, id: string, plan: (s: UploadSessionRow) => FileRow): Promise<CompleteResult> {
    return this.pg.begin(async (tx): Promise<CompleteResult> => {
      const [s] = await this.sessions("tenant_id = $1 AND id = $2 FOR UPDATE", [tenantId, id], tx);
      if (!s) return { kind: "not_found" };
      if (s.status === "completed") {
        const [file] = await this.files("tenant_id = $1 AND id = $2", [tenantId, s.fileId], tx);
        return file ? { kind: "again", file } : { kind: "file_gone" };
      }
      const file = plan(s);
      await insertFile(tx, file);
      await tx`UPDATE upload_sessions SET status = 'completed', completed_at = ${file.createdAt} WHERE id = ${id}`;
      return { kind: "fresh", file };
    });
  }

  async undoComplete(sessionId: string, fileId: string): Promise<void> {
    await this.pg.begin(async (tx) => {
      await tx`DELETE FROM files WHERE id = ${fileId}`;
      await tx`UPDATE upload_sessions SET status = 'aborted', completed_at = NULL WHERE id = ${sessionId}`;
    });
  }

  abort(tenantId: string, id: string): Promise<{ before: UploadSessionRow; aborted: boolean } | undefined> {
    return this.pg.begin(async (tx) => {
      const [s] = await this.sessions("tenant_id = $1 AND id = $2 FOR UPDATE", [tenantId, id], tx);
      if (!s) return undefined;
      if (s.status === "completed" || s.status === "aborted") return { before: s, aborted: false };
      await tx`UPDATE upload_sessions SET status = 'aborted', sha256 = NULL WHERE id = ${id}`;
      return { before: s, aborted: true };
    });
  }

  abandonedSessions(before: string, limit: number): Promise<UploadSessionRow[]> {
    return this.sessions("status <> 'completed' AND created_at <= $1 ORDER BY created_at, id LIMIT $2", [before, limit]);
  }

  staleSessions(before: string, limit: number): Promise<UploadSessionRow[]> {
    return this.sessions("status = 'pending' AND expires_at <= $1 ORDER BY expires_at, id LIMIT $2", [before, limit]);
  }

  async removeSession(id: string): Promise<void> {
    await this.pg`DELETE FROM upload_sessions WHERE id = ${id}`;
  }

  async liveStagingKeys(): Promise<Set<string>> {
    const rows = await this.pg.unsafe(`SELECT staging_key AS k FROM upload_sessions WHERE staging_key IS NOT NULL AND ${OPEN}`);
    return new Set(rows.map((r: { k: string }) => r.k));
  }
}
