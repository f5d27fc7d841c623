// The S3-compatible BlobStore (Bun's S3Client, path-style). Layout under the configured prefix:
//   sha256/ab/<sha256>   the blobs, by content address; an object there is always complete and hashed
//   tmp/<ms>-<random>    server-side puts in flight (bytes streamed while hashing, then copied into place)
//   uploads/<uploadId>   presigned uploads staged by clients until `complete` hashes and commits them
// A put streams to a temp key (or, up to 8 MiB, is buffered), hashes as bytes arrive, then copies the
// object to its content address server-side: a reader never sees a partial blob.
import { S3Client, type S3File } from "bun";
import { Conflict, FatalError, Invalid, TooLarge } from "../../kernel/errors";
import { newSecret } from "../../kernel/ids";
import type { BlobEntry, BlobInfo, BlobStore, DirectTransfer, UploadedPart } from "./blobs";
import { escapeXml, presign, s3Request, S3Error, uriEncode, xmlBlocks, xmlTag, type S3Credentials } from "./s3-sign";

const SHA256 = /^[0-9a-f]{64}$/;
/** Bodies up to this size are gathered in memory and PUT once under their address (no temp, no copy). */
const BUFFER_MAX = 8 * 1024 * 1024;
const PART_SIZE = 8 * 1024 * 1024;

export interface S3Location {
  bucket: string;
  /** "" or ends with "/". */
  prefix: string;
}

/** `s3://bucket/some/prefix` → bucket and prefix (normalised to end with "/"). */
export function parseS3Url(url: string): S3Location | null {
  const m = /^s3:\/\/([a-z0-9][a-z0-9.-]{1,61}[a-z0-9])(?:\/(.*))?$/.exec(url);
  if (!m) return null;
  const prefix = (m[2] ?? "").replace(/^\/+|\/+$/g, "");
  return { bucket: m[1], prefix: prefix ? `${prefix}/` : "" };
}

export interface S3StoreOptions extends S3Location {
  endpoint: string;
  region: string;
  accessKeyId: string;
  secretAccessKey: string;
  sessionToken?: string;
}

export class S3BlobStore implements BlobStore {
  readonly kind = "s3" as const;
  readonly client: S3Client;
  readonly creds: S3Credentials;
  readonly direct: DirectTransfer;

  constructor(readonly opts: S3StoreOptions) {
    this.creds = { endpoint: opts.endpoint, region: opts.region, bucket: opts.bucket, accessKeyId: opts.accessKeyId, secretAccessKey: opts.secretAccessKey, sessionToken: opts.sessionToken };
    this.client = new S3Client({
      endpoint: opts.endpoint,
      region: opts.region,
      bucket: opts.bucket,
      accessKeyId: opts.accessKeyId,
      secretAccessKey: opts.secretAccessKey,
      ...(opts.sessionToken ? { sessionToken: opts.sessionToken } : {}),
    });
    this.direct = directTransfer(this);
  }

  /** `s3://bucket/prefix` for messages. */
  get url(): string {
    return `s3://${this.opts.bucket}/${this.opts.prefix}`;
  }

  /**
   * One call at startup, so a wrong endpoint, bucket or key is one clear line, not a 500 later: a GET of
   * a key that is never written, which S3 answers `NoSuchKey` once endpoint, bucket, credentials and
   * read access under the prefix are right. Not a listing: a listing of a populated prefix with
   * `max-keys=1` is truncated, and servers that cannot page (s3rver under Node 20 answers 500 to any
   * truncated listing) would stop every restart. Not a HEAD either: its answer has no body, so a
   * missing bucket would look like a missing key.
   */
  async check(): Promise<void> {
    try {
      await this.client.file(`${this.opts.prefix}startup-check`).text();
    } catch (err) {
      const e = err as { code?: string; message?: string };
      if (e.code === "NoSuchKey") return;
      throw new FatalError(`cannot use ${this.url} at ${this.opts.endpoint}: ${e.code ?? ""} ${e.message ?? String(err)}`.replace(/\s+/g, " ").trim());
    }
  }

