// Benchmark of the runs subsystem on the compiled automation-server (run: bun test/bench/automation-runs.ts).
// (1) 2,000 runs of a 5-step deterministic workflow submitted at once, twice on one server (the first
//     round on a fresh process, the second warm): wall time until all completed,
//     runs/s; reference: the same workflow executed 2,000 times by the engine alone, in-process, with
//     no queue and no persistence (what durability and HTTP cost on top).
// (2) POST /v1/runs?wait_for_completion=30 of a one-step workflow, p50/p99, against a GET /health
//     round trip measured in the same run on the same server.
// `--store`: instead, the runs store alone (no HTTP, no engine) on SQLite and on PostgreSQL (a throwaway
//     server, test/support/postgres.ts): RUNS runs inserted, claimed by 25 loops of 4, 5 steps journaled
//     each, finished: what the store costs without the server around it.
// The server part runs on SQLite, then on PostgreSQL (a throwaway server the script starts);
// BENCH_BACKEND=sqlite|postgres runs one. The server runs with its default --workers; BENCH_WORKERS=N sets it.
// BENCH_BIN=path runs another automation-server executable (an A/B against a build of an earlier commit).
import { copyFileSync, mkdtempSync, rmSync } from "node:fs";
import { availableParallelism, tmpdir } from "node:os";
import { join } from "node:path";
import { execute } from "../../src/automation/engine/execute";
import type { EngineServices, StepRecord } from "../../src/automation/engine/contract";
import { parseWorkflow } from "../../src/automation/workflow";
import type { Workflow } from "../../src/automation/engine/workflow-types";
import { systemClock } from "../../src/kernel/clock";
import { ensureBuilt, startServer } from "../e2e/support";
import { SQL } from "bun";
import { migrations } from "../../db/automation/index";
import { migrateAutomationPg } from "../../src/automation/db/pg-migrate";
import { PgRunStore } from "../../src/automation/db/pg/runs";
import { SqliteRunStore } from "../../src/automation/db/sqlite/runs";
import type { RunStore } from "../../src/automation/runs/store";
import { openSqlite } from "../../src/kernel/db";
import { freshPostgresDb } from "../support/postgres";
import { DEFAULT_WORKERS } from "../../src/automation/config";

const DEMO_KEY = "eak_demo_0123456789abcdefghijklmnopqrstuv";
const RUNS = Number(process.env.BENCH_RUNS ?? 2000);
const LATENCY_N = Number(process.env.BENCH_LATENCY_N ?? 400);
/** The server's --workers; unset: the server's default (what a user who sets nothing gets). */
const WORKERS = process.env.BENCH_WORKERS;

const fiveSteps = `
name: bench-five
inputs: [{name: n, type: integer, required: true}]
steps:
  - {name: a, type: transform.set, with: {fields: {n: "{{ input.n }}", label: "item {{ input.n }}"}}}
  - {name: b, type: transform.set, with: {fields: {double: "{{ steps.a.output.n | times: 2 }}"}}}
  - {name: c, type: transform.combine, with: {inputs: ["{{ steps.a.output }}", "{{ steps.b.output }}"]}}
  - {name: d, type: transform.remove, with: {input: "{{ steps.c.output }}", fields: [label]}}
  - {name: e, type: transform.split, with: {input: "x,y,{{ input.n }}", separator: ","}}
output: {n: "{{ steps.d.output.n }}", double: "{{ steps.d.output.double }}", parts: "{{ steps.e.output }}"}
`;
const oneStep = `
name: bench-one
inputs: [{name: n, type: integer, required: true}]
steps:
  - {name: a, type: transform.set, with: {fields: {n: "{{ input.n }}"}}}
`;

const pct = (xs: number[], p: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))];
};
const ms = (x: number) => `${x.toFixed(2)} ms`;

async function engineOnly(): Promise<number> {
  const parsed = parseWorkflow(fiveSteps);
  if (!parsed.ok) throw new Error("bench workflow does not parse");
  const services: EngineServices = {
    clock: systemClock,
    env: {},
    httpAllowHosts: [],
    readFile: async () => new Uint8Array(),
    writeFile: async () => ({ $file: "x", filename: "x", contentType: "text/plain", size: 0 }),
    invokeWorkflow: async () => null,
  };
  const t0 = performance.now();
  for (let n = 0; n < RUNS; n++) {
    const r = await execute({
      workflow: parsed.workflow as Workflow,
      input: { n },
      journal: { completed: new Map<string, StepRecord>(), stepStarted() {}, stepFinished() {} },
      services,
      signal: new AbortController().signal,
    });
    if (r.status !== "completed") throw new Error(`engine-only run failed: ${JSON.stringify(r.error)}`);
  }
  return performance.now() - t0;
}

