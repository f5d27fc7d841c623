// Upload sessions: negotiate a transport, receive the bytes by signed PUT, complete into a file
// (idempotent), abort (never touching a completed file).
import { Conflict, Forbidden, Invalid, NotFound, TooLarge } from "../../kernel/errors";
import { newId } from "../../kernel/ids";
import type { AutomationConfig } from "../context";
import { dbOf } from "../db/client";
import {
  FILE_MAX_BYTES,
  MULTIPART_MAX_BYTES,
  UPLOAD_URL_TTL_MS,
  type CreateUploadInput,
  type FileView,
  type UploadNegotiation,
  type UploadView,
} from "./model";
import type { UploadSessionRow } from "./schema";
import { checkMeta, confirmBytes, fileRow, releaseBlob, sweepExpired, toView, type FilesContext } from "./service";
import { checkUploadSignature, signedUploadUrl } from "./signing";
import { fileStore, sessionStore } from "./store";

export type UploadsContext = FilesContext & { config: Pick<AutomationConfig, "publicUrl" | "signingSecret"> };

function view(s: UploadSessionRow): UploadView {
  return {
    uploadId: s.id,
    fileId: s.fileId,
    status: s.status,
    filename: s.filename,
    contentType: s.contentType,
    size: s.size,
    purpose: s.purpose,
    createdAt: s.createdAt,
    expiresAt: s.expiresAt,
    completedAt: s.completedAt,
  };
}

function negotiation(ctx: UploadsContext, s: UploadSessionRow, publicUrl: string): UploadNegotiation {
  return {
    transport: "presigned-put",
    uploadId: s.id,
    fileId: s.fileId,
    url: signedUploadUrl(publicUrl, ctx.config.signingSecret, s.id, Date.parse(s.expiresAt)),
    method: "PUT",
    headers: { "content-type": s.contentType },
    expiresAt: s.expiresAt,
    maxFileSizeBytes: FILE_MAX_BYTES,
  };
}

/**
 * `POST /files/uploads`: small files (≤ 4.5 MiB) are told to POST multipart to `/v1/files`; larger ones
 * get a session with a signed PUT URL to this server. The same `idempotencyKey` returns the same session.
 */
export async function createUpload(
  ctx: UploadsContext,
  tenantId: string,
  input: CreateUploadInput,
  publicUrl = ctx.config.publicUrl,
): Promise<UploadNegotiation> {
  const meta = checkMeta(input);
  if (input.size > FILE_MAX_BYTES) {
    throw TooLarge(`file is larger than ${FILE_MAX_BYTES} bytes`, { field: "size", code: "file_too_large" });
  }
  await sweepExpired(ctx);
  const transport = input.transport ?? (input.size <= MULTIPART_MAX_BYTES ? "multipart" : "presigned-put");
  if (transport === "multipart") return { transport, url: "/v1/files", maxFileSizeBytes: FILE_MAX_BYTES };

  const db = dbOf(ctx.sqlite);
  return ctx.sqlite.transaction(() => {
    if (input.idempotencyKey) {
      const prior = sessionStore.byIdempotencyKey(db, tenantId, input.idempotencyKey);
      if (prior) {
        if (prior.filename !== meta.filename || prior.size !== input.size || prior.contentType !== meta.contentType) {
          throw Conflict("idempotencyKey was already used for a different upload", { field: "idempotencyKey", code: "idempotency_key_reused" });
        }
        return negotiation(ctx, prior, publicUrl);
      }
    }
    const now = ctx.clock.now();
    const row: UploadSessionRow = {
      id: newId("upl"),
      tenantId,
      fileId: newId("file"),
      filename: meta.filename,
      contentType: meta.contentType,
      size: input.size,
      purpose: meta.purpose,
      idempotencyKey: input.idempotencyKey ?? null,
      status: "pending",
      sha256: null,
      createdAt: now.toISOString(),
      expiresAt: new Date(now.getTime() + UPLOAD_URL_TTL_MS).toISOString(),
      completedAt: null,
    };
    sessionStore.insert(db, row);
    return negotiation(ctx, row, publicUrl);
  })();
}

function findSession(ctx: FilesContext, tenantId: string, id: string): UploadSessionRow {
  const s = sessionStore.byId(dbOf(ctx.sqlite), tenantId, id);
  if (!s) throw NotFound(`upload ${id} not found`, { field: "uploadId" });
  return s;
}

export function getUpload(ctx: FilesContext, tenantId: string, id: string): UploadView {
  return view(findSession(ctx, tenantId, id));
}

/**
 * The signed PUT: checks the URL, streams the body into the blob store (at most the declared size)
 * and records it. A repeated PUT before `complete` replaces the bytes.
 */
