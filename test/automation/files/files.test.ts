import { describe, expect, test } from "bun:test";
import { bytesOf, filesHarness, json, sha256 } from "./support";
import { BLOB_MODES, withS3 } from "./stores";

withS3();

describe.each(BLOB_MODES)("%s blobs", (mode) => {
  describe("POST /v1/files", () => {
    test("multipart upload → 200 with the File shape; bytes stored once under their sha256", async () => {
      const h = await filesHarness(mode);
      const t = await h.tenant("acme");
      const r = await h.upload(t.key, "hello world", "notes.txt");
      expect(r.status).toBe(200);
      const body = await json(r);
      expect(Object.keys(body).sort()).toEqual(["contentType", "createdAt", "filename", "id", "purpose", "size"]);
      expect(body).toMatchObject({ filename: "notes.txt", size: 11, purpose: null, createdAt: "2026-11-22T09:00:00.000Z" });
      expect(body.contentType).toStartWith("text/plain");
      expect(body.id).toMatch(/^file_/);
      expect(await h.blobs.list()).toEqual([sha256("hello world")]);
      expect(await h.blobs.tempCount()).toBe(0);
    });

    test("served under /api/v1 too", async () => {
      const h = await filesHarness(mode);
      const t = await h.tenant("acme");
      const form = new FormData();
      form.append("file", new Blob(["x"]), "x.bin");
      const r = await h.req("POST", "/api/v1/files", { key: t.key, body: form });
      expect(r.status).toBe(200);
      const id = (await json(r)).id;
      expect((await h.req("GET", `/api/v1/files/${id}`, { key: t.key })).status).toBe(200);
    });

    test("identical content uploaded twice is two files sharing one blob", async () => {
      const h = await filesHarness(mode);
      const t = await h.tenant("acme");
      const a = await json(await h.upload(t.key, "same", "a.txt"));
      const b = await json(await h.upload(t.key, "same", "b.txt"));
      expect(a.id).not.toBe(b.id);
      expect(await h.blobs.list()).toHaveLength(1);
      expect((await h.req("DELETE", `/v1/files/${a.id}`, { key: t.key })).status).toBe(200);
      const c = await h.req("GET", `/v1/files/${b.id}/content`, { key: t.key });
      expect(await c.text()).toBe("same");
    });

    test("a 3 MiB binary file round-trips byte-identical", async () => {
      const h = await filesHarness(mode);
      const t = await h.tenant("acme");
      const data = bytesOf(3 * 1024 * 1024 + 17, 7);
      const up = await json(await h.upload(t.key, data, "blob.bin", { type: "application/octet-stream" }));
      expect(up.size).toBe(data.byteLength);
      const r = await h.req("GET", `/v1/files/${up.id}/content`, { key: t.key });
      expect(r.status).toBe(200);
      expect(sha256(new Uint8Array(await r.arrayBuffer()))).toBe(sha256(data));
    });

    test("non-ASCII filename is kept and sent back in a safe Content-Disposition", async () => {
      const h = await filesHarness(mode);
      const t = await h.tenant("acme");
      // FormData encodes `"` as %22 (as browsers do); a raw part may carry it escaped as \".
      const b = "q";
      const body = `--${b}\r\nContent-Disposition: form-data; name="file"; filename="Rechnung \\"März\\" €.pdf"\r\nContent-Type: application/pdf\r\n\r\nx\r\n--${b}--\r\n`;
      const res = await h.req("POST", "/v1/files", { key: t.key, body, headers: { "content-type": `multipart/form-data; boundary=${b}` } });
      const up = await json(res);
      expect(up.filename).toBe('Rechnung "März" €.pdf');
      const r = await h.req("GET", `/v1/files/${up.id}/content`, { key: t.key });
      const cd = r.headers.get("content-disposition")!;
      expect(cd).toBe(`attachment; filename="Rechnung _M_rz_ _.pdf"; filename*=UTF-8''Rechnung%20%22M%C3%A4rz%22%20%E2%82%AC.pdf`);
      expect(r.headers.get("content-type")).toBe("application/pdf");
      expect(r.headers.get("x-content-type-options")).toBe("nosniff");
    });

    test("purpose is stored; unknown purpose shapes are a 400", async () => {
      const h = await filesHarness(mode);
      const t = await h.tenant("acme");
      const ok = await json(await h.upload(t.key, "x", "a.txt", { purpose: "run-input" }));
      expect(ok.purpose).toBe("run-input");
      const bad = await h.upload(t.key, "x", "a.txt", { purpose: "Not A Label!" });
      expect(bad.status).toBe(400);
      expect((await json(bad)).issues[0]).toMatchObject({ field: "purpose", severity: "error" });
      expect(await h.fileRows()).toBe(1);
      expect(await h.blobs.list()).toEqual([sha256("x")]);
    });
  });

  describe("bad uploads → 4xx envelope, nothing half-written", () => {
    const traversal = ["../../etc/passwd", "..\\..\\boot.ini", "a/b.txt", "..", "C:evil.txt", "bad\u0000name.txt"];
    for (const name of traversal) {
      test(`path-traversal name ${JSON.stringify(name)} → 400`, async () => {
        const h = await filesHarness(mode);
        const t = await h.tenant("acme");
        const boundary = "xYzBoundary";
        const body = `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="${name}"\r\nContent-Type: text/plain\r\n\r\nowned\r\n--${boundary}--\r\n`;
        const r = await h.req("POST", "/v1/files", { key: t.key, body, headers: { "content-type": `multipart/form-data; boundary=${boundary}` } });
        expect(r.status).toBe(400);
        const env = await json(r);
        expect(env.issues[0]).toMatchObject({ field: "file.filename", code: "invalid_filename" });
        expect(env.requestId).toBeString();
        expect(await h.fileRows()).toBe(0);
        expect(await h.blobs.list()).toEqual([]);
        expect(await h.blobs.tempCount()).toBe(0);
      });
    }

    test("filename* (RFC 5987) with an encoded traversal is refused too", async () => {
      const h = await filesHarness(mode);
      const t = await h.tenant("acme");
      const b = "bnd";
      const body = `--${b}\r\nContent-Disposition: form-data; name="file"; filename="ok.txt"; filename*=UTF-8''..%2F..%2Fx\r\n\r\nx\r\n--${b}--\r\n`;
      const r = await h.req("POST", "/v1/files", { key: t.key, body, headers: { "content-type": `multipart/form-data; boundary=${b}` } });
      expect(r.status).toBe(400);
      expect(await h.fileRows()).toBe(0);
    });

    test("truncated multipart body (no closing boundary) → 400, no blob, no temp file, no row", async () => {
      const h = await filesHarness(mode);
      const t = await h.tenant("acme");
      const b = "cut";
      const body = `--${b}\r\nContent-Disposition: form-data; name="file"; filename="a.bin"\r\n\r\n${"z".repeat(100_000)}`;
      const r = await h.req("POST", "/v1/files", { key: t.key, body, headers: { "content-type": `multipart/form-data; boundary=${b}` } });
      expect(r.status).toBe(400);
      expect((await json(r)).issues[0].code).toBe("truncated_body");
      expect(await h.fileRows()).toBe(0);
      expect(await h.blobs.list()).toEqual([]);
      expect(await h.blobs.tempCount()).toBe(0);
    });

    test("file part complete but closing boundary missing → 400 and its blob is removed", async () => {
      const h = await filesHarness(mode);
      const t = await h.tenant("acme");
      const b = "cut2";
      const body = `--${b}\r\nContent-Disposition: form-data; name="file"; filename="a.bin"\r\n\r\nabc\r\n--${b}\r\nContent-Disposition: form-data; name="purpose"\r\n\r\nrun-in`;
      const r = await h.req("POST", "/v1/files", { key: t.key, body, headers: { "content-type": `multipart/form-data; boundary=${b}` } });
      expect(r.status).toBe(400);
      expect(await h.fileRows()).toBe(0);
      expect(await h.blobs.list()).toEqual([]);
    });

    test("a body cut off mid-stream (client disconnect) leaves nothing", async () => {
      const h = await filesHarness(mode);
      const t = await h.tenant("acme");
      const b = "strm";
      const enc = new TextEncoder();
      const stream = new ReadableStream<Uint8Array>({
        start(c) {
          c.enqueue(enc.encode(`--${b}\r\nContent-Disposition: form-data; name="file"; filename="a.bin"\r\n\r\n`));
          c.enqueue(bytesOf(300_000));
          c.error(new Error("connection reset"));
        },
      });
      const r = await h.req("POST", "/v1/files", { key: t.key, body: stream, headers: { "content-type": `multipart/form-data; boundary=${b}` } });
      expect(r.status).toBeGreaterThanOrEqual(400);
      expect(r.status).toBeLessThan(600);
      expect(await h.fileRows()).toBe(0);
      expect(await h.blobs.list()).toEqual([]);
      expect(await h.blobs.tempCount()).toBe(0);
    });

    test("wrong content types → 415 envelope", async () => {
      const h = await filesHarness(mode);
      const t = await h.tenant("acme");
      for (const [type, body] of [
        ["application/json", JSON.stringify({ file: "x" })],
        ["text/plain", "hello"],
        ["multipart/form-data", "no boundary"],
        ["application/octet-stream", "raw"],
      ] as const) {
        const r = await h.req("POST", "/v1/files", { key: t.key, body, headers: { "content-type": type } });
        expect(r.status).toBe(415);
        expect((await json(r)).issues[0].code).toBe("unsupported_media_type");
      }
      expect(await h.fileRows()).toBe(0);
    });

    test("missing file part, a text `file`, two files, unknown fields → 400", async () => {
      const h = await filesHarness(mode);
      const t = await h.tenant("acme");
      const cases: [FormData, string][] = [];
      const onlyPurpose = new FormData();
      onlyPurpose.append("purpose", "general");
      cases.push([onlyPurpose, "file"]);
      const textFile = new FormData();
      textFile.append("file", "just text");
      cases.push([textFile, "file"]);
      const two = new FormData();
      two.append("file", new Blob(["a"]), "a.txt");
      two.append("file", new Blob(["b"]), "b.txt");
      cases.push([two, "file"]);
      const extra = new FormData();
      extra.append("file", new Blob(["a"]), "a.txt");
      extra.append("owner", "me");
      cases.push([extra, "owner"]);
      for (const [form, field] of cases) {
        const r = await h.req("POST", "/v1/files", { key: t.key, body: form });
        expect(r.status).toBe(400);
        expect((await json(r)).issues[0].field).toBe(field);
      }
      expect(await h.fileRows()).toBe(0);
      expect(await h.blobs.list()).toEqual([]);
    });

    test("malformed multipart (garbage before any boundary, bad part headers) → 400", async () => {
      const h = await filesHarness(mode);
      const t = await h.tenant("acme");
      const b = "bb";
      for (const body of ["", "garbage only", `--${b}\r\nno-colon-header\r\n\r\nx\r\n--${b}--`, `--${b}\r\nContent-Type: text/plain\r\n\r\nx\r\n--${b}--`]) {
        const r = await h.req("POST", "/v1/files", { key: t.key, body, headers: { "content-type": `multipart/form-data; boundary=${b}` } });
        expect(r.status).toBe(400);
      }
    });
  });

  describe("GET /v1/files/{id} and content", () => {
    test("metadata equals the upload answer", async () => {
      const h = await filesHarness(mode);
      const t = await h.tenant("acme");
      const up = await json(await h.upload(t.key, "abc", "a.txt"));
      const r = await h.req("GET", `/v1/files/${up.id}`, { key: t.key });
      expect(r.status).toBe(200);
      expect(await json(r)).toEqual(up);
    });

    test("content: 200 with type, length, disposition, ETag; If-None-Match → 304", async () => {
      const h = await filesHarness(mode);
      const t = await h.tenant("acme");
      const up = await json(await h.upload(t.key, "0123456789", "digits.txt", { type: "text/csv" }));
      const r = await h.req("GET", `/v1/files/${up.id}/content`, { key: t.key });
      expect(r.status).toBe(200);
      expect(r.headers.get("content-type")).toBe("text/csv");
      expect(r.headers.get("content-length")).toBe("10");
      expect(r.headers.get("accept-ranges")).toBe("bytes");
      expect(r.headers.get("content-disposition")).toBe(`attachment; filename="digits.txt"; filename*=UTF-8''digits.txt`);
      expect(r.headers.get("etag")).toBe(`"${sha256("0123456789")}"`);
      expect(await r.text()).toBe("0123456789");
      const again = await h.req("GET", `/v1/files/${up.id}/content`, { key: t.key, headers: { "if-none-match": `"${sha256("0123456789")}"` } });
      expect(again.status).toBe(304);
    });

    const ranges: [string, number, string, string | null][] = [
      ["bytes=0-3", 206, "0123", "bytes 0-3/10"],
      ["bytes=4-", 206, "456789", "bytes 4-9/10"],
      ["bytes=-3", 206, "789", "bytes 7-9/10"],
      ["bytes=8-100", 206, "89", "bytes 8-9/10"],
      ["bytes=-100", 206, "0123456789", "bytes 0-9/10"],
      ["bytes=5-2", 200, "0123456789", null],
      ["bytes=0-1,4-5", 200, "0123456789", null],
      ["items=0-1", 200, "0123456789", null],
    ];
    for (const [range, status, text, contentRange] of ranges) {
      test(`Range ${range} → ${status}`, async () => {
        const h = await filesHarness(mode);
        const t = await h.tenant("acme");
        const up = await json(await h.upload(t.key, "0123456789", "d.txt"));
        const r = await h.req("GET", `/v1/files/${up.id}/content`, { key: t.key, headers: { range } });
        expect(r.status).toBe(status);
        expect(await r.text()).toBe(text);
        expect(r.headers.get("content-range")).toBe(contentRange);
        expect(r.headers.get("content-length")).toBe(String(text.length));
      });
    }

    for (const range of ["bytes=10-", "bytes=10-20", "bytes=-0"]) {
      test(`Range ${range} past the end → 416 envelope with Content-Range */size`, async () => {
        const h = await filesHarness(mode);
        const t = await h.tenant("acme");
        const up = await json(await h.upload(t.key, "0123456789", "d.txt"));
        const r = await h.req("GET", `/v1/files/${up.id}/content`, { key: t.key, headers: { range } });
        expect(r.status).toBe(416);
        expect(r.headers.get("content-range")).toBe("bytes */10");
        expect((await json(r)).issues[0].code).toBe("range_not_satisfiable");
      });
    }

    test("If-Range: the current ETag keeps the Range (206), another ETag or a date sends the whole file (200)", async () => {
      const h = await filesHarness(mode);
      const t = await h.tenant("acme");
      const up = await json(await h.upload(t.key, "0123456789", "d.txt"));
      const get = (ifRange: string) => h.req("GET", `/v1/files/${up.id}/content`, { key: t.key, headers: { range: "bytes=0-1", "if-range": ifRange } });
      const same = await get(`"${sha256("0123456789")}"`);
      expect(same.status).toBe(206);
      expect(await same.text()).toBe("01");
      for (const other of ['"stale"', "Wed, 21 Oct 2015 07:28:00 GMT"]) {
        const r = await get(other);
        expect(r.status).toBe(200);
        expect(await r.text()).toBe("0123456789");
        expect(r.headers.get("content-range")).toBeNull();
      }
    });

    test("a Range read of a large file returns exactly the slice", async () => {
      const h = await filesHarness(mode);
      const t = await h.tenant("acme");
      const data = bytesOf(1_000_000, 3);
      const up = await json(await h.upload(t.key, data, "big.bin"));
      const r = await h.req("GET", `/v1/files/${up.id}/content`, { key: t.key, headers: { range: "bytes=500000-500099" } });
      expect(r.status).toBe(206);
      expect(new Uint8Array(await r.arrayBuffer())).toEqual(data.slice(500000, 500100));
    });

    test("GET or DELETE /files/uploads (the sessions collection, not a file id) → 405 with Allow: POST", async () => {
      const h = await filesHarness(mode);
      const t = await h.tenant("acme");
      for (const method of ["GET", "DELETE"]) {
        const r = await h.req(method, "/v1/files/uploads", { key: t.key });
        expect(r.status).toBe(405);
        expect(r.headers.get("allow")).toBe("POST");
        expect((await json(r)).issues[0].code).toBe("method_not_allowed");
      }
    });

    test("unknown ids → 404 envelope (metadata, content, delete)", async () => {
      const h = await filesHarness(mode);
      const t = await h.tenant("acme");
      for (const [m, p] of [["GET", "/v1/files/file_nope"], ["GET", "/v1/files/file_nope/content"], ["DELETE", "/v1/files/file_nope"]] as const) {
        const r = await h.req(m, p, { key: t.key });
        expect(r.status).toBe(404);
        expect((await json(r)).issues[0]).toMatchObject({ code: "not_found", severity: "error" });
      }
    });
  });

  describe("DELETE /v1/files/{id}", () => {
    test("→ {deleted: true}; then 404 everywhere; the unreferenced blob is gone", async () => {
      const h = await filesHarness(mode);
      const t = await h.tenant("acme");
      const up = await json(await h.upload(t.key, "bye", "bye.txt"));
      const r = await h.req("DELETE", `/v1/files/${up.id}`, { key: t.key });
      expect(r.status).toBe(200);
      expect(await json(r)).toEqual({ deleted: true });
      expect((await h.req("GET", `/v1/files/${up.id}`, { key: t.key })).status).toBe(404);
      expect((await h.req("GET", `/v1/files/${up.id}/content`, { key: t.key })).status).toBe(404);
      expect((await h.req("DELETE", `/v1/files/${up.id}`, { key: t.key })).status).toBe(404);
      expect(await h.blobs.list()).toEqual([]);
    });
  });

  describe("run-input expiry (24 h)", () => {
    test("a run-input file reads until 24 h, then 404 and its row and blob are swept", async () => {
      const h = await filesHarness(mode);
      const t = await h.tenant("acme");
      const up = await json(await h.upload(t.key, "temp", "t.txt", { purpose: "run-input" }));
      const keep = await json(await h.upload(t.key, "durable", "d.txt"));
      h.clock.advance(24 * 3600_000 - 1000);
      expect((await h.req("GET", `/v1/files/${up.id}`, { key: t.key })).status).toBe(200);
      h.clock.advance(1000);
      expect((await h.req("GET", `/v1/files/${up.id}/content`, { key: t.key })).status).toBe(404);
      expect((await h.req("GET", `/v1/files/${up.id}`, { key: t.key })).status).toBe(404);
      expect(await h.fileRows()).toBe(1);
      expect(await h.blobs.list()).toEqual([sha256("durable")]);
      // Non-run-input files do not expire.
      h.clock.advance(365 * 24 * 3600_000);
      expect((await h.req("GET", `/v1/files/${keep.id}`, { key: t.key })).status).toBe(200);
    });

    test("expired files nobody reads are swept by the next upload", async () => {
      const h = await filesHarness(mode);
      const t = await h.tenant("acme");
      await h.upload(t.key, "old", "o.txt", { purpose: "run-input" });
      h.clock.advance(25 * 3600_000);
      await h.upload(t.key, "new", "n.txt");
      expect(await h.fileRows()).toBe(1);
      expect(await h.blobs.list()).toEqual([sha256("new")]);
    });
  });

  describe("tenancy and scopes", () => {
    test("another tenant's file answers 404 like a missing one, on every endpoint", async () => {
      const h = await filesHarness(mode);
      const a = await h.tenant("acme");
      const b = await h.tenant("beta");
      const up = await json(await h.upload(a.key, "secret", "s.txt"));
      for (const [m, p] of [["GET", `/v1/files/${up.id}`], ["GET", `/v1/files/${up.id}/content`], ["DELETE", `/v1/files/${up.id}`]] as const) {
        const r = await h.req(m, p, { key: b.key });
        expect(r.status).toBe(404);
        const missing = await h.req(m, p.replace(up.id, "file_missing"), { key: b.key });
        expect((await json(r)).issues[0].code).toBe((await json(missing)).issues[0].code);
      }
      // Still there for its owner.
      expect(await (await h.req("GET", `/v1/files/${up.id}/content`, { key: a.key })).text()).toBe("secret");
    });

    test("no key → 401; a key without files:write cannot upload, delete or open sessions (403); files:read can read", async () => {
      const h = await filesHarness(mode);
      const t = await h.tenant("acme");
      const up = await json(await h.upload(t.key, "x", "x.txt"));
      expect((await h.req("GET", `/v1/files/${up.id}`)).status).toBe(401);
      expect((await h.upload("eak_wrong", "x", "x.txt")).status).toBe(401);

      const reader = await h.key("acme", ["files:read"]);
      const runsOnly = await h.key("acme", ["runs:read"]);
      const up2 = await h.upload(reader, "y", "y.txt");
      expect(up2.status).toBe(403);
      expect((await json(up2)).issues[0].code).toBe("insufficient_scope");
      expect((await h.req("DELETE", `/v1/files/${up.id}`, { key: reader })).status).toBe(403);
      expect((await h.req("POST", "/v1/files/uploads", { key: reader, json: { filename: "a", size: 1 } })).status).toBe(403);
      expect((await h.req("GET", `/v1/files/${up.id}`, { key: reader })).status).toBe(200);
      expect((await h.req("GET", `/v1/files/${up.id}/content`, { key: reader })).status).toBe(200);
      expect((await h.req("GET", `/v1/files/${up.id}`, { key: runsOnly })).status).toBe(403);

      const writer = await h.key("acme", ["files:write"]);
      expect((await h.upload(writer, "z", "z.txt")).status).toBe(200);
      expect(await h.fileRows()).toBe(2);
    });
  });
});
