// Files against the compiled automation-server over real sockets: streamed uploads that the client
// abandons midway, a server killed (SIGKILL) in the middle of a signed PUT, files surviving restarts.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { copyFileSync, mkdtempSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ensureBuilt, startServer, type Server } from "./support";

const KEY = "eak_demo_0123456789abcdefghijklmnopqrstuv";
let dir = "";
let bin = "";
/** The running server's port: each (re)start gets a new one. */
let port = 0;
let server: Server | undefined;
const base = () => `http://127.0.0.1:${port}`;
const blobsDir = () => join(dir, "data/automation/blobs");
const auth = { authorization: `Bearer ${KEY}` };

// No --public-url (the port is not known before the start): signed URLs use the origin the client reached.
async function boot(): Promise<void> {
  server = await startServer([bin, "--demo", "--host", "127.0.0.1", "--workers", "1"], {
    cwd: dir,
    env: { AUTOMATION_DATA_DIR: undefined, LOG_LEVEL: "warn" },
  });
  port = server.port;
}

/** `url` (signed by an earlier server process) on the running server: same path and signature, new port. */
const onCurrent = (url: string) => {
  const u = new URL(url);
  return `${base()}${u.pathname}${u.search}`;
};

/** Every stored blob (ab/cd/<sha>), excluding temp files. */
function blobNames(): string[] {
  const out: string[] = [];
  for (const a of readdirSync(blobsDir())) {
    if (a === "tmp") continue;
    for (const b of readdirSync(join(blobsDir(), a))) out.push(...readdirSync(join(blobsDir(), a, b)));
  }
  return out.sort();
}
const temps = () => readdirSync(join(blobsDir(), "tmp"));

async function eventually(check: () => boolean, ms = 5000): Promise<boolean> {
  const until = Date.now() + ms;
  while (Date.now() < until) {
    if (check()) return true;
    await Bun.sleep(25);
  }
  return check();
}

/** A body that sends `bytes` in 64 KiB chunks and then fails (the client gives up mid-upload). */
function failingBody(prefix: Uint8Array, bytes: number): ReadableStream<Uint8Array> {
  let sent = 0;
  let first = true;
  return new ReadableStream({
    async pull(c) {
      if (first) {
        first = false;
        c.enqueue(prefix);
        return;
      }
      if (sent >= bytes) {
        await Bun.sleep(50);
        c.error(new Error("client gave up"));
        return;
      }
      c.enqueue(new Uint8Array(65536).fill(1));
      sent += 65536;
    },
  });
}

beforeAll(async () => {
  const built = await ensureBuilt("automation-server");
  dir = mkdtempSync(join(tmpdir(), "automation-files-e2e-"));
  bin = join(dir, "automation-server");
  copyFileSync(built, bin);
  Bun.spawnSync(["chmod", "+x", bin]);
  await boot();
}, 60_000);

afterAll(async () => {
  if (server && server.proc.exitCode === null) await server.kill("SIGKILL");
  rmSync(dir, { recursive: true, force: true });
});

describe("files over real sockets (compiled server)", () => {
  let keptId = "";
  // The demo seeds blobs of its own (its DOCX invoice template): "nothing stored" means nothing beyond them.
  let seeded: string[] = [];
  beforeAll(() => {
    seeded = blobNames();
  });

  test("curl-style multipart upload with a traversal name → 400 envelope, nothing stored", async () => {
    const form = new FormData();
    form.append("file", new Blob(["evil"]), "../../../../tmp/evil.txt");
    const r = await fetch(`${base()}/v1/files`, { method: "POST", headers: auth, body: form });
    expect(r.status).toBe(400);
    const body = (await r.json()) as { issues: { field: string; code: string }[]; requestId: string };
    expect(body.issues[0]).toMatchObject({ field: "file.filename", code: "invalid_filename" });
    expect(r.headers.get("x-request-id")).toBe(body.requestId);
    expect(blobNames()).toEqual(seeded);
  });

  test("a multipart upload abandoned midway leaves no temp file and no blob; the server keeps serving", async () => {
    const boundary = "e2eBoundary";
    const head = new TextEncoder().encode(`--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="half.bin"\r\n\r\n`);
    await fetch(`${base()}/v1/files`, {
      method: "POST",
      headers: { ...auth, "content-type": `multipart/form-data; boundary=${boundary}` },
      body: failingBody(head, 2 * 1024 * 1024),
    }).catch(() => undefined);
    expect(await eventually(() => temps().length === 0)).toBe(true);
    expect(blobNames()).toEqual(seeded);
    const ok = await fetch(`${base()}/v1/files`, { method: "POST", headers: auth, body: (() => { const f = new FormData(); f.append("file", new Blob(["kept"]), "kept.txt"); return f; })() });
    expect(ok.status).toBe(200);
    keptId = ((await ok.json()) as { id: string }).id;
  });

  test("SIGKILL during a signed PUT: after restart no temp file, the session is still open and completes with a fresh PUT", async () => {
    const size = 8 * 1024 * 1024;
    const s = (await (
      await fetch(`${base()}/v1/files/uploads`, { method: "POST", headers: { ...auth, "content-type": "application/json" }, body: JSON.stringify({ filename: "crash.bin", size }) })
    ).json()) as { uploadId: string; url: string; transport: string };
    expect(s.transport).toBe("presigned-put");

    // Send half of the bytes slowly, then kill the server while the PUT is in flight.
    let sent = 0;
    const slow = new ReadableStream<Uint8Array>({
      async pull(c) {
        if (sent >= size / 2) {
          await Bun.sleep(10_000);
          return;
        }
        c.enqueue(new Uint8Array(256 * 1024).fill(2));
        sent += 256 * 1024;
        await Bun.sleep(5);
      },
    });
    const inflight = fetch(s.url, { method: "PUT", body: slow }).catch((e) => e);
    expect(await eventually(() => temps().length === 1)).toBe(true);
    while (sent < size / 2) await Bun.sleep(10);
    await server!.kill("SIGKILL");
    await inflight;
    expect(temps()).toHaveLength(1); // the half-written temp file the crash left

    await boot();
    expect(temps()).toEqual([]);
    const status = (await (await fetch(`${base()}/v1/files/uploads/${s.uploadId}`, { headers: auth })).json()) as { status: string };
    expect(status.status).toBe("pending");
    expect((await fetch(`${base()}/v1/files/uploads/${s.uploadId}/complete`, { method: "POST", headers: auth })).status).toBe(409);

    const data = new Uint8Array(size).fill(3);
    expect((await fetch(onCurrent(s.url), { method: "PUT", body: data })).status).toBe(200);
    const done = await fetch(`${base()}/v1/files/uploads/${s.uploadId}/complete`, { method: "POST", headers: auth });
    expect(done.status).toBe(200);
    const file = (await done.json()) as { id: string; size: number };
    expect(file.size).toBe(size);
    const back = new Uint8Array(await (await fetch(`${base()}/v1/files/${file.id}/content`, { headers: auth })).arrayBuffer());
    expect(back.byteLength).toBe(size);
    expect(back.every((b) => b === 3)).toBe(true);
  });

  test("files uploaded before a restart are still served after it", async () => {
    const r = await fetch(`${base()}/v1/files/${keptId}/content`, { headers: auth });
    expect(r.status).toBe(200);
    expect(await r.text()).toBe("kept");
  });
});
