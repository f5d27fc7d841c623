// Issue 24's scale-out benchmark (run: bun test/bench/automation-scale.ts): automation-server against
// graphile-worker (npm) on one throwaway PostgreSQL server (test/support/postgres.ts, a fresh database
// per side), on this machine, in one run, with 1 and then 2 worker processes of SLOTS slots each.
// (1) Throughput: JOBS no-op jobs / 1-step runs (`transform.set`) submitted in batches of 100 while the
//     workers run, runs/s from the first submit to the moment none is left (the queue table read
//     directly, every 10 ms). graphile-worker: WorkerUtils.addJobs (one statement per batch of 100);
//     automation-server: POST /v1/runs on an API-only `serve --workers 0`, 100 in flight.
// (1b) The workers alone: JOBS queued while no worker runs, then the worker processes are spawned;
//     the rate over what was left once all of them printed their ready line, until none is left
//     (process start excluded: it is printed).
// (2) Submit→start latency: a sequential series of single jobs/runs whose own code calls a loopback
//     server of this script at its start (a graphile-worker task doing fetch(); a workflow whose first
//     step is `action.http`): time from just before the submit to the call's arrival, p50/p99, both
//     clocks this process's. Also, per side, the time the queue itself records as the start (the task's
//     own clock on entry; the run's timing.startedAt), which leaves the loopback call out. A run that
//     took an idle worker's offered slot (direct dispatch) is started by its insert: its startedAt is
//     its createdAt, taken before the insert, so that figure is about 0 for such runs.
// Aims (issue 24): automation-server ≥ 0.3× graphile-worker's jobs/s, submit→start p50 ≤ 2× its figure.
// BENCH_JOBS (5000), BENCH_LATENCY_N (200), BENCH_SLOTS (8) change the sizes; BENCH_PROCS (1,2) the worker
// process counts measured; BENCH_BIN runs another automation-server executable (an A/B against a build
// of an earlier commit).
import { mkdtempSync, rmSync } from "node:fs";
import { availableParallelism, loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { SQL } from "bun";
import { Logger, makeWorkerUtils, run, runMigrations } from "graphile-worker";
import { ensureBuilt, start, startServer, type Proc, type Server } from "../e2e/support";
import { freshPostgresDb } from "../support/postgres";

const DEMO_KEY = "eak_demo_0123456789abcdefghijklmnopqrstuv";
const JOBS = Number(process.env.BENCH_JOBS ?? 5000);
const LATENCY_N = Number(process.env.BENCH_LATENCY_N ?? 200);
const SLOTS = Number(process.env.BENCH_SLOTS ?? 8);
const BATCH = 100;
const WARMUP = 20;
const PROCESSES = (process.env.BENCH_PROCS ?? "1,2").split(",").map(Number);

/** Wall-clock milliseconds with a fraction: comparable across processes of this machine. */
const nowMs = () => performance.timeOrigin + performance.now();
const quiet = new Logger(() => (level, message) => {
  if (level === "error") console.error(`graphile-worker: ${message}`);
});

// A graphile-worker runner process (spawned by this script): `--graphile-runner DB_URL LOOPBACK_URL`.
if (process.argv[2] === "--graphile-runner") {
  const [connectionString, loopback] = process.argv.slice(3);
  const runner = await run({
    connectionString,
    concurrency: SLOTS,
    logger: quiet,
    taskList: {
      noop: async () => {},
      ping: async (payload) => {
        const at = nowMs();
        await fetch(`${loopback}/ping`, { method: "POST", body: JSON.stringify({ i: (payload as { i: number }).i, at }) });
      },
    },
  });
  console.log(`graphile-worker runner ready (${SLOTS} slots)`);
  await runner.promise;
  process.exit(0);
}

const pingWorkflow = `
name: bench-ping
inputs: [{name: i, type: integer, required: true}, {name: url, type: string, required: true}]
steps:
  - {name: ping, type: action.http, with: {url: "{{ input.url }}", method: POST, body: {i: "{{ input.i }}"}}}
`;
const oneStep = `
name: bench-one
inputs: [{name: n, type: integer, required: true}]
steps:
  - {name: a, type: transform.set, with: {fields: {n: "{{ input.n }}"}}}
`;

interface Figures {
  /** (1b) spawn → every worker process printed its ready line */
  readyMs: number;
  /** (1b) jobs/runs left when every worker process was ready */
  leftAtReady: number;
  /** (1b) ready → none left */
  drainMs: number;
  submittedMs: number;
  wallMs: number;
  /** submit → the job's loopback call arrives */
  arrival: number[];
  /** submit → the start the queue records (task entry / timing.startedAt) */
  recorded: number[];
}

const pct = (xs: number[], p: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))];
};
const ms = (x: number) => `${x.toFixed(1)} ms`;

