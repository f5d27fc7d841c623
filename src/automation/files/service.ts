// The rules of reusable files: store bytes once per content, keep metadata per tenant, expire
// run-input files after 24 h, keep bytes alive while a run snapshot or an upload needs them.
import { Conflict, Invalid, NotFound } from "../../kernel/errors";
import { newId } from "../../kernel/ids";
import type { AutomationContext } from "../context";
import type { BlobInfo } from "../blobs/blobs";
import { checkFilename } from "./filename";
import { readText, type Part } from "./multipart";
import { ContentType, FILE_MAX_BYTES, Purpose, RUN_INPUT_TTL_MS, type FileSnapshot, type FileView } from "./model";
import type { FileRow } from "./store";
import * as v from "valibot";

export type FilesContext = Pick<AutomationContext, "storage" | "blobs" | "clock" | "log">;

export interface FileMeta {
  filename: string;
  contentType: string;
  purpose: string | null;
}

export function toView(row: FileRow): FileView {
  return {
    id: row.id,
    filename: row.filename,
    contentType: row.contentType,
    size: row.size,
    purpose: row.purpose,
    createdAt: row.createdAt,
  };
}

/** Validates what a client says about a file before any byte is stored. */
export function checkMeta(input: { filename: string; contentType?: string | null; purpose?: string | null }, prefix = ""): FileMeta {
  const at = (f: string) => (prefix ? `${prefix}.${f}` : f);
  const filename = checkFilename(input.filename, at("filename"));
  let contentType = "application/octet-stream";
  if (input.contentType) {
    const r = v.safeParse(ContentType, input.contentType);
    if (!r.success) throw Invalid(r.issues[0].message, { field: at("contentType"), code: "invalid_value" });
    contentType = r.output;
  }
  let purpose: string | null = null;
  if (input.purpose !== undefined && input.purpose !== null && input.purpose !== "") {
    const r = v.safeParse(Purpose, input.purpose);
    if (!r.success) throw Invalid(r.issues[0].message, { field: at("purpose"), code: "invalid_value" });
    purpose = r.output;
  }
  return { filename, contentType, purpose };
}

/** Streams bytes into the blob store (bounded by `maxBytes`, default the file ceiling). */
export function putBytes(ctx: FilesContext, body: ReadableStream<Uint8Array> | Uint8Array | Blob, maxBytes = FILE_MAX_BYTES): Promise<BlobInfo> {
  return ctx.blobs.put(body, { maxBytes });
}

/** Deletes the bytes of `sha256` unless something still needs them. */
export async function releaseBlob(ctx: FilesContext, sha256: string): Promise<void> {
  if (await ctx.storage.files.blobInUse(sha256)) return;
  await ctx.blobs.delete(sha256);
}

/** The row for a new file (not yet stored). */
export function fileRow(ctx: FilesContext, tenantId: string, meta: FileMeta, blob: BlobInfo, id = newId("file")): FileRow {
  const now = ctx.clock.now();
  return {
    id,
    tenantId,
    filename: meta.filename,
    contentType: meta.contentType,
    size: blob.size,
    sha256: blob.sha256,
    purpose: meta.purpose,
    createdAt: now.toISOString(),
    expiresAt: meta.purpose === "run-input" ? new Date(now.getTime() + RUN_INPUT_TTL_MS).toISOString() : null,
  };
}

/**
 * After inserting a row for existing bytes: a concurrent delete of an identical file may have
 * collected the blob between our put and insert. Then the row goes again and the caller retries.
 */
export async function confirmBytes(ctx: FilesContext, row: FileRow, undo: () => Promise<void>): Promise<void> {
  if (await ctx.blobs.has(row.sha256)) return;
  await undo();
  throw Conflict("the file's bytes were removed while it was being stored; upload it again", { code: "upload_conflict" });
}

/** Records a file for bytes already in the blob store. */
export async function insertFile(ctx: FilesContext, tenantId: string, meta: FileMeta, blob: BlobInfo): Promise<FileView> {
  const row = fileRow(ctx, tenantId, meta, blob);
  await ctx.storage.files.insertFile(row);
  await confirmBytes(ctx, row, () => ctx.storage.files.removeFile(row.id));
  return toView(row);
}

/** Validate, stream in, record: the whole upload for callers that have the bytes as one body. */
export async function createFile(
  ctx: FilesContext,
  tenantId: string,
  input: { filename: string; contentType?: string | null; purpose?: string | null },
  body: ReadableStream<Uint8Array> | Uint8Array | Blob,
): Promise<FileView> {
  const meta = checkMeta(input);
  const blob = await putBytes(ctx, body);
  try {
    return await insertFile(ctx, tenantId, meta, blob);
  } catch (err) {
    await releaseBlob(ctx, blob.sha256);
    throw err;
  }
}

function isExpired(ctx: FilesContext, row: FileRow): boolean {
  return row.expiresAt !== null && row.expiresAt <= ctx.clock.now().toISOString();
}

/** Removes a file row and, when nothing else needs them, its bytes. */
async function dropFile(ctx: FilesContext, row: FileRow): Promise<void> {
  await ctx.storage.files.removeFile(row.id);
  await releaseBlob(ctx, row.sha256);
}

function notFound(id: string): never {
  throw NotFound(`file ${id} not found`, { field: "id" });
}

