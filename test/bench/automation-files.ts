// Benchmark: upload and download throughput of a 200 MiB file through the compiled automation-server
// (multipart POST, upload-session PUT, GET content) against a plain `cp` of the same file on the same
// disk, measured in the same run; and the server's peak RSS during the uploads (it must stream: the
// peak must not grow with the file size, so a 20 MiB upload is measured too). For reference it also
// measures a bare Bun.serve that parses the same multipart body with request.formData().
//
//   bun test/bench/automation-files.ts [sizeMiB=200]
import { mkdtempSync, readFileSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Database } from "bun:sqlite";
import { and, eq } from "drizzle-orm";
import { migrations } from "../../db/automation/index";
import { dbOf } from "../../src/automation/db/client";
import { files } from "../../src/automation/db/tables/files";
import { SqliteFileStore } from "../../src/automation/db/sqlite/files";
import { migrate } from "../../src/kernel/db";
import { ensureBuilt, start, startServer, type Proc, type Server } from "../e2e/support";

const MiB = 1024 * 1024;
const sizeMiB = Number(process.argv[2] ?? 200);
const dir = mkdtempSync(join(tmpdir(), "bench-files-"));
const KEY = "eak_demo_0123456789abcdefghijklmnopqrstuv";

function kib(field: "VmRSS" | "VmHWM", pid: number): number {
  const m = new RegExp(`${field}:\\s+(\\d+) kB`).exec(readFileSync(`/proc/${pid}/status`, "utf8"));
  return m ? Number(m[1]) : 0;
}

/** Runs `fn` while sampling the RSS of `pid` every 10 ms; returns its result, seconds and the peak RSS (MiB). */
async function measured<T>(pid: number, fn: () => Promise<T>): Promise<{ value: T; seconds: number; peakMiB: number; beforeMiB: number }> {
  const beforeMiB = kib("VmRSS", pid) / 1024;
  let peak = beforeMiB;
  const timer = setInterval(() => {
    peak = Math.max(peak, kib("VmRSS", pid) / 1024);
  }, 10);
  const t0 = performance.now();
  try {
    const value = await fn();
    return { value, seconds: (performance.now() - t0) / 1000, peakMiB: Math.max(peak, kib("VmRSS", pid) / 1024), beforeMiB };
  } finally {
    clearInterval(timer);
  }
}

async function sh(cmd: string[]): Promise<string> {
  const p = Bun.spawn(cmd, { stdout: "pipe", stderr: "pipe" });
  const [out, err, code] = [await new Response(p.stdout).text(), await new Response(p.stderr).text(), await p.exited];
  if (code !== 0) throw new Error(`${cmd.join(" ")} failed (${code}): ${err}`);
  return out;
}

async function makeFile(path: string, size: number): Promise<void> {
  const w = Bun.file(path).writer();
  const chunk = new Uint8Array(4 * MiB);
  for (let off = 0; off < size; off += chunk.byteLength) {
    for (let i = 0; i < chunk.byteLength; i += 65536) crypto.getRandomValues(chunk.subarray(i, i + 65536));
    w.write(chunk.subarray(0, Math.min(chunk.byteLength, size - off)));
    await w.flush();
  }
  await w.end();
}

const mbps = (bytes: number, s: number) => bytes / MiB / s;
const f1 = (n: number) => n.toFixed(1);

