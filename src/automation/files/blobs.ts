// Content-addressed byte storage behind one small interface, so an S3-compatible store can be added
// later. Keys are sha256 hex of the content.
export interface BlobInfo {
  sha256: string;
  size: number;
}

export interface BlobStore {
  /** Streams bytes in, hashing as they arrive; stores atomically; returns the content address. */
  put(data: ReadableStream<Uint8Array> | Uint8Array | Blob, opts?: { maxBytes?: number }): Promise<BlobInfo>;
  /** A Blob (lazy, e.g. Bun.file) for the stored bytes, or null when absent. Supports .slice for Range. */
  get(sha256: string): Promise<Blob | null>;
  has(sha256: string): Promise<boolean>;
  delete(sha256: string): Promise<void>;
}

// The filesystem implementation, under <dataDir>/blobs (createContext's default).
export { createBlobStore, createBlobStore as createFsBlobStore, FsBlobStore } from "./fs-blobs";
