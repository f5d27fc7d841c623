// Files: upload (negotiated through an upload session: one multipart POST for small files, a signed
// PUT of the bytes for large ones), metadata, download, delete, and the session calls themselves.
import type { RequestSpec, Transport } from "./transport";
import type { FileObject, UploadNegotiation, UploadSession } from "./types";

/** What can be uploaded: a Blob/File (Bun.file(path) streams from disk), bytes, or bytes with a name. */
export type FileInput =
  | Blob
  | Uint8Array
  | ArrayBuffer
  | { path: string; filename?: string; mimeType?: string }
  | { content: Blob | Uint8Array | ArrayBuffer | string; filename: string; mimeType?: string };

export interface UploadOptions {
  /** Needed for nameless inputs (bytes, Blobs that are not Files). */
  filename?: string;
  contentType?: string;
  /** `run-input` files expire after 24 h. */
  purpose?: string;
  /** Reuses the session of an earlier attempt (one is generated when omitted). */
  idempotencyKey?: string;
  /** `presigned-multipart` (servers with S3 blob storage): the bytes go to the storage in parts. */
  transport?: "presigned-put" | "multipart" | "presigned-multipart";
  signal?: AbortSignal;
}

/** What `new Blob([...])` takes, named the same under Bun's types and the DOM's (the console's build). */
type Part = NonNullable<ConstructorParameters<typeof Blob>[0]>[number];

export function isFileInput(v: unknown): v is FileInput {
  if (v instanceof Blob || v instanceof Uint8Array || v instanceof ArrayBuffer) return true;
  if (!v || typeof v !== "object") return false;
  const o = v as Record<string, unknown>;
  const keys = Object.keys(o);
  if (typeof o.path === "string" && keys.every((k) => ["path", "filename", "mimeType"].includes(k))) return true;
  return "content" in o && typeof o.filename === "string" && keys.every((k) => ["content", "filename", "mimeType"].includes(k));
}

/** A sized Blob and a name for any FileInput (paths stay lazy: Bun.file reads on demand). */
export function resolveFile(input: FileInput, opts: { filename?: string; contentType?: string; fallbackName?: string } = {}): { blob: Blob; filename: string; contentType: string } {
  let blob: Blob;
  let name: string | undefined = opts.filename;
  let type = opts.contentType;
  if (input instanceof Blob) {
    blob = input;
    name ??= input instanceof File ? input.name : undefined;
  } else if (input instanceof Uint8Array || input instanceof ArrayBuffer) {
    blob = new Blob([input as Part]);
  } else if ("path" in input) {
    blob = Bun.file(input.path);
    name ??= input.filename ?? input.path.split(/[\\/]/).pop();
    type ??= input.mimeType;
  } else {
    blob = input.content instanceof Blob ? input.content : new Blob([input.content as Part]);
    name ??= input.filename;
    type ??= input.mimeType;
  }
  name ??= opts.fallbackName;
  if (!name) throw new TypeError("a filename is required for this upload (pass { filename })");
  return { blob, filename: name, contentType: type || blob.type.split(";")[0] || "application/octet-stream" };
}

/** A missing `{path}` would otherwise upload as an empty file. */
export async function assertReadable(input: FileInput): Promise<void> {
  if (typeof input === "object" && "path" in input && !(await Bun.file(input.path).exists())) {
    throw new TypeError(`no such file: ${input.path}`);
  }
}

export class FilesResource {
  constructor(private readonly http: Transport) {}

  /**
   * Uploads a file and returns it. Asks the server how (`POST /v1/files/uploads`): `multipart` →
   * one POST; `presigned-put` → PUT the bytes to the signed URL (no API key), then `complete`. A failed
   * PUT aborts the session; a failed complete does not (it is safe to retry with `completeUpload`).
   */
  async upload(input: FileInput, opts: UploadOptions = {}): Promise<FileObject> {
    await assertReadable(input);
    const { blob, filename, contentType } = resolveFile(input, opts);
    const negotiation = await this.createUpload(
      { filename, contentType, size: blob.size, purpose: opts.purpose, idempotencyKey: opts.idempotencyKey ?? crypto.randomUUID(), transport: opts.transport },
      opts.signal,
    );
    if (negotiation.transport === "presigned-multipart") {
      let parts: { partNumber: number; etag: string }[];
      try {
        parts = await this.putParts(negotiation, blob, opts.signal);
      } catch (err) {
        await this.abortUpload(negotiation.uploadId).catch(() => {});
        throw err;
      }
      return this.http.json({ method: "POST", path: `/v1/files/uploads/${enc(negotiation.uploadId)}/complete`, json: { parts }, signal: opts.signal, timeoutMs: this.bulkTimeout(blob.size) });
    }
    if (negotiation.transport === "multipart") {
      const form = new FormData();
      form.append("file", new File([blob], filename, { type: contentType }));
      if (opts.purpose) form.append("purpose", opts.purpose);
      return this.http.json<FileObject>({ method: "POST", path: negotiation.url, body: form, signal: opts.signal, timeoutMs: this.bulkTimeout(blob.size) });
    }
    try {
      const headers = Object.fromEntries(Object.entries(negotiation.headers ?? {}).filter(([k]) => k.toLowerCase() !== "content-length"));
      await this.http.json<unknown>({ method: "PUT", path: negotiation.url, body: blob, headers, auth: false, signal: opts.signal, timeoutMs: this.bulkTimeout(blob.size) });
    } catch (err) {
      await this.abortUpload(negotiation.uploadId).catch(() => {});
      throw err;
    }
    return this.completeUpload(negotiation.uploadId, opts.signal);
  }