export async function receiveUpload(
  ctx: UploadsContext,
  id: string,
  query: { expires?: string; signature?: string },
  body: ReadableStream<Uint8Array> | null,
  contentLength?: number,
): Promise<UploadView> {
  const check = checkUploadSignature(ctx.config.signingSecret, id, query.expires, query.signature, ctx.clock.now().getTime());
  if (check === "invalid") throw Forbidden("the upload URL signature is invalid", { field: "signature", code: "invalid_signature" });
  if (check === "expired") throw Forbidden("the upload URL has expired; create a new upload", { field: "expires", code: "signature_expired" });
  const db = dbOf(ctx.sqlite);
  const s = sessionStore.byIdAnyTenant(db, id);
  if (!s) throw NotFound(`upload ${id} not found`, { field: "uploadId" });
  if (s.status === "completed") throw Conflict("this upload is already completed", { code: "upload_completed" });
  if (s.status === "aborted") throw Conflict("this upload was aborted", { code: "upload_aborted" });

  // A declared length that cannot match is refused before a byte is read.
  if (contentLength !== undefined && contentLength > s.size) {
    throw TooLarge(`this upload takes ${s.size} bytes; the request declares ${contentLength}`, { field: "size", code: "file_too_large" });
  }
  if (contentLength !== undefined && contentLength < s.size) {
    throw Invalid(`expected ${s.size} bytes, the request declares ${contentLength}`, { field: "size", code: "size_mismatch" });
  }
  const blob = await ctx.blobs.put(body ?? new Uint8Array(), { maxBytes: s.size });
  if (blob.size !== s.size) {
    await releaseBlob(ctx, blob.sha256);
    throw Invalid(`expected ${s.size} bytes, received ${blob.size}`, { field: "size", code: "size_mismatch" });
  }
  // Re-read: an abort or complete may have happened while the bytes streamed in.
  const now = sessionStore.byIdAnyTenant(db, id);
  if (!now || now.status === "completed" || now.status === "aborted") {
    await releaseBlob(ctx, blob.sha256);
    throw Conflict(`this upload was ${now?.status ?? "removed"} while the bytes arrived`, { code: "upload_closed" });
  }
  const previous = now.sha256;
  sessionStore.update(db, id, { status: "uploaded", sha256: blob.sha256 });
  if (previous && previous !== blob.sha256) await releaseBlob(ctx, previous);
  return view({ ...now, status: "uploaded", sha256: blob.sha256 });
}

/** Makes the file from the received bytes. Safe to retry: a completed session answers its file again. */
export async function completeUpload(ctx: FilesContext, tenantId: string, id: string): Promise<FileView> {
  const db = dbOf(ctx.sqlite);
  // One synchronous transaction: two concurrent completes cannot both insert the file.
  const done = ctx.sqlite.transaction(() => {
    const s = findSession(ctx, tenantId, id);
    if (s.status === "completed") {
      const file = fileStore.byId(db, tenantId, s.fileId);
      if (!file) throw NotFound(`file ${s.fileId} of upload ${id} was deleted`, { field: "fileId" });
      return { row: file, fresh: false };
    }
    if (s.status === "aborted") throw Conflict("this upload was aborted", { code: "upload_aborted" });
    if (s.status !== "uploaded" || !s.sha256) {
      throw Conflict("no bytes were received for this upload yet; PUT them to the upload URL first", { code: "upload_incomplete" });
    }
    const meta = { filename: s.filename, contentType: s.contentType, purpose: s.purpose };
    const row = fileRow(ctx, tenantId, meta, { sha256: s.sha256, size: s.size }, s.fileId);
    fileStore.insert(db, row);
    sessionStore.update(db, id, { status: "completed", completedAt: row.createdAt });
    return { row, fresh: true };
  })();
  if (done.fresh) {
    await confirmBytes(ctx, done.row, () =>
      ctx.sqlite.transaction(() => {
        fileStore.remove(db, done.row.id);
        sessionStore.update(db, id, { status: "aborted", completedAt: null });
      })(),
    );
  }
  return toView(done.row);
}

/** Aborts a pending session and frees its bytes; a completed session (and its file) is left untouched. */
export async function abortUpload(ctx: FilesContext, tenantId: string, id: string): Promise<UploadView> {
  const s = findSession(ctx, tenantId, id);
  if (s.status === "completed" || s.status === "aborted") return view(s);
  sessionStore.update(dbOf(ctx.sqlite), id, { status: "aborted", sha256: null });
  if (s.sha256) await releaseBlob(ctx, s.sha256);
  return view({ ...s, status: "aborted", sha256: null });
}
