// The client's transport policy against small fake servers on loopback: retries, Retry-After,
// timeouts, typed errors, environment configuration, and what run() sends.
import { afterEach, describe, expect, test } from "bun:test";
import {
  AuthenticationError,
  AutomationClient,
  AutomationError,
  ConflictError,
  ForbiddenError,
  NotFoundError,
  RateLimitError,
  ServerError,
  TimeoutError,
  ValidationError,
  filesToPreUpload,
  parseRetryAfter,
} from "../../../src/automation/client";
import { refusedPort } from "../../e2e/support";

type Handler = (req: Request, n: number) => Response | Promise<Response>;
const servers: { stop(force?: boolean): void }[] = [];
afterEach(() => {
  for (const s of servers.splice(0)) s.stop(true);
});

/** A loopback server whose n-th request (0-based) is answered by `handler`; records arrival times. */
function fake(handler: Handler) {
  const hits: { at: number; method: string; path: string; auth: string | null; type: string | null; body: Uint8Array }[] = [];
  const server = Bun.serve({
    port: 0,
    hostname: "127.0.0.1",
    idleTimeout: 30,
    async fetch(req) {
      const body = new Uint8Array(await req.arrayBuffer());
      const url = new URL(req.url);
      hits.push({ at: performance.now(), method: req.method, path: url.pathname + url.search, auth: req.headers.get("authorization"), type: req.headers.get("content-type"), body });
      return handler(new Request(req.url, { method: req.method, headers: req.headers, body: body.byteLength ? body : undefined }), hits.length - 1);
    },
  });
  servers.push(server);
  return { url: `http://127.0.0.1:${server.port}`, hits };
}

const envelope = (code: string, message = code, requestId = "req_fake") =>
  ({ issues: [{ field: "<root>", message, code, severity: "error" }], requestId });
const jsonRes = (status: number, body: unknown, headers: Record<string, string> = {}) =>
  new Response(JSON.stringify(body), { status, headers: { "content-type": "application/json", ...headers } });

const client = (baseUrl: string, over: Record<string, unknown> = {}) =>
  new AutomationClient({ baseUrl, apiKey: "eak_test", retryBaseMs: 1, ...over });

