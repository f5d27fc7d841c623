// Test harness for the automation HTTP app: an in-memory database with migrations applied, a
// manual clock, and helpers to mint tenants/keys and send requests through app.handle().
import { ManualClock } from "../../../src/kernel/clock";
import { silentLogger } from "../../../src/kernel/logger";
import { buildApp } from "../../../src/automation/app";
import type { AutomationConfig, AutomationContext } from "../../../src/automation/context";
import type { BlobInfo, BlobStore } from "../../../src/automation/files/blobs";
import { createContext } from "../../../src/automation/server";
import { createKey, createTenant } from "../../../src/automation/tenancy/service";

/** Test-only in-memory blob store (the real one is the filesystem store under the data dir). */
export class MemoryBlobs implements BlobStore {
  readonly map = new Map<string, Uint8Array>();
  async put(data: ReadableStream<Uint8Array> | Uint8Array | Blob, opts: { maxBytes?: number } = {}): Promise<BlobInfo> {
    const bytes = data instanceof Uint8Array ? data : new Uint8Array(await new Response(data).arrayBuffer());
    if (opts.maxBytes !== undefined && bytes.byteLength > opts.maxBytes) throw new Error("too large");
    const sha256 = new Bun.CryptoHasher("sha256").update(bytes).digest("hex");
    this.map.set(sha256, bytes);
    return { sha256, size: bytes.byteLength };
  }
  async get(sha256: string): Promise<Blob | null> {
    const b = this.map.get(sha256);
    return b ? new Blob([b]) : null;
  }
  async has(sha256: string): Promise<boolean> {
    return this.map.has(sha256);
  }
  async delete(sha256: string): Promise<void> {
    this.map.delete(sha256);
  }
}

export function testConfig(over: Partial<AutomationConfig> = {}): AutomationConfig {
  return {
    port: 0,
    hostname: "127.0.0.1",
    dataDir: ":memory:",
    workers: 1,
    demo: false,
    httpAllowHosts: [],
    envAllowList: [],
    publicUrl: "http://localhost",
    signingSecret: "test-signing-secret-test-signing-secret",
    ...over,
  };
}

export interface Harness {
  ctx: AutomationContext;
  app: ReturnType<typeof buildApp>;
  clock: ManualClock;
  /** A tenant with a `*` key. */
  tenant(slug: string): { id: string; slug: string; key: string };
  key(tenant: string, scopes: string[]): string;
  /** Sends a request; `body` objects become JSON. */
  req(method: string, path: string, opts?: { key?: string; body?: unknown; headers?: Record<string, string> }): Promise<Response>;
}

export async function harness(over: Partial<AutomationConfig> = {}): Promise<Harness> {
  const clock = new ManualClock();
  const ctx = await createContext(testConfig(over), { clock, log: silentLogger, blobs: new MemoryBlobs() });
  const app = buildApp(ctx);
  return {
    ctx,
    app,
    clock,
    tenant(slug) {
      const t = createTenant(ctx.sqlite, clock, { name: slug, slug });
      return { id: t.id, slug: t.slug, key: t.key };
    },
    key(tenant, scopes) {
      return createKey(ctx.sqlite, clock, { tenant, scopes }).key;
    },
    req(method, path, opts = {}) {
      const headers: Record<string, string> = { ...opts.headers };
      if (opts.key) headers.authorization = `Bearer ${opts.key}`;
      let body: string | Uint8Array | FormData | Blob | undefined;
      if (opts.body !== undefined) {
        if (typeof opts.body === "string" || opts.body instanceof Uint8Array || opts.body instanceof FormData || opts.body instanceof Blob) {
          body = opts.body as string | Uint8Array | FormData | Blob;
        } else {
          body = JSON.stringify(opts.body);
          headers["content-type"] ??= "application/json";
        }
      }
      return app.handle(new Request(`http://localhost${path}`, { method, headers, body }));
    },
  };
}

/** A JSON response body, loosely typed for assertions. */
// biome-ignore lint: test assertions index freely into response bodies
export type Json = Record<string, any>;
export const json = (r: Response): Promise<Json> => r.json() as Promise<Json>;
