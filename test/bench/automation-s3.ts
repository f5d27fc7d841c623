// Benchmark: 100 MiB up and down through the compiled automation-server with --blobs s3:// against a
// direct Bun S3Client put/get of the same bytes to the same S3 server (s3rver on loopback, in its own
// process), measured in one run. Three paths:
//   through the server   POST /v1/files (multipart, streamed to S3 while hashed) and GET .../content
//                        (streamed from S3)                                       aim ≥ 0.7× direct
//   presigned            upload session: PUT to the presigned S3 URL (+ complete, which re-reads the
//                        object once to hash it), download: 302 to a presigned GET   aim ≥ 0.9× direct
// Each figure is the best of 3 interleaved rounds (5 for the shorter downloads).
//
//   bun test/bench/automation-s3.ts [sizeMiB=100]
import { S3Client } from "bun";
import { copyFileSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ensureBuilt, startServer, type Server } from "../e2e/support";
import { startS3 } from "../support/s3";

const MiB = 1024 * 1024;
const sizeMiB = Number(process.argv[2] ?? 100);
const KEY = "eak_demo_0123456789abcdefghijklmnopqrstuv";
const auth = { authorization: `Bearer ${KEY}` };
const dir = mkdtempSync(join(tmpdir(), "bench-s3-"));
const s3 = await startS3("bench");
let server: Server | undefined;

const bytes = new Uint8Array(sizeMiB * MiB);
for (let i = 0; i < bytes.length; i += 4096) bytes[i] = (i / 4096) & 0xff;

/** Seconds of one run of each path per round, interleaved so load on a shared machine hits all alike; the best round counts. */
async function rounds(paths: Record<string, (round: number) => Promise<number | void>>, n = 3): Promise<Record<string, number>> {
  const out: Record<string, number> = {};
  for (let round = 0; round < n; round++) {
    for (const [label, fn] of Object.entries(paths)) {
      const t0 = performance.now();
      const own = await fn(round);
      const seconds = typeof own === "number" ? own : (performance.now() - t0) / 1000;
      out[label] = Math.min(out[label] ?? Number.POSITIVE_INFINITY, seconds);
    }
  }
  for (const [label, seconds] of Object.entries(out)) console.log(`  ${label.padEnd(46)} ${seconds.toFixed(2)} s  ${(sizeMiB / seconds).toFixed(0).padStart(5)} MiB/s`);
  return out;
}

/** A copy of the bytes with the last one changed: every upload is new content, hashed and stored. */
function variant(tag: number): Uint8Array {
  const body = bytes.slice();
  body[body.length - 1] = tag;
  return body;
}

async function drain(r: Response): Promise<number> {
  let n = 0;
  for await (const chunk of r.body!) n += chunk.byteLength;
  if (n !== bytes.byteLength) throw new Error(`read ${n} bytes, expected ${bytes.byteLength}`);
  return n;
}

