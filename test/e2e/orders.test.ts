// The compiled dist/order-server, copied alone into an empty directory, driven over HTTP.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { Database } from "bun:sqlite";
import { copyFileSync, existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { DEMO_CLIENT, invariantProblems, sqliteQuery, remote } from "../orders/remote";
import { ensureBuilt, type Proc, start, startServer } from "./support";

let bin = "";
let dir = "";
const procs: Proc[] = [];

beforeAll(async () => {
  const built = await ensureBuilt("order-server");
  dir = mkdtempSync(join(tmpdir(), "order-e2e-"));
  bin = join(dir, "order-server");
  copyFileSync(built, bin);
});

afterAll(async () => {
  for (const p of procs) if (p.proc.exitCode === null) await p.kill("SIGKILL");
  rmSync(dir, { recursive: true, force: true });
});

/** Starts the server on a port the kernel picks (each start a new one). */
async function serve(args: string[], env: Record<string, string | undefined> = {}, cwd = dir) {
  const p = await startServer([bin, "--host", "127.0.0.1", ...args], { cwd, env: { ORDER_OAUTH_CLIENTS: undefined, ORDER_PROFILE: undefined, ORDER_DB: undefined, ...env } });
  procs.push(p);
  return { p, api: remote(p.url), port: p.port };
}

async function runToEnd(args: string[], env: Record<string, string | undefined> = {}) {
  const proc = Bun.spawn([bin, ...args], { cwd: dir, env: { ...process.env, ORDER_OAUTH_CLIENTS: undefined, ORDER_PROFILE: undefined, ...env }, stdout: "pipe", stderr: "pipe" });
  const [code, out, err] = await Promise.all([proc.exited, new Response(proc.stdout).text(), new Response(proc.stderr).text()]);
  return { code, out, err };
}

describe("order-server binary", () => {
  test("--help lists every flag and the environment", async () => {
    const r = await runToEnd(["--help"]);
    expect(r.code).toBe(0);
    for (const s of ["--port", "--host", "--db", "--profile", "PORT", "ORDER_DB", "ORDER_PROFILE", "ORDER_OAUTH_CLIENTS"]) expect(r.out).toContain(s);
  }, 60_000);

  test("production without an OAuth client refuses to start: one line, exit 1", async () => {
    const r = await runToEnd(["--db", ":memory:"]);
    expect(r.code).toBe(1);
    expect(r.err.trim().split("\n")).toHaveLength(1);
    expect(r.err).toContain("ORDER_OAUTH_CLIENTS");
  }, 60_000);

  test("bad flags and values: one line, non-zero, no stack", async () => {
    for (const args of [["--bogus"], ["--port", "abc"], ["--profile", "staging", "--db", ":memory:"]]) {
      const r = await runToEnd(args, { ORDER_OAUTH_CLIENTS: "a:b" });
      expect(r.code).not.toBe(0);
      expect(r.err).not.toContain("    at ");
      expect(r.err.split("\n")[0]).toStartWith("order-server: ");
    }
  }, 60_000);

  test("a malformed ORDER_OAUTH_CLIENTS or an unusable database file: one line, non-zero, no stack", async () => {
    const clients = await runToEnd(["--db", ":memory:"], { ORDER_OAUTH_CLIENTS: "no-secret-here" });
    expect(clients.code).not.toBe(0);
    expect(clients.err.split("\n")[0]).toContain("ORDER_OAUTH_CLIENTS");
    expect(clients.err).not.toContain("    at ");
    const db = await runToEnd(["--db", "/proc/no-such-dir/orders.db"], { ORDER_OAUTH_CLIENTS: "a:b" });
    expect(db.code).toBe(1);
    expect(db.err.trim().split("\n")).toHaveLength(1);
    expect(db.err).toContain("/proc/no-such-dir/orders.db");
  }, 60_000);

  test("environment configures the server; flags win over it", async () => {
    // PORT=0 from the environment (not --port): the kernel picks the port and the first line names it.
    const p = start([bin, "--db", "./flag.db", "--host", "127.0.0.1"], {
      cwd: dir,
      env: { PORT: "0", ORDER_PROFILE: "demo", ORDER_DB: "./env.db", ORDER_OAUTH_CLIENTS: undefined },
    });
    procs.push(p);
    const until = Date.now() + 30_000;
    let m: RegExpExecArray | null;
    while (!(m = /listening on http:\/\/127\.0\.0\.1:(\d+)/.exec(p.output()))) {
      if (p.proc.exitCode !== null || Date.now() > until) throw new Error(`order-server did not report its address:\n${p.output()}`);
      await Bun.sleep(20);
    }
    const port = Number(m[1]);
    expect(port).not.toBe(8080); // the default: PORT was read
    expect((await fetch(`http://127.0.0.1:${port}/health`)).ok).toBe(true);
    expect(p.output()).toContain("profile:  demo");
    expect(p.output()).toContain("./flag.db");
    expect(existsSync(join(dir, "flag.db"))).toBe(true);
    expect(existsSync(join(dir, "env.db"))).toBe(false);
    expect(await p.kill("SIGTERM")).toBe(0);
  }, 60_000);

  test("a port in use is one clear line, exit 1", async () => {
    // The port our own running server holds: known to be taken, by us.
    const { port } = await serve(["--db", ":memory:"], { ORDER_OAUTH_CLIENTS: "a:b" });
    const r = await runToEnd(["--port", String(port), "--host", "127.0.0.1", "--db", ":memory:"], { ORDER_OAUTH_CLIENTS: "a:b" });
    expect(r.code).toBe(1);
    expect(r.err).toContain(`port ${port} is already in use`);
  }, 60_000);

  test("demo profile from an empty directory: full marketplace flow, then a clean restart keeps data and tokens", async () => {
    const { p, api } = await serve(["--profile", "demo"]);
    const out = p.output();
    expect(out).toContain(`listening on http://127.0.0.1:${api.base.split(":").pop()}`);
    expect(out).toContain("profile:  demo");
    expect(out).toContain("./data/orders.db");
    expect(out).toContain("anna");
    expect(out).toContain("dmitry");
    expect(existsSync(join(dir, "data", "orders.db"))).toBe(true);

    expect((await api.call("GET", "/health")).body).toEqual({ status: "ok" });
    const spec = await api.call("GET", "/openapi/json");
    expect(spec.status).toBe(200);
    expect(Object.keys(spec.body.paths)).toContain("/orders/{id}/accept");

    // A demo login works with the web client's credentials.
    const anna = await api.token("anna");
    const demoOrders = await api.call("GET", "/users/1/orders?size=5", { token: anna });
    expect(demoOrders.status).toBe(200);
    expect(Number(demoOrders.headers.get("x-total-count"))).toBeGreaterThan(5);

    // register, token, create, take, pass, accept, balances
    const cust = await api.register("e2e-customer", "Customer", "secret");
    const perf = await api.register("e2e-performer", "Performer", "secret");
    const ct = await api.token("e2e-customer", "secret");
    const pt = await api.token("e2e-performer", "secret");
    const created = await api.call("POST", "/orders", { token: ct, json: { description: "Paint the shed", price: 200.1 } });
    expect(created.status).toBe(201);
    expect(created.body.createdDate).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d$/);
    const id = created.body.id;
    const waiting = await api.call("GET", "/orders?sort=createdDate,desc&size=1", { token: pt });
    expect(waiting.body[0].id).toBe(id);
    expect(waiting.headers.get("link")).toContain('rel="next"');
    expect((await api.call("PATCH", `/orders/${id}/take`, { token: pt })).body.status).toBe("IN_PROGRESS");
    expect((await api.call("PATCH", `/orders/${id}/pass`, { token: pt })).body.status).toBe("READY");
    const done = await api.call("PATCH", `/orders/${id}/accept`, { token: ct });
    expect(done.body).toMatchObject({ status: "COMPLETED", customerId: cust.id, performerId: perf.id, performerName: "e2e-performer" });
    // 200.10 + 10.01 (5 % of 200.10 = 10.005 → 10.01)
    expect((await api.call("GET", "/authenticated", { token: ct })).body.money).toBe(289.89);
    expect((await api.call("GET", "/authenticated", { token: pt })).body.money).toBe(500.1);
    const mine = await api.call("GET", `/users/${perf.id}/orders`, { token: pt });
    expect(mine.body.map((o: { id: number }) => o.id)).toEqual([id]);

    // errors
    const e404 = await api.call("GET", "/no/such/thing");
    expect(e404.status).toBe(404);
    expect(Object.keys(e404.body).sort()).toEqual(["error", "message", "path", "status", "timestamp"]);
    const e401 = await api.call("GET", "/orders");
    expect(e401.status).toBe(401);
    expect(e401.headers.get("www-authenticate")).toStartWith("Bearer");
    expect((await api.call("GET", `/users/${cust.id}/orders`, { token: pt })).status).toBe(403);
    expect((await api.call("POST", "/orders", { token: ct, json: { description: "x", price: 1.001 } })).status).toBe(400);
    const big = await fetch(`${api.base}/users`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ username: "x".repeat(2_000_000) }) });
    expect(big.status).toBe(413);
    expect(((await big.json()) as { status: number }).status).toBe(413);
    // Without Content-Length (chunked) the same limit and the same body apply.
    const chunked = await fetch(`${api.base}/users`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: new ReadableStream({
        start(c) {
          for (let i = 0; i < 40; i++) c.enqueue(new TextEncoder().encode("x".repeat(64 * 1024)));
          c.close();
        },
      }),
    });
    expect(chunked.status).toBe(413);
    expect(((await chunked.json()) as { path: string }).path).toBe("/users");

    // SIGTERM drains: a token request (argon2id, slow) sent just before the signal still gets its answer.
    const inflight = fetch(`${api.base}/oauth/token?grant_type=password&username=anna&password=pass&client_id=${DEMO_CLIENT.id}&client_secret=${DEMO_CLIENT.secret}`, { method: "POST" });
    await Bun.sleep(5);
    p.proc.kill("SIGTERM");
    expect((await inflight).status).toBe(200);
    expect(await p.proc.exited).toBe(0);
    expect(p.output()).toContain("stopped");

    // Restart on the same database: no second seeding, data and tokens intact.
    const again = await serve(["--profile", "demo"]);
    expect(again.p.output()).not.toContain("demo data seeded");
    expect((await again.api.call("GET", "/authenticated", { token: ct })).body.money).toBe(289.89);
    const db = new Database(join(dir, "data", "orders.db"), { readonly: true });
    expect((db.query("SELECT COUNT(*) AS n FROM users WHERE username = 'anna'").get() as { n: number }).n).toBe(1);
    expect(await invariantProblems(sqliteQuery(db))).toEqual([]);
    db.close();
    expect(await again.p.kill("SIGINT")).toBe(0);
  }, 60_000);

  test("production profile with ORDER_OAUTH_CLIENTS: starts empty, only configured clients get tokens", async () => {
    const { p, api } = await serve(["--db", ":memory:"], { ORDER_OAUTH_CLIENTS: "web:s3cr3t,cli:other" });
    expect(p.output()).toContain("profile:  production");
    await api.register("prod-user", "Customer");
    await expect(api.token("prod-user")).rejects.toThrow("invalid_client");
    expect(await api.token("prod-user", "pass", { id: "cli", secret: "other" })).toBeString();
    const anna = await fetch(`${api.base}/oauth/token?grant_type=password&username=anna&password=pass&client_id=web&client_secret=s3cr3t`, { method: "POST" });
    expect(anna.status).toBe(400);
    await p.kill("SIGTERM");
  }, 60_000);

  test("the web client's calls against the binary: token as query and as form, access_token links, revocation by row deletion", async () => {
    const file = join(dir, "client.db");
    const { p, api } = await serve(["--db", file], { ORDER_OAUTH_CLIENTS: `${DEMO_CLIENT.id}:${DEMO_CLIENT.secret}` });
    await api.register("web-c", "Customer");
    await api.register("web-p", "Performer");
    const params = new URLSearchParams({ grant_type: "password", username: "web-p", password: "pass", client_id: DEMO_CLIENT.id, client_secret: DEMO_CLIENT.secret });
    const asQuery = await fetch(`${api.base}/oauth/token?${params}`, { method: "POST" });
    expect(asQuery.status).toBe(200);
    expect(asQuery.headers.get("cache-control")).toBe("no-store");
    const performer = ((await asQuery.json()) as { access_token: string }).access_token;
    const customer = await api.token("web-c");
    const id = (await api.call("POST", "/orders", { token: customer, json: { description: "web", price: 10.5 } })).body.id;
    const list = await fetch(`${api.base}/orders?size=1&sort=price,desc&access_token=${performer}`);
    expect(list.status).toBe(200);
    expect(list.headers.get("x-total-count")).toBe("1");
    expect(list.headers.get("cache-control")).toBe("private");
    expect(list.headers.get("link")).not.toContain("access_token");
    expect(((await list.json()) as { id: number; price: number; performerId: null }[])[0]).toMatchObject({ id, price: 10.5, performerId: null });
    // An operator revokes the customer's tokens in the database: the running server refuses at once.
    expect((await api.call("GET", "/authenticated", { token: customer })).status).toBe(200);
    const db = new Database(file);
    db.run("PRAGMA busy_timeout = 5000"); // the server has the file open
    db.run("DELETE FROM tokens WHERE user_id = (SELECT id FROM users WHERE username = 'web-c')");
    db.close();
    const revoked = await api.call("GET", "/authenticated", { token: customer });
    expect(revoked.status).toBe(401);
    expect(revoked.body.error).toBe("invalid_token");
    expect(revoked.headers.get("www-authenticate")).toContain('error="invalid_token"');
    expect((await api.call("GET", "/authenticated", { token: performer })).status).toBe(200);
    await p.kill("SIGTERM");
  }, 60_000);

  test("two servers on one database: 20 racing takes → one 200; two racing accepts → one debit", async () => {
    const shared = join(dir, "race.db");
    const env = { ORDER_OAUTH_CLIENTS: `${DEMO_CLIENT.id}:${DEMO_CLIENT.secret}` };
    const a = await serve(["--db", shared], env);
    const b = await serve(["--db", shared], env);
    await a.api.register("race-c", "Customer");
    const ct = await a.api.token("race-c");
    const performers = await Promise.all(
      Array.from({ length: 20 }, async (_, i) => {
        await a.api.register(`race-p${i}`, "Performer");
        return (i % 2 ? a.api : b.api).token(`race-p${i}`);
      }),
    );
    // Server b caches its list reply; a write through server a must show up there at once.
    expect((await b.api.call("GET", "/orders", { token: performers[0] })).headers.get("x-total-count")).toBe("0");
    const id = (await a.api.call("POST", "/orders", { token: ct, json: { description: "race", price: 100 } })).body.id;
    const seen = await b.api.call("GET", "/orders", { token: performers[0] });
    expect(seen.headers.get("x-total-count")).toBe("1");
    expect(seen.body[0].id).toBe(id);
    const takes = await Promise.all(performers.map((t, i) => (i % 2 ? a.api : b.api).call("PATCH", `/orders/${id}/take`, { token: t })));
    const winners = takes.filter((r) => r.status === 200);
    expect(winners).toHaveLength(1);
    expect(takes.filter((r) => r.status === 409)).toHaveLength(19);
    const winner = performers[takes.indexOf(winners[0])];
    await a.api.call("PATCH", `/orders/${id}/pass`, { token: winner });
    const accepts = await Promise.all([a.api, b.api, a.api, b.api].map((s) => s.call("PATCH", `/orders/${id}/accept`, { token: ct })));
    expect(accepts.map((r) => r.status).sort()).toEqual([200, 409, 409, 409]);
    expect((await b.api.call("GET", "/authenticated", { token: ct })).body.money).toBe(395);
    await Promise.all([a.p.kill("SIGTERM"), b.p.kill("SIGTERM")]);
    const db = new Database(shared, { readonly: true });
    expect(await invariantProblems(sqliteQuery(db))).toEqual([]);
    db.close();
  }, 60_000);
});
