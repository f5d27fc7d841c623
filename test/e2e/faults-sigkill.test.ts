// Fault: SIGKILL at random moments of a mixed load, several rounds on the same data, for each compiled
// server. Each round starts the binary on the persistent database / data dir, drives a mixed load,
// kills it 0.2-2 s in and starts it again. Checked after every kill and at the end:
// - order-server: balances + commission = opening money, no partial transfer, every order consistent,
//   tokens issued before a kill still work;
// - automation-server: every run that got a 2xx create answer exists and ends completed (interrupted
//   ones are recovered: the server logs "recovering interrupted runs"), no side-effecting step whose
//   completion was recorded ran again and each step's effect was applied once (the receiver keys it on
//   the idempotency id the workflow sends), every acknowledged upload is intact, and no blob on disk is
//   half-written (each file's bytes hash to its name; the temp dir is swept).
// The seed of the kill times and the load is printed; FAULTS_SEED=<seed> replays the same choices.
import { Database } from "bun:sqlite";
import { afterAll, beforeAll, expect, test } from "bun:test";
import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { DEMO_CLIENT, invariantProblems, remote, type Remote, sqliteQuery } from "../orders/remote";
import { prng, randomLoad, type Who } from "../orders/random-load";
import { DEMO_KEY, demoServer, type DemoServer } from "./automation-demo";
import { ensureBuilt, type Server, startServer } from "./support";

const seed = Number(process.env.FAULTS_SEED ?? Math.floor(Math.random() * 2 ** 31));
console.log(`sigkill faults: seed ${seed} (replay with FAULTS_SEED=${seed})`);
const ROUNDS = 5;

let dir = "";
const servers: Server[] = [];
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), "faults-sigkill-"));
});
afterAll(async () => {
  for (const s of servers) if (s.proc.exitCode === null) await s.kill("SIGKILL");
  rmSync(dir, { recursive: true, force: true });
});

/** Kills `s` after `ms`, stops `load` (whose requests now fail) and waits for both. */
async function killAfter(s: Server, ms: number, stop: { dead: boolean }, load: Promise<unknown>): Promise<number> {
  await Bun.sleep(ms);
  s.proc.kill("SIGKILL");
  await s.proc.exited;
  const at = Date.now();
  stop.dead = true;
  await load;
  return at;
}