describe("retries", () => {
  test("5xx then success: retried, answer returned", async () => {
    const f = fake((_, n) => (n < 2 ? jsonRes(503, envelope("unavailable")) : jsonRes(200, { id: "file_1", filename: "a", contentType: null, size: 1, createdAt: "x" })));
    const file = await client(f.url).files.get("file_1");
    expect(file.id).toBe("file_1");
    expect(f.hits).toHaveLength(3);
    expect(f.hits.every((h) => h.auth === "Bearer eak_test")).toBe(true);
  });

  test("Retry-After (seconds) is waited before the retry", async () => {
    const f = fake((_, n) => (n === 0 ? jsonRes(429, envelope("rate_limited"), { "retry-after": "1" }) : jsonRes(200, { deleted: true })));
    expect(await client(f.url).files.delete("file_1")).toEqual({ deleted: true });
    expect(f.hits).toHaveLength(2);
    // Without honouring it the retry would come after ~1 ms (retryBaseMs: 1).
    expect(f.hits[1].at - f.hits[0].at).toBeGreaterThanOrEqual(990);
  });

  test("429 until the retries run out → RateLimitError with retryAfter, status, requestId, envelope", async () => {
    const f = fake(() => jsonRes(429, envelope("rate_limited", "slow down", "req_429"), { "retry-after": "0" }));
    const err = await client(f.url, { maxRetries: 2 }).files.get("x").catch((e) => e);
    expect(err).toBeInstanceOf(RateLimitError);
    expect(err).toBeInstanceOf(AutomationError);
    expect(err.retryAfter).toBe(0);
    expect(err.status).toBe(429);
    expect(err.requestId).toBe("req_429");
    expect(err.envelope.issues[0].message).toBe("slow down");
    expect(f.hits).toHaveLength(3);
  });

  test("500 every time → ServerError after 1 + maxRetries attempts", async () => {
    const f = fake(() => jsonRes(500, envelope("internal_error", "boom", "req_500")));
    const err = await client(f.url, { maxRetries: 3 }).files.get("x").catch((e) => e);
    expect(err).toBeInstanceOf(ServerError);
    expect(err.status).toBe(500);
    expect(err.requestId).toBe("req_500");
    expect(f.hits).toHaveLength(4);
  });

  test("a non-JSON 502 page still maps to ServerError; the request id comes from the header", async () => {
    const f = fake(() => new Response("<html>bad gateway</html>", { status: 502, headers: { "x-request-id": "req_hdr" } }));
    const err = await client(f.url, { maxRetries: 0 }).files.get("x").catch((e) => e);
    expect(err).toBeInstanceOf(ServerError);
    expect(err.status).toBe(502);
    expect(err.requestId).toBe("req_hdr");
    expect(err.envelope).toBeUndefined();
  });

  test("4xx are not retried and map to their typed errors", async () => {
    const cases: [number, new (...a: never[]) => AutomationError][] = [
      [400, ValidationError],
      [401, AuthenticationError],
      [403, ForbiddenError],
      [404, NotFoundError],
      [409, ConflictError],
    ];
    for (const [status, cls] of cases) {
      const f = fake(() => jsonRes(status, { issues: [{ field: "size", message: "bad size", code: "invalid_value", severity: "error" }], requestId: `req_${status}` }));
      const err = await client(f.url).files.get("x").catch((e) => e);
      expect(err).toBeInstanceOf(cls);
      expect(err.status).toBe(status);
      expect(err.requestId).toBe(`req_${status}`);
      expect(err.issues[0].field).toBe("size");
      expect(f.hits).toHaveLength(1);
    }
  });

  test("a server that never answers → TimeoutError after the per-request timeout, retried first", async () => {
    const f = fake(() => new Promise<Response>(() => {}));
    const started = performance.now();
    const err = await client(f.url, { timeoutMs: 150, maxRetries: 1 }).files.get("x").catch((e) => e);
    expect(err).toBeInstanceOf(TimeoutError);
    expect(err.status).toBe(0);
    expect(f.hits).toHaveLength(2);
    expect(performance.now() - started).toBeGreaterThanOrEqual(290);
  });

  test("timeout then success: the retry's answer is returned", async () => {
    const f = fake((_, n) => (n === 0 ? new Promise<Response>(() => {}) : jsonRes(200, { deleted: true })));
    expect(await client(f.url, { timeoutMs: 150 }).files.delete("x")).toEqual({ deleted: true });
    expect(f.hits).toHaveLength(2);
  });

  test("nothing listening → AutomationError with status 0 after retries", async () => {
    const err = await client(`http://127.0.0.1:${refusedPort()}`, { maxRetries: 1 }).files.get("x").catch((e) => e);
    expect(err).toBeInstanceOf(AutomationError);
    expect(err.status).toBe(0);
  });

  test("Retry-After as an HTTP date; garbage ignored", () => {
    const now = Date.parse("2026-11-22T09:00:00Z");
    expect(parseRetryAfter("Sun, 22 Nov 2026 09:00:05 GMT", now)).toBe(5);
    expect(parseRetryAfter("7", now)).toBe(7);
    expect(parseRetryAfter("soon", now)).toBeUndefined();
    expect(parseRetryAfter(null, now)).toBeUndefined();
  });
});