  /** PUTs each part to its presigned URL (no API key), four at a time; returns the ETags for `complete`. */
  private async putParts(n: Extract<UploadNegotiation, { transport: "presigned-multipart" }>, blob: Blob, signal?: AbortSignal) {
    const out: { partNumber: number; etag: string }[] = [];
    const queue = [...n.parts];
    const worker = async () => {
      for (let p = queue.shift(); p; p = queue.shift()) {
        const body = blob.slice((p.partNumber - 1) * n.partSize, p.partNumber * n.partSize);
        const res = await this.http.response({ method: "PUT", path: p.url, body, headers: n.headers, auth: false, signal, timeoutMs: this.bulkTimeout(body.size) });
        await res.arrayBuffer();
        const etag = res.headers.get("etag");
        if (!etag) throw new Error(`the storage answered part ${p.partNumber} without an ETag`);
        out.push({ partNumber: p.partNumber, etag });
      }
    };
    await Promise.all(Array.from({ length: Math.min(4, n.parts.length) }, worker));
    return out.sort((a, b) => a.partNumber - b.partNumber);
  }

  /** Large bodies get the per-request timeout plus time for the bytes at a modest 10 MB/s. */
  private bulkTimeout(size: number): number {
    return this.http.opts.timeoutMs + Math.ceil(size / 10_000_000) * 1000;
  }

  createUpload(
    input: { filename: string; contentType?: string; size: number; purpose?: string; idempotencyKey?: string; transport?: "presigned-put" | "multipart" | "presigned-multipart" },
    signal?: AbortSignal,
  ): Promise<UploadNegotiation> {
    const json = Object.fromEntries(Object.entries(input).filter(([, v]) => v !== undefined));
    return this.http.json({ method: "POST", path: "/v1/files/uploads", json, signal });
  }

  getUpload(uploadId: string, signal?: AbortSignal): Promise<UploadSession> {
    return this.http.json({ method: "GET", path: `/v1/files/uploads/${enc(uploadId)}`, signal });
  }

  completeUpload(uploadId: string, signal?: AbortSignal): Promise<FileObject> {
    return this.http.json({ method: "POST", path: `/v1/files/uploads/${enc(uploadId)}/complete`, json: {}, signal });
  }

  abortUpload(uploadId: string, signal?: AbortSignal): Promise<UploadSession> {
    return this.http.json({ method: "DELETE", path: `/v1/files/uploads/${enc(uploadId)}`, signal });
  }

  /** The tenant's files, newest first (this server's addition). */
  list(query: { limit?: number; offset?: number; purpose?: string } = {}, signal?: AbortSignal): Promise<{ data: FileObject[]; total: number; limit: number; offset: number }> {
    return this.http.json({ method: "GET", path: "/v1/files", query: { ...query }, signal });
  }

  get(fileId: string, signal?: AbortSignal): Promise<FileObject> {
    return this.http.json({ method: "GET", path: `/v1/files/${enc(fileId)}`, signal });
  }

  /** The bytes as a Blob (read fully). For large files prefer `content()`, which streams. */
  async download(fileId: string, signal?: AbortSignal): Promise<Blob> {
    const res = await this.content(fileId, { signal });
    return res.blob();
  }

  /** The content Response (stream `body`); `range` asks for a slice, e.g. `{start: 0, end: 99}`. */
  content(fileId: string, opts: { range?: { start: number; end?: number }; signal?: AbortSignal } = {}): Promise<Response> {
    const spec: RequestSpec = { method: "GET", path: `/v1/files/${enc(fileId)}/content`, signal: opts.signal };
    if (opts.range) spec.headers = { range: `bytes=${opts.range.start}-${opts.range.end ?? ""}` };
    return this.http.response(spec);
  }

  delete(fileId: string, signal?: AbortSignal): Promise<{ deleted: true }> {
    return this.http.json({ method: "DELETE", path: `/v1/files/${enc(fileId)}`, signal });
  }
}

export const enc = encodeURIComponent;
