// Fault: the compiled automation-server's blob directory runs out of space during an upload (multipart
// and upload session) and during a run's artifact write. The small filesystem is a real 8 MiB tmpfs
// when this process may mount one (root outside a locked-down container), else the blob store's own
// byte cap (--blobs-max-bytes), which fails the write the same way (ENOSPC mid-stream). Either way:
// 507 in the issues envelope, nothing half-written left, the server keeps serving, and once space is
// freed uploads and runs work again. FAULTS_DISK=cap forces the cap.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { mkdtempSync, readdirSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { DEMO_KEY, demoServer, type DemoServer } from "./automation-demo";
import type { Server } from "./support";

const SIZE = 8 * 1024 * 1024;
let demo: DemoServer;
let server: Server | undefined;
let blobs = "";
let mechanism = "";

beforeAll(async () => {
  blobs = mkdtempSync(join(tmpdir(), "faults-blobs-"));
  const mounted = process.getuid?.() === 0 && process.env.FAULTS_DISK !== "cap" && tryMount(blobs);
  mechanism = mounted ? "tmpfs of 8 MiB" : `--blobs-max-bytes 8 MiB (${process.env.FAULTS_DISK === "cap" ? "FAULTS_DISK=cap" : "mount not permitted here"})`;
  console.log(`disk-full mechanism: ${mechanism}`);
  demo = await demoServer({
    prefix: "faults-disk-",
    workers: 2,
    env: { AUTOMATION_BLOBS: blobs, AUTOMATION_BLOBS_MAX_BYTES: mounted ? undefined : String(SIZE) },
  });
  server = await demo.boot();
});

afterAll(async () => {
  if (server && server.proc.exitCode === null) await server.kill("SIGKILL");
  if (mechanism.startsWith("tmpfs")) Bun.spawnSync(["umount", blobs]);
  rmSync(blobs, { recursive: true, force: true });
  await demo?.close();
});

/** Mounts an 8 MiB tmpfs on `dir`; false where that is not allowed (a container without CAP_SYS_ADMIN) or `mount` is missing. */
function tryMount(dir: string): boolean {
  try {
    return Bun.spawnSync(["mount", "-t", "tmpfs", "-o", `size=${SIZE}`, "tmpfs", dir], { stdout: "ignore", stderr: "pipe" }).exitCode === 0;
  } catch {
    return false;
  }
}

/** Blob files stored and temp files left in the blob directory. */
function blobDir(): { blobs: number; temps: number } {
  let n = 0;
  for (const a of readdirSync(blobs)) {
    if (a === "tmp" || a === "lost+found") continue;
    for (const b of readdirSync(join(blobs, a))) n += readdirSync(join(blobs, a, b)).length;
  }
  return { blobs: n, temps: readdirSync(join(blobs, "tmp")).length };
}

type Envelope = { issues: { code: string; message: string }[] };
const random = (n: number) => crypto.getRandomValues(new Uint8Array(n));
const key = { authorization: `Bearer ${DEMO_KEY}` };

async function multipart(bytes: Uint8Array, name: string): Promise<Response> {
  const form = new FormData();
  form.set("file", new File([bytes], name, { type: "application/octet-stream" }));
  return fetch(`${demo.base}/v1/files`, { method: "POST", headers: key, body: form });
}

async function health(): Promise<number> {
  const t = performance.now();
  const r = await fetch(`${demo.base}/health`);
  expect(r.status).toBe(200);
  return performance.now() - t;
}

const xlsxWorkflow = `
name: big-sheet
inputs: [{name: rows, type: array, required: true}]
steps:
  - {name: sheet, type: transform.json-to-xlsx, with: {rows: "{{ input.rows }}", filename: big.xlsx}}
output: {file: "{{ steps.sheet.output.file.filename }}"}
`;

/** Rows of random base64 text: XLSX compresses them to about three quarters of `bytes`. */
function rows(bytes: number): { a: string }[] {
  const out: { a: string }[] = [];
  for (let i = 0; i < bytes / 1024; i++) out.push({ a: Buffer.from(random(768)).toString("base64") });
  return out;
}

type RunView = { id: string; execution: { status: string }; error?: { message?: string } | string };
async function runAndWait(input: unknown): Promise<RunView> {
  const r = await fetch(`${demo.base}/v1/runs?wait_for_completion=60`, {
    method: "POST",
    headers: { ...key, "content-type": "application/json" },
    body: JSON.stringify({ target: "workflows.big-sheet", input }),
  });
  expect([200, 201, 202]).toContain(r.status);
  return (await r.json()) as RunView;
}

