// Operating the compiled automation-server (issue 27): /metrics (no API key) scraped during a load of
// runs and uploads counts exactly the requests sent and the runs executed; every request and every
// run line of the JSON log carries the request id that started it; a backup taken while uploads and
// runs go on restores every run and every blob (files download byte-equal) into a new data dir.
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { Database } from "bun:sqlite";
import { join } from "node:path";
import { type DemoServer, demoServer, DEMO_KEY } from "./automation-demo";
import { type Server, startServer, metricSamples as samples } from "./support";

setDefaultTimeout(180_000);

const auth = { authorization: `Bearer ${DEMO_KEY}` };
const ORDER = { order: { id: "o1", country: "US", items: [{ sku: "A", qty: 3, price: 10 }] } };
let demo: DemoServer;
const others: Server[] = [];

beforeAll(async () => {
  demo = await demoServer({ prefix: "automation-ops-", workers: 2, env: { METRICS: "1", LOG_FORMAT: "json", METRICS_PORT: undefined, LOG_LEVEL: undefined } });
});
afterAll(async () => {
  for (const s of others) if (s.proc.exitCode === null) await s.kill("SIGKILL");
  await demo.close();
});

async function cli(bin: string, args: string[]): Promise<{ code: number; out: string }> {
  const p = Bun.spawn([bin, ...args], { stdout: "pipe", stderr: "pipe", env: { ...process.env, AUTOMATION_DATA_DIR: undefined } });
  const [out, err, code] = await Promise.all([new Response(p.stdout).text(), new Response(p.stderr).text(), p.exited]);
  return { code, out: out + err };
}

async function upload(base: string, name: string, bytes: Uint8Array): Promise<string> {
  const form = new FormData();
  form.append("file", new Blob([bytes]), name);
  const r = await fetch(`${base}/v1/files`, { method: "POST", headers: auth, body: form });
  if (r.status !== 200) throw new Error(`upload: ${r.status} ${await r.text()}`);
  return ((await r.json()) as { id: string }).id;
}

async function startRun(base: string, requestId: string): Promise<string> {
  const r = await fetch(`${base}/v1/runs`, {
    method: "POST",
    headers: { ...auth, "content-type": "application/json", "x-request-id": requestId },
    body: JSON.stringify({ target: "workflows.order-routing", input: ORDER }),
  });
  if (r.status !== 201) throw new Error(`run: ${r.status} ${await r.text()}`);
  expect(r.headers.get("x-request-id")).toBe(requestId);
  return ((await r.json()) as { id: string }).id;
}

async function runStatus(base: string, id: string): Promise<string> {
  const r = await fetch(`${base}/v1/runs/${id}`, { headers: auth });
  if (r.status !== 200) throw new Error(`get run: ${r.status}`);
  const body = (await r.json()) as { status?: string; execution?: { status?: string } };
  return body.execution?.status ?? body.status ?? "";
}

const randomBytes = (n: number) => crypto.getRandomValues(new Uint8Array(n));

