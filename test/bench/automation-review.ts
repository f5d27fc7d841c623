// Benchmark of human-review pauses and review health on the compiled automation-server
// (run: bun test/bench/automation-review.ts). Every figure is a ratio to a reference measured in the
// same run on the same server:
// (1) idle CPU over 10 s with 1,000 runs waiting on human-review tasks vs with none waiting;
// (2) 100 quick runs (wait_for_completion) while 1,000 runs wait vs before any waited (other runs flow);
// (3) GET /automations/{id}/reviews/health over 10,000 seeded reviewed runs (p50 of 20) vs
//     GET /v1/runs?limit=100 (p50 of 20).
import { Database } from "bun:sqlite";
import { readFileSync } from "node:fs";
import { demoServer } from "../e2e/automation-demo";
import { seedRuns } from "../automation/reviews/seed";

const WAITING = Number(process.env.BENCH_WAITING ?? 1000);
const IDLE_S = 10;
const TICK = 100; // USER_HZ on Linux

const demo = await demoServer({ prefix: "bench-review-", workers: 2 });
const server = await demo.boot();
const api = (method: string, path: string, body?: unknown) => demo.api(method, path, body);
const pid = server.proc.pid;

/** CPU seconds (user + system) the server process has used so far. */
function cpu(): number {
  const fields = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1].split(" ");
  return (Number(fields[11]) + Number(fields[12])) / TICK;
}

async function idleCpu(): Promise<number> {
  const before = cpu();
  await Bun.sleep(IDLE_S * 1000);
  return cpu() - before;
}

async function quickRuns(n: number): Promise<number> {
  const t = performance.now();
  for (let i = 0; i < n; i += 10) {
    await Promise.all(Array.from({ length: 10 }, () => api("POST", "/v1/runs?wait_for_completion=30", { target: "workflows.quick", input: {} }).then((r) => r.json())));
  }
  return performance.now() - t;
}

async function p50(path: string, n = 20): Promise<number> {
  const xs: number[] = [];
  for (let i = 0; i < n; i++) {
    const t = performance.now();
    const r = await api("GET", path);
    await r.arrayBuffer();
    if (r.status !== 200) throw new Error(`${path} answered ${r.status}`);
    xs.push(performance.now() - t);
  }
  return xs.sort((a, b) => a - b)[Math.floor(n / 2)];
}

await api("POST", "/v1/automations", { yaml: "name: quick\nsteps:\n  - {name: a, type: transform.set, with: {fields: {ok: true}}}\n" });
await api("POST", "/v1/automations", { yaml: "name: gate\ninputs: [{name: n, type: integer, required: true}]\nsteps:\n  - name: check\n    type: control.human_review\n    with: {data: {n: \"{{ input.n }}\"}, selection: {mode: explicit}}\n" });
await quickRuns(20); // warm-up

const idleRef = await idleCpu();
const flowRef = await quickRuns(100);

for (let i = 0; i < WAITING; i += 50) {
  await Promise.all(Array.from({ length: 50 }, (_, j) => api("POST", "/v1/runs", { target: "workflows.gate", input: { n: i + j } })));
}
const db = new Database(demo.dbPath, { readonly: true });
const parkedIn = performance.now();
while (db.query<{ n: number }, []>("SELECT COUNT(*) AS n FROM runs WHERE status = 'waiting'").get()!.n < WAITING) await Bun.sleep(100);
db.close();
console.log(`${WAITING} runs parked on tasks (${((performance.now() - parkedIn) / 1000).toFixed(1)} s after the last was accepted)`);

const idleWaiting = await idleCpu();
const flowWaiting = await quickRuns(100);
console.log(`idle CPU over ${IDLE_S} s: ${idleWaiting.toFixed(2)} s with ${WAITING} waiting vs ${idleRef.toFixed(2)} s with none (difference ${(idleWaiting - idleRef).toFixed(2)} s)`);
console.log(`100 quick runs: ${flowWaiting.toFixed(0)} ms with ${WAITING} waiting vs ${flowRef.toFixed(0)} ms before (ratio ${(flowWaiting / flowRef).toFixed(2)})`);

// Health over 10,000 reviewed runs seeded into the server's database.
const auto = (await (await api("GET", "/v1/automations/workflows.quick")).json()) as { id: string };
const tenantId = (await (await api("GET", "/v1/auth/check")).json()) as { tenantId: string };
const rw = new Database(demo.dbPath);
rw.exec("PRAGMA busy_timeout = 5000");
await seedRuns({ sqlite: rw }, { tenantId: tenantId.tenantId, automationId: auto.id, count: 10_000, end: Date.now() - 1000, spacingMs: 250_000, seed: 1, prefix: "bench" });
rw.close();
const health = await p50(`/v1/automations/${auto.id}/reviews/health?bucket=day`);
const list = await p50("/v1/runs?limit=100");
console.log(`review health over 10,000 runs: p50 ${health.toFixed(1)} ms vs GET /v1/runs?limit=100 p50 ${list.toFixed(1)} ms (ratio ${(health / list).toFixed(2)})`);

await demo.close();
