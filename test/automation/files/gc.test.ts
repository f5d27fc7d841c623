// The blob sweeper over both stores: unreferenced blobs go once past the grace period, referenced ones
// (files, run snapshots, pending uploads) stay, dry runs delete nothing, abandoned S3 uploads lose their
// staged bytes and multipart parts; and `blobs copy` between stores, resumable and verified.
import { describe, expect, test } from "bun:test";
import { existsSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { copyBlobs } from "../../../src/automation/files/copy";
import { collectGarbage } from "../../../src/automation/files/gc";
import { retainBlob } from "../../../src/automation/files/service";
import { BLOB_MODES, testBlobStore, testS3, withS3 } from "./stores";
import { bytesOf, filesHarness, json, sha256 } from "./support";

withS3();

describe.each(BLOB_MODES)("%s blobs: sweeper", (mode) => {
  test("deletes only unreferenced blobs older than the grace period; a dry run deletes nothing", async () => {
    const h = await filesHarness(mode);
    const t = await h.tenant("acme");
    const kept = await json(await h.upload(t.key, "kept"));
    const gone = await json(await h.upload(t.key, "gone"));
    const pinned = await json(await h.upload(t.key, "pinned"));
    await retainBlob(h.ctx, t.id, sha256("pinned"), "run:run_x");
    // An orphan: bytes stored, the row never written (a crash between the two).
    await h.blobs.put(new TextEncoder().encode("orphan"));
    await h.req("DELETE", `/v1/files/${pinned.id}`, { key: t.key });
    // Deleting normally frees the bytes at once; the sweeper is for what that missed.
    await h.req("DELETE", `/v1/files/${gone.id}`, { key: t.key });
    expect(await h.blobs.list()).toEqual([sha256("kept"), sha256("orphan"), sha256("pinned")].sort());

    expect(await collectGarbage(h.ctx, { graceMs: 60 * 60_000 })).toMatchObject({ scanned: 3, deleted: 0 });
    await Bun.sleep(1100); // s3rver's modification times have whole seconds
    const dry = await collectGarbage(h.ctx, { graceMs: 0, dryRun: true });
    expect(dry).toMatchObject({ scanned: 3, deleted: 1, deletedBytes: 6, dryRun: true });
    expect((await h.blobs.list()).length).toBe(3);
    expect(await collectGarbage(h.ctx, { graceMs: 0 })).toMatchObject({ deleted: 1 });
    expect(await h.blobs.list()).toEqual([sha256("kept"), sha256("pinned")].sort());
    expect(await (await h.req("GET", `/v1/files/${kept.id}/content`, { key: t.key })).text()).toBe("kept");
  });
});

describe("s3 blobs: sweeper and abandoned uploads", () => {
  test("a killed multipart upload: nothing visible; once its URLs expired the sweeper aborts it and drops its parts", async () => {
    const h = await filesHarness("s3");
    const t = await h.tenant("acme");
    const s3 = await testS3();
    const uploads = () => {
      const dir = join(s3.dir, s3.bucket, "._S3rver_uploads");
      return existsSync(dir) ? readdirSync(dir) : [];
    };
    const before = uploads();
    const data = bytesOf(9 * 1024 * 1024, 4);
    const s = await json(await h.req("POST", "/v1/files/uploads", { key: t.key, json: { filename: "x.bin", size: data.byteLength, transport: "presigned-multipart" } }));
    // The client dies after the first part.
    expect((await fetch(s.parts[0].url, { method: "PUT", body: data.subarray(0, s.partSize) })).status).toBe(200);
    const mine = uploads().filter((u) => !before.includes(u));
    expect(mine.length).toBe(1);
    expect(await h.blobs.list()).toEqual([]);
    expect((await h.req("GET", `/v1/files/${s.fileId}`, { key: t.key })).status).toBe(404);

    // Within the URLs' lifetime the session is live: the sweeper leaves it alone.
    expect(await collectGarbage(h.ctx, { graceMs: 0 })).toMatchObject({ sessions: 0, multiparts: 0 });
    expect(uploads()).toContain(mine[0]);
    h.clock.advance(60 * 60_000 + 1);
    const r = await collectGarbage(h.ctx, { graceMs: 0 });
    expect(r.sessions).toBe(1);
    expect(r.multiparts).toBeGreaterThanOrEqual(1);
    expect(uploads()).not.toContain(mine[0]);
    expect((await h.req("GET", `/v1/files/uploads/${s.uploadId}`, { key: t.key })).status).toBe(404);
  });

  test("a staged single PUT nobody completed is removed with its session; temp objects past the grace go", async () => {
    const h = await filesHarness("s3");
    const t = await h.tenant("acme");
    const s = await json(await h.req("POST", "/v1/files/uploads", { key: t.key, json: { filename: "y.bin", size: 4, transport: "presigned-put" } }));
    await fetch(s.url, { method: "PUT", body: "left" });
    expect(await h.blobs.tempCount()).toBe(1);
    h.clock.advance(60 * 60_000 + 1);
    await Bun.sleep(1100);
    const r = await collectGarbage(h.ctx, { graceMs: 0 });
    expect(r.sessions).toBe(1);
    expect(await h.blobs.tempCount()).toBe(0);
    expect(await h.blobs.list()).toEqual([]);
  });
});

describe("blobs copy", () => {
  test("disk → S3: every blob copied and verified; a second run skips them all; the copy reads back equal", async () => {
    const from = await testBlobStore("fs");
    const to = await testBlobStore("s3");
    const datas = Array.from({ length: 25 }, (_, i) => bytesOf(1000 + i * 997, i + 1));
    datas.push(bytesOf(9 * 1024 * 1024, 99));
    for (const d of datas) await from.put(d);
    // An earlier run got one across already.
    await to.put(datas[0]);
    const seen: number[] = [];
    const r = await copyBlobs(from, to, { onProgress: (p) => seen.push(p.done) });
    expect(r).toMatchObject({ total: 26, copied: 25, skipped: 1, verified: 26, failed: [] });
    expect(seen.at(-1)).toBe(26);
    for (const d of datas) expect(sha256(new Uint8Array(await (await to.get(sha256(d)))!.arrayBuffer()))).toBe(sha256(d));
    expect(await copyBlobs(from, to)).toMatchObject({ total: 26, copied: 0, skipped: 26, verified: 26 });
  });
});