  keyOf(sha256: string): string {
    if (!SHA256.test(sha256)) throw new Error(`not a sha256 blob key: ${sha256.slice(0, 80)}`);
    return `${this.opts.prefix}sha256/${sha256.slice(0, 2)}/${sha256}`;
  }

  async put(data: ReadableStream<Uint8Array> | Uint8Array | Blob, opts: { maxBytes?: number } = {}): Promise<BlobInfo> {
    const maxBytes = opts.maxBytes ?? Number.POSITIVE_INFINITY;
    if (data instanceof Uint8Array && data.byteLength <= BUFFER_MAX) return this.putBuffered(data, maxBytes);
    const stream = data instanceof ReadableStream ? data : data instanceof Blob ? data.stream() : new Blob([data]).stream();
    const reader = stream.getReader();
    // Gather the start in memory: most bodies are small and then need one PUT to their address.
    const head: Uint8Array[] = [];
    let headBytes = 0;
    for (;;) {
      const { done, value } = await reader.read();
      if (done) return this.putBuffered(concat(head, headBytes), maxBytes);
      if (!value || value.byteLength === 0) continue;
      head.push(value);
      headBytes += value.byteLength;
      if (headBytes > maxBytes) {
        await reader.cancel().catch(() => {});
        throw tooLarge(maxBytes);
      }
      if (headBytes > BUFFER_MAX) break;
    }
    return this.putStreamed(head, reader, maxBytes);
  }

  private async putBuffered(bytes: Uint8Array, maxBytes: number): Promise<BlobInfo> {
    if (bytes.byteLength > maxBytes) throw tooLarge(maxBytes);
    const sha256 = new Bun.CryptoHasher("sha256").update(bytes).digest("hex");
    const key = this.keyOf(sha256);
    // Same content → same key: writing identical bytes again is harmless.
    await this.client.write(key, bytes);
    return { sha256, size: bytes.byteLength };
  }

  private async putStreamed(head: Uint8Array[], reader: ChunkReader, maxBytes: number): Promise<BlobInfo> {
    const hasher = new Bun.CryptoHasher("sha256");
    let size = 0;
    let failure: unknown;
    const counted = new ReadableStream<Uint8Array>({
      start(c) {
        for (const chunk of head) {
          size += chunk.byteLength;
          hasher.update(chunk);
          c.enqueue(chunk);
        }
      },
      async pull(c) {
        try {
          const { done, value } = await reader.read();
          if (done || !value) return c.close();
          size += value.byteLength;
          if (size > maxBytes) throw tooLarge(maxBytes);
          hasher.update(value);
          c.enqueue(value);
        } catch (err) {
          failure = err;
          await reader.cancel().catch(() => {});
          c.error(err);
        }
      },
    });
    const tmp = `${this.opts.prefix}tmp/${Date.now()}-${newSecret(9)}`;
    try {
      await this.client.write(tmp, new Response(counted), { partSize: PART_SIZE, queueSize: 4 } as Parameters<S3Client["write"]>[2]);
    } catch (err) {
      await this.client.delete(tmp).catch(() => {});
      throw failure ?? err;
    }
    const sha256 = hasher.digest("hex");
    try {
      await this.moveInto(tmp, sha256);
    } finally {
      await this.client.delete(tmp).catch(() => {});
    }
    return { sha256, size };
  }

  /** Copies an object (a temp or staged key) to the blob's address, unless the blob is already there. */
  async moveInto(from: string, sha256: string): Promise<void> {
    const to = this.keyOf(sha256);
    if (await this.client.exists(to)) return;
    await s3Request(this.creds, {
      method: "PUT",
      key: to,
      headers: { "x-amz-copy-source": `/${uriEncode(this.opts.bucket)}/${uriEncode(from, true)}` },
    });
  }

