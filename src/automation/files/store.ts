// What files need from storage: reusable files, the pins other owners hold on blobs, and upload
// sessions. One async interface; db/sqlite/files.ts and db/pg/files.ts implement it. This module imports no implementation.
// Files, sessions and pins are drizzle-inferred rows (db/tables/files.ts); callers take them from here.
import type { BlobRefRow, FileRow, UploadSessionRow } from "../db/tables/files";

export type { BlobRefRow, FileRow, UploadSessionRow };

/** The outcome of `FileStore.complete`. */
export type CompleteResult = { kind: "fresh"; file: FileRow } | { kind: "again"; file: FileRow } | { kind: "not_found" } | { kind: "file_gone" };

/** What `FileStore.receive` did: recorded the bytes (and which ones they replaced), or found the session closed. */
export type ReceiveResult = { kind: "received"; session: UploadSessionRow; previous: string | null } | { kind: "closed"; status: string | null };

/**
 * Reusable files (bytes live in the blob store under `sha256`; a row only points at them), the pins
 * other owners hold on blobs (`blob_refs`), and upload sessions. Every step that moves a session or
 * pins a file is one method decided inside the database, so it holds across processes.
 */
export interface FileStore {
  insertFile(row: FileRow): Promise<void>;
  file(tenantId: string, id: string): Promise<FileRow | undefined>;
  /** The tenant's files not expired at `now`, newest first (`files_tenant` index), and how many there are. */
  listFiles(tenantId: string, now: string, page: { limit: number; offset: number; purpose?: string }): Promise<{ rows: FileRow[]; total: number }>;
  removeFile(id: string): Promise<void>;
  /** Files whose expiry passed at `now` (any tenant). */
  expiredFiles(now: string, limit: number): Promise<FileRow[]>;
  /**
   * Pins the bytes of a live file (not expired at `now`) under `owner` and returns the file; undefined
   * (nothing pinned) when there is none. A concurrent delete of the file waits for the pin, so the
   * bytes are never released between reading the file and pinning it.
   */
  snapshot(tenantId: string, fileId: string, owner: string, now: string): Promise<FileRow | undefined>;
  /** Pins `sha256` under `owner` (a second pin of the same pair is a no-op). */
  retain(ref: BlobRefRow): Promise<void>;
  /** Drops every pin `owner` holds; returns the blobs it held. */
  releaseOwner(owner: string): Promise<string[]>;
  /** Whether a live file, a pin or an uncompleted upload still needs `sha256`. */
  blobInUse(sha256: string): Promise<boolean>;
  /**
   * For the sweeper: every blob some row needs, i.e. any table with a sha256 column (files, pins, run
   * files, example files, template revisions, …, and tables added later) and uncompleted uploads.
   */
  referencedBlobs(): Promise<Set<string>>;
  /** The same question for one blob, in one statement (one snapshot), asked again right before a delete. */
  blobReferenced(sha256: string): Promise<boolean>;

  /**
   * A new session; with an idempotency key the tenant already used, the existing session instead
   * (`created` false, nothing written). The unique (tenant, key) index decides between racers.
   */
  createSession(row: UploadSessionRow): Promise<{ session: UploadSessionRow; created: boolean }>;
  session(tenantId: string, id: string): Promise<UploadSessionRow | undefined>;
  /** For the signed PUT, which carries no tenant (the signature binds the id). */
  sessionAnyTenant(id: string): Promise<UploadSessionRow | undefined>;
  sessionByKey(tenantId: string, key: string): Promise<UploadSessionRow | undefined>;
  /** The PUT's bytes arrived: the session (pending or uploaded) becomes uploaded with `sha256`. */
  receive(id: string, sha256: string): Promise<ReceiveResult>;
  /** S3 mode: the staged object became blob `sha256`; a pending session becomes uploaded. Returns the session as it is after. */
  staged(id: string, sha256: string): Promise<UploadSessionRow | undefined>;
  /**
   * Completes the session once: a completed one answers its file again ("again", or "file_gone" when
   * the file was deleted since); else `plan` (pure; throws the domain error for an aborted, incomplete
   * or mismatching session) gives the file row, inserted with the session's move to completed (at the file's createdAt).
   * Concurrent completes (any process) make exactly one file.
   */
  complete(tenantId: string, id: string, plan: (s: UploadSessionRow) => FileRow): Promise<CompleteResult>;
  /** Undoes a completion whose bytes vanished: the file goes, the session is aborted. */
  undoComplete(sessionId: string, fileId: string): Promise<void>;
  /** Aborts a session not yet completed or aborted; returns it as it was before (undefined: no such session). */
  abort(tenantId: string, id: string): Promise<{ before: UploadSessionRow; aborted: boolean } | undefined>;
  /** Sessions never completed, created before `before`. */
  abandonedSessions(before: string, limit: number): Promise<UploadSessionRow[]>;
  /** Pending sessions whose URL expired before `before`. */
  staleSessions(before: string, limit: number): Promise<UploadSessionRow[]>;
  removeSession(id: string): Promise<void>;
  /** Staging keys of sessions that may still receive bytes or be completed. */
  liveStagingKeys(): Promise<Set<string>>;
}
