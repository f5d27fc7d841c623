// Wire shapes of the files API and the limits it enforces.
import * as v from "valibot";
import { pageQuery } from "../http/validate";

/** Largest file accepted by any path (multipart or upload session). */
export const FILE_MAX_BYTES = 1024 * 1024 * 1024; // = the server's request body cap
/** Sessions for files up to this size answer `multipart` (one POST is cheapest); larger ones get a signed PUT. */
export const MULTIPART_MAX_BYTES = Math.floor(4.5 * 1024 * 1024);
/** How long a signed PUT URL works. */
export const UPLOAD_URL_TTL_MS = 60 * 60 * 1000;
/** `run-input` files, and upload sessions never completed, are swept this long after creation. */
export const RUN_INPUT_TTL_MS = 24 * 60 * 60 * 1000;
export const FILENAME_MAX = 255;

/** The `File` schema of the reference: exactly these fields. */
export interface FileView {
  id: string;
  filename: string;
  contentType: string;
  size: number;
  purpose: string | null;
  createdAt: string;
}

/** What a run keeps of an input file: enough to read the bytes after the file is deleted. */
export interface FileSnapshot {
  fileId: string;
  filename: string;
  contentType: string;
  size: number;
  sha256: string;
}

/** Free-form lifecycle label; only `run-input` changes behaviour (expiry after 24 h). */
export const Purpose = v.pipe(
  v.string("purpose must be a string"),
  v.regex(/^[a-z0-9][a-z0-9_-]{0,39}$/, "purpose must be a short lower-case label such as run-input"),
);

/** GET /files (ours): pages of the tenant's files, optionally of one purpose. */
export const ListFilesQuery = v.object({ purpose: v.optional(Purpose), ...pageQuery });

/** A bare MIME type (`type/subtype`, no parameters needed); stored lower-cased. */
export const ContentType = v.pipe(
  v.string(),
  v.trim(),
  v.maxLength(200, "contentType is too long"),
  // Parameters may follow, but only printable ASCII: the value goes back out as a response header.
  v.regex(/^[a-z0-9!#$&^_.+-]+\/[a-z0-9!#$&^_.+-]+( *;[\x20-\x7e]*)?$/i, "contentType must look like type/subtype"),
  v.transform((s) => s.toLowerCase()),
);

export const CreateUploadBody = v.strictObject({
  filename: v.string("filename is required"),
  contentType: v.optional(ContentType),
  size: v.pipe(
    v.number("size must be a number of bytes"),
    v.integer("size must be a whole number"),
    v.minValue(0, "size must not be negative"),
    v.maxValue(Number.MAX_SAFE_INTEGER, "size is too large"),
  ),
  idempotencyKey: v.optional(v.pipe(v.string(), v.minLength(1), v.maxLength(200, "idempotencyKey is too long"))),
  purpose: v.optional(v.nullable(Purpose)),
  /** Ours: ask for a transport instead of letting the size decide (the answer stays authoritative). */
  transport: v.optional(
    v.picklist(["presigned-put", "multipart", "presigned-multipart"], 'transport must be "presigned-put", "multipart" or "presigned-multipart"'),
  ),
});
export type CreateUploadInput = v.InferOutput<typeof CreateUploadBody>;

/** Ours: `complete` may carry the parts of a presigned-multipart upload and the sha256 the client computed. */
export const CompleteUploadBody = v.strictObject({
  parts: v.optional(
    v.pipe(
      v.array(
        v.strictObject({
          partNumber: v.pipe(v.number(), v.integer(), v.minValue(1), v.maxValue(10_000)),
          etag: v.pipe(v.string(), v.minLength(1), v.maxLength(200)),
        }),
      ),
      v.maxLength(10_000),
    ),
  ),
  sha256: v.optional(v.pipe(v.string(), v.regex(/^[0-9a-fA-F]{64}$/, "sha256 must be 64 hex digits"))),
});
export type CompleteUploadInput = v.InferOutput<typeof CompleteUploadBody>;

/** Parts of a presigned-multipart upload: at least 8 MiB each (S3 wants ≥ 5 MiB), at most 10,000 of them. */
export const MULTIPART_PART_MIN = 8 * 1024 * 1024;

export type UploadNegotiation =
  | {
      transport: "presigned-put";
      uploadId: string;
      fileId: string;
      url: string;
      method: "PUT";
      headers: Record<string, string>;
      expiresAt: string;
      maxFileSizeBytes: number;
    }
  | { transport: "multipart"; url: string; maxFileSizeBytes: number }
  | {
      /** Ours (S3 mode, asked for explicitly): PUT each part to its URL, then `complete` with the parts' ETags. */
      transport: "presigned-multipart";
      uploadId: string;
      fileId: string;
      partSize: number;
      parts: { partNumber: number; url: string }[];
      method: "PUT";
      headers: Record<string, string>;
      /** Where to POST `{parts: [{partNumber, etag}], sha256?}` once every part is stored. */
      completeUrl: string;
      expiresAt: string;
      maxFileSizeBytes: number;
    };

export interface UploadView {
  uploadId: string;
  fileId: string;
  status: "pending" | "uploaded" | "completed" | "aborted";
  filename: string;
  contentType: string;
  size: number;
  purpose: string | null;
  createdAt: string;
  expiresAt: string;
  completedAt: string | null;
}
