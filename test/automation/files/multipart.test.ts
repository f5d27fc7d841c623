import { describe, expect, test } from "bun:test";
import { multipartBoundary, readMultipart, readText } from "../../../src/automation/files/multipart";
import { bytesOf, sha256 } from "./support";

function streamOf(bytes: Uint8Array, chunk: number): ReadableStream<Uint8Array> {
  let off = 0;
  return new ReadableStream({
    pull(c) {
      if (off >= bytes.byteLength) return c.close();
      c.enqueue(bytes.slice(off, off + chunk));
      off += chunk;
    },
  });
}

async function collect(body: Uint8Array, boundary: string, chunk: number) {
  const out: { name: string; filename: string | null; type: string | null; sha: string; size: number }[] = [];
  for await (const p of readMultipart(streamOf(body, chunk), boundary)) {
    const data = new Uint8Array(await new Response(p.body).arrayBuffer());
    out.push({ name: p.name, filename: p.filename, type: p.contentType, sha: sha256(data), size: data.byteLength });
  }
  return out;
}

describe("streaming multipart reader", () => {
  test("boundary parsing", () => {
    expect(multipartBoundary("multipart/form-data; boundary=abc")).toBe("abc");
    expect(multipartBoundary('Multipart/Form-Data; charset=utf-8; boundary="a b"')).toBe("a b");
    expect(multipartBoundary("multipart/form-data")).toBeNull();
    expect(multipartBoundary("multipart/mixed; boundary=abc")).toBeNull();
    expect(multipartBoundary(null)).toBeNull();
  });

  // A body produced by the platform's own FormData encoder, read in awkward chunk sizes so the
  // delimiter straddles chunk edges at every offset.
  for (const chunk of [1, 7, 64, 4093, 65536]) {
    test(`parts from Request(FormData) read back exactly with ${chunk}-byte chunks`, async () => {
      const data = bytesOf(chunk === 1 ? 3000 : 200_000, chunk);
      // Content that contains the CRLF-- prefix of a delimiter must not end the part.
      const tricky = new TextEncoder().encode("line\r\n--not-the-boundary\r\n--");
      const form = new FormData();
      form.append("purpose", "run-input");
      form.append("file", new Blob([data], { type: "application/octet-stream" }), "d.bin");
      form.append("other", new Blob([tricky]), "t.txt");
      const req = new Request("http://x/", { method: "POST", body: form });
      const boundary = multipartBoundary(req.headers.get("content-type"))!;
      const body = new Uint8Array(await req.arrayBuffer());
      const parts = await collect(body, boundary, chunk);
      expect(parts).toEqual([
        { name: "purpose", filename: null, type: null, sha: sha256("run-input"), size: 9 },
        { name: "file", filename: "d.bin", type: "application/octet-stream", sha: sha256(data), size: data.byteLength },
        { name: "other", filename: "t.txt", type: expect.any(String), sha: sha256(tricky), size: tricky.byteLength },
      ]);
    });
  }

  test("unread parts are skipped; readText bounds text fields", async () => {
    const b = "B";
    const body = new TextEncoder().encode(`--${b}\r\nContent-Disposition: form-data; name="a"\r\n\r\n${"x".repeat(50)}\r\n--${b}\r\nContent-Disposition: form-data; name="b"\r\n\r\nhello\r\n--${b}--`);
    const names: string[] = [];
    for await (const p of readMultipart(streamOf(body, 5), b)) {
      names.push(p.name);
      if (p.name === "b") expect(await readText(p, 10)).toBe("hello");
    }
    expect(names).toEqual(["a", "b"]);
    const again = readMultipart(streamOf(body, 5), b);
    const first = (await again.next()).value!;
    await expect(readText(first, 10)).rejects.toThrow("longer than 10 bytes");
  });

  test("a body without its closing boundary fails with truncated_body", async () => {
    const b = "B";
    const body = new TextEncoder().encode(`--${b}\r\nContent-Disposition: form-data; name="file"; filename="x"\r\n\r\nabcdef`);
    const err = await collect(body, b, 3).catch((e) => e);
    expect(err.code).toBe("truncated_body");
    expect(err.status).toBe(400);
  });

  test("a preamble before the first boundary and an epilogue after the last are ignored", async () => {
    const b = "B";
    const body = new TextEncoder().encode(`preamble text\r\n--${b}\r\nContent-Disposition: form-data; name="a"\r\n\r\n1\r\n--${b}--\r\nepilogue`);
    expect((await collect(body, b, 4)).map((p) => p.name)).toEqual(["a"]);
  });
});