/** Wall time of RUNS runs through the store alone: insert, claim, 5 journaled steps, finish. */
async function storeOnly(store: RunStore): Promise<{ insertMs: number; workMs: number }> {
  const now = () => new Date().toISOString();
  const t0 = performance.now();
  await Promise.all(
    Array.from({ length: RUNS }, (_, i) =>
      store.insert(
        { id: `exec_${String(i).padStart(6, "0")}`, tenantId: "t", type: "workflow", automationId: "a", definition: "x", status: "pending", input: "{}", sampleRank: 0.5, createdAt: now() },
        [{ type: "created", status: "created" }, { type: "queued", status: "pending" }],
      ),
    ),
  );
  const t1 = performance.now();
  const loop = async (w: number) => {
    for (let claims = await store.claimMany(4, `w${w}`, now(), Date.now(), 60_000); claims.length; claims = await store.claimMany(4, `w${w}`, now(), Date.now(), 60_000)) {
      await Promise.all(
        claims.map(async (c) => {
          await store.completedSteps(c.id);
          for (let k = 0; k < 5; k++) {
            const startedAt = now();
            store.stepStarted(c.id, { path: `s${k}`, name: `s${k}`, type: "t", attempt: 1, startedAt });
            store.stepFinished(c.id, { path: `s${k}`, name: `s${k}`, type: "t", status: "completed", output: { k }, attempt: 1, startedAt, completedAt: now() }).catch(() => {});
            await Promise.resolve();
          }
          if (!(await store.finish(c.id, now(), { status: "completed", output: { ok: true } }))) throw new Error(`run ${c.id} finished twice`);
        }),
      );
    }
  };
  await Promise.all(Array.from({ length: 25 }, (_, w) => loop(w)));
  return { insertMs: t1 - t0, workMs: performance.now() - t1 };
}

if (process.argv.includes("--store")) {
  const dbDir = mkdtempSync(join(tmpdir(), "automation-bench-store-"));
  const pg = new SQL({ url: await freshPostgresDb().then(async (url) => (await migrateAutomationPg(url), url)), max: 10 });
  try {
    console.log(`automation-runs store benchmark (${RUNS} runs x 5 steps, ${availableParallelism()} CPUs, Bun ${Bun.version})`);
    for (const [name, store] of [["SQLite", new SqliteRunStore(openSqlite(join(dbDir, "automation.db"), migrations))], ["PostgreSQL", new PgRunStore(pg)]] as const) {
      const r = await storeOnly(store);
      const rate = (ms: number) => (RUNS / (ms / 1000)).toFixed(0);
      console.log(`    ${name.padEnd(10)} insert ${ms(r.insertMs)}; claim + 5 steps + finish ${ms(r.workMs)} -> ${rate(r.workMs)} runs/s (${rate(r.insertMs + r.workMs)} runs/s with the inserts)`);
    }
  } finally {
    await pg.close();
    rmSync(dbDir, { recursive: true, force: true });
  }
  process.exit(0);
}

const built = process.env.BENCH_BIN || (await ensureBuilt("automation-server"));
const engineMs = await engineOnly();
const engineRate = RUNS / (engineMs / 1000);
console.log(`automation-runs benchmark (${WORKERS ? `--workers ${WORKERS}` : `default --workers (${DEFAULT_WORKERS})`}, ${availableParallelism()} CPUs, Bun ${Bun.version})`);
console.log(`reference: the engine alone, in-process, no queue/persistence: ${RUNS} runs x 5 steps in ${ms(engineMs)} -> ${engineRate.toFixed(0)} runs/s`);
const only = process.env.BENCH_BACKEND; // "sqlite" or "postgres"; default both, one after the other
for (const backend of ["sqlite", "postgres"] as const) {
  if (only && only !== backend) continue;
  const db = backend === "postgres" ? await freshPostgresDb() : undefined;
  await serverBench(backend, db);
}
process.exit(0);

