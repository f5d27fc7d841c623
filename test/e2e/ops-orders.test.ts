// Operating the compiled order-server (issue 27): /metrics scraped during a load counts exactly the
// requests sent, by route template; the JSON log has one parseable line per request with its request
// id; a backup taken while customers and performers keep writing restores into a database that holds
// every order and ledger row of the snapshot and passes the money conservation checks.
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { Database } from "bun:sqlite";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { DEMO_CLIENT, invariantProblems, type Remote, remote, sqliteQuery } from "../orders/remote";
import { freshPostgresDb } from "../support/postgres";
import { ensureBuilt, type Server, startServer, metricSamples as samples } from "./support";

setDefaultTimeout(120_000);

let bin = "";
let dir = "";
const servers: Server[] = [];
const env = { ORDER_OAUTH_CLIENTS: `${DEMO_CLIENT.id}:${DEMO_CLIENT.secret}`, ORDER_PROFILE: undefined, ORDER_DB: undefined, LOG_FORMAT: undefined, METRICS: undefined, METRICS_PORT: undefined, LOG_LEVEL: undefined };

beforeAll(async () => {
  bin = await ensureBuilt("order-server");
  dir = mkdtempSync(join(tmpdir(), "order-ops-"));
});
afterAll(async () => {
  for (const s of servers) if (s.proc.exitCode === null) await s.kill("SIGKILL");
  rmSync(dir, { recursive: true, force: true });
});

async function boot(db: string, args: string[] = []): Promise<{ server: Server; api: Remote }> {
  const server = await startServer([bin, "--host", "127.0.0.1", "--db", db, ...args], { env });
  servers.push(server);
  return { server, api: remote(server.url) };
}

async function run(args: string[]): Promise<{ code: number; out: string }> {
  const p = Bun.spawn([bin, ...args], { stdout: "pipe", stderr: "pipe", env: { ...process.env, ...env } });
  const [out, err, code] = await Promise.all([new Response(p.stdout).text(), new Response(p.stderr).text(), p.exited]);
  return { code, out: out + err };
}

/** One customer/performer pair running create → take → pass → accept until told to stop; returns the cycles done. */
async function cycles(api: Remote, c: string, p: string, stop: { now: boolean }): Promise<number> {
  let done = 0;
  while (!stop.now) {
    const price = (100 + Math.floor(Math.random() * 400)) / 100;
    const o = await api.call("POST", "/orders", { token: c, json: { description: `load ${done}`, price } });
    if (o.status !== 201) throw new Error(`create: ${o.status} ${JSON.stringify(o.body)}`);
    for (const [step, token] of [["take", p], ["pass", p], ["accept", c]] as const) {
      const r = await api.call("PATCH", `/orders/${o.body.id}/${step}`, { token });
      if (r.status !== 200) throw new Error(`${step}: ${r.status} ${JSON.stringify(r.body)}`);
    }
    done++;
  }
  return done;
}