let server: Server | undefined;
let formdataServer: Proc | undefined;
try {
  const bin = await ensureBuilt("automation-server");
  const big = join(dir, "big.bin");
  const small = join(dir, "small.bin");
  await makeFile(big, sizeMiB * MiB);
  await makeFile(small, 20 * MiB);
  const bytes = statSync(big).size;
  const want = (await sh(["sha256sum", big])).split(" ")[0];

  // Reference: a plain copy on the same disk (warm page cache, like the server's reads).
  await sh(["cp", big, join(dir, "warm.bin")]);
  rmSync(join(dir, "warm.bin"));
  const c0 = performance.now();
  await sh(["cp", big, join(dir, "copy.bin")]);
  await sh(["sync", join(dir, "copy.bin")]);
  const copyS = (performance.now() - c0) / 1000;
  rmSync(join(dir, "copy.bin"));

  // No --public-url (the port is picked at start): signed URLs use the origin curl reached.
  server = await startServer([bin, "--demo", "--host", "127.0.0.1", "--data-dir", join(dir, "data"), "--workers", "1"], {
    env: { LOG_LEVEL: "warn" },
  });
  const base = server.url;
  const pid = server.proc.pid;
  const auth = ["-H", `Authorization: Bearer ${KEY}`];
  const idleMiB = kib("VmRSS", pid) / 1024;

  const uploadMultipart = (path: string) => measured(pid, async () => JSON.parse(await sh(["curl", "-sS", "--fail-with-body", ...auth, "-F", `file=@${path}`, `${base}/v1/files`])).id as string);
  const uploadSession = (path: string) =>
    measured(pid, async () => {
      const size = statSync(path).size;
      const n = JSON.parse(await sh(["curl", "-sS", "--fail-with-body", ...auth, "-H", "content-type: application/json", "-d", JSON.stringify({ filename: "s.bin", size }), `${base}/v1/files/uploads`]));
      await sh(["curl", "-sS", "--fail-with-body", "-T", path, "-H", "content-type: application/octet-stream", n.url]);
      return JSON.parse(await sh(["curl", "-sS", "--fail-with-body", ...auth, "-X", "POST", `${base}/v1/files/uploads/${n.uploadId}/complete`])).id as string;
    });

  const smallMp = await uploadMultipart(small);
  const smallPut = await uploadSession(small);
  const mp = await uploadMultipart(big);
  const put = await uploadSession(big);
  const out = join(dir, "down.bin");
  const down = await measured(pid, () => sh(["curl", "-sS", "--fail-with-body", ...auth, "-o", out, `${base}/v1/files/${mp.value}/content`]));
  const got = (await sh(["sha256sum", out])).split(" ")[0];
  if (got !== want) throw new Error("download differs from the upload");
  const hwmMiB = kib("VmHWM", pid) / 1024;
  await server.kill("SIGTERM");
  server = undefined;

  // Reference for the multipart decision: Bun's request.formData() on the same body.
  // In its own process on a port the kernel picks: it prints the port once listening.
  formdataServer = start([process.execPath, "-e", `const s=Bun.serve({port:0,hostname:"127.0.0.1",maxRequestBodySize:2**31,async fetch(r){const f=await r.formData();const x=f.get("file");return new Response(String(x instanceof Blob?x.size:0))}});console.log(s.port);`]);
  let fport = 0;
  for (const until = Date.now() + 30_000; !fport; await Bun.sleep(20)) {
    fport = Number(/^(\d+)$/m.exec(formdataServer.output())?.[1] ?? 0);
    if (!fport && (formdataServer.proc.exitCode !== null || Date.now() > until)) throw new Error(`the formData() reference did not start:\n${formdataServer.output()}`);
  }
  const fd = await measured(formdataServer.proc.pid, () => sh(["curl", "-sS", "-F", `file=@${big}`, `http://127.0.0.1:${fport}/`]));
  await formdataServer.kill("SIGTERM");
  formdataServer = undefined;

  const rows: [string, number, number][] = [
    ["upload multipart POST /v1/files", mbps(bytes, mp.seconds), mp.peakMiB],
    ["upload session PUT + complete", mbps(bytes, put.seconds), put.peakMiB],
    ["download GET /v1/files/{id}/content", mbps(bytes, down.seconds), down.peakMiB],
  ];
  const copy = mbps(bytes, copyS);
  console.log(`automation-server files benchmark: ${f1(bytes / MiB)} MiB file, curl on loopback, data dir ${dir}`);
  console.log(`reference: cp on the same disk (+ sync)        ${f1(copy).padStart(8)} MiB/s`);
  for (const [name, rate, peak] of rows) {
    console.log(`${name.padEnd(40)} ${f1(rate).padStart(8)} MiB/s  ratio vs cp ${(rate / copy).toFixed(2)}  server peak RSS ${f1(peak)} MiB`);
  }
  console.log(`server RSS idle ${f1(idleMiB)} MiB; peak during 20 MiB uploads: multipart ${f1(smallMp.peakMiB)}, session ${f1(smallPut.peakMiB)}; during ${f1(bytes / MiB)} MiB: multipart ${f1(mp.peakMiB)}, session ${f1(put.peakMiB)}; VmHWM ${f1(hwmMiB)} MiB`);
  console.log(`peak growth from 20 MiB to ${f1(bytes / MiB)} MiB upload: multipart ${f1(mp.peakMiB - smallMp.peakMiB)} MiB, session ${f1(put.peakMiB - smallPut.peakMiB)} MiB (buffering the body would add the whole file)`);
  console.log(`reference: bare Bun.serve + request.formData() on the same ${f1(bytes / MiB)} MiB body: peak RSS ${f1(fd.peakMiB)} MiB (buffers the whole body)`);
  storeLookups();
} finally {
  if (server) await server.kill("SIGKILL");
  if (formdataServer) await formdataServer.kill("SIGKILL");
  rmSync(dir, { recursive: true, force: true });
}

/** The metadata lookup every GET /files/{id}[/content] makes: the prepared statement vs a drizzle query built per call. */
function storeLookups(): void {
  const sqlite = new Database(":memory:");
  migrate(sqlite, migrations);
  const db = dbOf(sqlite);
  // The SQLite store's methods run synchronously (their promises settle at once): timed as calls.
  const store = new SqliteFileStore(sqlite);
  for (let i = 0; i < 1000; i++) {
    void store.insertFile({ id: `file_${i}`, tenantId: "ten_a", filename: "a", contentType: "text/plain", size: 1, sha256: "x", purpose: null, createdAt: "2026-01-01T00:00:00.000Z", expiresAt: null });
  }
  const n = 20_000;
  const perCall = (fn: (i: number) => unknown) => {
    const t0 = performance.now();
    for (let i = 0; i < n; i++) fn(i);
    return ((performance.now() - t0) / n) * 1000;
  };
  const built = perCall((i) => db.select().from(files).where(and(eq(files.tenantId, "ten_a"), eq(files.id, `file_${i % 1000}`))).get());
  const prepared = perCall((i) => store.file("ten_a", `file_${i % 1000}`));
  console.log(`file metadata lookup (files store): prepared ${prepared.toFixed(1)} µs/call; reference drizzle query built per call ${built.toFixed(1)} µs/call (${(built / prepared).toFixed(1)}x slower)`);
  sqlite.close();
}
