import { describe, expect, test } from "bun:test";
import { bytesOf, filesHarness, json, sha256, type FilesHarness } from "./support";
import { BLOB_MODES, withS3 } from "./stores";

withS3();

const MiB = 1024 * 1024;

async function session(h: FilesHarness, key: string, body: Record<string, unknown>) {
  const r = await h.req("POST", "/v1/files/uploads", { key, json: body });
  return { status: r.status, body: await json(r) };
}

/** PUTs to a session's URL: this server's signed URL goes through the app, a presigned S3 URL to s3rver. */
function send(h: FilesHarness, url: string, body: string | Uint8Array | ReadableStream<Uint8Array>, headers: Record<string, string> = {}): Promise<Response> {
  if (url.startsWith("http://files.test/") || url.startsWith("http://localhost/")) return h.req("PUT", url, { body, headers });
  return fetch(url, { method: "PUT", body, headers });
}

/**
 * A case of this server's own signed-URL transport: declared only for the disk store (in S3 mode the
 * URLs are S3's; uploads-s3.test.ts covers them), so the S3 run lists no skipped test.
 */
const ownTransport = (mode: string) => (name: string, fn: () => Promise<void>) => {
  if (mode === "fs") test(name, fn);
};

describe.each(BLOB_MODES)("%s blobs: POST /v1/files/uploads: transport negotiation", (mode) => {
  ownTransport(mode)("≤ 4.5 MiB → multipart to /v1/files; larger → presigned-put with a signed URL to this server", async () => {
    const h = await filesHarness(mode);
    const t = await h.tenant("acme");
    const small = await session(h, t.key, { filename: "a.pdf", contentType: "application/pdf", size: Math.floor(4.5 * MiB) });
    expect(small.status).toBe(200);
    expect(small.body).toEqual({ transport: "multipart", url: "/v1/files", maxFileSizeBytes: 1024 * MiB });

    const big = await session(h, t.key, { filename: "b.pdf", contentType: "application/pdf", size: 20 * MiB });
    expect(big.status).toBe(200);
    expect(big.body).toMatchObject({
      transport: "presigned-put",
      method: "PUT",
      headers: { "content-type": "application/pdf" },
      expiresAt: "2026-11-22T10:00:00.000Z",
      maxFileSizeBytes: 1024 * MiB,
    });
    expect(big.body.uploadId).toMatch(/^upl_/);
    expect(big.body.fileId).toMatch(/^file_/);
    const url = new URL(big.body.url);
    expect(url.origin).toBe("http://files.test");
    expect(url.pathname).toBe(`/v1/files/uploads/${big.body.uploadId}/content`);
    expect(url.searchParams.get("expires")).toBe(String(Date.parse("2026-11-22T10:00:00Z") / 1000));
    expect(url.searchParams.get("signature")).toMatch(/^[\w-]{43}$/);
  });

  ownTransport(mode)("without --public-url the signed URL uses the origin the client reached (https behind a proxy saying so)", async () => {
    const h = await filesHarness(mode);
    h.ctx.config.publicUrlFromRequest = true;
    const t = await h.tenant("acme");
    const ask = (headers: Record<string, string> = {}) =>
      h.req("POST", "http://files.example:9000/v1/files/uploads", { key: t.key, json: { filename: "b.bin", size: 5 * MiB }, headers }).then(json);
    const direct = await ask();
    expect(new URL(direct.url).origin).toBe("http://files.example:9000");
    const proxied = await ask({ "x-forwarded-proto": "https" });
    expect(new URL(proxied.url).origin).toBe("https://files.example:9000");
    // The URL works as handed out.
    const put = await h.req("PUT", direct.url.replace("http://files.example:9000", "http://localhost"), { body: bytesOf(5 * MiB, 1) });
    expect(put.status).toBe(200);
    // With --public-url set, that wins whatever the request's origin.
    h.ctx.config.publicUrlFromRequest = false;
    expect(new URL((await ask()).url).origin).toBe("http://files.test");
  });

  test("transport can be asked for explicitly", async () => {
    const h = await filesHarness(mode);
    const t = await h.tenant("acme");
    expect((await session(h, t.key, { filename: "a", size: 3, transport: "presigned-put" })).body.transport).toBe("presigned-put");
    expect((await session(h, t.key, { filename: "a", size: 50 * MiB, transport: "multipart" })).body.transport).toBe("multipart");
  });

  test("bad bodies → 400 naming the field; too big → 413; not JSON → 415", async () => {
    const h = await filesHarness(mode);
    const t = await h.tenant("acme");
    const cases: [Record<string, unknown>, string][] = [
      [{ size: 1 }, "filename"],
      [{ filename: "a" }, "size"],
      [{ filename: "a", size: -1 }, "size"],
      [{ filename: "a", size: 1.5 }, "size"],
      [{ filename: "a", size: "12" }, "size"],
      [{ filename: "../x", size: 1 }, "filename"],
      [{ filename: "a", size: 1, contentType: "not a type" }, "contentType"],
      [{ filename: "a", size: 1, contentType: "text/plain; x=\r\nSet-Cookie: a=b" }, "contentType"],
      [{ filename: "a", size: 1, contentType: "text/plain;\u0000" }, "contentType"],
      [{ filename: "a", size: 1, transport: "carrier-pigeon" }, "transport"],
      [{ filename: "a", size: 1, surprise: true }, "surprise"],
    ];
    for (const [body, field] of cases) {
      const r = await session(h, t.key, body);
      expect(r.status).toBe(400);
      expect(r.body.issues[0].field).toBe(field);
    }
    const big = await session(h, t.key, { filename: "a", size: 2 * 1024 * MiB });
    expect(big.status).toBe(413);
    expect(big.body.issues[0]).toMatchObject({ field: "size", code: "file_too_large" });
    const form = await h.req("POST", "/v1/files/uploads", { key: t.key, body: "filename=a", headers: { "content-type": "application/x-www-form-urlencoded" } });
    expect(form.status).toBe(415);
    expect((await json(form)).issues[0].severity).toBe("error");
    const broken = await h.req("POST", "/v1/files/uploads", { key: t.key, body: "{nope", headers: { "content-type": "application/json" } });
    expect(broken.status).toBe(400);
  });

  test("the same idempotencyKey returns the same session; reused for another file → 409", async () => {
    const h = await filesHarness(mode);
    const t = await h.tenant("acme");
    const body = { filename: "a.bin", size: 10 * MiB, idempotencyKey: "k-1" };
    const a = await session(h, t.key, body);
    const b = await session(h, t.key, body);
    expect(b.body.uploadId).toBe(a.body.uploadId);
    expect(b.body.fileId).toBe(a.body.fileId);
    const c = await session(h, t.key, { ...body, size: 11 * MiB });
    expect(c.status).toBe(409);
    expect(c.body.issues[0].code).toBe("idempotency_key_reused");
    // Keys are per tenant.
    const other = await h.tenant("beta");
    const d = await session(h, other.key, body);
    expect(d.status).toBe(200);
    expect(d.body.uploadId).not.toBe(a.body.uploadId);
  });
});

