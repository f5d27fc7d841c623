// automation-server backup over each blob store (disk, and S3 against s3rver): every blob the
// database snapshot refers to lands in the backup and, after restore into a new data dir, on disk with
// the same bytes; restore refuses a data dir holding data.
import { afterAll, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { backupDataDir, restoreDataDir } from "../../../src/automation/backup";
import { buildApp } from "../../../src/automation/app";
import { createBlobStore } from "../../../src/automation/blobs/fs-blobs";
import { testContext } from "../app/harness";
import { createTenant } from "../../../src/automation/tenancy/service";
import { ManualClock } from "../../../src/kernel/clock";
import { silentLogger } from "../../../src/kernel/logger";
import { BLOB_MODES, testBlobStore, withS3 } from "./stores";

withS3();
const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

describe.each(BLOB_MODES)("backup with %s blobs", (mode) => {
  test("every referenced blob is backed up and restored byte-equal; restore needs an empty data dir", async () => {
    const dir = mkdtempSync(join(tmpdir(), "automation-backup-"));
    dirs.push(dir);
    const blobs = await testBlobStore(mode);
    const ctx = await testContext({ dataDir: join(dir, "data"), db: undefined }, { clock: new ManualClock(), log: silentLogger, blobs });
    const app = buildApp(ctx);
    const t = await createTenant(ctx.storage.tenancy, ctx.clock, { name: "bk", slug: "bk" });
    const sent = new Map<string, Uint8Array>();
    for (let i = 0; i < 3; i++) {
      const bytes = crypto.getRandomValues(new Uint8Array(1000 + i));
      const form = new FormData();
      form.append("file", new Blob([bytes]), `f${i}.bin`);
      const r = await app.handle(new Request("http://localhost/v1/files", { method: "POST", headers: { authorization: `Bearer ${t.key}` }, body: form }));
      expect(r.status).toBe(200);
      sent.set(((await r.json()) as { id: string }).id, bytes);
    }
    // A blob nobody refers to stays out of the backup.
    await blobs.put(new TextEncoder().encode("orphan"));

    const manifest = await backupDataDir(join(dir, "data"), join(dir, "bk"), blobs);
    await ctx.db.close();
    expect(manifest.blobs).toBe(3);
    expect(manifest.missing).toEqual([]);
    await expect(restoreDataDir(join(dir, "bk"), join(dir, "data"))).rejects.toThrow("is not empty");
    const restored = await restoreDataDir(join(dir, "bk"), join(dir, "restored"));
    expect(restored.restoredBlobs).toBe(3);

    const again = await testContext({ dataDir: join(dir, "restored"), db: undefined }, { clock: new ManualClock(), log: silentLogger, blobs: createBlobStore(join(dir, "restored", "blobs")) });
    const back = buildApp(again);
    for (const [id, bytes] of sent) {
      const r = await back.handle(new Request(`http://localhost/v1/files/${id}/content`, { headers: { authorization: `Bearer ${t.key}` } }));
      expect(r.status).toBe(200);
      expect(Buffer.compare(Buffer.from(await r.arrayBuffer()), Buffer.from(bytes))).toBe(0);
    }
    await again.db.close();
    await expect(restoreDataDir(join(dir, "restored"), join(dir, "elsewhere"))).rejects.toThrow("not a complete automation-server backup");
  });
});
