// Scale-out (issue 24) on the compiled binary: two API instances (`serve --workers 0`) and two `worker`
// processes on one PostgreSQL, sharing one data dir (blobs, secret key). Side effects are counted on a
// loopback counter server that each run's journaled action.http step calls with the run's input n.
//
// What must hold:
// - 2,000 runs submitted across both APIs each run exactly once: 2,000 calls, 2,000 distinct n.
// - SIGKILL one worker under that load: the other takes its runs (session lock or lease expiry), every
//   run completes, none stays `running`, and no step whose completion was journaled runs again. The
//   boundary is at-least-once for the steps in flight on the killed worker: their call may have gone
//   out without its journal write committing, so they may repeat, at most once each, only in runs the
//   killed worker held (their events show `resumed`).
// - Human review decided on API A and on API B at once: one 200, one 409; the run resumes once and
//   its next step runs once.
// - `wait_for_completion` on API A returns as soon as a worker finishes the run (p50/p99 printed).
// - `worker --port 0` serves /health and /metrics only, and exits 0 on SIGTERM saying it stopped.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { SQL } from "bun";
import { copyFileSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { freshPostgresDb } from "../support/postgres";
import { ensureBuilt, metricSamples, start, startServer, type Proc, type Server } from "./support";

type Json = Record<string, any>; // biome-ignore lint: test assertions index freely into response bodies

const DEMO_KEY = "eak_demo_0123456789abcdefghijklmnopqrstuv";
const RUNS = 2_000;
const IN_FLIGHT = 50;
const WORKER_SLOTS = 8;
const LEASE_SECONDS = 5;

/** tag → n → arrival times of the counter calls. */
const hits = new Map<string, Map<number, number[]>>();
const counter = Bun.serve({
  port: 0,
  hostname: "127.0.0.1",
  async fetch(req) {
    const [, , tag, n] = new URL(req.url).pathname.split("/");
    const body = req.method === "POST" ? ((await req.json()) as { n: unknown }) : { n };
    if (Number(body.n) !== Number(n)) return Response.json({ error: `body n ${body.n} is not path n ${n}` }, { status: 400 });
    let byN = hits.get(tag);
    if (!byN) hits.set(tag, (byN = new Map()));
    byN.set(Number(n), [...(byN.get(Number(n)) ?? []), Date.now()]);
    return Response.json({ ok: true, n: Number(n) });
  },
});
const calls = (tag: string) => hits.get(tag) ?? new Map<number, number[]>();
const totalCalls = (tag: string) => [...calls(tag).values()].reduce((s, t) => s + t.length, 0);

/** A workflow whose one journaled step POSTs {n} to the counter under /hit/<tag>/<n>. */
const httpWorkflow = (name: string, tag: string) => `
name: ${name}
inputs: [{name: n, type: integer, required: true}]
steps:
  - {name: call, type: action.http, with: {url: "http://127.0.0.1:${counter.port}/hit/${tag}/{{ input.n }}", method: POST, body: {n: "{{ input.n }}"}}}
output: {n: "{{ input.n }}"}
`;

let dir = "";
let bin = "";
let dbUrl = "";
let dataDir = "";
let apiA: Server;
let apiB: Server;
let metered: Server[] = [];
/** The worker started after the SIGKILL (no --port). */
let spare: Proc;
const procs: Proc[] = [];

const api = (base: string, method: string, path: string, body?: unknown) =>
  fetch(`${base}${path}`, {
    method,
    headers: { authorization: `Bearer ${DEMO_KEY}`, ...(body === undefined ? {} : { "content-type": "application/json" }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
const getJson = async (base: string, path: string): Promise<Json> => {
  const r = await api(base, "GET", path);
  if (r.status !== 200) throw new Error(`GET ${path}: ${r.status} ${await r.text()}`);
  return (await r.json()) as Json;
};

/** One statement on the shared database (checks of what the processes wrote, e.g. right after a SIGKILL). */
async function sql<T = Json>(text: string, ...args: unknown[]): Promise<T[]> {
  const pg = new SQL({ url: dbUrl, max: 1 });
  try {
    return (await pg.unsafe(text, args as never[])) as T[];
  } finally {
    await pg.close();
  }
}

async function until<T>(what: string, probe: () => Promise<T | undefined> | T | undefined, timeoutMs = 60_000, everyMs = 50): Promise<T> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const v = await probe();
    if (v !== undefined) return v;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await Bun.sleep(everyMs);
  }
}

const serverArgs = () => ["--db", dbUrl, "--data-dir", dataDir, "--http-allow-hosts", "127.0.0.1"];

async function startApi(): Promise<Server> {
  const s = await startServer([bin, "serve", "--workers", "0", "--demo", "--host", "127.0.0.1", ...serverArgs()], { cwd: dir });
  procs.push(s);
  return s;
}

const workerArgs = () => [bin, "worker", "--workers", String(WORKER_SLOTS), "--lease-seconds", String(LEASE_SECONDS), ...serverArgs()];

/** A worker serving /health and /metrics on a port of its own (startServer appends --port 0). */
async function startMeteredWorker(): Promise<Server> {
  const w = await startServer([...workerArgs(), "--host", "127.0.0.1"], { cwd: dir });
  procs.push(w);
  return w;
}

/** A worker without --port: ready once its first line says so. */
async function startWorker(): Promise<Proc> {
  const w = start(workerArgs(), { cwd: dir });
  procs.push(w);
  await until(
    "the worker's ready line",
    () => {
      if (w.proc.exitCode !== null) throw new Error(`worker exited ${w.proc.exitCode}:\n${w.output()}`);
      return /automation-server worker ready \(\d+ slots\)/.test(w.output()) ? true : undefined;
    },
    30_000,
    20,
  );
  expect(w.output().split("\n")[0]).toBe(`automation-server worker ready (${WORKER_SLOTS} slots)`);
  return w;
}

/** The sum of the samples named `name` (with `labels`) in a worker's /metrics. */
async function metric(w: Server, name: string, labels: Record<string, string> = {}): Promise<number> {
  const text = await (await fetch(`${w.url}/metrics`)).text();
  const found = metricSamples(text).filter((s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v));
  return found.reduce((sum, s) => sum + s.value, 0);
}

/** Starts `count` runs of `target` with input n = 0..count-1, alternating API A and B, `IN_FLIGHT` at a time. */
async function submit(target: string, count: number): Promise<Map<number, string>> {
  const ids = new Map<number, string>();
  let next = 0;
  const lane = async () => {
    while (next < count) {
      const n = next++;
      const r = await api(n % 2 === 0 ? apiA.url : apiB.url, "POST", "/v1/runs", { target, input: { n } });
      if (r.status !== 201) throw new Error(`start of n=${n} answered ${r.status}: ${await r.text()}`);
      ids.set(n, ((await r.json()) as Json).id);
    }
  };
  await Promise.all(Array.from({ length: IN_FLIGHT }, lane));
  return ids;
}

const UNFINISHED = "pending,running,created,finalizing,waiting";

/** Waits until neither API lists an unfinished run of `source`. */
async function drained(source: string, timeoutMs = 120_000): Promise<void> {
  await until(
    `no unfinished ${source} run`,
    async () => {
      for (const base of [apiA.url, apiB.url]) {
        const page = await getJson(base, `/v1/runs?source=${source}&status=${UNFINISHED}&limit=1`);
        if (page.runs.length > 0) return undefined;
      }
      return true;
    },
    timeoutMs,
    100,
  );
}

/** Every run of `source` as listed by `base` (all pages): id → status. */
async function listAll(base: string, source: string): Promise<Map<string, string>> {
  const out = new Map<string, string>();
  let cursor: string | null = null;
  do {
    const page: Json = await getJson(base, `/v1/runs?source=${source}&limit=100${cursor ? `&cursor=${cursor}` : ""}`);
    for (const r of page.runs as Json[]) out.set(r.id, r.execution.status);
    cursor = page.nextCursor;
  } while (cursor);
  return out;
}

/** The warnings and errors the server processes logged (for failure reports). */
const warnings = () =>
  procs
    .flatMap((p) => p.output().split("\n"))
    .filter((l) => / (warn|error) /.test(l))
    .slice(0, 30)
    .join("\n");

const percentile = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)];

beforeAll(async () => {
  const built = await ensureBuilt("automation-server");
  dir = mkdtempSync(join(tmpdir(), "automation-scale-"));
  bin = join(dir, "automation-server");
  copyFileSync(built, bin);
  dataDir = join(dir, "data");
  dbUrl = await freshPostgresDb();
  // The first API migrates the database and seeds the demo; then the rest start together.
  apiA = await startApi();
  [apiB, ...metered] = await Promise.all([startApi(), startMeteredWorker(), startMeteredWorker()]);
}, 120_000);

afterAll(async () => {
  await Promise.all(procs.filter((p) => p.proc.exitCode === null && p.proc.signalCode === null).map((p) => p.kill("SIGKILL")));
  counter.stop(true);
  if (dir) rmSync(dir, { recursive: true, force: true });
});

describe("2 APIs (--workers 0) + 2 workers on one PostgreSQL", () => {
  test("2,000 runs submitted across both APIs: each runs exactly once, none lost", async () => {
    expect((await api(apiA.url, "POST", "/v1/automations", { yaml: httpWorkflow("scale", "scale") })).status).toBe(201);
    // The API instances execute nothing themselves: a run there waits for a worker.
    const t0 = performance.now();
    const ids = await submit("workflows.scale", RUNS);
    const submitted = performance.now();
    expect(new Set(ids.values()).size).toBe(RUNS);
    await drained("workflows.scale");
    const done = performance.now();

    const runs = await listAll(apiB.url, "workflows.scale");
    expect(runs.size).toBe(RUNS);
    expect(new Set(runs.keys())).toEqual(new Set(ids.values()));
    expect([...runs.values()].filter((s) => s !== "completed")).toEqual([]);
    // Exactly once: one call per n, every n. Nothing failed, so no run changed hands (no `resumed`).
    const resumed = await sql<{ n: string; events: string }>(
      "SELECT r.input ->> 'n' AS n, string_agg(e.type || '@' || e.timestamp, ' ' ORDER BY e.id) AS events FROM runs r JOIN run_events e ON e.run_id = r.id WHERE r.automation_slug = 'scale' AND r.id IN (SELECT run_id FROM run_events WHERE type = 'resumed') GROUP BY r.id, r.input ->> 'n'",
    );
    const twice = [...calls("scale")].filter(([, t]) => t.length > 1).map(([n, t]) => ({ n, calls: t.length }));
    if (resumed.length || twice.length) console.log(`scale: runs taken over without a failure: ${JSON.stringify(resumed)}\n${warnings()}`);
    expect(twice).toEqual([]);
    expect(resumed).toEqual([]);
    expect(totalCalls("scale")).toBe(RUNS);
    expect(calls("scale").size).toBe(RUNS);
    expect([...calls("scale").keys()].sort((a, b) => a - b)).toEqual(Array.from({ length: RUNS }, (_, i) => i));
    // The workers executed them (the APIs run none), both took a share, and each run started once.
    const started = await Promise.all(metered.map((w) => metric(w, "automation_runs_started_total")));
    const finished = await Promise.all(metered.map((w) => metric(w, "automation_runs_finished_total", { status: "completed" })));
    expect(started.every((n) => n > 0)).toBe(true);
    expect(started[0] + started[1]).toBe(RUNS);
    expect(finished[0] + finished[1]).toBe(RUNS);
    const sample = await getJson(apiA.url, `/v1/runs/${ids.get(1234)}`);
    expect(sample.output).toEqual({ n: 1234 });
    console.log(
      `scale: ${RUNS} runs submitted in ${Math.round(submitted - t0)} ms, all finished ${Math.round(done - t0)} ms after the first submit ` +
        `(${Math.round((RUNS * 1000) / (done - t0))} runs/s); runs started per worker: ${started.join(" + ")}`,
    );
  }, 240_000);

  test("SIGKILL one worker mid-load: every run completes on the other, none stuck, no journaled side effect repeated", async () => {
    expect((await api(apiB.url, "POST", "/v1/automations", { yaml: httpWorkflow("scalekill", "kill") })).status).toBe(201);
    const t0 = performance.now();
    const submitting = submit("workflows.scalekill", RUNS);
    await until("30% of the calls", () => (totalCalls("kill") >= RUNS * 0.3 ? true : undefined), 120_000, 5);
    const victim = metered[0];
    const victimId = /automation-server worker started .*worker=(wrk_\w+)/.exec(victim.output())?.[1];
    expect(victimId).toBeDefined();
    // What the worker holds when it dies, read while it is frozen (SIGSTOP): it claims nothing more, and
    // its database session (with its liveness lock) stays open, so no other worker can take its runs yet.
    // A read after the kill could come after the survivor's poll already released and took them over.
    // Frozen at a moment it holds no run (between claims: the queue briefly empty, or every run it held
    // just finished), the kill would test nothing: it goes on for 20 ms and is frozen again.
    const readFrozen = async () => {
      victim.proc.kill("SIGSTOP");
      await Bun.sleep(300); // statements it sent before the stop commit
      const running = new Map(
        (
          await sql<{ id: string; n: string; claimed_by: string | null }>(
            "SELECT r.id, r.input ->> 'n' AS n, r.claimed_by FROM runs r WHERE r.status = 'running' AND r.automation_slug = 'scalekill'",
          )
        ).map((r) => [r.id, { n: Number(r.n), claimedBy: r.claimed_by }]),
      );
      // The journal as the killed worker left it.
      const journaled = new Set(
        (
          await sql<{ n: string }>(
            "SELECT r.input ->> 'n' AS n FROM run_steps s JOIN runs r ON r.id = s.run_id WHERE s.path = 'call' AND s.status = 'completed' AND r.automation_slug = 'scalekill'",
          )
        ).map((r) => Number(r.n)),
      );
      return { running, journaled };
    };
    let frozen = await readFrozen();
    let freezes = 1;
    for (; freezes < 20 && ![...frozen.running.values()].some((r) => r.claimedBy === victimId); freezes++) {
      victim.proc.kill("SIGCONT");
      await Bun.sleep(20);
      frozen = await readFrozen();
    }
    const { running: runningAtKill, journaled: recorded } = frozen;
    victim.proc.kill("SIGKILL");
    await victim.proc.exited;
    const killedAt = Date.now();
    const callsAtKill = totalCalls("kill");
    // Detection through the dead process's PostgreSQL session: its runs are released (claimable) within
    // the safety-net poll, well before their leases would lapse.
    const released = until(
      "the killed worker's runs released",
      async () => ((await sql<{ n: number }>("SELECT COUNT(*)::int AS n FROM runs WHERE status = 'running' AND claimed_by = $1", victimId))[0].n === 0 ? Date.now() - killedAt : undefined),
      60_000,
      25,
    );

    expect(runningAtKill.size).toBeGreaterThan(0); // the kill landed mid-load

    const releasedAfter = await released;
    expect(releasedAfter).toBeLessThan(LEASE_SECONDS * 1000);
    const ids = await submitting;
    const submitted = performance.now();
    await drained("workflows.scalekill", 180_000);
    const done = performance.now();
    // The next tests run on two workers again (started before the checks, so a failure here does not
    // take the later tests' worker); this one without --port says it is ready on stdout.
    spare = await startWorker();

    // None lost, none stuck: every run completed.
    const runs = await listAll(apiA.url, "workflows.scalekill");
    expect(runs.size).toBe(RUNS);
    expect(new Set(runs.keys())).toEqual(new Set(ids.values()));
    expect([...runs.values()].filter((s) => s !== "completed")).toEqual([]);
    expect(await sql("SELECT id FROM runs WHERE status = 'running'")).toEqual([]);

    // The runs taken over from the killed worker: their events say `resumed`. Exactly the runs it held
    // when it died (claimed_by its id, or already released: null): at most twice its slots, the runs
    // executing and those whose finish was committing (a slot takes its next run meanwhile).
    const resumed = await sql<{ run_id: string; at: Date }>(
      "SELECT e.run_id, e.timestamp AS at FROM run_events e JOIN runs r ON r.id = e.run_id WHERE e.type = 'resumed' AND r.automation_slug = 'scalekill' ORDER BY e.timestamp",
    );
    const resumedRuns = new Set(resumed.map((e) => e.run_id));
    const held = [...runningAtKill].filter(([, r]) => r.claimedBy === victimId || r.claimedBy === null).map(([id]) => id);
    if (!held.every((id) => resumedRuns.has(id)) || resumedRuns.size !== held.length || held.length === 0) {
      console.log(`sigkill: resumed ${[...resumedRuns]}, held by the killed worker ${held}; victim ${victimId}; running at kill ${JSON.stringify([...runningAtKill])}\n${warnings()}`);
    }
    expect(resumed.length).toBe(resumedRuns.size); // each taken over once
    expect(resumedRuns.size).toBeGreaterThan(0);
    expect(resumedRuns.size).toBeLessThanOrEqual(2 * WORKER_SLOTS);
    expect(new Set(resumedRuns)).toEqual(new Set(held));
    const resumedN = new Set([...resumedRuns].map((id) => runningAtKill.get(id)!.n));

    // Side effects: every n called; a repeat only for a step whose result the killed worker had not
    // committed when it died (in flight, or done while its run's finish was still committing), once,
    // and never for a step whose completion was journaled.
    expect(calls("kill").size).toBe(RUNS);
    const repeated: number[] = [];
    for (const [n, times] of calls("kill")) {
      if (times.length === 1) continue;
      repeated.push(n);
      expect({ n, calls: times.length, journaledAtKill: recorded.has(n) }).toEqual({ n, calls: 2, journaledAtKill: false });
      expect(resumedN.has(n)).toBe(true);
    }
    for (const n of recorded) expect({ n, calls: calls("kill").get(n)!.length }).toEqual({ n, calls: 1 });
    expect(repeated.length).toBeLessThanOrEqual(2 * WORKER_SLOTS);
    expect(totalCalls("kill")).toBe(RUNS + repeated.length);

    const recovery = resumed.map((e) => new Date(e.at).getTime() - killedAt);
    console.log(
      `sigkill: killed after ${callsAtKill} calls (frozen ${freezes} time${freezes > 1 ? "s" : ""}) with ${runningAtKill.size} runs running (${resumedRuns.size} on the killed worker); ` +
        `released ${releasedAfter} ms after the kill, resumed ${recovery[0]}..${recovery[recovery.length - 1]} ms after it; ${repeated.length} side effects repeated (n=${repeated.join(",")}); ` +
        `submitted in ${Math.round(submitted - t0)} ms, all finished after ${Math.round(done - t0)} ms`,
    );
  }, 300_000);

  test("cancel on API B reaches a run executing on a worker: it stops at once (a pure wait) and its next step never runs", async () => {
    const waiter = `
name: waiter
inputs: [{name: n, type: integer, required: true}]
steps:
  - {name: pause, type: control.wait, duration: 60000}
  - {name: after, type: action.http, with: {url: "http://127.0.0.1:${counter.port}/hit/cancel/{{ input.n }}", method: POST, body: {n: "{{ input.n }}"}}}
`;
    expect((await api(apiA.url, "POST", "/v1/automations", { yaml: waiter })).status).toBe(201);
    const run = (await (await api(apiA.url, "POST", "/v1/runs", { target: "workflows.waiter", input: { n: 1 } })).json()) as Json;
    await until("the wait started on a worker", async () => {
      const steps = (await getJson(apiA.url, `/v1/runs/${run.id}/steps`)).steps as Json[];
      return steps.some((x) => x.name === "pause" && x.status === "running") ? true : undefined;
    });
    const t0 = performance.now();
    const answer = await api(apiB.url, "POST", `/v1/runs/${run.id}/cancel`);
    expect(answer.status).toBeLessThan(300);
    const done = await until("the run cancelled", async () => {
      const r = await getJson(apiA.url, `/v1/runs/${run.id}`);
      return r.execution.status === "cancelled" ? r : undefined;
    }, 10_000);
    const ms = performance.now() - t0;
    console.log(`cancel on API B of a run waiting on a worker: cancelled after ${ms.toFixed(0)} ms`);
    // Well inside the 60 s wait: the worker heard runs.cancel.
    expect(ms).toBeLessThan(5_000);
    expect(done.execution.status).toBe("cancelled");
    await Bun.sleep(200);
    expect(totalCalls("cancel")).toBe(0);
  }, 60_000);

  test("human review decided on API A and on API B at once: one wins, the other 409; the run resumes once", async () => {
    const review = `
name: reviewed
inputs: [{name: n, type: integer, required: true}]
steps:
  - name: review
    type: control.human_review
    with: {data: {n: "{{ input.n }}"}, selection: {mode: explicit}}
  - {name: after, type: action.http, with: {url: "http://127.0.0.1:${counter.port}/hit/review/{{ steps.review.output.n }}", method: POST, body: {n: "{{ steps.review.output.n }}"}}}
output: {n: "{{ steps.review.output.n }}"}
`;
    expect((await api(apiA.url, "POST", "/v1/automations", { yaml: review })).status).toBe(201);
    const TRIES = 5;
    await Promise.all(
      Array.from({ length: TRIES }, async (_, n) => {
        const run = (await (await api(apiA.url, "POST", "/v1/runs", { target: "workflows.reviewed", input: { n } })).json()) as Json;
        await until(`run ${n} waiting`, async () => ((await getJson(apiA.url, `/v1/runs/${run.id}`)).execution.status === "waiting" ? true : undefined), 30_000);
        const task = await until(`task of run ${n}`, async () => {
          const page = await getJson(apiA.url, "/v1/human-reviews?limit=100");
          return (page.tasks as Json[]).find((t) => t.executionId === run.id);
        });
        const answers = await Promise.all([apiA, apiB].map((s) => api(s.url, "POST", `/v1/human-reviews/${task.id}/approve`, { expectedVersion: task.version })));
        const statuses = answers.map((a) => a.status).sort();
        expect(statuses).toEqual([200, 409]);
        const loser = answers.find((a) => a.status === 409)!;
        expect(((await loser.json()) as Json).issues?.[0]?.code).toBeDefined();

        const done = await until(`run ${n} finished`, async () => {
          const r = await getJson(apiB.url, `/v1/runs/${run.id}`);
          return ["completed", "failed", "cancelled", "rejected"].includes(r.execution.status) ? r : undefined;
        });
        expect(done.execution.status).toBe("completed");
        expect(done.output).toEqual({ n });
        const events = (await getJson(apiB.url, `/v1/runs/${run.id}/events`)).events as Json[];
        const types = events.map((e) => e.type);
        expect({ n, resumed: types.filter((t) => t === "resumed").length, completed: types.filter((t) => t === "completed").length }).toEqual({ n, resumed: 1, completed: 1 });
        expect(events.filter((e) => e.type === "step_started").map((e) => e.message)).toEqual(["review", "after"]);
        expect(calls("review").get(n)).toHaveLength(1);
        // A later decision, on either instance, is refused too.
        const late = await api(apiB.url, "POST", `/v1/human-reviews/${task.id}/approve`, { expectedVersion: task.version + 1 });
        expect(late.status).toBe(409);
      }),
    );
    expect(totalCalls("review")).toBe(TRIES);
  }, 120_000);

  test("wait_for_completion on API A returns when a worker finishes the run: 200 sequential runs", async () => {
    expect((await api(apiA.url, "POST", "/v1/automations", { yaml: httpWorkflow("waited", "wait") })).status).toBe(201);
    const WAITS = 200;
    const ms: number[] = [];
    for (let n = 0; n < WAITS; n++) {
      const t = performance.now();
      const r = await api(apiA.url, "POST", "/v1/runs?wait_for_completion=30", { target: "workflows.waited", input: { n } });
      ms.push(performance.now() - t);
      expect(r.status).toBe(200);
      const body = (await r.json()) as Json;
      expect({ n, finished: body.finished, status: body.execution?.status, output: body.output }).toEqual({ n, finished: true, status: "completed", output: { n } });
    }
    expect(totalCalls("wait")).toBe(WAITS);
    const sorted = [...ms].sort((a, b) => a - b);
    const p50 = percentile(sorted, 50);
    const p99 = percentile(sorted, 99);
    // Idle workers offer a slot: a run started while nothing waits is inserted already claimed for one
    // (direct dispatch: started when created, no claim round trip). The rest went through the queue.
    const [{ direct }] = await sql<{ direct: number }>("SELECT count(*)::int AS direct FROM runs WHERE automation_slug = 'waited' AND started_at = created_at");
    console.log(`wait_for_completion via API A, executed by workers: p50 ${p50.toFixed(1)} ms, p99 ${p99.toFixed(1)} ms, max ${sorted[sorted.length - 1].toFixed(1)} ms (${WAITS} runs, ${direct} dispatched directly)`);
    expect(direct).toBeGreaterThan(WAITS / 2);
    // Woken by the worker's notification, not by a slow poll: well under a second.
    expect(p50).toBeLessThan(1_000);
  }, 120_000);

  test("SIGTERM on a worker mid-load: it exits 0, its runs finish (here or on the other worker), no side effect repeated", async () => {
    const DRAIN = 400;
    expect((await api(apiA.url, "POST", "/v1/automations", { yaml: httpWorkflow("drained", "drain") })).status).toBe(201);
    const submitting = submit("workflows.drained", DRAIN);
    await until("30% of the calls", () => (totalCalls("drain") >= DRAIN * 0.3 ? true : undefined), 120_000, 5);
    const t = performance.now();
    expect(await spare.kill("SIGTERM")).toBe(0);
    const stoppedIn = performance.now() - t;
    expect(spare.output()).toContain("stopped");
    await submitting;
    await drained("workflows.drained");
    const runs = await listAll(apiB.url, "workflows.drained");
    expect(runs.size).toBe(DRAIN);
    expect([...runs.values()].filter((s) => s !== "completed")).toEqual([]);
    // The steps in flight finished within the grace and were journaled: nothing ran twice.
    expect(calls("drain").size).toBe(DRAIN);
    expect([...calls("drain")].filter(([, t]) => t.length > 1).map(([n]) => n)).toEqual([]);
    const handedBack = /handed back unfinished runs.*runs=(\d+)/.exec(spare.output())?.[1] ?? "0";
    console.log(`sigterm: the worker stopped in ${Math.round(stoppedIn)} ms, handed back ${handedBack} runs`);
  }, 180_000);
});

test("worker --port 0: /health and /metrics only; SIGTERM exits 0 and says it stopped", async () => {
  const w = await startServer([bin, "worker", "--workers", "1", "--host", "127.0.0.1", ...serverArgs()], { cwd: dir });
  procs.push(w);
  expect(w.output().split("\n")[0]).toStartWith(`automation-server worker listening on ${w.url}`);
  const health = await fetch(`${w.url}/health`);
  expect(health.status).toBe(200);
  await health.body?.cancel();
  const metrics = await fetch(`${w.url}/metrics`);
  expect(metrics.status).toBe(200);
  expect(metrics.headers.get("content-type") ?? "").toContain("text/plain");
  const text = await metrics.text();
  expect(text).toContain("# TYPE ");
  expect(metricSamples(text).length).toBeGreaterThan(0);
  for (const path of ["/v1/runs", "/", "/v1/automations"]) {
    const r = await fetch(`${w.url}${path}`, { headers: { authorization: `Bearer ${DEMO_KEY}` } });
    expect({ path, status: r.status }).toEqual({ path, status: 404 });
    await r.body?.cancel();
  }
  expect(await w.kill("SIGTERM")).toBe(0);
  expect(w.output()).toContain("stopped");
}, 60_000);

test("direct dispatch: a stopped worker withdraws its offered slot; a run that went to a worker which then died resumes on another, once", async () => {
  expect((await api(apiA.url, "POST", "/v1/automations", { yaml: httpWorkflow("offered", "offer") })).status).toBe(201);
  const offers = () => sql<{ worker: string }>("SELECT worker FROM run_offers WHERE token IS NOT NULL");
  // The one worker left from the tests above is idle: it offers one slot.
  await until("the idle worker's offer", async () => ((await offers()).length === 1 ? true : undefined), 10_000);
  // A graceful stop withdraws it: no run can go to a worker that is gone.
  expect(await metered[1].kill("SIGTERM")).toBe(0);
  expect(await sql("SELECT worker FROM run_offers")).toEqual([]);
  // A new worker, frozen while its offer stands (alive for the database: its session holds its liveness lock).
  const x = await startWorker();
  const [{ worker }] = await until("the new worker's offer", async () => {
    const o = await offers();
    return o.length === 1 ? o : undefined;
  });
  x.proc.kill("SIGSTOP");
  const r = await api(apiA.url, "POST", "/v1/runs", { target: "workflows.offered", input: { n: 7 } });
  expect(r.status).toBe(201);
  const id = ((await r.json()) as Json).id as string;
  // The insert claimed the run for that worker at once.
  expect(await sql("SELECT status, claimed_by FROM runs WHERE id = $1", id)).toEqual([{ status: "running", claimed_by: worker }]);
  // Another worker starts, then the frozen one dies: within a poll the run is released to the other and completes, once.
  const y = await startWorker();
  x.proc.kill("SIGKILL");
  await until("the run completes", async () => ((await getJson(apiA.url, `/v1/runs/${id}`)).execution?.status === "completed" ? true : undefined), 30_000);
  expect([...calls("offer")].map(([n, t]) => [n, t.length])).toEqual([[7, 1]]);
  expect((await sql<{ type: string }>("SELECT type FROM run_events WHERE run_id = $1 ORDER BY id", id)).map((e) => e.type)).toEqual([
    "created", "queued", "started", "resumed", "step_started", "step_completed", "completed",
  ]);
  expect(await y.kill("SIGTERM")).toBe(0);
}, 120_000);
