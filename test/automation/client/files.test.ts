// The client library against the real app listening on a loopback port.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ManualClock } from "../../../src/kernel/clock";
import { silentLogger } from "../../../src/kernel/logger";
import { buildApp } from "../../../src/automation/app";
import { AuthenticationError, AutomationClient, ForbiddenError, NotFoundError, ValidationError } from "../../../src/automation/client";
import { createBlobStore } from "../../../src/automation/blobs/fs-blobs";
import { testContext } from "../app/harness";
import { createKey, createTenant } from "../../../src/automation/tenancy/service";
import { bytesOf, sha256 } from "../files/support";

const dir = mkdtempSync(join(tmpdir(), "client-files-"));
let server: ReturnType<typeof Bun.serve>;
let base = "";
let key = "";
let readerKey = "";

beforeAll(async () => {
  const clock = new ManualClock(Date.now());
  const ctx = await testContext({}, { clock, log: silentLogger, blobs: createBlobStore(join(dir, "blobs")) });
  const app = buildApp(ctx);
  server = Bun.serve({ port: 0, hostname: "127.0.0.1", fetch: (req) => app.handle(req), maxRequestBodySize: 1024 * 1024 * 1024 });
  base = `http://127.0.0.1:${server.port}`;
  ctx.config.publicUrl = base;
  const t = await createTenant(ctx.storage.tenancy, clock, { name: "acme", slug: "acme" });
  key = t.key;
  readerKey = (await createKey(ctx.storage.tenancy, clock, { tenant: "acme", scopes: ["files:read"] })).key;
});
afterAll(() => {
  server.stop(true);
  rmSync(dir, { recursive: true, force: true });
});

const client = (k = key) => new AutomationClient({ baseUrl: base, apiKey: k, retryBaseMs: 1 });

describe("client ↔ real server: files", () => {
  test("authCheck names the tenant", async () => {
    expect(await client().authCheck()).toMatchObject({ ok: true, tenantSlug: "acme", wildcardGranted: true });
  });

  test("a small upload goes multipart; metadata and bytes come back", async () => {
    const c = client();
    const f = await c.files.upload(new File(["hello client"], "hello.txt", { type: "text/plain" }));
    expect(f).toMatchObject({ filename: "hello.txt", size: 12, purpose: null });
    expect(f.contentType).toStartWith("text/plain");
    expect(await c.files.get(f.id)).toEqual(f);
    expect(await (await c.files.download(f.id)).text()).toBe("hello client");
  });

  test("a 6 MiB upload goes through an upload session and downloads byte-identical; Range works", async () => {
    const c = client();
    const data = bytesOf(6 * 1024 * 1024 + 5, 42);
    const path = join(dir, "six.bin");
    writeFileSync(path, data);
    const f = await c.files.upload({ path });
    expect(f).toMatchObject({ filename: "six.bin", size: data.byteLength });
    const back = new Uint8Array(await (await c.files.download(f.id)).arrayBuffer());
    expect(sha256(back)).toBe(sha256(data));
    const part = await c.files.content(f.id, { range: { start: 1000, end: 1009 } });
    expect(part.status).toBe(206);
    expect(new Uint8Array(await part.arrayBuffer())).toEqual(data.slice(1000, 1010));
  });

  test("upload-session calls directly: create, complete before PUT → ConflictError, abort", async () => {
    const c = client();
    const n = await c.files.createUpload({ filename: "x.bin", size: 10, transport: "presigned-put" });
    if (n.transport !== "presigned-put") throw new Error("expected presigned-put");
    expect(new URL(n.url).origin).toBe(base);
    await expect(c.files.completeUpload(n.uploadId)).rejects.toMatchObject({ status: 409, name: "ConflictError" });
    expect((await c.files.abortUpload(n.uploadId)).status).toBe("aborted");
    expect((await c.files.getUpload(n.uploadId)).status).toBe("aborted");
  });

  test("delete, then typed 404 with requestId and the raw envelope", async () => {
    const c = client();
    const f = await c.files.upload(new Uint8Array([1, 2, 3]), { filename: "x.bin" });
    expect(await c.files.delete(f.id)).toEqual({ deleted: true });
    const err = await c.files.get(f.id).catch((e) => e);
    expect(err).toBeInstanceOf(NotFoundError);
    expect(err.status).toBe(404);
    expect(err.requestId).toMatch(/^req_/);
    expect(err.envelope.issues[0]).toMatchObject({ code: "not_found", field: "id" });
  });

  test("uploading a path that does not exist fails before any request", async () => {
    await expect(client().files.upload({ path: join(dir, "missing.bin") })).rejects.toThrow("no such file");
    await expect(client().run("workflows.x", { doc: { path: join(dir, "missing.bin") } })).rejects.toThrow("no such file");
  });

  test("a traversal file name → ValidationError naming the field", async () => {
    const err = await client().files.upload(new Uint8Array([1]), { filename: "../../etc/passwd" }).catch((e) => e);
    expect(err).toBeInstanceOf(ValidationError);
    expect(err.issues[0].field).toBe("filename");
  });

  test("wrong key → AuthenticationError; read-only key uploading → ForbiddenError", async () => {
    expect(await client("eak_nope").files.get("file_x").catch((e) => e)).toBeInstanceOf(AuthenticationError);
    const err = await client(readerKey).files.upload(new Uint8Array([1]), { filename: "a" }).catch((e) => e);
    expect(err).toBeInstanceOf(ForbiddenError);
    expect(err.issues[0].code).toBe("insufficient_scope");
  });
});
