// Content-addressed byte storage behind one small interface: the filesystem store (fs-blobs.ts) and
// the S3-compatible store (s3-blobs.ts) implement it. Keys are sha256 hex of the content. This module
// declares types only and imports no implementation (server.ts picks one).
export interface BlobInfo {
  sha256: string;
  size: number;
}

/** One stored blob as a listing sees it (garbage collection, `blobs copy`). */
export interface BlobEntry extends BlobInfo {
  /** When the bytes were stored (ms since epoch): the sweeper's grace period counts from it. */
  modifiedMs: number;
}

export interface BlobStore {
  /** "fs" or "s3", for logs and the CLI. */
  readonly kind: "fs" | "s3";
  /** Streams bytes in, hashing as they arrive; stores atomically; returns the content address. */
  put(data: ReadableStream<Uint8Array> | Uint8Array | Blob, opts?: { maxBytes?: number }): Promise<BlobInfo>;
  /**
   * A lazy Blob for the stored bytes (Bun.file, or an S3File), or null when absent. Supports .slice for
   * Range. Answer it with `responseBody` (download.ts): an S3File given to `new Response` redirects.
   */
  get(sha256: string): Promise<Blob | null>;
  has(sha256: string): Promise<boolean>;
  delete(sha256: string): Promise<void>;
  /** Every stored blob (for the sweeper and `blobs copy`), in no particular order. */
  entries(): AsyncIterable<BlobEntry>;
  /** Leftovers of interrupted writes older than `beforeMs` (temp files, staged uploads nobody owns). */
  sweepTemp?(beforeMs: number, live: (uploadKey: string) => boolean, dryRun: boolean): Promise<number>;
  /** Fails with one clear line when the store cannot be used (S3: endpoint, bucket, credentials). */
  check?(): Promise<void>;
  /** Present when clients can move bytes straight to the storage (S3): presigned URLs. */
  readonly direct?: DirectTransfer;
}

/** A part of a multipart upload as the client reports it after its PUT. */
export interface UploadedPart {
  partNumber: number;
  etag: string;
}

/**
 * Presigned transfers (S3 mode): clients PUT bytes to a staging key and GET blobs without the bytes
 * passing through the API. Staged bytes become a blob only through `commit`, which hashes them.
 */
export interface DirectTransfer {
  /**
   * The origin every presigned URL points at (the S3 endpoint's, `https://minio.internal:9000`): the
   * one other origin the console's CSP lets a page send bytes to.
   */
  readonly origin: string;
  /** The staging key of an upload session. */
  stagingKey(uploadId: string): string;
  putUrl(key: string, expiresInS: number): string;
  createMultipart(key: string): Promise<string>;
  partUrl(key: string, multipartId: string, partNumber: number, expiresInS: number): string;
  /** Assembles the parts; resolves when the staged object exists (also when an earlier call already did). */
  completeMultipart(key: string, multipartId: string, parts: UploadedPart[]): Promise<void>;
  abortMultipart(key: string, multipartId: string): Promise<void>;
  /** Streams the staged object once: checks its size (and sha256 when given), moves it to its content address. */
  commit(key: string, expect: { size: number; sha256?: string }): Promise<BlobInfo>;
  discard(key: string): Promise<void>;
  /** A short-lived GET URL for a blob, answering with the given headers. */
  getUrl(sha256: string, opts: { expiresInS: number; disposition?: string; contentType?: string }): string;
  /** Multipart uploads still open under this store's prefix (when the server can list them). */
  openMultiparts?(): Promise<{ key: string; multipartId: string; initiatedMs: number }[]>;
}