describe("configuration", () => {
  test("base URL and key from AUTOMATION_BASE_URL / AUTOMATION_API_KEY; options win", async () => {
    const f = fake(() => jsonRes(200, { ok: true, tenantId: "ten_1" }));
    const fromEnv = new AutomationClient({ retryBaseMs: 1 }, { AUTOMATION_BASE_URL: f.url, AUTOMATION_API_KEY: "eak_env" });
    expect((await fromEnv.authCheck()).tenantId).toBe("ten_1");
    expect(f.hits[0]).toMatchObject({ path: "/v1/auth/check", auth: "Bearer eak_env" });
    const explicit = new AutomationClient({ baseUrl: f.url, apiKey: "eak_opt" }, { AUTOMATION_BASE_URL: "http://wrong.invalid", AUTOMATION_API_KEY: "eak_env" });
    await explicit.authCheck();
    expect(f.hits[1].auth).toBe("Bearer eak_opt");
  });

  test("no key anywhere → a clear error; a non-URL base → a clear error", () => {
    expect(() => new AutomationClient({}, {})).toThrow("AUTOMATION_API_KEY");
    expect(() => new AutomationClient({ apiKey: "k", baseUrl: "localhost:8081" }, {})).toThrow("http(s) URL");
  });
});

describe("uploads and runs over the wire", () => {
  function uploadServer(runAnswer: (req: Request) => Promise<Response> | Response = () => jsonRes(201, { id: "run_1", type: "workflow", finished: false })) {
    let self = "";
    const f = fake(async (req) => {
      const url = new URL(req.url);
      if (url.pathname === "/v1/files/uploads") {
        const body = (await req.json()) as { size: number; filename: string };
        if (body.size <= 100) return jsonRes(200, { transport: "multipart", url: "/v1/files", maxFileSizeBytes: 1e9 });
        return jsonRes(200, { transport: "presigned-put", uploadId: "upl_1", fileId: "file_big", url: `${self}/signed/put?sig=abc`, headers: { "content-type": "application/octet-stream", "content-length": String(body.size) }, expiresAt: "x", maxFileSizeBytes: 1e9 });
      }
      if (url.pathname === "/signed/put") return new Response(null, { status: 200 });
      if (url.pathname === "/v1/files/uploads/upl_1/complete") return jsonRes(200, { id: "file_big", filename: "big.bin", contentType: "application/octet-stream", size: 1, createdAt: "x" });
      if (url.pathname === "/v1/files") return jsonRes(200, { id: "file_small", filename: "s.txt", contentType: "text/plain", size: 1, createdAt: "x" });
      if (url.pathname === "/v1/runs") return runAnswer(req);
      return jsonRes(404, envelope("not_found"));
    });
    self = f.url;
    return f;
  }

  test("files.upload of a large file: session, PUT without the API key, complete", async () => {
    const f = uploadServer();
    const file = await client(f.url).files.upload(new Uint8Array(5000), { filename: "big.bin" });
    expect(file.id).toBe("file_big");
    expect(f.hits.map((h) => `${h.method} ${h.path}`)).toEqual(["POST /v1/files/uploads", "PUT /signed/put?sig=abc", "POST /v1/files/uploads/upl_1/complete"]);
    expect(f.hits[1].auth).toBeNull();
    expect(f.hits[1].body.byteLength).toBe(5000);
    expect(JSON.parse(new TextDecoder().decode(f.hits[0].body))).toMatchObject({ filename: "big.bin", size: 5000, contentType: "application/octet-stream" });
  });

  test("files.upload of a small file follows the multipart answer", async () => {
    const f = uploadServer();
    const file = await client(f.url).files.upload(new File(["hi"], "s.txt", { type: "text/plain" }), { purpose: "run-input" });
    expect(file.id).toBe("file_small");
    expect(f.hits[1].method).toBe("POST");
    expect(f.hits[1].path).toBe("/v1/files");
    expect(f.hits[1].type).toStartWith("multipart/form-data");
    const text = new TextDecoder().decode(f.hits[1].body);
    expect(text).toContain('name="purpose"');
    expect(text).toContain('filename="s.txt"');
  });

  test("a failed PUT aborts the session and surfaces the error", async () => {
    let aborted = false;
    let self = "";
    const f = fake(async (req) => {
      const p = new URL(req.url).pathname;
      if (p === "/v1/files/uploads" && req.method === "POST") return jsonRes(200, { transport: "presigned-put", uploadId: "upl_x", fileId: "file_x", url: `${self}/put`, expiresAt: "x", maxFileSizeBytes: 1e9 });
      if (p === "/put") return jsonRes(403, envelope("signature_expired"));
      if (p === "/v1/files/uploads/upl_x" && req.method === "DELETE") {
        aborted = true;
        return jsonRes(200, { status: "aborted" });
      }
      return jsonRes(404, envelope("not_found"));
    });
    self = f.url;
    const err = await client(f.url).files.upload(new Uint8Array(10), { filename: "a" }).catch((e) => e);
    expect(err).toBeInstanceOf(ForbiddenError);
    expect(aborted).toBe(true);
  });

  test("run(): small files ride as multipart parts, files over the budget are pre-uploaded as $fileId", async () => {
    let form: Awaited<ReturnType<Request["formData"]>> | null = null;
    const f = uploadServer(async (req) => {
      form = await req.formData();
      return jsonRes(201, { id: "run_1", type: "workflow", finished: false });
    });
    const c = client(f.url, { multipartMaxBytes: 256 * 1024 + 3000 });
    const run = await c.run("workflows.compare", { small: new File(["tiny"], "t.txt"), big: { content: new Uint8Array(5000), filename: "big.bin" }, language: "en" }, { waitForCompletion: 0 });
    expect(run.id).toBe("run_1");
    const runHit = f.hits.find((h) => h.path.startsWith("/v1/runs"))!;
    expect(runHit.path).toBe("/v1/runs?wait_for_completion=0");
    expect(form!.get("target")).toBe("workflows.compare");
    expect(JSON.parse(String(form!.get("input")))).toEqual({ big: { $fileId: "file_big" }, language: "en" });
    const part = form!.get("files.small") as File;
    expect(part.name).toBe("t.txt");
    expect(await part.text()).toBe("tiny");
    // The pre-upload was marked run-input.
    expect(JSON.parse(new TextDecoder().decode(f.hits[0].body)).purpose).toBe("run-input");
  });

  test("run() without files sends JSON {target, input}; version from an object target", async () => {
    let body: unknown = null;
    const f = uploadServer(async (req) => {
      body = await req.json();
      return jsonRes(200, { id: "run_2", type: "workflow", finished: true, execution: { status: "completed" }, output: { total: 3 } });
    });
    const run = await client(f.url).run({ type: "workflow", slug: "invoice", version: "1.2.0" }, { n: 1 }, { metadata: { a: 1 } });
    expect(run.output).toEqual({ total: 3 });
    expect(f.hits[0].path).toBe("/v1/runs?version=1.2.0");
    expect(body).toEqual({ target: "workflows.invoice", input: { n: 1 }, metadata: { a: 1 } });
  });

  test("runAndWait polls GET /v1/runs/{id} until the run is terminal", async () => {
    let polls = 0;
    const f = fake((req) => {
      const p = new URL(req.url).pathname;
      if (p === "/v1/runs") return jsonRes(201, { id: "run_9", type: "workflow", finished: false });
      if (p === "/v1/runs/run_9") {
        polls++;
        return jsonRes(200, polls < 3 ? { id: "run_9", finished: false, execution: { status: "running" } } : { id: "run_9", finished: true, execution: { status: "completed" }, output: 42 });
      }
      return jsonRes(404, envelope("not_found"));
    });
    const run = await client(f.url).runAndWait("workflows.x", {}, { pollIntervalMs: 5 });
    expect(run.output).toBe(42);
    expect(polls).toBe(3);
  });

  test("filesToPreUpload: oversized first, then largest until the rest fits; null disables", () => {
    const H = 256 * 1024;
    expect([...filesToPreUpload([{ key: "a", size: 10 }, { key: "b", size: 2000 }], H + 1000)]).toEqual(["b"]);
    expect([...filesToPreUpload([{ key: "a", size: 600 }, { key: "b", size: 500 }, { key: "c", size: 100 }], H + 1000)]).toEqual(["a"]);
    expect([...filesToPreUpload([{ key: "a", size: 1e9 }], null)]).toEqual([]);
  });
});
