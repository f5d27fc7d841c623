// Upload sessions with the S3 store: presigned PUT and presigned multipart straight to s3rver, complete
// verifying size and sha256 before the file exists, abort removing the multipart upload, and downloads
// redirected to presigned GETs with --s3-redirect.
import { describe, expect, test } from "bun:test";
import { existsSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { bytesOf, filesHarness, json, sha256, type FilesHarness } from "./support";
import { testS3, withS3 } from "./stores";

withS3();

const MiB = 1024 * 1024;

async function session(h: FilesHarness, key: string, body: Record<string, unknown>) {
  const r = await h.req("POST", "/v1/files/uploads", { key, json: body });
  return { status: r.status, body: await json(r) };
}

/** Multipart uploads s3rver holds open (its on-disk upload folders). */
async function openUploads(): Promise<string[]> {
  const s3 = await testS3();
  const dir = join(s3.dir, s3.bucket, "._S3rver_uploads");
  return existsSync(dir) ? readdirSync(dir) : [];
}

async function putParts(parts: { partNumber: number; url: string }[], data: Uint8Array, partSize: number) {
  const out: { partNumber: number; etag: string }[] = [];
  for (const p of parts) {
    const r = await fetch(p.url, { method: "PUT", body: data.subarray((p.partNumber - 1) * partSize, p.partNumber * partSize) });
    expect(r.status).toBe(200);
    out.push({ partNumber: p.partNumber, etag: r.headers.get("etag")! });
  }
  return out;
}

describe("S3 presigned-put", () => {
  test("the URL is a presigned PUT to the storage; nothing is a file or a blob before complete verifies it", async () => {
    const h = await filesHarness("s3");
    const t = await h.tenant("acme");
    const data = bytesOf(6 * MiB + 1, 3);
    const s = (await session(h, t.key, { filename: "big.bin", size: data.byteLength, contentType: "application/octet-stream" })).body;
    expect(s.transport).toBe("presigned-put");
    const url = new URL(s.url);
    expect(url.origin).toBe((await testS3()).endpoint);
    expect(url.pathname).toEndWith(`/uploads/${s.uploadId}`);
    expect(url.searchParams.get("X-Amz-Expires")).toBe("3600");
    const put = await fetch(s.url, { method: "PUT", body: data, headers: s.headers });
    expect(put.status).toBe(200);
    expect((await h.req("GET", `/v1/files/${s.fileId}`, { key: t.key })).status).toBe(404);
    expect(await h.blobs.list()).toEqual([]);

    const done = await h.req("POST", `/v1/files/uploads/${s.uploadId}/complete`, { key: t.key, json: { sha256: sha256(data) } });
    expect(done.status).toBe(200);
    expect(await h.blobs.list()).toEqual([sha256(data)]);
    expect(await h.blobs.tempCount()).toBe(0);
    const content = await h.req("GET", `/v1/files/${s.fileId}/content`, { key: t.key });
    expect(sha256(new Uint8Array(await content.arrayBuffer()))).toBe(sha256(data));
    const range = await h.req("GET", `/v1/files/${s.fileId}/content`, { key: t.key, headers: { range: "bytes=10-19" } });
    expect(range.status).toBe(206);
    expect([...new Uint8Array(await range.arrayBuffer())]).toEqual([...data.subarray(10, 20)]);
  });

  test("wrong size or wrong sha256 → 400 at complete, no file; the session still completes with the right bytes", async () => {
    const h = await filesHarness("s3");
    const t = await h.tenant("acme");
    const s = (await session(h, t.key, { filename: "a.txt", size: 10, transport: "presigned-put" })).body;
    for (const [body, code] of [["0123", "size_mismatch"], ["0123456789ABC", "size_mismatch"]] as const) {
      await fetch(s.url, { method: "PUT", body });
      const r = await h.req("POST", `/v1/files/uploads/${s.uploadId}/complete`, { key: t.key });
      expect(r.status).toBe(400);
      expect((await json(r)).issues[0].code).toBe(code);
    }
    await fetch(s.url, { method: "PUT", body: "0123456789" });
    const bad = await h.req("POST", `/v1/files/uploads/${s.uploadId}/complete`, { key: t.key, json: { sha256: sha256("something else") } });
    expect(bad.status).toBe(400);
    expect((await json(bad)).issues[0].code).toBe("checksum_mismatch");
    expect(await h.fileRows()).toBe(0);
    expect(await h.blobs.list()).toEqual([]);
    const ok = await h.req("POST", `/v1/files/uploads/${s.uploadId}/complete`, { key: t.key, json: { sha256: sha256("0123456789") } });
    expect(ok.status).toBe(200);
    expect(await (await h.req("GET", `/v1/files/${s.fileId}/content`, { key: t.key })).text()).toBe("0123456789");
  });
});

describe("S3 presigned-multipart", () => {
  test("part URLs, then complete with the ETags and sha256 → the file; retried complete answers the same file", async () => {
    const h = await filesHarness("s3");
    const t = await h.tenant("acme");
    const data = bytesOf(17 * MiB + 5, 7);
    const r = await session(h, t.key, { filename: "video.bin", size: data.byteLength, transport: "presigned-multipart", idempotencyKey: "mp-1" });
    expect(r.status).toBe(200);
    const s = r.body;
    expect(s).toMatchObject({ transport: "presigned-multipart", partSize: 8 * MiB, method: "PUT", completeUrl: `http://files.test/v1/files/uploads/${s.uploadId}/complete` });
    expect(s.parts.map((p: { partNumber: number }) => p.partNumber)).toEqual([1, 2, 3]);
    // The same idempotency key hands out the same multipart upload again.
    expect((await session(h, t.key, { filename: "video.bin", size: data.byteLength, transport: "presigned-multipart", idempotencyKey: "mp-1" })).body.uploadId).toBe(s.uploadId);
    expect((await openUploads()).length).toBeGreaterThan(0);

    const parts = await putParts(s.parts, data, s.partSize);
    expect((await h.req("GET", `/v1/files/${s.fileId}`, { key: t.key })).status).toBe(404);
    const missing = await h.req("POST", `/v1/files/uploads/${s.uploadId}/complete`, { key: t.key });
    expect(missing.status).toBe(400);
    expect((await json(missing)).issues[0].field).toBe("parts");

    const body = { parts, sha256: sha256(data) };
    const done = await h.req("POST", `/v1/files/uploads/${s.uploadId}/complete`, { key: t.key, json: body });
    expect(done.status).toBe(200);
    expect((await json(done)).size).toBe(data.byteLength);
    const again = await h.req("POST", `/v1/files/uploads/${s.uploadId}/complete`, { key: t.key, json: body });
    expect((await json(again)).id).toBe(s.fileId);
    expect(await h.fileRows()).toBe(1);
    const content = await h.req("GET", `/v1/files/${s.fileId}/content`, { key: t.key });
    expect(sha256(new Uint8Array(await content.arrayBuffer()))).toBe(sha256(data));
    expect(await h.blobs.tempCount()).toBe(0);
  });

  test("abort removes the multipart upload and its parts; nothing becomes visible", async () => {
    const h = await filesHarness("s3");
    const t = await h.tenant("acme");
    const data = bytesOf(9 * MiB, 8);
    const before = await openUploads();
    const s = (await session(h, t.key, { filename: "x.bin", size: data.byteLength, transport: "presigned-multipart" })).body;
    await putParts(s.parts.slice(0, 1), data, s.partSize);
    const mine = (await openUploads()).filter((u) => !before.includes(u));
    expect(mine.length).toBe(1);
    const a = await h.req("DELETE", `/v1/files/uploads/${s.uploadId}`, { key: t.key });
    expect((await json(a)).status).toBe("aborted");
    expect(await openUploads()).not.toContain(mine[0]);
    expect((await h.req("POST", `/v1/files/uploads/${s.uploadId}/complete`, { key: t.key, json: { parts: [{ partNumber: 1, etag: "x" }] } })).status).toBe(409);
    expect(await h.blobs.list()).toEqual([]);
    expect(await h.fileRows()).toBe(0);
  });

  test("the disk store refuses presigned-multipart with 400 naming the transport", async () => {
    const h = await filesHarness("fs");
    const t = await h.tenant("acme");
    const r = await session(h, t.key, { filename: "x.bin", size: 9 * MiB, transport: "presigned-multipart" });
    expect(r.status).toBe(400);
    expect(r.body.issues[0].field).toBe("transport");
  });
});

describe("--s3-redirect", () => {
  test("content answers 302 to a presigned GET carrying the type and filename; without it the bytes stream", async () => {
    const h = await filesHarness("s3");
    const t = await h.tenant("acme");
    const f = await json(await h.upload(t.key, "redirected bytes", "report.txt"));
    const streamed = await h.req("GET", `/v1/files/${f.id}/content`, { key: t.key });
    expect(streamed.status).toBe(200);
    expect(await streamed.text()).toBe("redirected bytes");

    h.ctx.config.s3Redirect = true;
    const r = await h.req("GET", `/v1/files/${f.id}/content`, { key: t.key });
    expect(r.status).toBe(302);
    const location = r.headers.get("location")!;
    expect(location.startsWith((await testS3()).endpoint)).toBe(true);
    expect(new URL(location).searchParams.get("X-Amz-Expires")).toBe("300");
    const got = await fetch(location);
    expect(got.status).toBe(200);
    expect(await got.text()).toBe("redirected bytes");
    expect(got.headers.get("content-type")).toStartWith("text/plain");
    expect(got.headers.get("content-disposition")).toContain("report.txt");
    const ranged = await fetch(location, { headers: { range: "bytes=0-9" } });
    expect(await ranged.text()).toBe("redirected");
    // Still needs a key.
    expect((await h.req("GET", `/v1/files/${f.id}/content`)).status).toBe(401);
  });
});
