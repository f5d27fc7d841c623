// Upload sessions: negotiate a transport, receive the bytes by signed PUT, complete into a file
// (idempotent), abort (never touching a completed file). With an S3 store the URLs are presigned S3
// URLs to a staging key (one PUT, or multipart parts), and `complete` hashes the staged object into a
// blob: the bytes never pass through the API, and nothing is a file before it is verified.
import { Conflict, DomainError, Forbidden, Invalid, NotFound, TooLarge } from "../../kernel/errors";
import { newId } from "../../kernel/ids";
import type { AutomationConfig } from "../config";
import {
  FILE_MAX_BYTES,
  MULTIPART_MAX_BYTES,
  MULTIPART_PART_MIN,
  UPLOAD_URL_TTL_MS,
  type CompleteUploadInput,
  type CreateUploadInput,
  type FileView,
  type UploadNegotiation,
  type UploadView,
} from "./model";
import type { FileRow, UploadSessionRow } from "./store";
import { checkMeta, confirmBytes, fileRow, releaseBlob, sweepExpired, toView, type FilesContext } from "./service";
import { checkUploadSignature, signedUploadUrl } from "./signing";

export type UploadsContext = FilesContext & { config: Pick<AutomationConfig, "publicUrl" | "signingSecret" | "uploadTtlMs"> };

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
  const direct = ctx.blobs.direct;
  // Presigned S3 URLs carry a relative lifetime: what is left of the session's.
  const ttlS = Math.max(1, Math.floor((Date.parse(s.expiresAt) - ctx.clock.now().getTime()) / 1000));
  if (direct && s.stagingKey && s.multipartId && s.partSize) {
    const count = Math.max(1, Math.ceil(s.size / s.partSize));
    return {
      transport: "presigned-multipart",
      uploadId: s.id,
      fileId: s.fileId,
      partSize: s.partSize,
      parts: Array.from({ length: count }, (_, i) => ({ partNumber: i + 1, url: direct.partUrl(s.stagingKey!, s.multipartId!, i + 1, ttlS) })),
      method: "PUT",
      headers: {},
      completeUrl: `${publicUrl.replace(/\/+$/, "")}/v1/files/uploads/${encodeURIComponent(s.id)}/complete`,
      expiresAt: s.expiresAt,
      maxFileSizeBytes: FILE_MAX_BYTES,
    };
  }
  return {
    transport: "presigned-put",
    uploadId: s.id,
    fileId: s.fileId,
    url: direct && s.stagingKey ? direct.putUrl(s.stagingKey, ttlS) : signedUploadUrl(publicUrl, ctx.config.signingSecret, s.id, Date.parse(s.expiresAt)),
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
  const direct = ctx.blobs.direct;
  if (transport === "presigned-multipart" && !direct) {
    throw Invalid("the presigned-multipart transport needs S3 blob storage (--blobs s3://…); use presigned-put", { field: "transport", code: "invalid_value" });
  }

  const same = (row: UploadSessionRow): UploadSessionRow => {
    if (row.filename !== meta.filename || row.size !== input.size || row.contentType !== meta.contentType) {
      throw Conflict("idempotencyKey was already used for a different upload", { field: "idempotencyKey", code: "idempotency_key_reused" });
    }
    return row;
  };
  const earlier = input.idempotencyKey ? await ctx.storage.files.sessionByKey(tenantId, input.idempotencyKey) : undefined;
  if (earlier) return negotiation(ctx, same(earlier), publicUrl);

  const id = newId("upl");
  const stagingKey = direct ? direct.stagingKey(id) : null;
  let multipartId: string | null = null;
  let partSize: number | null = null;
  if (transport === "presigned-multipart" && direct && stagingKey) {
    partSize = Math.max(MULTIPART_PART_MIN, Math.ceil(input.size / 10_000));
    multipartId = await direct.createMultipart(stagingKey);
  }
  const now = ctx.clock.now();
  const row: UploadSessionRow = {
    id,
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
    expiresAt: new Date(now.getTime() + (ctx.config.uploadTtlMs ?? UPLOAD_URL_TTL_MS)).toISOString(),
    completedAt: null,
    stagingKey,
    multipartId,
    partSize,
  };
  // A concurrent request with the same key (in any process) may have won meanwhile: the store answers its session.
  const stored = await ctx.storage.files.createSession(row);
  if (!stored.created && multipartId && stagingKey) direct?.abortMultipart(stagingKey, multipartId).catch(() => {});
  return negotiation(ctx, stored.created ? row : same(stored.session), publicUrl);
}

async function findSession(ctx: FilesContext, tenantId: string, id: string): Promise<UploadSessionRow> {
  const s = await ctx.storage.files.session(tenantId, id);
  if (!s) throw NotFound(`upload ${id} not found`, { field: "uploadId" });
  return s;
}

export async function getUpload(ctx: FilesContext, tenantId: string, id: string): Promise<UploadView> {
  return view(await findSession(ctx, tenantId, id));
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
  const s = await ctx.storage.files.sessionAnyTenant(id);
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
  // Recorded only if no abort or complete happened while the bytes streamed in.
  const r = await ctx.storage.files.receive(id, blob.sha256);
  if (r.kind === "closed") {
    await releaseBlob(ctx, blob.sha256);
    throw Conflict(`this upload was ${r.status ?? "removed"} while the bytes arrived`, { code: "upload_closed" });
  }
  if (r.previous && r.previous !== blob.sha256) await releaseBlob(ctx, r.previous);
  return view(r.session);
}

