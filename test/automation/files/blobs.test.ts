import { afterAll, describe, expect, test } from "bun:test";
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { DomainError } from "../../../src/kernel/errors";
import { createBlobStore } from "../../../src/automation/blobs/fs-blobs";
import { BLOB_MODES, testBlobStore, withS3 } from "./stores";
import { bytesOf, sha256 } from "./support";

withS3();

const root = mkdtempSync(join(tmpdir(), "blobs-test-"));
afterAll(() => rmSync(root, { recursive: true, force: true }));

function chunked(data: Uint8Array, size: number, failAfter?: number): ReadableStream<Uint8Array> {
  let off = 0;
  return new ReadableStream({
    pull(c) {
      if (failAfter !== undefined && off >= failAfter) return c.error(new Error("source failed"));
      if (off >= data.byteLength) return c.close();
      c.enqueue(data.slice(off, off + size));
      off += size;
    },
  });
}

describe.each(BLOB_MODES)("%s BlobStore", (mode) => {
  const fresh = () => testBlobStore(mode);

  test("reads back byte-identical from a stream, bytes or a Blob, small and over the buffering threshold", async () => {
    const s = await fresh();
    for (const size of [700_001, 9 * 1024 * 1024 + 17]) {
      const data = bytesOf(size, 5);
      const info = await s.put(chunked(data, 64 * 1024));
      expect(info).toEqual({ sha256: sha256(data), size: data.byteLength });
      const back = new Uint8Array(await (await s.get(info.sha256))!.arrayBuffer());
      expect(sha256(back)).toBe(sha256(data));
      expect(await s.put(data)).toEqual(info);
      expect(await s.put(new Blob([data]))).toEqual(info);
    }
    expect((await s.list()).length).toBe(2);
    expect(await s.tempCount()).toBe(0);
  });

  test("Range: a slice of the stored blob reads only those bytes", async () => {
    const s = await fresh();
    const data = bytesOf(100_000, 9);
    const info = await s.put(data);
    const part = new Uint8Array(await (await s.get(info.sha256))!.slice(1000, 1010).arrayBuffer());
    expect([...part]).toEqual([...data.slice(1000, 1010)]);
  });

  test("an empty blob is fine", async () => {
    const s = await fresh();
    const info = await s.put(new Uint8Array());
    expect(info).toEqual({ sha256: sha256(new Uint8Array()), size: 0 });
    expect((await (await s.get(info.sha256))!.arrayBuffer()).byteLength).toBe(0);
  });

  test("maxBytes: one byte over → TooLarge (413), no blob and no temp object left, small and streamed", async () => {
    const s = await fresh();
    for (const limit of [10_000, 9 * 1024 * 1024]) {
      const data = bytesOf(limit + 1);
      const err = await s.put(chunked(data, 64 * 1024), { maxBytes: limit }).catch((e) => e);
      expect(err).toBeInstanceOf(DomainError);
      expect((err as DomainError).status).toBe(413);
      expect(await s.list()).toEqual([]);
      expect(await s.tempCount()).toBe(0);
    }
    expect((await s.put(bytesOf(10_000), { maxBytes: 10_000 })).size).toBe(10_000);
  });

  test("a failing source stream rejects and leaves nothing, small and streamed", async () => {
    const s = await fresh();
    await expect(s.put(chunked(bytesOf(100_000), 1000, 50_000))).rejects.toThrow("source failed");
    await expect(s.put(chunked(bytesOf(12 * 1024 * 1024), 64 * 1024, 10 * 1024 * 1024))).rejects.toThrow("source failed");
    expect(await s.list()).toEqual([]);
    expect(await s.tempCount()).toBe(0);
  });

  test("has/get/delete; keys that are not sha256 hex are never paths", async () => {
    const s = await fresh();
    const info = await s.put(new TextEncoder().encode("x"));
    expect(await s.has(info.sha256)).toBe(true);
    await s.delete(info.sha256);
    expect(await s.has(info.sha256)).toBe(false);
    expect(await s.get(info.sha256)).toBeNull();
    await s.delete(info.sha256); // absent: no error
    for (const bad of ["../../etc/passwd", "ab/cd", "A".repeat(64), ""]) {
      expect(await s.get(bad)).toBeNull();
      expect(await s.has(bad)).toBe(false);
      await s.delete(bad);
    }
  });

  test("entries list every blob with its size and time", async () => {
    const s = await fresh();
    const a = await s.put(bytesOf(10, 1));
    const b = await s.put(bytesOf(20, 2));
    const seen = [];
    for await (const e of s.entries()) seen.push(e);
    expect(seen.map((e) => [e.sha256, e.size]).sort()).toEqual([[a.sha256, 10], [b.sha256, 20]].sort() as [string, number][]);
    for (const e of seen) expect(Math.abs(e.modifiedMs - Date.now())).toBeLessThan(60_000);
  });
});

describe("FsBlobStore", () => {
  test("stores under ab/cd/<sha256>", async () => {
    const s = createBlobStore(join(root, "layout"));
    const info = await s.put(new TextEncoder().encode("layout"));
    expect(existsSync(join(s.root, info.sha256.slice(0, 2), info.sha256.slice(2, 4), info.sha256))).toBe(true);
  });

  test("a byte cap (--blobs-max-bytes): a put past it fails with ENOSPC mid-write and leaves nothing; deletes and reopening recount", async () => {
    const dir = join(root, "capped");
    const s = createBlobStore(dir, { maxBytes: 1_000_000 });
    const a = await s.put(new Uint8Array(400_000).fill(1));
    // Identical bytes are stored once and, once written, count once (400,000 used, not 800,000).
    expect((await s.put(new Uint8Array(400_000).fill(1))).sha256).toBe(a.sha256);
    const big = new ReadableStream<Uint8Array>({
      start(c) {
        for (let i = 0; i < 8; i++) c.enqueue(new Uint8Array(100_000).fill(2 + i));
        c.close();
      },
    });
    await expect(s.put(big)).rejects.toMatchObject({ code: "ENOSPC" });
    expect(s.list()).toEqual([a.sha256]);
    expect(s.tempCount()).toBe(0);
    const b = await s.put(new Uint8Array(500_000).fill(3));
    // A reopened store counts what is on disk: 900,000 of 1,000,000 used.
    const again = createBlobStore(dir, { maxBytes: 1_000_000 });
    await expect(again.put(new Uint8Array(200_000).fill(4))).rejects.toMatchObject({ code: "ENOSPC" });
    expect(again.tempCount()).toBe(0);
    await again.delete(b.sha256);
    expect((await again.put(new Uint8Array(200_000).fill(4))).size).toBe(200_000);
  });

  test("temp files left by a crash are removed when the store opens", () => {
    const dir = join(root, "crashed");
    mkdirSync(join(dir, "tmp"), { recursive: true });
    writeFileSync(join(dir, "tmp", "123-half"), "half a file");
    const s = createBlobStore(dir);
    expect(s.tempCount()).toBe(0);
  });
});