/** (1) and (2) against the compiled server on one backend. */
async function serverBench(backend: string, db: string | undefined): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), "automation-bench-"));
  const bin = join(dir, "automation-server");
  copyFileSync(built, bin);
  const server = await startServer([bin, "--demo", "--host", "127.0.0.1", ...(WORKERS ? ["--workers", WORKERS] : []), "--data-dir", join(dir, "data"), ...(db ? ["--db", db] : [])], {
    cwd: dir,
    env: { LOG_LEVEL: "warn", AUTOMATION_DATA_DIR: undefined },
    sqlite: !db,
  }).catch((err: unknown) => {
    rmSync(dir, { recursive: true, force: true });
    throw err;
  });
  const base = server.url;
  const headers = { authorization: `Bearer ${DEMO_KEY}`, "content-type": "application/json" };
  const post = (path: string, body: unknown) => fetch(`${base}${path}`, { method: "POST", headers, body: JSON.stringify(body) });
  try {
    for (const yaml of [fiveSteps, oneStep]) {
      const r = await post("/v1/automations", { yaml });
      if (r.status !== 201) throw new Error(`deploy failed: ${r.status} ${await r.text()}`);
    }

    // (1) throughput: twice on the same server. The first round meets a fresh process (the JIT still
    // compiling, statements not yet prepared on the pool's connections; opening the connections
    // beforehand changed nothing); the second is the server as it runs for hours.
    const CONCURRENT = 100;
    const throughput = async (round: number) => {
      const t0 = performance.now();
      const ids: string[] = [];
      for (let i = 0; i < RUNS; i += CONCURRENT) {
        const batch = await Promise.all(
          Array.from({ length: Math.min(CONCURRENT, RUNS - i) }, (_, k) => post("/v1/runs", { target: "workflows.bench-five", input: { n: round * RUNS + i + k } }).then((r) => r.json() as Promise<{ id: string }>)),
        );
        ids.push(...batch.map((b) => b.id));
      }
      const submittedMs = performance.now() - t0;
      for (;;) {
        const r = (await (await fetch(`${base}/v1/runs?source=workflows.bench-five&status=pending,running&limit=1`, { headers })).json()) as { runs: unknown[] };
        if (r.runs.length === 0) break;
        await Bun.sleep(50);
      }
      const wallMs = performance.now() - t0;
      const failed = (await (await fetch(`${base}/v1/runs?source=workflows.bench-five&status=failed,cancelled&limit=1`, { headers })).json()) as { runs: unknown[] };
      if (failed.runs.length) throw new Error("some bench runs failed");
      return { submittedMs, wallMs, ids };
    };
    const cold = await throughput(0);
    const warm = await throughput(1);
    const sample = (await (await fetch(`${base}/v1/runs/${cold.ids[7]}`, { headers })).json()) as { output: unknown };

    // (2) latency
    const health: number[] = [];
    const waited: number[] = [];
    for (let i = 0; i < 30; i++) {
      await fetch(`${base}/health`).then((r) => r.arrayBuffer());
      await post("/v1/runs?wait_for_completion=30", { target: "workflows.bench-one", input: { n: i } }).then((r) => r.arrayBuffer());
    }
    for (let i = 0; i < LATENCY_N; i++) {
      let t = performance.now();
      await fetch(`${base}/health`).then((r) => r.arrayBuffer());
      health.push(performance.now() - t);
      t = performance.now();
      const r = await post("/v1/runs?wait_for_completion=30", { target: "workflows.bench-one", input: { n: i } });
      await r.arrayBuffer();
      if (r.status !== 200) throw new Error(`wait_for_completion answered ${r.status}`);
      waited.push(performance.now() - t);
    }

    console.log(`[${backend}] (1) ${RUNS} runs x 5 steps, submitted at once over HTTP (${CONCURRENT} in flight), twice on one server`);
    for (const [name, t] of [["first (fresh server)", cold], ["second (warm)", warm]] as const) {
      const rate = RUNS / (t.wallMs / 1000);
      console.log(`    ${name}: all submitted after ${ms(t.submittedMs)}, all completed after ${ms(t.wallMs)}  -> ${rate.toFixed(0)} runs/s, ${(rate * 5).toFixed(0)} steps/s (durable)`);
      console.log(`      ratio durable server / engine alone (wall time): ${(t.wallMs / engineMs).toFixed(2)}x`);
    }
    console.log(`    sample output: ${JSON.stringify(sample.output)}`);
    console.log(`[${backend}] (2) ${LATENCY_N} sequential requests each`);
    console.log(`    GET /health                          p50 ${ms(pct(health, 50))}  p99 ${ms(pct(health, 99))}`);
    console.log(`    POST /v1/runs?wait_for_completion=30 p50 ${ms(pct(waited, 50))}  p99 ${ms(pct(waited, 99))}`);
    console.log(`    ratio run+wait / health: p50 ${(pct(waited, 50) / pct(health, 50)).toFixed(1)}x  p99 ${(pct(waited, 99) / pct(health, 99)).toFixed(1)}x`);
  } finally {
    await server.kill("SIGTERM");
    rmSync(dir, { recursive: true, force: true });
  }
}