describe("order-server operations", () => {
  test("/metrics during a load: every listed series, request counts equal to the requests sent; JSON log lines", async () => {
    const { server, api } = await boot(join(dir, "metrics.db"), ["--metrics-port", "0", "--log-format", "json"]);
    const url = /metrics: +(http:\/\/\S+)/.exec(server.output())?.[1];
    expect(url).toBeDefined();
    // Not on the API port: --metrics-port serves them alone.
    const sent = new Map<string, number>();
    const count = (key: string) => sent.set(key, (sent.get(key) ?? 0) + 1);
    expect((await fetch(`${server.url}/metrics`)).status).toBe(404);
    count("GET <unmatched> 404");
    const pairs: { c: string; p: string }[] = [];
    for (let i = 0; i < 4; i++) {
      await api.register(`m-c${i}`, "Customer");
      await api.register(`m-p${i}`, "Performer");
      count("POST /users 201");
      count("POST /users 201");
      pairs.push({ c: await api.token(`m-c${i}`), p: await api.token(`m-p${i}`) });
      count("POST /oauth/token 200");
      count("POST /oauth/token 200");
    }
    // A failed login and a few unauthenticated and unknown paths (which must not become labels).
    await expect(api.token("m-c0", "wrong")).rejects.toThrow();
    count("POST /oauth/token 400");
    for (let i = 0; i < 5; i++) {
      expect((await api.call("GET", `/orders/${1000 + i}`)).status).toBe(401);
      count("GET /orders/:id 401");
      expect((await api.call("GET", `/no/such/path/${i}`)).status).toBe(404);
      count("GET <unmatched> 404");
    }
    const stop = { now: false };
    const load = pairs.map((x) => cycles(api, x.c, x.p, stop));
    // Scrapes while the load runs: the endpoint answers under load.
    const during: string[] = [];
    for (let i = 0; i < 5; i++) {
      const r = await fetch(url!);
      expect(r.status).toBe(200);
      expect(r.headers.get("content-type")).toContain("text/plain");
      during.push(await r.text());
      await Bun.sleep(100);
    }
    stop.now = true;
    const done = (await Promise.all(load)).reduce((a, b) => a + b, 0);
    expect(done).toBeGreaterThan(0);
    for (let i = 0; i < done; i++) {
      count("POST /orders 201");
      count("PATCH /orders/:id/take 200");
      count("PATCH /orders/:id/pass 200");
      count("PATCH /orders/:id/accept 200");
    }
    for (let i = 0; i < 7; i++) {
      expect((await fetch(`${server.url}/health`, { headers: { "x-request-id": `probe-${i}` } })).headers.get("x-request-id")).toBe(`probe-${i}`);
      count("GET /health 200");
    }

    const text = await (await fetch(url!)).text();
    const all = samples(text);
    const counted = new Map<string, number>();
    for (const s of all.filter((s) => s.name === "http_requests_total")) counted.set(`${s.labels.method} ${s.labels.route} ${s.labels.status}`, s.value);
    expect(Object.fromEntries(counted)).toEqual(Object.fromEntries(sent));
    // The histogram counted the same requests.
    const histo = all.filter((s) => s.name === "http_request_duration_seconds_count").reduce((a, s) => a + s.value, 0);
    expect(histo).toBe([...sent.values()].reduce((a, b) => a + b, 0));
    // No id ever became a label value.
    expect(text).not.toMatch(/route="[^"]*\/\d+/);
    for (const name of [
      "process_resident_memory_bytes",
      "process_open_fds",
      "nodejs_eventloop_lag_seconds",
      "nodejs_heap_size_used_bytes",
      "db_query_duration_seconds_bucket",
      "db_operations_in_flight",
      "http_request_duration_seconds_bucket",
    ]) {
      expect(all.some((s) => s.name === name)).toBe(true);
    }
    const value = (name: string, labels: Record<string, string>) =>
      all.find((s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v))?.value;
    expect(value("orders_logins_total", { outcome: "success" })).toBe(8);
    expect(value("orders_logins_total", { outcome: "bad_credentials" })).toBe(1);
    expect(value("orders_transitions_total", { to: "published" })).toBe(done);
    expect(value("orders_transitions_total", { to: "completed" })).toBe(done);
    expect(value("db_query_duration_seconds_count", { op: "orders.settle" })).toBe(done);
    expect(during.every((t) => t.includes("http_requests_total"))).toBe(true);

    expect(await server.kill("SIGTERM")).toBe(0);
    // Every request left one JSON line with its fields; authenticated ones name the user.
    const lines = server.output().split("\n").filter((l) => l.startsWith("{")).map((l) => JSON.parse(l) as Record<string, unknown>);
    const requests = lines.filter((l) => l.msg === "request");
    expect(requests).toHaveLength([...sent.values()].reduce((a, b) => a + b, 0));
    for (const r of requests) {
      expect(typeof r.time).toBe("string");
      expect(r.level).toBe("info");
      expect(typeof r.method).toBe("string");
      expect(typeof r.route).toBe("string");
      expect(typeof r.status).toBe("number");
      expect(typeof r.ms).toBe("number");
      expect(r.requestId).toMatch(/^[\w.:-]+$/);
    }
    expect(requests.filter((r) => r.route === "/orders/:id/accept").every((r) => typeof r.user === "string")).toBe(true);
    expect(requests.filter((r) => String(r.requestId).startsWith("probe-"))).toHaveLength(7);
  });

  test("metrics are off unless asked for; a malformed request id is replaced, a text log is the default", async () => {
    const { server } = await boot(join(dir, "plain.db"));
    expect((await fetch(`${server.url}/metrics`)).status).toBe(404);
    const r = await fetch(`${server.url}/health`, { headers: { "x-request-id": "bad id with spaces" } });
    expect(r.headers.get("x-request-id")).toMatch(/^req_/);
    expect(await server.kill("SIGTERM")).toBe(0);
    expect(server.output()).toMatch(/ info  request method=GET route=\/health status=200 ms=[\d.]+ requestId=req_/);
  });

  test("on PostgreSQL: the same series, store latencies and the pool size; backup points at pg_dump", async () => {
    const url = await freshPostgresDb();
    const { server, api } = await boot(url, ["--metrics"]);
    await api.register("pg-c", "Customer");
    const token = await api.token("pg-c");
    expect((await api.call("GET", "/authenticated", { token })).status).toBe(200);
    const all = samples(await (await fetch(`${server.url}/metrics`)).text());
    const value = (name: string, labels: Record<string, string> = {}) =>
      all.find((s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v))?.value;
    expect(value("db_pool_max_connections")).toBe(10);
    expect(value("db_operations_in_flight")).toBe(0);
    expect(value("db_query_duration_seconds_count", { op: "users.findByKey" })).toBeGreaterThanOrEqual(1);
    expect(value("http_requests_total", { method: "POST", route: "/users", status: "201" })).toBe(1);
    expect(value("orders_logins_total", { outcome: "success" })).toBe(1);
    expect(await server.kill("SIGTERM")).toBe(0);
    const refused = await run(["backup", "--db", url, "--to", join(dir, "pg.db")]);
    expect(refused.code).toBe(1);
    expect(refused.out).toContain("pg_dump");
  });

  test("backup during a write load, restore: every order and ledger row back, money conserved", async () => {
    const db = join(dir, "live.db");
    const { server, api } = await boot(db, ["--metrics"]);
    const pairs: { c: string; p: string }[] = [];
    for (let i = 0; i < 6; i++) {
      await api.register(`b-c${i}`, "Customer");
      await api.register(`b-p${i}`, "Performer");
      pairs.push({ c: await api.token(`b-c${i}`), p: await api.token(`b-p${i}`) });
    }
    const stop = { now: false };
    const load = pairs.map((x) => cycles(api, x.c, x.p, stop));
    await Bun.sleep(800);
    const backup = join(dir, "backup", "orders.db");
    const taken = await run(["backup", "--db", db, "--to", backup]);
    expect(taken.out).toContain("backed up");
    expect(taken.code).toBe(0);
    await Bun.sleep(300);
    stop.now = true;
    const done = (await Promise.all(load)).reduce((a, b) => a + b, 0);
    expect(done).toBeGreaterThan(0);
    // Writes went on during the backup: the live database moved on past the snapshot.
    const snap = new Database(backup, { readonly: true });
    const live = new Database(db, { readonly: true });
    const n = (d: Database, sql: string) => (d.query(sql).get() as { n: number }).n;
    expect(n(snap, "SELECT COUNT(*) AS n FROM orders")).toBeGreaterThan(0);
    expect(n(live, "SELECT COUNT(*) AS n FROM orders")).toBeGreaterThan(n(snap, "SELECT COUNT(*) AS n FROM orders"));
    // The snapshot is itself consistent: no half transfer caught mid-write.
    expect(await invariantProblems(sqliteQuery(snap))).toEqual([]);

    // Restore refuses a target that holds data, and the live database is untouched by the attempt.
    const refused = await run(["restore", "--from", backup, "--db", db]);
    expect(refused.code).toBe(1);
    expect(refused.out).toContain("already holds data");
    const garbage = join(dir, "not-a-db");
    writeFileSync(garbage, "hello");
    const bad = await run(["restore", "--from", garbage, "--db", join(dir, "never.db")]);
    expect(bad.code).toBe(1);
    expect(bad.out).toContain("not a readable SQLite database");

    const restored = join(dir, "restored", "orders.db");
    const back = await run(["restore", "--from", backup, "--db", restored]);
    expect(back.code).toBe(0);
    const copy = new Database(restored, { readonly: true });
    for (const table of ["users", "orders", "ledger", "order_counts"]) {
      const rows = (d: Database) => JSON.stringify(d.query(`SELECT * FROM ${table} ORDER BY 1`).all());
      expect(rows(copy)).toBe(rows(snap));
    }
    expect(await invariantProblems(sqliteQuery(copy))).toEqual([]);
    // Every completed order of the snapshot is completed live too, with the same ledger rows.
    const ledger = (d: Database) => JSON.stringify(d.query("SELECT * FROM ledger ORDER BY id").all());
    const snapLedger = JSON.parse(ledger(snap)) as { id: number }[];
    const liveLedger = (JSON.parse(ledger(live)) as { id: number }[]).slice(0, snapLedger.length);
    expect(liveLedger).toEqual(snapLedger);
    for (const d of [snap, live, copy]) d.close();
    expect(await server.kill("SIGTERM")).toBe(0);

    // The restored database serves: old tokens work, and the load can carry on there.
    const again = await boot(restored);
    expect((await again.api.call("GET", "/authenticated", { token: pairs[0].c })).status).toBe(200);
    const more = { now: false };
    const carry = cycles(again.api, pairs[0].c, pairs[0].p, more);
    await Bun.sleep(300);
    more.now = true;
    expect(await carry).toBeGreaterThan(0);
    expect(await again.server.kill("SIGTERM")).toBe(0);
    const after = new Database(restored, { readonly: true });
    expect(await invariantProblems(sqliteQuery(after))).toEqual([]);
    after.close();
  });
});