/** A live file of the tenant; another tenant's, a deleted or an expired one → 404 (expired ones are swept). */
export async function findFile(ctx: FilesContext, tenantId: string, id: string): Promise<FileRow> {
  const row = await ctx.storage.files.file(tenantId, id);
  if (!row) throw NotFound(`file ${id} not found`, { field: "id" });
  if (isExpired(ctx, row)) {
    await dropFile(ctx, row);
    throw NotFound(`file ${id} not found`, { field: "id" });
  }
  return row;
}

/** GET /files (ours): the tenant's files, newest first, expired run inputs left out. */
export async function listFiles(ctx: FilesContext, tenantId: string, page: { limit: number; offset: number; purpose?: string }): Promise<{ data: FileView[]; total: number; limit: number; offset: number }> {
  const { rows, total } = await ctx.storage.files.listFiles(tenantId, ctx.clock.now().toISOString(), page);
  return { data: rows.map(toView), total, limit: page.limit, offset: page.offset };
}

export async function getFile(ctx: FilesContext, tenantId: string, id: string): Promise<FileView> {
  return toView(await findFile(ctx, tenantId, id));
}

/** The metadata and a lazy Blob of the bytes (sliceable for Range). */
export async function openFile(ctx: FilesContext, tenantId: string, id: string): Promise<{ file: FileRow; blob: Blob }> {
  const file = await findFile(ctx, tenantId, id);
  const blob = await ctx.blobs.get(file.sha256);
  if (!blob) {
    ctx.log.error("file bytes missing from the blob store", { fileId: file.id, sha256: file.sha256 });
    throw NotFound(`file ${id} has no content`, { field: "id", code: "content_missing" });
  }
  return { file, blob };
}

export async function deleteFile(ctx: FilesContext, tenantId: string, id: string): Promise<void> {
  const row = await findFile(ctx, tenantId, id);
  await dropFile(ctx, row);
}

/**
 * For the runs engine: pins the file's bytes under `owner` (e.g. `run:run_...`) and returns what the
 * run must keep. The file may be deleted or expire afterwards; `openBlob(sha256)` still reads it
 * until `releaseOwner(owner)`.
 */
export async function snapshotFile(ctx: FilesContext, tenantId: string, fileId: string, owner: string): Promise<FileSnapshot> {
  // One step in the database: a delete of the file cannot release the bytes between read and pin.
  const row = await ctx.storage.files.snapshot(tenantId, fileId, owner, ctx.clock.now().toISOString());
  if (!row) {
    await findFile(ctx, tenantId, fileId); // 404 (and sweeps an expired file)
    notFound(fileId); // the file went between the two
  }
  return { fileId: row.id, filename: row.filename, contentType: row.contentType, size: row.size, sha256: row.sha256 };
}

/**
 * Pins bytes the caller stored itself (e.g. a run's output file) under `owner`. On SQLite the pin is
 * written before this returns (callers that do not await it keep working); await it on PostgreSQL.
 */
export function retainBlob(ctx: FilesContext, tenantId: string, sha256: string, owner: string): Promise<void> {
  return ctx.storage.files.retain({ sha256, owner, tenantId, createdAt: ctx.clock.now().toISOString() });
}

/** Drops every pin `owner` holds and deletes bytes nothing else needs. */
export async function releaseOwner(ctx: FilesContext, owner: string): Promise<void> {
  for (const sha of await ctx.storage.files.releaseOwner(owner)) await releaseBlob(ctx, sha);
}

/** Bytes by content address (snapshots, artifacts), or null. */
export function openBlob(ctx: FilesContext, sha256: string): Promise<Blob | null> {
  return ctx.blobs.get(sha256);
}

/** Deletes expired run-input files and abandoned upload sessions; returns how many rows went. */
export async function sweepExpired(ctx: FilesContext): Promise<number> {
  const files = ctx.storage.files;
  const now = ctx.clock.now();
  let n = 0;
  for (const row of await files.expiredFiles(now.toISOString(), 500)) {
    await dropFile(ctx, row);
    n++;
  }
  for (const s of await files.abandonedSessions(new Date(now.getTime() - RUN_INPUT_TTL_MS).toISOString(), 500)) {
    await files.removeSession(s.id);
    if (s.sha256) await releaseBlob(ctx, s.sha256);
    n++;
  }
  return n;
}

/**
 * The upload form's parts (`file`, optional `purpose`) → a stored file. The file part streams into
 * the blob store; on any refusal the bytes already stored are released, so nothing half-written stays.
 */
export async function uploadParts(ctx: FilesContext, tenantId: string, parts: AsyncIterable<Part>): Promise<FileView> {
  let meta: FileMeta | null = null;
  let blob: BlobInfo | null = null;
  let purpose: string | null = null;
  try {
    for await (const part of parts) {
      if (part.name === "purpose") {
        purpose = (await readText(part, 200)).trim();
      } else if (part.name === "file") {
        if (blob) throw Invalid("send exactly one `file` part", { field: "file", code: "invalid_value" });
        if (part.filename === null) throw Invalid("the `file` part must be a file (with a filename)", { field: "file", code: "invalid_value" });
        meta = checkMeta({ filename: part.filename, contentType: part.contentType }, "file");
        blob = await putBytes(ctx, part.body);
      } else {
        throw Invalid(`unknown field "${part.name}" (expected file, purpose)`, { field: part.name, code: "unrecognized_keys" });
      }
    }
    if (!blob || !meta) throw Invalid("the `file` part is required", { field: "file", code: "required" });
    const withPurpose = checkMeta({ ...meta, purpose });
    await sweepExpired(ctx);
    return await insertFile(ctx, tenantId, withPurpose, blob);
  } catch (err) {
    if (blob) await releaseBlob(ctx, blob.sha256);
    throw err;
  }
}