test("order-server: SIGKILL at random moments of a mixed load, 5 rounds: money conserved, every order consistent", async () => {
  const rnd = prng(seed);
  const bin = await ensureBuilt("order-server");
  const db = join(dir, "orders.db");
  const env = { ORDER_OAUTH_CLIENTS: `${DEMO_CLIENT.id}:${DEMO_CLIENT.secret}`, ORDER_PROFILE: undefined, ORDER_DB: undefined, LOG_LEVEL: "warn" };
  const boot = async () => {
    const s = await startServer([bin, "--host", "127.0.0.1", "--db", db], { env });
    servers.push(s);
    return { s, api: remote(s.url) };
  };
  let { s, api } = await boot();
  const person = async (name: string, type: "Customer" | "Performer"): Promise<Who> => ({ id: (await api.register(name, type)).id, token: await api.token(name) });
  const customers = await Promise.all([0, 1, 2, 3, 4].map((i) => person(`k-c${i}`, "Customer")));
  const performers = await Promise.all([0, 1, 2, 3, 4].map((i) => person(`k-p${i}`, "Performer")));
  const kills: number[] = [];
  let registered = 0;
  let calls = 0;
  const accepted: number[] = [];

  for (let round = 0; round < ROUNDS; round++) {
    if (round > 0) ({ s, api } = await boot());
    const load = randomLoad(seed + round, customers, performers);
    const stop = { dead: false };
    const via = api;
    const driver = (async () => {
      try {
        while (!stop.dead) {
          // Marketplace calls, plus a registration (opening money), a login and a list now and then.
          const roll = rnd();
          const extra = roll < 0.1 ? via.register(`k-r${round}-${registered++}`, rnd() < 0.5 ? "Customer" : "Performer") : roll < 0.2 ? via.token("k-c0") : via.call("GET", "/orders?size=20", { token: customers[0].token });
          await Promise.all([load.batch(16, () => via.call), extra]);
          calls += 17;
        }
      } catch {
        // The server was killed under us.
      }
    })();
    // Whole lifecycles beside it, so money moves in every round; an accept answered 200 must be kept.
    const cycler = (async () => {
      try {
        for (let k = 0; !stop.dead; k++) {
          const [c, p] = [customers[k % 5], performers[k % 5]];
          const o = await via.call("POST", "/orders", { token: c.token, json: { description: "cycle", price: 1.5 } });
          if (o.status !== 201) continue;
          for (const [who, action] of [[p, "take"], [p, "pass"], [c, "accept"]] as const) {
            const r = await via.call("PATCH", `/orders/${o.body.id}/${action}`, { token: who.token });
            if (r.status !== 200) break;
            if (action === "accept") accepted.push(o.body.id);
          }
        }
      } catch {
        // Killed under us.
      }
    })();
    const at = 200 + Math.floor(rnd() * 1800);
    kills.push(at);
    await killAfter(s, at, stop, Promise.all([driver, cycler]));

    // Answers the server gave before it died: never a 5xx.
    expect({ round, errors: [...load.statuses.keys()].filter((status) => status >= 500) }).toEqual({ round, errors: [] });
    const conn = new Database(db);
    expect({ round, problems: await invariantProblems(sqliteQuery(conn)) }).toEqual({ round, problems: [] });
    expect(conn.query("SELECT id FROM orders WHERE status > 0 AND performer_id IS NULL").all()).toEqual([]);
    // Every accept the server answered 200 survived the kill as a completed order.
    const lost = accepted.filter((id) => (conn.query("SELECT status FROM orders WHERE id = ?").get(id) as { status: number } | null)?.status !== 3);
    expect({ round, lost }).toEqual({ round, lost: [] });
    conn.close();
  }

  ({ s, api } = await boot());
  for (const who of [...customers, ...performers]) expect((await api.call("GET", "/authenticated", { token: who.token })).status).toBe(200);
  // Writes work after the last restart: a new customer (with the opening money, whatever the load left the
  // others) publishes an order. (customers[1] could be out of money here: 409, seed 544274498.)
  const fresh = { id: (await api.register("k-after", "Customer")).id, token: await api.token("k-after") };
  const o = await api.call("POST", "/orders", { token: fresh.token, json: { description: "after the kills", price: 0.5 } });
  expect({ status: o.status, body: o.body }).toMatchObject({ status: 201 });
  expect(await s.kill("SIGTERM")).toBe(0);
  const conn = new Database(db);
  expect(await invariantProblems(sqliteQuery(conn))).toEqual([]);
  const counts = conn.query("SELECT (SELECT COUNT(*) FROM orders) AS orders, (SELECT COUNT(*) FROM orders WHERE status = 3) AS completed, (SELECT COUNT(*) FROM users) AS users").get() as { orders: number; completed: number; users: number };
  conn.close();
  console.log(`order-server sigkill: kills at ${kills.join(", ")} ms; ~${calls} calls; ${counts.orders} orders (${counts.completed} completed, ${accepted.length} accepts acknowledged), ${counts.users} users; invariants held after every kill`);
  expect(counts.completed).toBeGreaterThan(0);
}, 90_000);

/** (n/step) → calls: arrival time and the idempotency id they carried. */
const calls = new Map<string, { at: number; key: string | null }[]>();
const counter = Bun.serve({
  port: 0,
  hostname: "127.0.0.1",
  async fetch(req) {
    const [, , n, step] = new URL(req.url).pathname.split("/");
    const k = `${n}/${step}`;
    calls.set(k, [...(calls.get(k) ?? []), { at: Date.now(), key: req.headers.get("idempotency-key") }]);
    await Bun.sleep(5);
    return Response.json({ ok: true });
  },
});
afterAll(() => counter.stop(true));

