import { afterAll, describe, expect, test } from "bun:test";
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { DomainError } from "../../../src/kernel/errors";
import { createBlobStore } from "../../../src/automation/files/fs-blobs";
import { bytesOf, sha256 } from "./support";

const root = mkdtempSync(join(tmpdir(), "blobs-test-"));
afterAll(() => rmSync(root, { recursive: true, force: true }));
let n = 0;
const fresh = () => createBlobStore(join(root, `s${n++}`));

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

describe("FsBlobStore", () => {
  test("stores under ab/cd/<sha256> and reads back byte-identical from a stream, bytes or a Blob", async () => {
    const s = fresh();
    const data = bytesOf(700_001, 5);
    const info = await s.put(chunked(data, 4096));
    expect(info).toEqual({ sha256: sha256(data), size: data.byteLength });
    expect(existsSync(join(s.root, info.sha256.slice(0, 2), info.sha256.slice(2, 4), info.sha256))).toBe(true);
    const back = new Uint8Array(await (await s.get(info.sha256))!.arrayBuffer());
    expect(sha256(back)).toBe(sha256(data));
    expect(await s.put(data)).toEqual(info);
    expect(await s.put(new Blob([data]))).toEqual(info);
    expect(s.list()).toEqual([info.sha256]);
    expect(s.tempCount()).toBe(0);
  });

  test("an empty blob is fine", async () => {
    const s = fresh();
    const info = await s.put(new Uint8Array());
    expect(info).toEqual({ sha256: sha256(new Uint8Array()), size: 0 });
    expect((await s.get(info.sha256))!.size).toBe(0);
  });

  test("maxBytes: one byte over → TooLarge (413), no blob and no temp file left", async () => {
    const s = fresh();
    const data = bytesOf(10_001);
    const err = await s.put(chunked(data, 1000), { maxBytes: 10_000 }).catch((e) => e);
    expect(err).toBeInstanceOf(DomainError);
    expect((err as DomainError).status).toBe(413);
    expect(s.list()).toEqual([]);
    expect(s.tempCount()).toBe(0);
    expect((await s.put(data.slice(0, 10_000), { maxBytes: 10_000 })).size).toBe(10_000);
  });

  test("a failing source stream rejects and leaves nothing", async () => {
    const s = fresh();
    await expect(s.put(chunked(bytesOf(100_000), 1000, 50_000))).rejects.toThrow("source failed");
    expect(s.list()).toEqual([]);
    expect(s.tempCount()).toBe(0);
  });

  test("has/get/delete; keys that are not sha256 hex are never paths", async () => {
    const s = fresh();
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

  test("temp files left by a crash are removed when the store opens", () => {
    const dir = join(root, "crashed");
    mkdirSync(join(dir, "tmp"), { recursive: true });
    writeFileSync(join(dir, "tmp", "123-half"), "half a file");
    const s = createBlobStore(dir);
    expect(s.tempCount()).toBe(0);
  });
});