/** The loopback server the jobs call: `arrived(i)` resolves with this process's time of job i's call. */
function loopback() {
  const waiting = new Map<number, (v: { arrivedAt: number; at?: number }) => void>();
  const server = Bun.serve({
    port: 0,
    hostname: "127.0.0.1",
    fetch: async (req) => {
      const arrivedAt = nowMs();
      const body = (await req.json()) as { i: number | string; at?: number };
      waiting.get(Number(body.i))?.({ arrivedAt, at: body.at });
      return Response.json({ ok: true });
    },
  });
  return {
    url: `http://127.0.0.1:${server.port}`,
    arrived(i: number): Promise<{ arrivedAt: number; at?: number }> {
      return new Promise((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`job ${i} did not call the loopback server within 30 s`)), 30_000);
        waiting.set(i, (v) => {
          clearTimeout(timer);
          waiting.delete(i);
          resolve(v);
        });
      });
    },
    stop: () => server.stop(true),
  };
}

/** Polls `count()` every 10 ms until it answers 0; the time it did. */
async function drained(count: () => Promise<number>): Promise<number> {
  for (;;) {
    if ((await count()) === 0) return performance.now();
    await Bun.sleep(10);
  }
}

/** Waits until a process prints `line` (its readiness line); throws with its output if it exits first. */
async function untilPrinted(p: Proc, line: RegExp, what: string): Promise<void> {
  const until = Date.now() + 30_000;
  while (!line.test(p.output())) {
    if (p.proc.exitCode !== null || Date.now() > until) {
      if (p.proc.exitCode === null) await p.kill("SIGKILL");
      throw new Error(`${what} did not start (exit ${p.proc.exitCode}):\n${p.output()}`);
    }
    await Bun.sleep(20);
  }
}

/** SIGTERM to each; says so when one ends otherwise than `ok` (graphile-worker re-raises the signal after its graceful shutdown: 143). */
async function stopAll(ps: Proc[], ok: number[] = [0]): Promise<void> {
  const codes = await Promise.all(ps.map((p) => p.kill("SIGTERM")));
  codes.forEach((code, k) => !ok.includes(code) && console.error(`worker process exited ${code}:\n${ps[k].output()}`));
}

/** One side of the comparison: how to submit, count what is left, start a worker process, and ping. */
interface Side {
  /** Submits jobs/runs `first` … `first + count - 1` (one batch). */
  submitBatch(first: number, count: number): Promise<void>;
  /** Jobs/runs not done yet (read from the queue table). */
  remaining(): Promise<number>;
  spawnWorker(): Proc;
  ready: RegExp;
  /** Exit codes of a worker process after SIGTERM that are fine. */
  okExits: number[];
  /** Submits ping job `i`; resolves once submitted, or for a run once it finished: the start the queue recorded (epoch ms), when it says. */
  ping(i: number): Promise<number | undefined>;
}

async function submitAll(side: Side): Promise<number> {
  const t0 = performance.now();
  for (let i = 0; i < JOBS; i += BATCH) await side.submitBatch(i, Math.min(BATCH, JOBS - i));
  return performance.now() - t0;
}

/** (1b), (1) and (2) on one side with `procs` worker processes. */
async function measure(side: Side, procs: number, ping: ReturnType<typeof loopback>): Promise<Figures> {
  const workers: Proc[] = [];
  try {
    // (1b) JOBS queued while no worker runs, then the worker processes start: from their spawn until none is left.
    await submitAll(side);
    const spawned = performance.now();
    for (let k = 0; k < procs; k++) workers.push(side.spawnWorker());
    await Promise.all(workers.map((p) => untilPrinted(p, side.ready, "worker process")));
    const readyMs = performance.now() - spawned;
    const leftAtReady = await side.remaining();
    const drainMs = (await drained(() => side.remaining())) - spawned - readyMs;
    // (1) JOBS submitted while the workers run.
    const t0 = performance.now();
    const submittedMs = await submitAll(side);
    const wallMs = (await drained(() => side.remaining())) - t0;
    // (2) sequential: submit → the job's call on the loopback server.
    const arrival: number[] = [];
    const recorded: number[] = [];
    for (let i = 0; i < WARMUP + LATENCY_N; i++) {
      const arrived = ping.arrived(i);
      const t = nowMs();
      const startedAt = await side.ping(i);
      const { arrivedAt, at } = await arrived;
      if (i < WARMUP) continue;
      arrival.push(arrivedAt - t);
      recorded.push((startedAt ?? at!) - t);
    }
    await drained(() => side.remaining());
    return { readyMs, leftAtReady, drainMs, submittedMs, wallMs, arrival, recorded };
  } finally {
    await stopAll(workers, side.okExits);
  }
}