describe.each(BLOB_MODES)("%s blobs: upload sessions: PUT, complete, abort", (mode) => {
  async function started(h: FilesHarness, key: string, size: number, extra: Record<string, unknown> = {}) {
    const s = await session(h, key, { filename: "data.bin", contentType: "application/octet-stream", size, transport: "presigned-put", ...extra });
    expect(s.status).toBe(200);
    return s.body as { uploadId: string; fileId: string; url: string };
  }

  test("PUT the bytes (no API key needed) then complete → the File; content is byte-identical", async () => {
    const h = await filesHarness(mode);
    const t = await h.tenant("acme");
    const data = bytesOf(5 * MiB + 3, 11);
    const s = await started(h, t.key, data.byteLength);
    const put = await send(h, s.url, data, { "content-type": "application/octet-stream" });
    expect(put.status).toBe(200);
    if (mode === "fs") expect(await json(put)).toMatchObject({ uploadId: s.uploadId, status: "uploaded", size: data.byteLength });
    const before = await h.req("GET", `/v1/files/${s.fileId}`, { key: t.key });
    expect(before.status).toBe(404);

    const done = await h.req("POST", `/v1/files/uploads/${s.uploadId}/complete`, { key: t.key });
    expect(done.status).toBe(200);
    const file = await json(done);
    expect(file).toEqual({ id: s.fileId, filename: "data.bin", contentType: "application/octet-stream", size: data.byteLength, purpose: null, createdAt: "2026-11-22T09:00:00.000Z" });
    const content = await h.req("GET", `/v1/files/${s.fileId}/content`, { key: t.key });
    expect(sha256(new Uint8Array(await content.arrayBuffer()))).toBe(sha256(data));

    const status = await json(await h.req("GET", `/v1/files/uploads/${s.uploadId}`, { key: t.key }));
    expect(status).toMatchObject({ uploadId: s.uploadId, fileId: s.fileId, status: "completed", completedAt: "2026-11-22T09:00:00.000Z" });
  });

  test("complete is safe to retry: same file, one row; concurrent completes too", async () => {
    const h = await filesHarness(mode);
    const t = await h.tenant("acme");
    const s = await started(h, t.key, 4);
    await send(h, s.url, "abcd");
    const all = await Promise.all([1, 2, 3].map(() => h.req("POST", `/v1/files/uploads/${s.uploadId}/complete`, { key: t.key })));
    for (const r of all) {
      expect(r.status).toBe(200);
      expect((await json(r)).id).toBe(s.fileId);
    }
    h.clock.advance(60_000);
    const later = await h.req("POST", `/v1/files/uploads/${s.uploadId}/complete`, { key: t.key, json: {} });
    expect((await json(later)).id).toBe(s.fileId);
    expect(await h.fileRows()).toBe(1);
  });

  test("complete before any bytes → 409; a PUT after complete → 409", async () => {
    const h = await filesHarness(mode);
    const t = await h.tenant("acme");
    const s = await started(h, t.key, 4);
    const early = await h.req("POST", `/v1/files/uploads/${s.uploadId}/complete`, { key: t.key });
    expect(early.status).toBe(409);
    expect((await json(early)).issues[0].code).toBe("upload_incomplete");
    await send(h, s.url, "abcd");
    await h.req("POST", `/v1/files/uploads/${s.uploadId}/complete`, { key: t.key });
    // This server refuses; S3 takes the PUT into a staging key nothing reads any more.
    const late = await send(h, s.url, "wxyz");
    if (mode === "fs") expect(late.status).toBe(409);
    expect(await (await h.req("GET", `/v1/files/${s.fileId}/content`, { key: t.key })).text()).toBe("abcd");
  });

  ownTransport(mode)("a PUT with more or fewer bytes than declared → 413 / 400, nothing stored", async () => {
    const h = await filesHarness(mode);
    const t = await h.tenant("acme");
    const s = await started(h, t.key, 10);
    const more = await send(h, s.url, "0123456789ABC");
    expect(more.status).toBe(413);
    const fewer = await send(h, s.url, "0123");
    expect(fewer.status).toBe(400);
    expect((await json(fewer)).issues[0].code).toBe("size_mismatch");
    expect(await h.blobs.list()).toEqual([]);
    expect(await h.blobs.tempCount()).toBe(0);
    // Streamed without a Content-Length, the count is enforced while reading.
    const streamed = (text: string) =>
      new ReadableStream<Uint8Array>({
        start(c) {
          c.enqueue(new TextEncoder().encode(text));
          c.close();
        },
      });
    expect((await send(h, s.url, streamed("0123456789ABC"))).status).toBe(413);
    expect((await send(h, s.url, streamed("0123"))).status).toBe(400);
    expect(await h.blobs.list()).toEqual([]);
    expect(await h.blobs.tempCount()).toBe(0);
    // The session still works with the right bytes.
    expect((await send(h, s.url, "0123456789")).status).toBe(200);
  });

  test("a repeated PUT before complete replaces the bytes and frees the old ones", async () => {
    const h = await filesHarness(mode);
    const t = await h.tenant("acme");
    const s = await started(h, t.key, 4);
    await send(h, s.url, "aaaa");
    await send(h, s.url, "bbbb");
    await h.req("POST", `/v1/files/uploads/${s.uploadId}/complete`, { key: t.key });
    expect(await h.blobs.list()).toEqual([sha256("bbbb")]);
    expect(await (await h.req("GET", `/v1/files/${s.fileId}/content`, { key: t.key })).text()).toBe("bbbb");
  });

  ownTransport(mode)("tampered signature, tampered expiry, other upload id, missing signature → 403 invalid_signature", async () => {
    const h = await filesHarness(mode);
    const t = await h.tenant("acme");
    const s = await started(h, t.key, 4);
    const other = await started(h, t.key, 4);
    const u = new URL(s.url);
    const sig = u.searchParams.get("signature")!;
    const variants: string[] = [];
    const flip = new URL(u);
    flip.searchParams.set("signature", (sig[0] === "A" ? "B" : "A") + sig.slice(1));
    variants.push(flip.toString());
    const later = new URL(u);
    later.searchParams.set("expires", String(Number(u.searchParams.get("expires")) + 3600));
    variants.push(later.toString());
    variants.push(s.url.replace(s.uploadId, other.uploadId));
    const none = new URL(u);
    none.searchParams.delete("signature");
    variants.push(none.toString());
    for (const url of variants) {
      const r = await h.req("PUT", url, { body: "abcd" });
      expect(r.status).toBe(403);
      expect((await json(r)).issues[0].code).toBe("invalid_signature");
    }
    expect(await h.blobs.list()).toEqual([]);
  });

  ownTransport(mode)("an expired signed URL → 403 signature_expired, nothing stored", async () => {
    const h = await filesHarness(mode);
    const t = await h.tenant("acme");
    const s = await started(h, t.key, 4);
    h.clock.advance(60 * 60_000);
    const r = await send(h, s.url, "abcd");
    expect(r.status).toBe(403);
    expect((await json(r)).issues[0].code).toBe("signature_expired");
    expect(await h.blobs.list()).toEqual([]);
  });

  test("abort discards received bytes; complete after abort → 409; abort is repeatable", async () => {
    const h = await filesHarness(mode);
    const t = await h.tenant("acme");
    const s = await started(h, t.key, 4);
    await send(h, s.url, "gone");
    const a = await h.req("DELETE", `/v1/files/uploads/${s.uploadId}`, { key: t.key });
    expect(a.status).toBe(200);
    expect((await json(a)).status).toBe("aborted");
    expect(await h.blobs.list()).toEqual([]);
    expect(await h.blobs.tempCount()).toBe(0);
    expect((await h.req("POST", `/v1/files/uploads/${s.uploadId}/complete`, { key: t.key })).status).toBe(409);
    if (mode === "fs") expect((await send(h, s.url, "gone")).status).toBe(409);
    expect((await json(await h.req("DELETE", `/v1/files/uploads/${s.uploadId}`, { key: t.key }))).status).toBe("aborted");
  });

  test("abort after complete leaves the file (and its bytes) alone", async () => {
    const h = await filesHarness(mode);
    const t = await h.tenant("acme");
    const s = await started(h, t.key, 4);
    await send(h, s.url, "keep");
    await h.req("POST", `/v1/files/uploads/${s.uploadId}/complete`, { key: t.key });
    const a = await h.req("DELETE", `/v1/files/uploads/${s.uploadId}`, { key: t.key });
    expect(a.status).toBe(200);
    expect((await json(a)).status).toBe("completed");
    expect(await (await h.req("GET", `/v1/files/${s.fileId}/content`, { key: t.key })).text()).toBe("keep");
  });

  test("run-input purpose carries to the file, which then expires after 24 h", async () => {
    const h = await filesHarness(mode);
    const t = await h.tenant("acme");
    const s = await started(h, t.key, 2, { purpose: "run-input" });
    await send(h, s.url, "ri");
    const f = await json(await h.req("POST", `/v1/files/uploads/${s.uploadId}/complete`, { key: t.key }));
    expect(f.purpose).toBe("run-input");
    h.clock.advance(24 * 3600_000);
    expect((await h.req("GET", `/v1/files/${s.fileId}`, { key: t.key })).status).toBe(404);
  });

  test("sessions never completed are swept after 24 h with their bytes", async () => {
    const h = await filesHarness(mode);
    const t = await h.tenant("acme");
    const s = await started(h, t.key, 4);
    await send(h, s.url, "left");
    h.clock.advance(24 * 3600_000 + 1);
    await session(h, t.key, { filename: "x", size: 1 });
    expect(await h.blobs.list()).toEqual([]);
    expect((await h.req("GET", `/v1/files/uploads/${s.uploadId}`, { key: t.key })).status).toBe(404);
  });

  test("another tenant's upload session is a 404 on get, complete and abort", async () => {
    const h = await filesHarness(mode);
    const a = await h.tenant("acme");
    const b = await h.tenant("beta");
    const s = await started(h, a.key, 4);
    await send(h, s.url, "mine");
    for (const [m, p] of [["GET", `/v1/files/uploads/${s.uploadId}`], ["POST", `/v1/files/uploads/${s.uploadId}/complete`], ["DELETE", `/v1/files/uploads/${s.uploadId}`]] as const) {
      expect((await h.req(m, p, { key: b.key })).status).toBe(404);
    }
    expect((await h.req("POST", `/v1/files/uploads/${s.uploadId}/complete`, { key: a.key })).status).toBe(200);
  });

  test("session endpoints need files:write (403) and a key (401)", async () => {
    const h = await filesHarness(mode);
    const t = await h.tenant("acme");
    const s = await started(h, t.key, 4);
    const reader = await h.key("acme", ["files:read"]);
    expect((await h.req("POST", `/v1/files/uploads/${s.uploadId}/complete`, { key: reader })).status).toBe(403);
    expect((await h.req("DELETE", `/v1/files/uploads/${s.uploadId}`, { key: reader })).status).toBe(403);
    expect((await h.req("GET", `/v1/files/uploads/${s.uploadId}`, { key: reader })).status).toBe(200);
    expect((await h.req("POST", "/v1/files/uploads", { json: { filename: "a", size: 1 } })).status).toBe(401);
  });
});
