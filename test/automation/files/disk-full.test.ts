// A blob write that runs out of space (here the store's byte cap, which fails like a full disk):
// 507 `insufficient_storage` in the issues envelope, no file row, no blob, no temp file.
import { afterAll, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ManualClock } from "../../../src/kernel/clock";
import { silentLogger } from "../../../src/kernel/logger";
import { buildApp } from "../../../src/automation/app";
import { createBlobStore } from "../../../src/automation/blobs/fs-blobs";
import { testContext } from "../app/harness";
import { createTenant } from "../../../src/automation/tenancy/service";
import { count } from "../app/sql";

const dir = mkdtempSync(join(tmpdir(), "disk-full-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

test("out of space during an upload: 507 insufficient_storage, nothing stored; smaller uploads still work", async () => {
  const clock = new ManualClock("2026-11-25T09:00:00Z");
  const blobs = createBlobStore(join(dir, "blobs"), { maxBytes: 1_000_000 });
  const ctx = await testContext({ publicUrl: "http://files.test" }, { clock, log: silentLogger, blobs });
  const app = buildApp(ctx);
  const { key } = await createTenant(ctx.storage.tenancy, clock, { name: "t", slug: "t" });
  const upload = (bytes: Uint8Array) => {
    const form = new FormData();
    form.append("file", new Blob([bytes]), "f.bin");
    return app.handle(new Request("http://localhost/v1/files", { method: "POST", headers: { authorization: `Bearer ${key}` }, body: form }));
  };
  const full = await upload(new Uint8Array(1_500_000).fill(7));
  expect(full.status).toBe(507);
  expect(await full.json()).toMatchObject({ issues: [{ field: "<root>", code: "insufficient_storage", message: "the server is out of storage space; nothing was stored" }] });
  expect(blobs.list()).toEqual([]);
  expect(blobs.tempCount()).toBe(0);
  expect(await count(ctx, "files")).toBe(0);
  expect((await upload(new Uint8Array(1000).fill(8))).status).toBe(200);
});