async function graphileSide(url: string, ping: ReturnType<typeof loopback>): Promise<{ side: Side; close(): Promise<void> }> {
  const utils = await makeWorkerUtils({ connectionString: url, logger: quiet });
  const pg = new SQL({ url, max: 1 });
  const side: Side = {
    submitBatch: async (first, count) => {
      await utils.addJobs(Array.from({ length: count }, (_, k) => ({ identifier: "noop", payload: { n: first + k } })));
    },
    remaining: async () => (await pg`SELECT count(*)::int AS n FROM graphile_worker._private_jobs`)[0].n as number,
    spawnWorker: () => start([process.execPath, import.meta.path, "--graphile-runner", url, ping.url], { env: { BENCH_SLOTS: String(SLOTS) } }),
    ready: /runner ready/,
    okExits: [0, 143], // graphile-worker re-raises SIGTERM after its graceful shutdown
    ping: async (i) => {
      await utils.addJob("ping", { i });
      return undefined; // the task sends its own clock's start with the call
    },
  };
  return { side, close: async () => (await utils.release(), await pg.close()) };
}

function automationSide(bin: string, dataDir: string, url: string, api: Server, ping: ReturnType<typeof loopback>): { side: Side; close(): Promise<void> } {
  const headers = { authorization: `Bearer ${DEMO_KEY}`, "content-type": "application/json" };
  const post = (path: string, body: unknown) => fetch(`${api.url}${path}`, { method: "POST", headers, body: JSON.stringify(body) });
  const pg = new SQL({ url, max: 1 });
  const side: Side = {
    submitBatch: async (first, count) => {
      await Promise.all(
        Array.from({ length: count }, async (_, k) => {
          const r = await post("/v1/runs", { target: "workflows.bench-one", input: { n: first + k } });
          if (r.status !== 201 && r.status !== 202) throw new Error(`POST /v1/runs answered ${r.status}: ${await r.text()}`);
          await r.arrayBuffer();
        }),
      );
    },
    remaining: async () => (await pg`SELECT count(*)::int AS n FROM runs WHERE status IN ('pending', 'running')`)[0].n as number,
    spawnWorker: () =>
      start([bin, "worker", "--db", url, "--workers", String(SLOTS), "--data-dir", dataDir, "--http-allow-hosts", "127.0.0.1"], { env: { LOG_LEVEL: "warn", AUTOMATION_DATA_DIR: undefined } }),
    ready: /worker ready/,
    okExits: [0],
    // wait_for_completion keeps the series sequential; the run's timing.startedAt is the start its claim
    // (or, dispatched directly, its insert) recorded.
    ping: async (i) => {
      const r = await post("/v1/runs?wait_for_completion=30", { target: "workflows.bench-ping", input: { i, url: `${ping.url}/ping` } });
      const run = (await r.json()) as { execution?: { status: string }; timing: { startedAt: string } };
      if (run.execution?.status !== "completed") throw new Error(`ping run ended ${run.execution?.status}: ${JSON.stringify(run)}`);
      return Date.parse(run.timing.startedAt);
    },
  };
  return { side, close: () => pg.close() };
}

const built = process.env.BENCH_BIN || (await ensureBuilt("automation-server"));
const ping = loopback();
const dir = mkdtempSync(join(tmpdir(), "automation-scale-"));
const results: { procs: number; graphile: Figures; ours: Figures }[] = [];
let api: Server | undefined;
try {
  const gwUrl = await freshPostgresDb();
  await runMigrations({ connectionString: gwUrl, logger: quiet });
  const ourUrl = await freshPostgresDb();
  const dataDir = join(dir, "data");
  api = await startServer([built, "serve", "--workers", "0", "--db", ourUrl, "--demo", "--host", "127.0.0.1", "--data-dir", dataDir], {
    cwd: dir,
    env: { LOG_LEVEL: "warn", AUTOMATION_DATA_DIR: undefined },
  });
  for (const yaml of [oneStep, pingWorkflow]) {
    const r = await fetch(`${api.url}/v1/automations`, { method: "POST", headers: { authorization: `Bearer ${DEMO_KEY}`, "content-type": "application/json" }, body: JSON.stringify({ yaml }) });
    if (r.status !== 201) throw new Error(`deploy failed: ${r.status} ${await r.text()}`);
  }
  const gw = await graphileSide(gwUrl, ping);
  const ours = automationSide(built, dataDir, ourUrl, api, ping);
  try {
    for (const procs of PROCESSES) results.push({ procs, graphile: await measure(gw.side, procs, ping), ours: await measure(ours.side, procs, ping) });
    // Every run completed (the runs stay: a run is kept, a graphile-worker job is deleted when done).
    const pg = new SQL({ url: ourUrl, max: 1 });
    const [bad] = await pg`SELECT count(*)::int AS n FROM runs WHERE status <> 'completed'`;
    await pg.close();
    if (bad.n) throw new Error(`${bad.n} bench runs did not complete`);
  } finally {
    await gw.close();
    await ours.close();
  }
} finally {
  await api?.kill("SIGTERM");
  ping.stop();
  rmSync(dir, { recursive: true, force: true });
}