try {
  const built = await ensureBuilt("automation-server");
  const bin = join(dir, "automation-server");
  copyFileSync(built, bin);
  const boot = (extra: string[] = []) =>
    startServer([bin, "--demo", "--host", "127.0.0.1", "--workers", "1", "--data-dir", join(dir, "data"), "--blobs", `s3://${s3.bucket}/srv`, "--s3-endpoint", s3.endpoint, ...extra], {
      cwd: dir,
      env: { ...s3.env, LOG_LEVEL: "warn", AUTOMATION_BLOBS: undefined },
    });

  console.log(`automation-server with S3 blobs (s3rver on loopback), ${sizeMiB} MiB, best of 3 interleaved rounds (downloads 5), one run:`);
  const client = new S3Client({ endpoint: s3.endpoint, bucket: s3.bucket, accessKeyId: "S3RVER", secretAccessKey: "S3RVER", region: "us-east-1" });
  server = await boot();
  const base = server.url;
  let fileId = "";
  let putOnly = Number.POSITIVE_INFINITY;
  const session = async (body: Uint8Array, transport: string) =>
    (await (
      await fetch(`${base}/v1/files/uploads`, {
        method: "POST",
        headers: { ...auth, "content-type": "application/json" },
        body: JSON.stringify({ filename: "big.bin", size: body.byteLength, transport }),
      })
    ).json()) as Record<string, any>;
  const complete = async (uploadId: string, json?: unknown) => {
    const done = await fetch(`${base}/v1/files/uploads/${uploadId}/complete`, { method: "POST", headers: { ...auth, "content-type": "application/json" }, body: json === undefined ? undefined : JSON.stringify(json) });
    if (done.status !== 200) throw new Error(`complete: ${done.status} ${await done.text()}`);
  };
  console.log("upload");
  const up = await rounds({
    "direct S3Client put": (i) => client.write(`direct/${i}`, variant(200 + i)).then(() => {}),
    "server: POST /v1/files (multipart form)": async (i) => {
      const form = new FormData();
      form.set("file", new File([variant(1 + i)], "big.bin", { type: "application/octet-stream" }));
      const r = await fetch(`${base}/v1/files`, { method: "POST", headers: auth, body: form });
      if (r.status !== 200) throw new Error(`upload: ${r.status} ${await r.text()}`);
      fileId = ((await r.json()) as { id: string }).id;
    },
    "presigned-put: PUT to S3 + complete": async (i) => {
      const body = variant(100 + i);
      const n = await session(body, "presigned-put");
      const t0 = performance.now();
      const put = await fetch(n.url, { method: "PUT", headers: n.headers, body });
      if (put.status !== 200) throw new Error(`presigned PUT: ${put.status}`);
      putOnly = Math.min(putOnly, (performance.now() - t0) / 1000);
      await complete(n.uploadId);
    },
    "presigned-multipart: 4 parts at a time + complete": async (i) => {
      const body = variant(150 + i);
      const n = await session(body, "presigned-multipart");
      const queue = [...n.parts] as { partNumber: number; url: string }[];
      const parts: { partNumber: number; etag: string }[] = [];
      await Promise.all(
        [1, 2, 3, 4].map(async () => {
          for (let p = queue.shift(); p; p = queue.shift()) {
            const r = await fetch(p.url, { method: "PUT", body: body.subarray((p.partNumber - 1) * n.partSize, p.partNumber * n.partSize) });
            parts.push({ partNumber: p.partNumber, etag: r.headers.get("etag")! });
          }
        }),
      );
      await complete(n.uploadId, { parts });
    },
  });
  console.log(`  ${"(presigned-put: the PUT alone)".padEnd(46)} ${putOnly.toFixed(2)} s  ${(sizeMiB / putOnly).toFixed(0).padStart(5)} MiB/s`);

  // A second instance on the same bucket and database answers downloads with redirects.
  const redirecting = await boot(["--s3-redirect"]);
  console.log("download");
  const down = await rounds({
    "direct S3Client get (stream)": async () => {
      await drain(new Response(client.file("direct/0").stream()));
    },
    "server: GET /v1/files/{id}/content (stream)": async () => {
      await drain(await fetch(`${base}/v1/files/${fileId}/content`, { headers: auth }));
    },
    "--s3-redirect: GET → 302 → presigned GET": async () => {
      const r = await fetch(`${redirecting.url}/v1/files/${fileId}/content`, { headers: auth, redirect: "manual" });
      if (r.status !== 302) throw new Error(`expected 302, got ${r.status}`);
      await drain(await fetch(r.headers.get("location")!));
    },
  }, 5);
  await redirecting.kill("SIGTERM");

  const ratio = (ref: number, t: number) => (ref / t).toFixed(2);
  const [dPut, dGet] = [up["direct S3Client put"], down["direct S3Client get (stream)"]];
  console.log("\nratios (direct time / path time; 1.00 = as fast as talking to S3 directly):");
  console.log(
    `  upload   through the server ${ratio(dPut, up["server: POST /v1/files (multipart form)"])}×   presigned-multipart ${ratio(dPut, up["presigned-multipart: 4 parts at a time + complete"])}×   presigned-put+complete ${ratio(dPut, up["presigned-put: PUT to S3 + complete"])}×   (PUT alone ${ratio(dPut, putOnly)}×)`,
  );
  console.log(`  download through the server ${ratio(dGet, down["server: GET /v1/files/{id}/content (stream)"])}×   presigned (302) ${ratio(dGet, down["--s3-redirect: GET → 302 → presigned GET"])}×`);
} finally {
  if (server && server.proc.exitCode === null) await server.kill("SIGTERM");
  await s3.stop();
  rmSync(dir, { recursive: true, force: true });
}