  async get(sha256: string): Promise<Blob | null> {
    if (!SHA256.test(sha256)) return null;
    const file: S3File = this.client.file(this.keyOf(sha256));
    return (await file.exists()) ? file : null;
  }

  async has(sha256: string): Promise<boolean> {
    return SHA256.test(sha256) && (await this.client.exists(this.keyOf(sha256)));
  }

  async delete(sha256: string): Promise<void> {
    if (!SHA256.test(sha256)) return;
    await this.client.delete(this.keyOf(sha256));
  }

  /** Objects under `sub` (relative to the prefix), page by page. */
  async *objects(sub: string): AsyncIterable<{ key: string; size: number; modifiedMs: number }> {
    let continuationToken: string | undefined;
    let pageNo = 0;
    do {
      pageNo++;
      const page = await this.client.list({ prefix: this.opts.prefix + sub, maxKeys: 1000, ...(continuationToken ? { continuationToken } : {}) }).catch((err: unknown) => {
        // One line for `blobs gc`/`blobs copy`. s3rver under Node 20 answers 500 to any listing that would be
        // truncated (its continuation tokens use DES, which OpenSSL 3 refuses): say so.
        const e = err as { code?: string; message?: string };
        const why = `${e.code ?? ""} ${e.message ?? String(err)}`.replace(/\s+/g, " ").trim();
        const hint = e.code === "InternalError" ? " (s3rver under Node 20 cannot list more than 1,000 keys without NODE_OPTIONS=--openssl-legacy-provider)" : "";
        throw new FatalError(`cannot list s3://${this.opts.bucket}/${this.opts.prefix}${sub} at ${this.opts.endpoint}, page ${pageNo}: ${why}${hint}`);
      });
      for (const o of page.contents ?? []) yield { key: o.key, size: o.size ?? 0, modifiedMs: o.lastModified ? Date.parse(String(o.lastModified)) : 0 };
      continuationToken = page.isTruncated ? page.nextContinuationToken : undefined;
    } while (continuationToken);
  }

  async *entries(): AsyncIterable<BlobEntry> {
    for await (const o of this.objects("sha256/")) {
      const sha256 = o.key.slice(o.key.lastIndexOf("/") + 1);
      if (SHA256.test(sha256)) yield { sha256, size: o.size, modifiedMs: o.modifiedMs };
    }
  }

  /** Temp objects of interrupted puts, and staged uploads no live session owns, older than `beforeMs`. */
  async sweepTemp(beforeMs: number, live: (uploadKey: string) => boolean, dryRun: boolean): Promise<number> {
    let n = 0;
    for (const sub of ["tmp/", "uploads/"]) {
      for await (const o of this.objects(sub)) {
        if (o.modifiedMs >= beforeMs || (sub === "uploads/" && live(o.key))) continue;
        if (!dryRun) await this.client.delete(o.key);
        n++;
      }
    }
    return n;
  }
}

