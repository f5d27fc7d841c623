// The compiled automation-server with its bytes on S3 (s3rver on loopback, started here): uploads by
// presigned URL in the shape the official SDKs send them (TypeScript and Python helpers) → run →
// artifacts → download; a 200 MiB file through presigned multipart with its sha256 checked; a restart
// on the same bucket and database serving every earlier file; an upload killed half-way that leaves
// nothing visible until `blobs gc` removes its parts; `blobs copy` of a disk deployment with 1,000
// files, then served from S3 with equal bytes; with --s3-redirect, every download the official SDKs make
// answers what the proxied answer carried (or is not redirected at all where a client does not follow);
// and, on s3rver as shipped under Node (no launcher fixes), a restart on a populated bucket, and
// `blobs gc` over more than a page: one line without the legacy OpenSSL provider, a report with it.
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { S3Client } from "bun";
import { copyFileSync, existsSync, mkdtempSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { AutomationClient } from "../../src/automation/client";
import { nodeBin, startPlainS3rver, startS3, type TestS3 } from "../support/s3";
import { DEMO_KEY } from "./automation-demo";
import { automationPgUrl, ensureBuilt, start, startServer, type Server } from "./support";

setDefaultTimeout(300_000);

let s3: TestS3;
let dir: string;
let bin: string;
let server: Server | undefined;
const MiB = 1024 * 1024;
const sha256 = (b: Uint8Array | string) => new Bun.CryptoHasher("sha256").update(b).digest("hex");
const auth = { authorization: `Bearer ${DEMO_KEY}` };
/** Every file id created on the S3 deployment, with the sha256 of its bytes. */
const created = new Map<string, string>();

function s3Args(prefix: string): string[] {
  return ["--blobs", `s3://${s3.bucket}/${prefix}`, "--s3-endpoint", s3.endpoint];
}

function boot(dataDir: string, extra: string[] = []): Promise<Server> {
  return startServer([bin, "--demo", "--host", "127.0.0.1", "--workers", "2", "--data-dir", dataDir, ...extra], {
    cwd: dir,
    env: { ...s3.env, AUTOMATION_DATA_DIR: undefined, AUTOMATION_BLOBS: undefined, LOG_LEVEL: "warn" },
  });
}

async function stop(): Promise<void> {
  if (server && server.proc.exitCode === null) await server.kill("SIGTERM");
  server = undefined;
}

/** The objects under a prefix of the test bucket. */
async function keys(prefix: string): Promise<string[]> {
  const client = new S3Client({ endpoint: s3.endpoint, bucket: s3.bucket, accessKeyId: "S3RVER", secretAccessKey: "S3RVER", region: "us-east-1" });
  const out: string[] = [];
  let token: string | undefined;
  do {
    const page = await client.list({ prefix, maxKeys: 1000, ...(token ? { continuationToken: token } : {}) });
    for (const o of page.contents ?? []) out.push(o.key);
    token = page.isTruncated ? page.nextContinuationToken : undefined;
  } while (token);
  return out;
}

/** Multipart uploads s3rver holds open. */
function openMultiparts(): string[] {
  const d = join(s3.dir, s3.bucket, "._S3rver_uploads");
  return existsSync(d) ? readdirSync(d) : [];
}

async function sessionUpload(base: string, bytes: Uint8Array, filename: string, style: "typescript" | "python"): Promise<Record<string, any>> {
  // What the SDKs' upload helpers do: negotiate, PUT to whatever URL comes back with the headers it
  // names (TypeScript drops content-length), then complete (no body).
  const negotiation = (await (
    await fetch(`${base}/v1/files/uploads`, {
      method: "POST",
      headers: { ...auth, "content-type": "application/json", "x-eigenpal-sdk": style },
      body: JSON.stringify({ filename, contentType: "application/pdf", size: bytes.byteLength, idempotencyKey: crypto.randomUUID() }),
    })
  ).json()) as Record<string, any>;
  expect(negotiation.transport).toBe("presigned-put");
  expect(negotiation.url.startsWith(s3.endpoint)).toBe(true);
  const headers = style === "typescript" ? Object.fromEntries(Object.entries(negotiation.headers as Record<string, string>).filter(([k]) => k.toLowerCase() !== "content-length")) : negotiation.headers;
  const put = await fetch(negotiation.url, { method: "PUT", headers, body: bytes });
  expect(put.status).toBe(200);
  const done = await fetch(`${base}/v1/files/uploads/${negotiation.uploadId}/complete`, { method: "POST", headers: { ...auth, "x-eigenpal-sdk": style } });
  expect(done.status).toBe(200);
  const file = (await done.json()) as Record<string, any>;
  created.set(file.id, sha256(bytes));
  return file;
}

beforeAll(async () => {
  s3 = await startS3("blobs");
  const built = await ensureBuilt("automation-server");
  dir = mkdtempSync(join(tmpdir(), "automation-s3-e2e-"));
  bin = join(dir, "automation-server");
  copyFileSync(built, bin);
}, 300_000);

afterAll(async () => {
  await stop();
  await s3?.stop();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

describe("automation-server --blobs s3://", () => {
  const data = () => join(dir, "data");

  test("SDK-shaped uploads (TypeScript and Python) by presigned PUT → run → artifacts → download; bytes live in the bucket", async () => {
    server = await boot(data(), s3Args("deploy"));
    for (const style of ["typescript", "python"] as const) {
      const bytes = new Uint8Array(5 * MiB + 123).fill(style === "python" ? 80 : 84);
      bytes.set(new TextEncoder().encode("%PDF-1.4 "));
      const file = await sessionUpload(server.url, bytes, `${style}.pdf`, style);
      const run = (await (
        await fetch(`${server.url}/v1/runs?wait_for_completion=60`, {
          method: "POST",
          headers: { ...auth, "content-type": "application/json" },
          body: JSON.stringify({ target: "workflows.invoice-summary", input: { invoice: { lines: [{ amount: 1 }] }, attachment: { $fileId: file.id } } }),
        })
      ).json()) as Record<string, any>;
      expect(run.output).toEqual({ total: 1 });
      const { artifacts } = (await (await fetch(`${server.url}/v1/runs/${run.id}/artifacts`, { headers: auth })).json()) as { artifacts: Record<string, any>[] };
      expect(artifacts.map((a) => [a.role, a.path, a.size])).toEqual([["input", `input/attachment/${style}.pdf`, bytes.byteLength]]);
      const artifact = await fetch(`${server.url}/v1/runs/${run.id}/artifacts/${encodeURIComponent(artifacts[0].path)}`, { headers: auth });
      expect(sha256(new Uint8Array(await artifact.arrayBuffer()))).toBe(sha256(bytes));
      const content = await fetch(`${server.url}/v1/files/${file.id}/content`, { headers: auth });
      expect(content.status).toBe(200);
      expect(sha256(new Uint8Array(await content.arrayBuffer()))).toBe(sha256(bytes));
    }
    const stored = await keys("deploy/sha256/");
    for (const sha of created.values()) expect(stored.some((k) => k.endsWith(sha))).toBe(true);
    expect(await keys("deploy/uploads/")).toEqual([]);
    expect(await keys("deploy/tmp/")).toEqual([]);
    // The project's own client over the same transport.
    const client = new AutomationClient({ baseUrl: server.url, apiKey: DEMO_KEY, maxRetries: 0 });
    const small = await client.files.upload(new Uint8Array(6 * MiB).fill(7), { filename: "client.bin" });
    created.set(small.id, sha256(new Uint8Array(6 * MiB).fill(7)));
  });

  test("200 MiB through presigned multipart: parts straight to the storage, complete checks size and sha256", async () => {
    const size = 200 * MiB + 17;
    const bytes = new Uint8Array(size);
    for (let i = 0; i < size; i += 4096) bytes[i] = (i / 4096) & 0xff;
    const digest = sha256(bytes);
    const negotiation = (await (
      await fetch(`${server!.url}/v1/files/uploads`, {
        method: "POST",
        headers: { ...auth, "content-type": "application/json" },
        body: JSON.stringify({ filename: "big.bin", size, transport: "presigned-multipart" }),
      })
    ).json()) as Record<string, any>;
    expect(negotiation.transport).toBe("presigned-multipart");
    expect(negotiation.parts.length).toBe(Math.ceil(size / negotiation.partSize));
    const parts: { partNumber: number; etag: string }[] = [];
    const queue = [...negotiation.parts] as { partNumber: number; url: string }[];
    await Promise.all(
      [1, 2, 3, 4].map(async () => {
        for (let p = queue.shift(); p; p = queue.shift()) {
          const r = await fetch(p.url, { method: "PUT", body: bytes.subarray((p.partNumber - 1) * negotiation.partSize, p.partNumber * negotiation.partSize) });
          expect(r.status).toBe(200);
          parts.push({ partNumber: p.partNumber, etag: r.headers.get("etag")! });
        }
      }),
    );
    const wrong = await fetch(`${server!.url}${new URL(negotiation.completeUrl).pathname}`, {
      method: "POST",
      headers: { ...auth, "content-type": "application/json" },
      body: JSON.stringify({ parts, sha256: sha256("not these bytes") }),
    });
    expect(wrong.status).toBe(400);
    expect(((await wrong.json()) as Record<string, any>).issues[0].code).toBe("checksum_mismatch");
    expect((await fetch(`${server!.url}/v1/files/${negotiation.fileId}`, { headers: auth })).status).toBe(404);
    const done = await fetch(`${server!.url}/v1/files/uploads/${negotiation.uploadId}/complete`, {
      method: "POST",
      headers: { ...auth, "content-type": "application/json" },
      body: JSON.stringify({ parts, sha256: digest }),
    });
    expect(done.status).toBe(200);
    expect(((await done.json()) as Record<string, any>).size).toBe(size);
    created.set(negotiation.fileId, digest);
    // Streamed back through the server.
    const content = await fetch(`${server!.url}/v1/files/${negotiation.fileId}/content`, { headers: auth });
    const hasher = new Bun.CryptoHasher("sha256");
    for await (const chunk of content.body!) hasher.update(chunk);
    expect(hasher.digest("hex")).toBe(digest);
  });

  test("a restart on the same bucket and database serves every earlier file (here with --s3-redirect)", async () => {
    await stop();
    server = await boot(data(), [...s3Args("deploy"), "--s3-redirect", "--upload-ttl", "3s"]);
    expect(created.size).toBe(4);
    for (const [id, digest] of created) {
      const r = await fetch(`${server.url}/v1/files/${id}/content`, { headers: auth, redirect: "manual" });
      expect(r.status).toBe(302);
      const got = await fetch(r.headers.get("location")!);
      const hasher = new Bun.CryptoHasher("sha256");
      for await (const chunk of got.body!) hasher.update(chunk);
      expect(hasher.digest("hex")).toBe(digest);
    }
  });

  test("an upload killed half-way leaves nothing visible; once its URLs expire, blobs gc removes its parts", async () => {
    const before = openMultiparts();
    const blobsBefore = (await keys("deploy/sha256/")).length;
    // A client process that negotiates a multipart upload, stores one part and is killed.
    const script = `
      const base = process.env.UPLOAD_BASE;
      const r = await fetch(base + "/v1/files/uploads", { method: "POST", headers: { authorization: "Bearer ${DEMO_KEY}", "content-type": "application/json" }, body: JSON.stringify({ filename: "killed.bin", size: 20 * 1024 * 1024, transport: "presigned-multipart" }) });
      const n = await r.json();
      await fetch(n.parts[0].url, { method: "PUT", body: new Uint8Array(n.partSize) });
      console.log(JSON.stringify({ fileId: n.fileId, uploadId: n.uploadId }));
      await fetch(n.parts[1].url, { method: "PUT", body: new ReadableStream({ pull: () => new Promise(() => {}) }), duplex: "half" });
    `;
    const client = start([process.execPath, "-e", script], { env: { UPLOAD_BASE: server!.url } });
    const until = Date.now() + 30_000;
    while (!client.output().includes("uploadId") && Date.now() < until) await Bun.sleep(50);
    const line = client.output().trim().split("\n").find((l) => l.includes("uploadId"));
    if (!line) throw new Error(`the upload client said: ${client.output()}`);
    const ids = JSON.parse(line) as { fileId: string; uploadId: string };
    await client.kill("SIGKILL");
    const mine = openMultiparts().filter((u) => !before.includes(u));
    expect(mine.length).toBe(1);
    expect((await fetch(`${server!.url}/v1/files/${ids.fileId}`, { headers: auth })).status).toBe(404);
    expect((await keys("deploy/sha256/")).length).toBe(blobsBefore);

    await Bun.sleep(3500); // --upload-ttl 3s
    const db = automationPgUrl(data()); // the server's database in the PostgreSQL pass
    const gc = start([bin, "blobs", "gc", "--grace", "0", "--json", "--data-dir", data(), ...(db ? ["--db", db] : []), ...s3Args("deploy")], { cwd: dir, env: s3.env });
    expect(await gc.proc.exited).toBe(0);
    const report = JSON.parse(gc.output().trim().split("\n").at(-1)!) as Record<string, number>;
    expect(report.sessions).toBe(1);
    expect(report.multiparts).toBeGreaterThanOrEqual(1);
    expect(report.deleted).toBe(0);
    expect(openMultiparts()).not.toContain(mine[0]);
    expect((await fetch(`${server!.url}/v1/files/uploads/${ids.uploadId}`, { headers: auth })).status).toBe(404);
    // Every earlier file is still there.
    for (const id of created.keys()) expect((await fetch(`${server!.url}/v1/files/${id}`, { headers: auth })).status).toBe(200);
    await stop();
  });

  test("blobs copy of a disk deployment with 1,000 files: resumable, verified, then every file served from S3 with equal bytes", async () => {
    const diskData = join(dir, "disk-data");
    server = await boot(diskData);
    const files = new Map<string, string>();
    const queue = Array.from({ length: 1000 }, (_, i) => i);
    await Promise.all(
      [1, 2, 3, 4, 5, 6, 7, 8].map(async () => {
        for (let i = queue.shift(); i !== undefined; i = queue.shift()) {
          const text = `file ${i} `.repeat(1 + (i % 50));
          const form = new FormData();
          form.set("file", new File([text], `f${i}.txt`, { type: "text/plain" }));
          const r = await fetch(`${server!.url}/v1/files`, { method: "POST", headers: auth, body: form });
          expect(r.status).toBe(200);
          files.set(((await r.json()) as { id: string }).id, text);
        }
      }),
    );
    await stop();
    expect(files.size).toBe(1000);
    // The demo seeds blobs of its own (a template): all of them move.
    const onDisk = (d: string): number => readdirSync(d, { withFileTypes: true }).reduce((n, e) => n + (e.isDirectory() ? (e.name === "tmp" ? 0 : onDisk(join(d, e.name))) : 1), 0);
    const total = onDisk(join(diskData, "blobs"));
    expect(total).toBeGreaterThanOrEqual(1000);

    const copy = start([bin, "blobs", "copy", "--to", `s3://${s3.bucket}/copied`, "--s3-endpoint", s3.endpoint, "--data-dir", diskData], { cwd: dir, env: s3.env });
    expect(await copy.proc.exited).toBe(0);
    expect(copy.output()).toContain(`${total} of ${total} blob(s) verified`);
    expect(copy.output()).toContain(`${total} copied`);
    expect((await keys("copied/sha256/")).length).toBe(total);
    const again = start([bin, "blobs", "copy", "--to", `s3://${s3.bucket}/copied`, "--s3-endpoint", s3.endpoint, "--data-dir", diskData, "--json"], { cwd: dir, env: s3.env });
    expect(await again.proc.exited).toBe(0);
    expect(JSON.parse(again.output().trim().split("\n").at(-1)!)).toMatchObject({ total, copied: 0, skipped: total, verified: total, failed: [] });

    // Served from S3: the disk blobs are moved away first, so nothing can come from them.
    rmSync(join(diskData, "blobs"), { recursive: true, force: true });
    server = await boot(diskData, s3Args("copied"));
    const ids = [...files.keys()];
    await Promise.all(
      [1, 2, 3, 4, 5, 6, 7, 8].map(async (w) => {
        for (let i = w - 1; i < ids.length; i += 8) {
          const r = await fetch(`${server!.url}/v1/files/${ids[i]}/content`, { headers: auth });
          expect(r.status).toBe(200);
          expect(await r.text()).toBe(files.get(ids[i])!);
        }
      }),
    );
    await stop();
  });
});

describe("--s3-redirect and the official SDKs' downloads", () => {
  const XLSX = "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet";
  /** How each client asks: the TypeScript and Python SDKs announce themselves, a plain client does not. */
  const clients = { typescript: { "x-eigenpal-sdk": "typescript" }, python: { "x-eigenpal-sdk": "python" }, plain: {} } as const;
  type Seen = { status: number; type: string | null; disposition: string | null; sha256: string };
  const seen = async (r: Response): Promise<Seen> => ({
    status: r.status,
    type: r.headers.get("content-type"),
    disposition: r.headers.get("content-disposition"),
    sha256: sha256(new Uint8Array(await r.arrayBuffer())),
  });

  test("redirected downloads carry the proxied answer's Content-Type and Content-Disposition; expected and example files are never redirected", async () => {
    const data = join(dir, "sdk-data");
    server = await boot(data, s3Args("sdk"));
    const base = () => server!.url;
    const pdf = new TextEncoder().encode(`%PDF-1.4 ${"report ".repeat(2000)}`);
    const form = new FormData();
    form.set("file", new File([pdf], "report.pdf", { type: "application/pdf" }));
    const file = (await (await fetch(`${base()}/v1/files`, { method: "POST", headers: auth, body: form })).json()) as { id: string };
    const run = (await (
      await fetch(`${base()}/v1/runs?wait_for_completion=60`, {
        method: "POST",
        headers: { ...auth, "content-type": "application/json" },
        body: JSON.stringify({ target: "workflows.invoice-summary", input: { invoice: { lines: [{ amount: 1 }] }, attachment: { $fileId: file.id } } }),
      })
    ).json()) as { id: string; output: unknown };
    expect(run.output).toEqual({ total: 1 });
    const sheet = new Uint8Array(3000).fill(0x50);
    const expectedForm = new FormData();
    expectedForm.set("file", new File([sheet], "sheet.xlsx", { type: XLSX }));
    expect((await fetch(`${base()}/v1/runs/${run.id}/reviews/expected`, { method: "POST", headers: auth, body: expectedForm })).status).toBe(201);
    const example = (await (
      await fetch(`${base()}/v1/automations/workflows.invoice-summary/examples`, {
        method: "POST",
        headers: { ...auth, "content-type": "application/json" },
        body: JSON.stringify({ name: "with-notes", input: { invoice: { lines: [] } } }),
      })
    ).json()) as { id: string };
    const notesForm = new FormData();
    notesForm.set("file", new File(["some notes\n"], "notes.txt", { type: "text/plain" }));
    expect((await fetch(`${base()}/v1/automations/workflows.invoice-summary/examples/${example.id}/input`, { method: "POST", headers: auth, body: notesForm })).status).toBe(201);

    // Every download route a README flow of the SDKs takes; `redirects`: whether it may answer 302.
    const routes = [
      { name: "runs.artifacts.download", path: `/v1/runs/${run.id}/artifacts/${encodeURIComponent("input/attachment/report.pdf")}`, redirects: true },
      { name: "files.download", path: `/v1/files/${file.id}/content`, redirects: true },
      // The Python SDK's runs.reviews.download_expected does not follow redirects.
      { name: "runs.reviews.downloadExpected", path: `/v1/runs/${run.id}/reviews/expected/sheet.xlsx`, redirects: false },
      { name: "example input file", path: `/v1/automations/workflows.invoice-summary/examples/${example.id}/input/notes.txt`, redirects: false },
    ];
    const proxied = new Map<string, Seen>();
    for (const route of routes) {
      for (const [client, headers] of Object.entries(clients)) {
        const r = await fetch(`${base()}${route.path}`, { headers: { ...auth, ...headers }, redirect: "manual" });
        const s = await seen(r);
        expect([route.name, client, s.status]).toEqual([route.name, client, 200]);
        proxied.set(`${route.name} ${client}`, s);
      }
    }
    // What the TypeScript SDK's guard admits for these calls (JSON, octet-stream or zip).
    expect(proxied.get("runs.artifacts.download typescript")!.type).toBe("application/octet-stream");
    expect(proxied.get("runs.reviews.downloadExpected typescript")!.type).toBe("application/octet-stream");
    expect(proxied.get("runs.artifacts.download plain")!.type).toStartWith("application/pdf");
    expect(proxied.get("runs.reviews.downloadExpected plain")!.type).toStartWith(XLSX);

    await stop();
    server = await boot(data, [...s3Args("sdk"), "--s3-redirect"]);
    for (const route of routes) {
      for (const [client, headers] of Object.entries(clients)) {
        const label = `${route.name} ${client}`;
        const first = await fetch(`${base()}${route.path}`, { headers: { ...auth, ...headers }, redirect: "manual" });
        await first.arrayBuffer();
        expect([label, first.status]).toEqual([label, route.redirects ? 302 : 200]);
        if (route.redirects) expect(first.headers.get("location")!.startsWith(s3.endpoint)).toBe(true);
        // Followed as the SDKs' HTTP clients do (the credential is not sent on to the storage).
        const followed = await seen(await fetch(`${base()}${route.path}`, { headers: { ...auth, ...headers }, redirect: "follow" }));
        expect([label, followed]).toEqual([label, proxied.get(label)!]);
      }
    }
    await stop();
  });
});

describe.skipIf(!nodeBin)("s3rver as shipped, under Node (no launcher fixes)", () => {
  test("a restart on a populated bucket starts and serves every file: the startup check does not page a listing", async () => {
    const plain = await startPlainS3rver("blobs");
    try {
      const data = join(dir, "plain-data");
      const args = ["--blobs", "s3://blobs/auto", "--s3-endpoint", plain.endpoint];
      const bootPlain = () =>
        startServer([bin, "--demo", "--host", "127.0.0.1", "--workers", "1", "--data-dir", data, "--gc-interval", "0", ...args], {
          cwd: dir,
          env: { ...plain.env, AUTOMATION_DATA_DIR: undefined, AUTOMATION_BLOBS: undefined, LOG_LEVEL: "warn" },
        });
      // The check is what refused the restart: s3rver under Node 20 answers 500 to a truncated listing.
      const client = new S3Client({ endpoint: plain.endpoint, bucket: "blobs", accessKeyId: "S3RVER", secretAccessKey: "S3RVER", region: "us-east-1" });
      server = await bootPlain();
      const files = new Map<string, string>();
      for (let i = 0; i < 3; i++) {
        const form = new FormData();
        form.set("file", new File([`plain s3rver file ${i}`], `p${i}.txt`, { type: "text/plain" }));
        const r = await fetch(`${server.url}/v1/files`, { method: "POST", headers: auth, body: form });
        expect(r.status).toBe(200);
        files.set(((await r.json()) as { id: string }).id, `plain s3rver file ${i}`);
      }
      await stop();
      const truncated = await client.list({ prefix: "auto/", maxKeys: 1 }).then(
        () => "listed",
        (err: { code?: string }) => err.code,
      );
      // Documents the server's limit the check must live with (docs/automation/s3.md).
      expect(truncated).toBe("InternalError");
      for (let restart = 0; restart < 2; restart++) {
        server = await bootPlain();
        for (const [id, text] of files) {
          const r = await fetch(`${server.url}/v1/files/${id}/content`, { headers: auth });
          expect(r.status).toBe(200);
          expect(await r.text()).toBe(text);
        }
        await stop();
      }

      // More blobs than one page: the server still starts; `blobs gc` cannot list them there and says so
      // in one line; s3rver with NODE_OPTIONS=--openssl-legacy-provider can (docs/automation/s3.md).
      const fill = async (c: S3Client) => {
        const queue = Array.from({ length: 1001 }, (_, i) => i);
        await Promise.all(
          [1, 2, 3, 4, 5, 6, 7, 8].map(async () => {
            for (let i = queue.shift(); i !== undefined; i = queue.shift()) {
              const digest = sha256(`orphan ${i}`);
              await c.write(`auto/sha256/${digest.slice(0, 2)}/${digest}`, `orphan ${i}`);
            }
          }),
        );
      };
      await fill(client);
      server = await bootPlain();
      expect((await fetch(`${server.url}/v1/files/${[...files.keys()][0]}/content`, { headers: auth })).status).toBe(200);
      await stop();
      const db = automationPgUrl(data);
      const gcArgs = [bin, "blobs", "gc", "--dry-run", "--grace", "0", "--json", "--data-dir", data, ...(db ? ["--db", db] : []), "--blobs", "s3://blobs/auto"];
      const gc = start([...gcArgs, "--s3-endpoint", plain.endpoint], { cwd: dir, env: plain.env });
      expect(await gc.proc.exited).toBe(1);
      const said = gc.output().trim().split("\n").filter((l) => !l.includes(" warn "));
      expect(said).toEqual([expect.stringContaining("NODE_OPTIONS=--openssl-legacy-provider")]);
      expect(said[0]).toStartWith("automation-server: cannot list s3://blobs/auto/sha256/");

      const legacy = await startPlainS3rver("blobs", { nodeOptions: "--openssl-legacy-provider" });
      try {
        await fill(new S3Client({ endpoint: legacy.endpoint, bucket: "blobs", accessKeyId: "S3RVER", secretAccessKey: "S3RVER", region: "us-east-1" }));
        const paged = start([...gcArgs, "--s3-endpoint", legacy.endpoint], { cwd: dir, env: legacy.env });
        expect(await paged.proc.exited).toBe(0);
        expect(JSON.parse(paged.output().split("\n").find((l) => l.startsWith("{"))!)).toMatchObject({ scanned: 1001, dryRun: true });
      } finally {
        await legacy.stop();
      }
    } finally {
      await stop();
      await plain.stop();
    }
  });
});
