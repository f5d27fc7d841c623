// Test harness for the automation HTTP app: an in-memory database with migrations applied, the real
// filesystem blob store in a temp dir, a manual clock, and helpers to mint tenants/keys and send
// requests through app.handle().
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ManualClock } from "../../../src/kernel/clock";
import { silentLogger } from "../../../src/kernel/logger";
import { buildApp } from "../../../src/automation/app";
import type { AutomationContext } from "../../../src/automation/context";
import type { AutomationConfig } from "../../../src/automation/config";
import { createBlobStore } from "../../../src/automation/blobs/fs-blobs";
import type { BlobMode } from "../files/stores";
import { createContext, type ContextDeps } from "../../../src/automation/server";
import { createKey, createTenant } from "../../../src/automation/tenancy/service";
import { runsOf } from "../../../src/automation/runs/service";
import { atFileEnd } from "../../support/file-end";
import { testConfig, testDatabase } from "./config";

export { testConfig };


/**
 * createContext over the test config and the backend under test (`AUTOMATION_TEST_DB`; a test that is
 * about SQLite itself passes `db: undefined`), closed after the file's tests.
 */
export async function testContext(over: Partial<AutomationConfig>, deps: ContextDeps): Promise<AutomationContext> {
  const database = "db" in over ? {} : await testDatabase(over.dataDir);
  const ctx = await createContext(testConfig({ ...database, ...over }), deps);
  // At the file's end: workers a test started stop (on PostgreSQL they poll and hold a liveness lock),
  // then the database closes (idempotent after a test closed it).
  atFileEnd(async () => {
    await runsOf(ctx).stopWorkers(100).catch(() => {});
    await ctx.db.close().catch(() => {});
  });
  return ctx;
}

export interface Harness {
  ctx: AutomationContext;
  app: ReturnType<typeof buildApp>;
  clock: ManualClock;
  /** A tenant with a `*` key. */
  tenant(slug: string): Promise<{ id: string; slug: string; key: string }>;
  key(tenant: string, scopes: string[]): Promise<string>;
  /** Sends a request; `body` objects become JSON. */
  req(method: string, path: string, opts?: { key?: string; body?: unknown; headers?: Record<string, string> }): Promise<Response>;
}

/** `blobs: "s3"` runs over the S3 store on s3rver (the suite calls withS3() from files/stores.ts). */
export async function harness(over: Partial<AutomationConfig> = {}, blobs: BlobMode = "fs"): Promise<Harness> {
  const clock = new ManualClock();
  const dir = mkdtempSync(join(tmpdir(), "automation-test-"));
  atFileEnd(() => rmSync(dir, { recursive: true, force: true }));
  // Imported only when asked for, so suites on the disk store never load the S3 test helpers.
  const store = blobs === "s3" ? await (await import("../files/stores")).testBlobStore("s3") : createBlobStore(join(dir, "blobs"));
  const ctx = await testContext(over, { clock, log: silentLogger, blobs: store });
  const app = buildApp(ctx);
  return {
    ctx,
    app,
    clock,
    async tenant(slug) {
      const t = await createTenant(ctx.storage.tenancy, clock, { name: slug, slug });
      return { id: t.id, slug: t.slug, key: t.key };
    },
    async key(tenant, scopes) {
      return (await createKey(ctx.storage.tenancy, clock, { tenant, scopes })).key;
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
