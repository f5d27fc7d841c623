// Files test support: the real app over an in-memory database, with a real blob store (the filesystem
// store in a temp dir, or the S3 store on s3rver: see stores.ts), so tests can see that nothing
// half-written stays; a manual clock, tenants and keys.
import { ManualClock } from "../../../src/kernel/clock";
import { silentLogger } from "../../../src/kernel/logger";
import { buildApp } from "../../../src/automation/app";
import { testContext } from "../app/harness";
import type { AutomationContext } from "../../../src/automation/context";
import { createKey, createTenant } from "../../../src/automation/tenancy/service";
import { testBlobStore, type BlobMode, type TestBlobStore } from "./stores";
import { count } from "../app/sql";

export interface FilesHarness {
  ctx: AutomationContext;
  app: ReturnType<typeof buildApp>;
  clock: ManualClock;
  blobs: TestBlobStore;
  mode: BlobMode;
  tenant(slug: string): Promise<{ id: string; key: string }>;
  key(tenant: string, scopes: string[]): Promise<string>;
  req(method: string, path: string, opts?: { key?: string; body?: string | Uint8Array | Blob | FormData | ReadableStream<Uint8Array>; json?: unknown; headers?: Record<string, string> }): Promise<Response>;
  /** Multipart upload of `bytes` as `file` (and `purpose`). */
  upload(key: string, bytes: Uint8Array | string, filename?: string, opts?: { purpose?: string; type?: string }): Promise<Response>;
  /** Rows in the files table (all tenants). */
  fileRows(): Promise<number>;
}

export async function filesHarness(mode: BlobMode = "fs"): Promise<FilesHarness> {
  const clock = new ManualClock("2026-11-22T09:00:00Z");
  const blobs = await testBlobStore(mode);
  const ctx = await testContext({ publicUrl: "http://files.test" }, { clock, log: silentLogger, blobs });
  const app = buildApp(ctx);
  const req: FilesHarness["req"] = (method, path, opts = {}) => {
    const headers: Record<string, string> = { ...opts.headers };
    if (opts.key) headers.authorization = `Bearer ${opts.key}`;
    let body = opts.body;
    if (opts.json !== undefined) {
      body = JSON.stringify(opts.json);
      headers["content-type"] ??= "application/json";
    }
    const url = path.startsWith("http") ? path : `http://localhost${path}`;
    return app.handle(new Request(url, { method, headers, body }));
  };
  return {
    ctx,
    app,
    clock,
    blobs,
    mode,
    async tenant(slug) {
      const t = await createTenant(ctx.storage.tenancy, clock, { name: slug, slug });
      return { id: t.id, key: t.key };
    },
    async key(tenant, scopes) {
      return (await createKey(ctx.storage.tenancy, clock, { tenant, scopes })).key;
    },
    req,
    upload(key, bytes, filename = "hello.txt", opts = {}) {
      const form = new FormData();
      form.append("file", new Blob([bytes], { type: opts.type ?? "text/plain" }), filename);
      if (opts.purpose !== undefined) form.append("purpose", opts.purpose);
      return req("POST", "/v1/files", { key, body: form });
    },
    fileRows: () => count(ctx, "files"),
  };
}

/** Deterministic pseudo-random bytes (so expected values never come from the code under test). */
export function bytesOf(size: number, seed = 1): Uint8Array {
  const out = new Uint8Array(size);
  let x = seed >>> 0 || 1;
  for (let i = 0; i < size; i++) {
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    out[i] = x & 0xff;
  }
  return out;
}

export const sha256 = (b: Uint8Array | string) => new Bun.CryptoHasher("sha256").update(b).digest("hex");
// biome-ignore lint: assertions index freely into response bodies
export type Json = Record<string, any>;
export const json = (r: Response): Promise<Json> => r.json() as Promise<Json>;
