// Drizzle tables of the files feature. Migrations: db/automation/0050-0099.
import { integer, primaryKey, sqliteTable, text } from "drizzle-orm/sqlite-core";

/** Reusable uploaded files. Bytes live in the blob store under `sha256`; a row only points at them. */
export const files = sqliteTable("files", {
  id: text("id").primaryKey(),
  tenantId: text("tenant_id").notNull(),
  filename: text("filename").notNull(),
  contentType: text("content_type").notNull(),
  size: integer("size").notNull(),
  sha256: text("sha256").notNull(),
  purpose: text("purpose"),
  createdAt: text("created_at").notNull(),
  /** Set for `run-input` files (created + 24 h); past it the file reads as missing and is swept. */
  expiresAt: text("expires_at"),
});

/**
 * Holders of a blob other than a live file row (a run's snapshot of an input file, a run artifact),
 * so deleting or expiring the file keeps the bytes readable for them.
 */
export const blobRefs = sqliteTable(
  "blob_refs",
  {
    sha256: text("sha256").notNull(),
    /** e.g. `run:run_...`; released together when the owner goes away. */
    owner: text("owner").notNull(),
    tenantId: text("tenant_id").notNull(),
    createdAt: text("created_at").notNull(),
  },
  (t) => [primaryKey({ columns: [t.sha256, t.owner] })],
);

/** Upload sessions (`POST /v1/files/uploads`): bytes arrive by a signed PUT, `complete` makes the file. */
export const uploadSessions = sqliteTable("upload_sessions", {
  id: text("id").primaryKey(),
  tenantId: text("tenant_id").notNull(),
  /** The id the file will get on complete (the SDK receives it up front). */
  fileId: text("file_id").notNull().unique(),
  filename: text("filename").notNull(),
  contentType: text("content_type").notNull(),
  /** Declared size; the PUT must deliver exactly this many bytes. */
  size: integer("size").notNull(),
  purpose: text("purpose"),
  idempotencyKey: text("idempotency_key"),
  status: text("status", { enum: ["pending", "uploaded", "completed", "aborted"] }).notNull(),
  /** Set once the PUT delivered the bytes. */
  sha256: text("sha256"),
  createdAt: text("created_at").notNull(),
  /** When the signed PUT URL stops working. */
  expiresAt: text("expires_at").notNull(),
  completedAt: text("completed_at"),
  /** S3 mode: the key the client PUTs to (`complete` hashes it into a blob). */
  stagingKey: text("staging_key"),
  /** S3 mode, presigned-multipart transport: the S3 multipart upload id. */
  multipartId: text("multipart_id"),
  partSize: integer("part_size"),
});

export type FileRow = typeof files.$inferSelect;
export type UploadSessionRow = typeof uploadSessions.$inferSelect;
export type BlobRefRow = typeof blobRefs.$inferSelect;