const STEPS = ["reserve", "charge"];
const workflow = `
name: sigkill-mix
inputs: [{name: n, type: integer, required: true}]
steps:
  - {name: reserve, type: action.http, with: {url: "http://127.0.0.1:${counter.port}/hit/{{ input.n }}/reserve", method: POST, headers: {idempotency-key: "{{ input.n }}-reserve"}}}
  - {name: pause, type: control.wait, duration: 50}
  - {name: sheet, type: transform.json-to-xlsx, with: {rows: [{n: "{{ input.n }}"}], filename: receipt.xlsx}}
  - {name: charge, type: action.http, with: {url: "http://127.0.0.1:${counter.port}/hit/{{ input.n }}/charge", method: POST, headers: {idempotency-key: "{{ input.n }}-charge"}}}
output: {n: "{{ input.n }}"}
`;

test("automation-server: SIGKILL at random moments of a mixed load, 5 rounds: no acknowledged run or file lost, no step effect applied twice, no half-written blob", async () => {
  const rnd = prng(seed ^ 0x5bd1e995);
  const demo: DemoServer = await demoServer({ prefix: "faults-sigkill-auto-", workers: 4, httpAllowHosts: `127.0.0.1:${counter.port}`, env: { LOG_LEVEL: "info" } });
  try {
    const api = (method: string, path: string, body?: unknown) => demo.api(method, path, body);
    let s = await demo.boot();
    servers.push(s);
    expect((await api("POST", "/v1/automations", { yaml: workflow })).status).toBe(201);
    const acked = new Map<number, string>();
    const files = new Map<string, string>();
    /** (n/step) → when a kill first found its completion recorded. */
    const recordedAt = new Map<string, number>();
    const kills: number[] = [];
    let next = 0;
    let recoveries = 0;
    /** Answers of the load other than the expected ones (the loops cannot assert: a kill ends them by throwing). */
    const failures: string[] = [];

    for (let round = 0; round < ROUNDS; round++) {
      if (round > 0) {
        s = await demo.boot();
        servers.push(s);
      }
      const stop = { dead: false };
      const base = demo.base;
      const loop = async (body: () => Promise<void>) => {
        try {
          while (!stop.dead) await body();
        } catch {
          // Killed under us.
        }
      };
      const load = Promise.all([
        loop(async () => {
          const n = next++;
          const r = await api("POST", "/v1/runs", { target: "workflows.sigkill-mix", input: { n } });
          if (r.status >= 500) failures.push(`POST /v1/runs ${r.status}`);
          if (r.status === 201) acked.set(n, ((await r.json()) as { id: string }).id);
          await Bun.sleep(30);
        }),
        loop(async () => {
          const bytes = crypto.getRandomValues(new Uint8Array(10_000 + Math.floor(rnd() * 90_000)));
          const form = new FormData();
          form.set("file", new File([bytes], "load.bin"));
          const r = await fetch(`${base}/v1/files`, { method: "POST", headers: { authorization: `Bearer ${DEMO_KEY}` }, body: form });
          if (r.status >= 500) failures.push(`POST /v1/files ${r.status}`);
          if (r.status === 200) files.set(((await r.json()) as { id: string }).id, new Bun.CryptoHasher("sha256").update(bytes).digest("hex"));
        }),
        loop(async () => {
          const list = await api("GET", "/v1/runs?limit=20");
          await list.arrayBuffer();
          if (list.status !== 200) failures.push(`GET /v1/runs ${list.status}`);
          const health = await fetch(`${base}/health`);
          if (health.status !== 200) failures.push(`GET /health ${health.status}`);
        }),
      ]);
      const at = 200 + Math.floor(rnd() * 1800);
      kills.push(at);
      const killedAt = await killAfter(s, at, stop, load);

      // What the killed process left: steps whose completion is recorded, runs it was executing.
      const db = new Database(demo.dbPath, { readonly: true });
      for (const row of db.query<{ input: string; path: string }, []>("SELECT r.input, s.path FROM run_steps s JOIN runs r ON r.id = s.run_id WHERE s.status = 'completed'").all()) {
        const k = `${(JSON.parse(row.input) as { n: number }).n}/${row.path}`;
        if (!recordedAt.has(k)) recordedAt.set(k, killedAt);
      }
      const running = db.query<{ n: number }, []>("SELECT COUNT(*) AS n FROM runs WHERE status = 'running'").get()!.n;
      db.close();
      if (running > 0) recoveries++;
      // The next start must say it recovers them (checked once it has started).
      if (running > 0 && round < ROUNDS - 1) {
        s = await demo.boot();
        servers.push(s);
        await waitFor(() => s.output().includes("recovering interrupted runs"), 10_000);
        s.proc.kill("SIGKILL");
        await s.proc.exited;
      }
    }

    // Last start: everything acknowledged drains to completion.
    s = await demo.boot();
    servers.push(s);
    const pending = async () => ((await (await api("GET", "/v1/runs?source=workflows.sigkill-mix&status=pending,running,waiting,created,finalizing&limit=1")).json()) as { runs: unknown[] }).runs.length;
    const until = Date.now() + 45_000;
    while ((await pending()) > 0 && Date.now() < until) await Bun.sleep(200);
    expect(await pending()).toBe(0);

    let repeatedRaw = 0;
    for (const [n, id] of acked) {
      const run = (await (await api("GET", `/v1/runs/${id}`)).json()) as { execution: { status: string }; output: unknown };
      expect({ n, status: run.execution.status }).toEqual({ n, status: "completed" });
      expect(run.output).toEqual({ n });
      const events = ((await (await api("GET", `/v1/runs/${id}/events`)).json()) as { events: { type: string }[] }).events;
      expect(events.filter((e) => ["completed", "failed", "cancelled"].includes(e.type))).toHaveLength(1);
      const artifacts = ((await (await api("GET", `/v1/runs/${id}/artifacts`)).json()) as { artifacts: { role: string; name: string }[] }).artifacts;
      expect(artifacts.filter((a) => a.role === "output").map((a) => a.name)).toEqual(["receipt.xlsx"]);
      for (const step of STEPS) {
        const k = `${n}/${step}`;
        const got = calls.get(k) ?? [];
        // Every call of a step carries the same idempotency id, so the receiver applies it once.
        expect(new Set(got.map((c) => c.key))).toEqual(new Set([`${n}-${step}`]));
        // None after its completion was recorded.
        const recorded = recordedAt.get(k);
        if (recorded !== undefined) expect({ k, late: got.filter((c) => c.at > recorded).length }).toEqual({ k, late: 0 });
        // At-least-once only across a kill: at most one extra delivery per kill.
        expect(got.length).toBeLessThanOrEqual(1 + ROUNDS);
        if (got.length > 1) repeatedRaw++;
      }
    }
    for (const [id, sha] of files) {
      const r = await api("GET", `/v1/files/${id}/content`);
      expect(r.status).toBe(200);
      expect(new Bun.CryptoHasher("sha256").update(new Uint8Array(await r.arrayBuffer())).digest("hex")).toBe(sha);
    }
    // No half-written blob: the temp dir was swept at start, and every stored blob hashes to its name.
    const blobs = join(demo.dir, "data", "blobs");
    expect(readdirSync(join(blobs, "tmp"))).toEqual([]);
    let checked = 0;
    for (const a of readdirSync(blobs)) {
      if (a === "tmp") continue;
      for (const b of readdirSync(join(blobs, a))) {
        for (const name of readdirSync(join(blobs, a, b))) {
          expect(new Bun.CryptoHasher("sha256").update(readFileSync(join(blobs, a, b, name))).digest("hex")).toBe(name);
          checked++;
        }
      }
    }
    expect(failures).toEqual([]);
    expect(acked.size).toBeGreaterThan(0);
    expect(files.size).toBeGreaterThan(0);
    expect(recoveries).toBeGreaterThan(0);
    console.log(
      `automation-server sigkill: kills at ${kills.join(", ")} ms; ${acked.size} runs acknowledged, all completed; ${files.size} uploads intact; ` +
        `${checked} blobs hash-checked; ${recoveries} rounds killed with runs in flight (recovered); ${repeatedRaw} step deliveries repeated across a kill (same idempotency id, applied once)`,
    );
  } finally {
    await demo.close();
  }
}, 110_000);

async function waitFor(cond: () => boolean, ms: number): Promise<void> {
  const until = Date.now() + ms;
  while (!cond()) {
    if (Date.now() > until) throw new Error("condition not met in time");
    await Bun.sleep(20);
  }
}