/**
 * S3 mode: assembles the parts (presigned-multipart), then hashes the staged object, checks its size
 * (and the client's sha256) and moves it to its content address; the session becomes `uploaded`.
 * A retry after a lost answer finds the session uploaded (or the parts already assembled) and goes on.
 */
/** Completes of one session in flight in this process: concurrent ones share the first one's commit. */
const committing = new Map<string, Promise<void>>();

async function commitStaged(ctx: FilesContext, s: UploadSessionRow, input: CompleteUploadInput): Promise<void> {
  if (!ctx.blobs.direct || !s.stagingKey || s.status !== "pending") return;
  // Without this, a second complete could find the staged object already moved by the first one
  // while the first had not yet recorded the session as uploaded, and fail with a 500.
  const inFlight = committing.get(s.id);
  if (inFlight) return inFlight;
  const p = commitStagedOnce(ctx, s, input).finally(() => committing.delete(s.id));
  committing.set(s.id, p);
  return p;
}

/** After a failed commit: whether another complete moved the staged object (the session left pending within ~0.5 s). */
async function committedElsewhere(ctx: FilesContext, id: string, err: unknown): Promise<boolean> {
  // Size and checksum mismatches are the client's bytes, not a race.
  if (err instanceof DomainError && (err.code === "size_mismatch" || err.code === "checksum_mismatch")) return false;
  for (let i = 0; i < 10; i++) {
    const now = await ctx.storage.files.sessionAnyTenant(id);
    if (!now || now.status !== "pending") return !!now && (now.status === "uploaded" || now.status === "completed");
    await Bun.sleep(50);
  }
  return false;
}

async function commitStagedOnce(ctx: FilesContext, s: UploadSessionRow, input: CompleteUploadInput): Promise<void> {
  const direct = ctx.blobs.direct!;
  const stagingKey = s.stagingKey!;
  if (s.multipartId) {
    if (!input.parts?.length) {
      throw Invalid("complete a presigned-multipart upload with {parts: [{partNumber, etag}]}", { field: "parts", code: "required" });
    }
    await direct.completeMultipart(stagingKey, s.multipartId, input.parts);
  }
  let blob;
  try {
    blob = await direct.commit(stagingKey, { size: s.size, ...(input.sha256 ? { sha256: input.sha256 } : {}) });
  } catch (err) {
    // A concurrent complete committed (and removed) the staged object first: in this process the
    // singleflight above prevents that, another process (PostgreSQL) records it a moment later.
    if (await committedElsewhere(ctx, s.id, err)) return;
    throw err;
  }
  // Moves a pending session to uploaded; an aborted (or removed) one keeps nothing.
  const now = await ctx.storage.files.staged(s.id, blob.sha256);
  if (!now || now.status === "aborted") {
    await releaseBlob(ctx, blob.sha256);
    throw Conflict("this upload was aborted while it was being completed", { code: "upload_aborted" });
  }
}

/**
 * Makes the file from the received bytes. Safe to retry: a completed session answers its file again.
 * Concurrent completes (in this or another process) make one file: the store decides in one transaction.
 */
export async function completeUpload(ctx: FilesContext, tenantId: string, id: string, input: CompleteUploadInput = {}): Promise<FileView> {
  await commitStaged(ctx, await findSession(ctx, tenantId, id), input);
  const plan = (s: UploadSessionRow): FileRow => {
    if (s.status === "aborted") throw Conflict("this upload was aborted", { code: "upload_aborted" });
    if (s.status !== "uploaded" || !s.sha256) {
      throw Conflict("no bytes were received for this upload yet; PUT them to the upload URL first", { code: "upload_incomplete" });
    }
    if (input.sha256 && input.sha256.toLowerCase() !== s.sha256) {
      throw Invalid(`the uploaded bytes hash to ${s.sha256}, not the declared sha256`, { field: "sha256", code: "checksum_mismatch" });
    }
    const meta = { filename: s.filename, contentType: s.contentType, purpose: s.purpose };
    return fileRow(ctx, tenantId, meta, { sha256: s.sha256, size: s.size }, s.fileId);
  };
  const done = await ctx.storage.files.complete(tenantId, id, plan);
  if (done.kind === "not_found") throw NotFound(`upload ${id} not found`, { field: "uploadId" });
  if (done.kind === "file_gone") {
    const s = await findSession(ctx, tenantId, id);
    throw NotFound(`file ${s.fileId} of upload ${id} was deleted`, { field: "fileId" });
  }
  const file = done.file;
  if (done.kind === "fresh") await confirmBytes(ctx, file, () => ctx.storage.files.undoComplete(id, file.id));
  return toView(file);
}

/** Aborts a pending session and frees its bytes; a completed session (and its file) is left untouched. */
export async function abortUpload(ctx: FilesContext, tenantId: string, id: string): Promise<UploadView> {
  const r = await ctx.storage.files.abort(tenantId, id);
  if (!r) throw NotFound(`upload ${id} not found`, { field: "uploadId" });
  const s = r.before;
  if (!r.aborted) return view(s);
  if (s.sha256) await releaseBlob(ctx, s.sha256);
  const direct = ctx.blobs.direct;
  if (direct && s.stagingKey) {
    // The multipart upload's parts are removed with it; a stray object left here is the sweeper's.
    if (s.multipartId) await direct.abortMultipart(s.stagingKey, s.multipartId);
    await direct.discard(s.stagingKey).catch(() => {});
  }
  return view({ ...s, status: "aborted", sha256: null });
}