describe("automation-server operations", () => {
  test("/metrics during runs and uploads: the request counts, run counters and listed series; run log lines carry the request id", async () => {
    const server = await demo.boot();
    const base = server.url;
    const sent = new Map<string, number>();
    const count = (key: string) => sent.set(key, (sent.get(key) ?? 0) + 1);

    const RUNS = 10;
    let uploaded = 0;
    const runs = Promise.all(Array.from({ length: RUNS }, (_, i) => startRun(base, `ops-run-${i}`)));
    const files = Promise.all(
      Array.from({ length: 5 }, async (_, i) => {
        const bytes = randomBytes(10_000 + i * 1000);
        uploaded += bytes.length;
        return upload(base, `f${i}.bin`, bytes);
      }),
    );
    // Scraped while the load runs, with no API key.
    const scrape = await fetch(`${base}/metrics`);
    expect(scrape.status).toBe(200);
    expect(await scrape.text()).toContain("http_requests_total");
    const ids = await runs;
    await files;
    for (let i = 0; i < RUNS; i++) count("POST /v1/runs 201");
    for (let i = 0; i < 5; i++) count("POST /v1/files 200");
    for (let i = 0; i < 3; i++) {
      expect((await fetch(`${base}/v1/runs/exec_nope${i}`)).status).toBe(401);
      count("GET /v1/runs/:id 401");
    }
    for (const id of ids) {
      for (;;) {
        const status = await runStatus(base, id);
        count("GET /v1/runs/:id 200");
        if (status === "completed") break;
        expect(["pending", "running", "queued"]).toContain(status);
        await Bun.sleep(50);
      }
    }

    const text = await (await fetch(`${base}/metrics`)).text();
    const all = samples(text);
    const counted = new Map<string, number>();
    for (const s of all.filter((s) => s.name === "http_requests_total")) counted.set(`${s.labels.method} ${s.labels.route} ${s.labels.status}`, s.value);
    expect(Object.fromEntries(counted)).toEqual(Object.fromEntries(sent));
    expect(text).not.toMatch(/route="[^"]*(exec_|file_|ten_)/);
    expect(text).not.toContain("ten_");
    const value = (name: string, labels: Record<string, string> = {}) =>
      all.filter((s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v)).reduce((a, s) => a + s.value, 0);
    expect(value("automation_runs_started_total")).toBe(RUNS);
    expect(value("automation_runs_finished_total", { status: "completed" })).toBe(RUNS);
    expect(value("automation_queue_wait_seconds_count")).toBe(RUNS);
    expect(value("automation_queue_depth")).toBe(0);
    expect(value("automation_step_duration_seconds_count", { kind: "transform.set" })).toBeGreaterThan(0);
    expect(value("automation_blob_bytes_total", { direction: "in" })).toBeGreaterThanOrEqual(uploaded);
    for (const name of [
      "process_resident_memory_bytes",
      "process_open_fds",
      "nodejs_eventloop_lag_seconds",
      "db_query_duration_seconds_bucket",
      "http_request_duration_seconds_bucket",
      "automation_human_review_tasks_open",
      "automation_emails_total",
      "automation_runs_running",
    ]) {
      expect(all.some((s) => s.name === name)).toBe(true);
    }
    // Declared even before the first model call (their samples appear with the first).
    for (const name of ["automation_model_tokens_total", "automation_model_calls_total"]) expect(text).toContain(`# TYPE ${name} counter`);

    const anonymousAt = [...sent.values()].reduce((a, b) => a + b, 0);
    // A run started without an x-request-id gets the id the server made for its POST (a body is
    // read through its own stream object: the id must still be the request's).
    const anonymous = await fetch(`${base}/v1/runs`, { method: "POST", headers: { ...auth, "content-type": "application/json" }, body: JSON.stringify({ target: "workflows.order-routing", input: ORDER }) });
    expect(anonymous.status).toBe(201);
    const minted = anonymous.headers.get("x-request-id");
    expect(minted).toMatch(/^req_/);
    const anonymousRun = ((await anonymous.json()) as { id: string }).id;
    let polls = 1;
    while ((await runStatus(base, anonymousRun)) !== "completed") {
      polls++;
      await Bun.sleep(50);
    }

    expect(await server.kill("SIGTERM")).toBe(0);
    const lines = server.output().split("\n").filter((l) => l.startsWith("{")).map((l) => JSON.parse(l) as Record<string, unknown>);
    const requests = lines.filter((l) => l.msg === "request");
    expect(requests).toHaveLength(anonymousAt + 1 + polls);
    expect(requests.filter((r) => (r.status === 201 || r.status === 200) && !String(r.tenant).startsWith("ten_"))).toEqual([]);
    expect(lines.filter((l) => l.runId === anonymousRun).map((l) => [l.msg, l.requestId])).toEqual([["run started", minted], ["run finished", minted]]);
    expect(requests.find((r) => r.requestId === minted)).toMatchObject({ method: "POST", route: "/v1/runs", status: 201 });
    for (let i = 0; i < RUNS; i++) {
      const mine = lines.filter((l) => l.runId === ids[i]);
      expect(mine.map((l) => l.msg)).toEqual(["run started", "run finished"]);
      expect(mine.every((l) => l.requestId === `ops-run-${i}` && typeof l.tenant === "string")).toBe(true);
      expect(requests.find((r) => r.requestId === `ops-run-${i}`)).toMatchObject({ method: "POST", route: "/v1/runs", status: 201 });
    }
  });

  test("backup during uploads and runs, restore into a new data dir: every run and blob back, files byte-equal", async () => {
    const server = await demo.boot();
    const base = server.url;
    const bin = join(demo.dir, "automation-server");
    const kept = new Map<string, Uint8Array>();
    for (let i = 0; i < 4; i++) {
      const bytes = randomBytes(50_000 + i);
      kept.set(await upload(base, `before-${i}.bin`, bytes), bytes);
    }
    const stop = { now: false };
    const writes = (async () => {
      let i = 0;
      while (!stop.now) {
        const bytes = randomBytes(20_000 + (i % 7));
        const id = await upload(base, `during-${i}.bin`, bytes);
        kept.set(id, bytes);
        await startRun(base, `bk-run-${i}`);
        i++;
      }
      return i;
    })();
    // A signed PUT whose bytes are still arriving while the backup runs: the backup must not touch
    // the server's temp files (the upload completes afterwards).
    const size = 8 * 1024 * 1024;
    const session = (await (
      await fetch(`${base}/v1/files/uploads`, { method: "POST", headers: { ...auth, "content-type": "application/json" }, body: JSON.stringify({ filename: "slow.bin", size }) })
    ).json()) as { uploadId: string; url: string; transport: string };
    expect(session.transport).toBe("presigned-put");
    let sent = 0;
    let backupDone = () => {};
    const afterBackup = new Promise<void>((r) => (backupDone = r));
    const trickle = new ReadableStream<Uint8Array>({
      async pull(c) {
        if (sent >= size) return c.close();
        // The second half waits for the backup to end: the PUT is in flight for all of it.
        if (sent >= size / 2) await afterBackup;
        c.enqueue(new Uint8Array(256 * 1024).fill(7));
        sent += 256 * 1024;
        await Bun.sleep(20);
      },
    });
    const put = fetch(session.url, { method: "PUT", body: trickle });
    await Bun.sleep(400);
    expect(sent).toBeLessThan(size);
    const backupDir = join(demo.dir, "backup");
    const taken = await cli(bin, ["backup", "--data-dir", join(demo.dir, "data"), "--to", backupDir, "--json"]);
    expect(taken.code).toBe(0);
    const manifest = JSON.parse(taken.out) as { blobs: number; missing: string[]; keyFiles: string[] };
    expect(manifest.missing).toEqual([]);
    expect(manifest.keyFiles).toEqual(["signing-secret", "secret-key"]);
    // The PUT was still streaming into the server's temp folder for the whole backup.
    expect(sent).toBeLessThan(size);
    backupDone();
    await Bun.sleep(300);
    stop.now = true;
    expect(await writes).toBeGreaterThan(0);
    expect((await put).status).toBe(200);
    const completed = await fetch(`${base}/v1/files/uploads/${session.uploadId}/complete`, { method: "POST", headers: auth });
    expect(completed.status).toBe(200);
    await Bun.sleep(1000);

    // Refusals: an existing backup dir, a data dir holding data, a directory that is no backup.
    expect((await cli(bin, ["backup", "--data-dir", join(demo.dir, "data"), "--to", backupDir])).out).toContain("is not empty");
    const refused = await cli(bin, ["restore", "--from", backupDir, "--data-dir", join(demo.dir, "data")]);
    expect(refused.code).toBe(1);
    expect(refused.out).toContain("is not empty");
    expect((await cli(bin, ["restore", "--from", join(demo.dir, "data"), "--data-dir", join(demo.dir, "nowhere")])).out).toContain("not a complete automation-server backup");

    const restoredDir = join(demo.dir, "restored");
    const restored = await cli(bin, ["restore", "--from", backupDir, "--data-dir", restoredDir]);
    expect(restored.code).toBe(0);

    // What the snapshot holds: every run and file row of it is in the restored database, and more
    // writes landed on the live server after it.
    const snap = new Database(join(backupDir, "automation.db"), { readonly: true });
    const runsOf = (d: Database) => d.query("SELECT id, status, output FROM runs ORDER BY id").all() as { id: string; status: string }[];
    const filesOf = (d: Database) => d.query("SELECT id, sha256, size FROM files ORDER BY id").all() as { id: string; sha256: string; size: number }[];
    const snapRuns = runsOf(snap);
    const snapFiles = filesOf(snap);
    snap.close();
    expect(snapRuns.length).toBeGreaterThan(0);
    const restoredDb = new Database(join(restoredDir, "automation.db"), { readonly: true });
    expect(runsOf(restoredDb)).toEqual(snapRuns);
    expect(filesOf(restoredDb)).toEqual(snapFiles);
    restoredDb.close();
    const liveDb = new Database(demo.dbPath, { readonly: true });
    expect(filesOf(liveDb).length).toBeGreaterThan(snapFiles.length);
    liveDb.close();
    expect(await server.kill("SIGTERM")).toBe(0);

    // The restored data dir serves: every run of the snapshot answers, every file downloads byte-equal.
    const again = await startServer([bin, "--host", "127.0.0.1", "--workers", "2", "--data-dir", restoredDir], { cwd: demo.dir, env: { AUTOMATION_DATA_DIR: undefined } });
    others.push(again);
    for (const r of snapRuns) {
      const res = await fetch(`${again.url}/v1/runs/${r.id}`, { headers: auth });
      expect(res.status).toBe(200);
    }
    for (const f of snapFiles) {
      const res = await fetch(`${again.url}/v1/files/${f.id}/content`, { headers: auth });
      expect(res.status).toBe(200);
      const got = new Uint8Array(await res.arrayBuffer());
      const want = kept.get(f.id);
      if (want) expect(Buffer.compare(Buffer.from(got), Buffer.from(want))).toBe(0);
      expect(new Bun.CryptoHasher("sha256").update(got).digest("hex")).toBe(f.sha256);
    }
    // Runs caught pending or running by the snapshot finish on the restored server.
    const unfinished = snapRuns.filter((r) => r.status !== "completed").map((r) => r.id);
    for (const id of unfinished) {
      for (let i = 0; i < 200 && (await runStatus(again.url, id)) !== "completed"; i++) await Bun.sleep(50);
      expect(await runStatus(again.url, id)).toBe("completed");
    }
    expect(await again.kill("SIGTERM")).toBe(0);
  });
});