function directTransfer(store: S3BlobStore): DirectTransfer {
  const { creds, client, opts } = store;
  return {
    origin: new URL(creds.endpoint).origin,
    stagingKey: (uploadId) => `${opts.prefix}uploads/${uploadId}`,
    putUrl: (key, expiresInS) => presign(creds, { method: "PUT", key, expiresInS }),
    async createMultipart(key) {
      const { text } = await s3Request(creds, { method: "POST", key, query: { uploads: "" } });
      const id = xmlTag(text, "UploadId");
      if (!id) throw new Error("S3 CreateMultipartUpload answered without an UploadId");
      return id;
    },
    partUrl: (key, multipartId, partNumber, expiresInS) =>
      presign(creds, { method: "PUT", key, query: { partNumber: String(partNumber), uploadId: multipartId }, expiresInS }),
    async completeMultipart(key, multipartId, parts: UploadedPart[]) {
      const body = `<CompleteMultipartUpload>${[...parts]
        .sort((a, b) => a.partNumber - b.partNumber)
        .map((p) => `<Part><PartNumber>${p.partNumber}</PartNumber><ETag>${escapeXml(p.etag)}</ETag></Part>`)
        .join("")}</CompleteMultipartUpload>`;
      try {
        await s3Request(creds, { method: "POST", key, query: { uploadId: multipartId }, body });
      } catch (err) {
        // A retry after a completion whose answer was lost: the object is there, the upload id is gone.
        if (err instanceof S3Error && err.code === "NoSuchUpload" && (await client.exists(key))) return;
        if (err instanceof S3Error && (err.code === "InvalidPart" || err.code === "InvalidPartOrder" || err.code === "EntityTooSmall" || err.code === "NoSuchUpload")) {
          throw Invalid(`the storage refused the parts: ${err.message}`, { field: "parts", code: "invalid_parts" });
        }
        throw err;
      }
    },
    async abortMultipart(key, multipartId) {
      try {
        await s3Request(creds, { method: "DELETE", key, query: { uploadId: multipartId } });
      } catch (err) {
        if (err instanceof S3Error && err.code === "NoSuchUpload") return;
        throw err;
      }
    },
    async commit(key, expect) {
      const file = client.file(key);
      if (!(await file.exists())) {
        throw Conflict("no bytes were received for this upload yet; PUT them to the upload URL first", { code: "upload_incomplete" });
      }
      const hasher = new Bun.CryptoHasher("sha256");
      let size = 0;
      const reader = file.stream().getReader();
      for (;;) {
        const { done, value } = await reader.read();
        if (done) break;
        size += value.byteLength;
        if (size > expect.size) {
          await reader.cancel().catch(() => {});
          break;
        }
        hasher.update(value);
      }
      if (size !== expect.size) {
        throw Invalid(`expected ${expect.size} bytes, the storage holds ${size > expect.size ? "more" : size}`, { field: "size", code: "size_mismatch" });
      }
      const sha256 = hasher.digest("hex");
      if (expect.sha256 && expect.sha256.toLowerCase() !== sha256) {
        throw Invalid(`the uploaded bytes hash to ${sha256}, not the declared sha256`, { field: "sha256", code: "checksum_mismatch" });
      }
      await store.moveInto(key, sha256);
      await client.delete(key).catch(() => {});
      return { sha256, size };
    },
    async discard(key) {
      await client.delete(key);
    },
    getUrl(sha256, o) {
      // `type` and `contentDisposition` become response-content-type / response-content-disposition:
      // the storage answers with the headers the server would have sent, not the object's stored type.
      return client.presign(store.keyOf(sha256), {
        method: "GET",
        expiresIn: o.expiresInS,
        ...(o.contentType ? { type: o.contentType } : {}),
        ...(o.disposition ? { contentDisposition: o.disposition } : {}),
      });
    },
    async openMultiparts() {
      const { text } = await s3Request(creds, { method: "GET", key: "", query: { uploads: "", prefix: `${opts.prefix}uploads/` } });
      return xmlBlocks(text, "Upload").map((u) => ({
        key: xmlTag(u, "Key") ?? "",
        multipartId: xmlTag(u, "UploadId") ?? "",
        initiatedMs: Date.parse(xmlTag(u, "Initiated") ?? "") || 0,
      }));
    },
  };
}

type ChunkReader = { read(): Promise<{ done: boolean; value?: Uint8Array }>; cancel(): Promise<void> };

const tooLarge = (maxBytes: number) => TooLarge(`file is larger than ${maxBytes} bytes`, { code: "file_too_large" });

function concat(chunks: Uint8Array[], total: number): Uint8Array {
  if (chunks.length === 1) return chunks[0];
  const out = new Uint8Array(total);
  let off = 0;
  for (const c of chunks) {
    out.set(c, off);
    off += c.byteLength;
  }
  return out;
}