const rate = (f: Figures) => JOBS / (f.wallMs / 1000);
const drainRate = (f: Figures) => f.leftAtReady / (f.drainMs / 1000);
const [l1, l5, l15] = loadavg();
console.log(`automation-scale benchmark (${JOBS} jobs, ${LATENCY_N} sequential latency samples, ${SLOTS} slots per worker process, ${availableParallelism()} CPUs, load ${l1.toFixed(1)}/${l5.toFixed(1)}/${l15.toFixed(1)}, Bun ${Bun.version})`);
console.log(`graphile-worker ${((await Bun.file(join(import.meta.dir, "../../package.json")).json()) as { devDependencies: Record<string, string> }).devDependencies["graphile-worker"]} (no-op task) vs automation-server (1-step transform.set run), one PostgreSQL server, a database each`);
for (const { procs, graphile, ours } of results) {
  const label = `${procs} worker process${procs > 1 ? "es" : ""}`;
  console.log(`[${label}] (1b) ${JOBS} queued beforehand, then the worker processes start: from all ready (each printed its ready line) until none is left`);
  console.log(`    graphile-worker    ready ${ms(graphile.readyMs).padStart(9)} after the spawn, ${String(graphile.leftAtReady).padStart(5)} left, done after ${ms(graphile.drainMs).padStart(10)} -> ${drainRate(graphile).toFixed(0).padStart(5)} jobs/s`);
  console.log(`    automation-server  ready ${ms(ours.readyMs).padStart(9)} after the spawn, ${String(ours.leftAtReady).padStart(5)} left, done after ${ms(ours.drainMs).padStart(10)} -> ${drainRate(ours).toFixed(0).padStart(5)} runs/s`);
  console.log(`    ratio runs/s / jobs/s: ${(drainRate(ours) / drainRate(graphile)).toFixed(2)}x (the workers alone)`);
  console.log(`[${label}] (1) ${JOBS} submitted in batches of ${BATCH} while the workers run`);
  console.log(`    graphile-worker    all submitted after ${ms(graphile.submittedMs).padStart(10)}, all done after ${ms(graphile.wallMs).padStart(10)} -> ${rate(graphile).toFixed(0).padStart(5)} jobs/s`);
  console.log(`    automation-server  all submitted after ${ms(ours.submittedMs).padStart(10)}, all done after ${ms(ours.wallMs).padStart(10)} -> ${rate(ours).toFixed(0).padStart(5)} runs/s`);
  console.log(`    ratio runs/s / jobs/s: ${(rate(ours) / rate(graphile)).toFixed(2)}x (aim >= 0.3x)`);
  console.log(`[${label}] (2) submit -> start, ${LATENCY_N} sequential`);
  console.log(`    graphile-worker    loopback call p50 ${ms(pct(graphile.arrival, 50))}  p99 ${ms(pct(graphile.arrival, 99))};  task entry      p50 ${ms(pct(graphile.recorded, 50))}  p99 ${ms(pct(graphile.recorded, 99))}`);
  console.log(`    automation-server  loopback call p50 ${ms(pct(ours.arrival, 50))}  p99 ${ms(pct(ours.arrival, 99))};  run startedAt   p50 ${ms(pct(ours.recorded, 50))}  p99 ${ms(pct(ours.recorded, 99))}`);
  console.log(`    ratio (loopback call): p50 ${(pct(ours.arrival, 50) / pct(graphile.arrival, 50)).toFixed(2)}x (aim <= 2x)  p99 ${(pct(ours.arrival, 99) / pct(graphile.arrival, 99)).toFixed(2)}x`);
}
process.exit(0);