test("disk full: uploads and a run's artifact write fail cleanly (507 / failed run), nothing half-written, serving again once space is freed", async () => {
  const before = blobDir();
  const timings: Record<string, number> = {};

  // 1. A multipart upload larger than the space left.
  let t = performance.now();
  const tooBig = await multipart(random(SIZE + 2 * 1024 * 1024), "too-big.bin");
  timings.multipart = performance.now() - t;
  expect(tooBig.status).toBe(507);
  const env1 = (await tooBig.json()) as Envelope;
  expect(env1.issues[0]).toMatchObject({ code: "insufficient_storage" });
  expect(env1.issues[0].message).toContain("out of storage space");
  expect(blobDir()).toEqual(before);
  await health();

  // 2. The same through an upload session (presigned PUT).
  const size = SIZE + 1024 * 1024;
  const session = (await (await fetch(`${demo.base}/v1/files/uploads`, {
    method: "POST",
    headers: { ...key, "content-type": "application/json" },
    body: JSON.stringify({ filename: "session.bin", size, contentType: "application/octet-stream" }),
  })).json()) as { transport: string; url: string; headers: Record<string, string>; uploadId: string; fileId: string };
  expect(session.transport).toBe("presigned-put");
  t = performance.now();
  const put = await fetch(new URL(session.url, demo.base), { method: "PUT", headers: session.headers, body: random(size) });
  timings.session = performance.now() - t;
  expect(put.status).toBe(507);
  expect(((await put.json()) as Envelope).issues[0].code).toBe("insufficient_storage");
  const state = (await (await fetch(`${demo.base}/v1/files/uploads/${session.uploadId}`, { headers: key })).json()) as { status: string };
  expect(state.status).toBe("pending");
  const complete = await fetch(`${demo.base}/v1/files/uploads/${session.uploadId}/complete`, { method: "POST", headers: key });
  expect(complete.status).toBe(409);
  expect((await fetch(`${demo.base}/v1/files/${session.fileId}`, { headers: key })).status).toBe(404);
  expect(blobDir()).toEqual(before);
  await health();

  // 3. Fill the space but ~0.5 MiB, then a run whose XLSX artifact needs ~1.5 MiB.
  const filler = await multipart(random(SIZE - 512 * 1024 - 64 * 1024), "filler.bin");
  expect(filler.status).toBe(200);
  const fillerId = ((await filler.json()) as { id: string }).id;
  const full = blobDir();
  expect((await fetch(`${demo.base}/v1/automations`, { method: "POST", headers: { ...key, "content-type": "application/json" }, body: JSON.stringify({ yaml: xlsxWorkflow }) })).status).toBe(201);
  const failed = await runAndWait({ rows: rows(2 * 1024 * 1024) });
  expect(failed.execution.status).toBe("failed");
  const message = typeof failed.error === "string" ? failed.error : failed.error?.message;
  expect(message).toContain("no space left on device");
  const artifacts = (await (await fetch(`${demo.base}/v1/runs/${failed.id}/artifacts`, { headers: key })).json()) as { artifacts: { role: string }[] };
  expect(artifacts.artifacts.filter((a) => a.role === "output")).toEqual([]);
  expect(blobDir()).toEqual(full);
  const h = await health();

  // 4. Space freed: an upload and the same run succeed, and the artifact is whole.
  expect((await fetch(`${demo.base}/v1/files/${fillerId}`, { method: "DELETE", headers: key })).status).toBe(200);
  expect(blobDir()).toEqual(before);
  const small = random(1024 * 1024);
  const ok = await multipart(small, "ok.bin");
  expect(ok.status).toBe(200);
  const okId = ((await ok.json()) as { id: string }).id;
  expect(new Uint8Array(await (await fetch(`${demo.base}/v1/files/${okId}/content`, { headers: key })).arrayBuffer())).toEqual(small);
  const done = await runAndWait({ rows: rows(2 * 1024 * 1024) });
  expect(done.execution.status).toBe("completed");
  const listed = (await (await fetch(`${demo.base}/v1/runs/${done.id}/artifacts`, { headers: key })).json()) as { artifacts: { role: string; path: string; size: number }[] };
  const outputs = listed.artifacts.filter((a) => a.role === "output");
  expect(outputs).toHaveLength(1);
  const xlsx = await fetch(`${demo.base}/v1/runs/${done.id}/artifacts/${outputs[0].path}`, { headers: key });
  const bytes = new Uint8Array(await xlsx.arrayBuffer());
  expect(bytes.byteLength).toBe(outputs[0].size);
  expect(bytes.byteLength).toBeGreaterThan(1024 * 1024);
  expect([...bytes.subarray(0, 2)]).toEqual([0x50, 0x4b]); // a ZIP (XLSX) from its first byte
  expect(blobDir().temps).toBe(0);
  expect(server!.proc.exitCode).toBeNull();
  expect(server!.output()).not.toContain("unhandled error");
  expect(statSync(blobs).isDirectory()).toBe(true);
  console.log(`disk full (${mechanism}): multipart 507 in ${timings.multipart.toFixed(0)} ms, session PUT 507 in ${timings.session.toFixed(0)} ms, artifact run failed with "${message}", /health ${h.toFixed(1)} ms`);
}, 110_000);
