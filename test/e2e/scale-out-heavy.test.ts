// Claims follow free capacity (issue 38 part 5) on the compiled binary: an API instance that also runs
// workers (`serve`, the default 32 slots) and a separate `worker` process on one PostgreSQL. Every run
// of the workflow below renders heavy Liquid templates, which go to the process's off-thread pool (one
// thread each here: AUTOMATION_THREADS=1, as on a 2-core machine).
//
// What must hold: twelve such runs submitted one after another to the API instance are shared by both
// processes (each executes at least 3), instead of all being taken by the API instance (it had free
// slots) and rendered one at a time on its one thread while the worker idles. The same twelve runs on
// the API instance alone give the one-process time; both times are printed, not asserted (2 cores).
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { SQL } from "bun";
import { copyFileSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { freshPostgresDb } from "../support/postgres";
import { ensureBuilt, startServer, type Server } from "./support";

type Json = Record<string, any>; // biome-ignore lint: test assertions index freely into response bodies

const DEMO_KEY = "eak_demo_0123456789abcdefghijklmnopqrstuv";
const RUNS = 12;
/** One thread per process's off-thread pool, whatever the machine. */
const env = { AUTOMATION_THREADS: "1" };

// STEPS steps, each a Liquid loop of a loop: a few tens of milliseconds of one core each on a warm
// thread (the main thread gives it 5 ms, then hands it over). Short renders, because the 2 s render
// limit is wall time and the threads run at a lower priority: on a machine loaded by other work a long
// one can pass it (or the thread deadline). A run that does is failed by its process all the same; such runs are counted and
// printed (they still show who executed them), any other failure fails the test.
const LOOP = 160;
const STEPS = 30;
const heavy = (i: number) => `"{% for i in (1..${LOOP}) %}{% for j in (1..${LOOP}) %}{% endfor %}{% endfor %}${i}-{{ input.n }}"`;
const workflow = `
name: heavy
inputs: [{name: n, type: integer, required: true}]
steps:
${Array.from({ length: STEPS }, (_, k) => k + 1).map((i) => `  - {name: s${i}, type: transform.set, with: {fields: {x: ${heavy(i)}}}}`).join("\n")}
output: {n: "{{ input.n }}", last: "{{ steps.s${STEPS}.output.x }}"}
`;

let dir = "";
let bin = "";
let dbUrl = "";
let dataDir = "";
let api: Server;
let worker: Server | undefined;

const call = (method: string, path: string, body?: unknown) =>
  fetch(`${api.url}${path}`, {
    method,
    headers: { authorization: `Bearer ${DEMO_KEY}`, ...(body === undefined ? {} : { "content-type": "application/json" }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });

async function sql<T = Json>(text: string, ...args: unknown[]): Promise<T[]> {
  const pg = new SQL({ url: dbUrl, max: 1 });
  try {
    return (await pg.unsafe(text, args as never[])) as T[];
  } finally {
    await pg.close();
  }
}

const serverArgs = () => ["--db", dbUrl, "--data-dir", dataDir, "--host", "127.0.0.1"];

/** Submits RUNS runs one after another (as a client loop does) and waits until all finished: their ids and the time it took. */
async function batch(from: number): Promise<{ ids: string[]; ms: number; overLimit: number }> {
  const t0 = performance.now();
  const ids: string[] = [];
  for (let n = from; n < from + RUNS; n++) {
    const r = await call("POST", "/v1/runs", { target: "workflows.heavy", input: { n } });
    if (r.status !== 201) throw new Error(`start of n=${n} answered ${r.status}: ${await r.text()}`);
    ids.push(((await r.json()) as Json).id);
  }
  const end = Date.now() + 120_000;
  for (;;) {
    const rows = await sql<{ status: string; n: string }>("SELECT status, count(*)::text AS n FROM runs WHERE id = ANY($1::text[]) GROUP BY status", ids);
    const done = rows.filter((r) => ["completed", "failed", "cancelled"].includes(r.status)).reduce((s, r) => s + Number(r.n), 0);
    if (done === RUNS) break;
    if (Date.now() > end) throw new Error(`runs not finished: ${JSON.stringify(rows)}`);
    await Bun.sleep(50);
  }
  const ms = performance.now() - t0;
  const failed = await sql<{ id: string; status: string; error: { message?: string } | null }>(
    "SELECT id, status, error FROM runs WHERE id = ANY($1::text[]) AND status <> 'completed'",
    ids,
  );
  expect(failed.filter((r) => !/template render limit exceeded|liquid.render did not finish within/.test(r.error?.message ?? ""))).toEqual([]);
  return { ids, ms, overLimit: failed.length };
}

/** How many of `ids` the process executed (its "run started" log lines). */
const startedIn = (s: Server, ids: string[]) => {
  const lines = s.output().split("\n").filter((l) => l.includes("run started"));
  return ids.filter((id) => lines.some((l) => l.includes(id))).length;
};

beforeAll(async () => {
  const built = await ensureBuilt("automation-server");
  dir = mkdtempSync(join(tmpdir(), "automation-heavy-"));
  bin = join(dir, "automation-server");
  copyFileSync(built, bin);
  dataDir = join(dir, "data");
  dbUrl = await freshPostgresDb();
  api = await startServer([bin, "serve", "--demo", ...serverArgs()], { cwd: dir, env });
}, 120_000);

afterAll(async () => {
  for (const p of [api, worker]) if (p && p.proc.exitCode === null && p.proc.signalCode === null) await p.kill("SIGKILL");
  if (dir) rmSync(dir, { recursive: true, force: true });
});

describe("an API instance with workers + a worker process, runs heavy on the off-thread pool", () => {
  test("twelve heavy runs are shared by both processes, not queued behind one busy thread", async () => {
    expect((await call("POST", "/v1/automations", { yaml: workflow })).status).toBe(201);
    // One process: the API instance executes all twelve.
    const alone = await batch(0);
    expect(startedIn(api, alone.ids)).toBe(RUNS);

    worker = await startServer([bin, "worker", ...serverArgs()], { cwd: dir, env });
    const both = await batch(100);
    const onApi = startedIn(api, both.ids);
    const onWorker = startedIn(worker, both.ids);
    console.log(
      `heavy runs: ${RUNS} on the API instance alone ${Math.round(alone.ms)} ms; with a worker process ${Math.round(both.ms)} ms ` +
        `(${(both.ms / alone.ms).toFixed(2)}×), runs executed: API ${onApi} + worker ${onWorker}; ` +
        `runs failed at the render limit (machine load): ${alone.overLimit} + ${both.overLimit}`,
    );
    expect(onApi + onWorker).toBe(RUNS);
    expect(onApi).toBeGreaterThanOrEqual(3);
    expect(onWorker).toBeGreaterThanOrEqual(3);
    const sample = (await (await call("GET", `/v1/runs/${both.ids[0]}`)).json()) as Json;
    if (sample.execution.status === "completed") expect(sample.output).toEqual({ n: 100, last: `${STEPS}-100` });
  }, 240_000);
});
