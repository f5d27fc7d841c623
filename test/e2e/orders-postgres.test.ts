// The compiled order-server, several instances on one PostgreSQL (a real server this test starts), with
// requests spread over them: migrations run once, the money invariants hold under random interleaved
// load, a 20-way take race has one winner, and SIGKILLing one instance under write load leaves the
// other serving and no partial transfer.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { SQL } from "bun";
import { orderPgMigrations } from "../../db/orders/pg";
import { DEMO_CLIENT, invariantProblems, type Remote, remote, sqlQuery } from "../orders/remote";
import { randomLoad, type Who } from "../orders/random-load";
import { freshPostgresDb, sharedPostgres } from "../support/postgres";
import { ensureBuilt, type Proc, refusedPort, startServer } from "./support";

let bin = "";
const procs: Proc[] = [];
const clients: SQL[] = [];
const env = { ORDER_OAUTH_CLIENTS: `${DEMO_CLIENT.id}:${DEMO_CLIENT.secret}`, ORDER_PROFILE: undefined, ORDER_DB: undefined, LOG_LEVEL: "warn" };

beforeAll(async () => {
  [bin] = await Promise.all([ensureBuilt("order-server"), sharedPostgres()]);
});
afterAll(async () => {
  for (const p of procs) if (p.proc.exitCode === null) await p.kill("SIGKILL");
  for (const c of clients) await c.close();
});

async function instance(url: string, extra: string[] = []): Promise<{ p: Proc; api: Remote }> {
  const p = await startServer([bin, "--host", "127.0.0.1", "--db", url, ...extra], { env });
  procs.push(p);
  return { p, api: remote(p.url) };
}

function direct(url: string): SQL {
  const c = new SQL({ url, max: 2 });
  clients.push(c);
  return c;
}

describe("order-server instances on one PostgreSQL", () => {
  test("three instances started together migrate once and all serve; the demo is seeded once", async () => {
    const url = await freshPostgresDb();
    const three = await Promise.all([0, 1, 2].map(() => instance(url, ["--profile", "demo"])));
    const db = direct(url);
    expect((await db`SELECT name FROM __migrations`).map((r: { name: string }) => r.name)).toEqual(orderPgMigrations.map((m) => m.name));
    expect(Number((await db`SELECT COUNT(*) AS n FROM users`)[0].n)).toBe(6);
    for (const { p, api } of three) {
      expect(p.output()).toContain("PostgreSQL postgres://postgres@127.0.0.1:");
      expect((await api.call("GET", "/health")).body).toEqual({ status: "ok" });
      const token = await api.token("dmitry");
      expect((await api.call("GET", "/orders", { token })).headers.get("x-total-count")).toBe("20");
    }
    // The README's walk-through: registered on the first, logged in on the second, served by the third.
    expect((await three[0].api.call("POST", "/users", { json: { username: "kate", password: "s3cret", userType: "Customer" } })).status).toBe(201);
    const kate = await three[1].api.token("kate", "s3cret");
    expect((await three[2].api.call("GET", "/authenticated", { token: kate })).body).toMatchObject({ username: "kate", money: 500 });
    expect(await invariantProblems(sqlQuery(db))).toEqual([]);
    for (const { p } of three) expect(await p.kill("SIGTERM")).toBe(0);
  }, 120_000);

  test("randomized conservation: 1200 interleaved calls spread over two instances keep every invariant", async () => {
    const url = await freshPostgresDb();
    const [a, b] = await Promise.all([instance(url), instance(url)]);
    const apis = [a.api, b.api];
    const db = direct(url);
    const person = async (name: string, type: "Customer" | "Performer", i: number): Promise<Who> => {
      // Registered on one instance, logged in on the other.
      const u = await apis[i % 2].register(name, type);
      return { id: u.id, token: await apis[(i + 1) % 2].token(name) };
    };
    const customers = await Promise.all(Array.from({ length: 6 }, (_, i) => person(`c${i}`, "Customer", i)));
    const performers = await Promise.all(Array.from({ length: 6 }, (_, i) => person(`p${i}`, "Performer", i)));
    const load = randomLoad(20261123, customers, performers);
    for (let batch = 0; batch < 24; batch++) {
      // Each call through either instance, at random.
      await load.batch(50, () => load.pick(apis).call);
      expect(await invariantProblems(sqlQuery(db))).toEqual([]);
    }
    const { statuses } = load;
    expect(statuses.get(200)).toBeGreaterThan(100);
    expect(statuses.get(201)).toBeGreaterThan(100);
    expect(statuses.get(409)).toBeGreaterThan(0);
    expect([...statuses.keys()].every((s) => s < 500)).toBe(true);
    expect(Number((await db`SELECT COUNT(*) AS n FROM orders WHERE status = 3`)[0].n)).toBeGreaterThan(10);
    // Both instances list the same open orders (their caches follow each other's writes).
    const token = performers[0].token;
    const [la, lb] = await Promise.all(apis.map((api) => api.call("GET", "/orders?size=100", { token })));
    expect(la.body).toEqual(lb.body);
  }, 180_000);

  test("20 performers race to take one order through two instances: one 200, nineteen 409; two accepts → one debit", async () => {
    const url = await freshPostgresDb();
    const [a, b] = await Promise.all([instance(url), instance(url)]);
    const apis = [a.api, b.api];
    await a.api.register("alice", "Customer");
    const alice = await b.api.token("alice");
    const performers = await Promise.all(
      Array.from({ length: 20 }, async (_, i) => {
        await apis[i % 2].register(`p${i}`, "Performer");
        return apis[i % 2].token(`p${i}`);
      }),
    );
    const id = (await a.api.call("POST", "/orders", { token: alice, json: { description: "race", price: 100 } })).body.id;
    const replies = await Promise.all(performers.map((token, i) => apis[i % 2].call("PATCH", `/orders/${id}/take`, { token })));
    const winners = replies.filter((r) => r.status === 200);
    expect(winners).toHaveLength(1);
    expect(replies.filter((r) => r.status === 409)).toHaveLength(19);
    const winner = performers[replies.indexOf(winners[0])];
    for (const api of apis) expect((await api.call("GET", `/orders/${id}`, { token: alice })).body.performerId).toBe(winners[0].body.performerId);
    expect((await b.api.call("PATCH", `/orders/${id}/pass`, { token: winner })).status).toBe(200);
    const accepts = await Promise.all(apis.map((api) => api.call("PATCH", `/orders/${id}/accept`, { token: alice })));
    expect(accepts.map((r) => r.status).sort()).toEqual([200, 409]);
    expect((await a.api.call("GET", "/authenticated", { token: alice })).body.money).toBe(395);
    const db = direct(url);
    expect(Number((await db`SELECT COUNT(*) AS n FROM ledger WHERE order_id = ${id}`)[0].n)).toBe(4);
    expect(await invariantProblems(sqlQuery(db))).toEqual([]);
  }, 120_000);

  test("deep pages of 3,000 orders served by one instance stay exact while another creates and takes orders concurrently", async () => {
    const url = await freshPostgresDb();
    const [a, b] = await Promise.all([instance(url), instance(url)]);
    const alice = await a.api.register("alice", "Customer");
    await b.api.register("bob", "Performer");
    await a.api.register("dave", "Performer");
    const db = direct(url);
    await db.unsafe(`INSERT INTO orders (description, price, status, created_at, customer_id)
      SELECT 'bulk ' || i, (i % 13 + 1) * 100, 0, 1700000000000 + (i / 3) * 1000, ${alice.id} FROM generate_series(0, 2999) AS i`);
    const [aliceT, bobT, daveT] = await Promise.all([b.api.token("alice"), b.api.token("bob"), a.api.token("dave")]);
    // Writers through B for the whole test; readers of deep pages through A.
    let writing = true;
    const writes = (async () => {
      let n = 0;
      while (writing) {
        const made = await b.api.call("POST", "/orders", { token: aliceT, json: { description: `live ${n++}`, price: 1 } });
        expect(made.status).toBe(201);
        const open = await db`SELECT id FROM orders WHERE status = 0 ORDER BY random() LIMIT 1`;
        await b.api.call("PATCH", `/orders/${open[0].id}/take`, { token: bobT });
      }
      return n;
    })();
    const sorts: [string, string][] = [
      ["", "created_at DESC, id DESC"],
      ["&sort=price", "price ASC, id ASC"],
    ];
    let checked = 0;
    for (let round = 0; round < 30; round++) {
      for (const [q, order] of sorts) {
        const page = 13 + ((round * 37) % 130);
        // The page must show the state at some moment while it was asked: read the truth just before and
        // just after, and count the page if it equals either (the writes go on meanwhile).
        const truth = async () => (await db.unsafe(`SELECT id FROM orders WHERE status = 0 ORDER BY ${order} LIMIT 20 OFFSET ${page * 20}`)).map((r: { id: number }) => Number(r.id));
        const before = await truth();
        const r = await a.api.call("GET", `/orders?size=20&page=${page}${q}`, { token: daveT });
        const after = await truth();
        expect(r.status).toBe(200);
        const got = r.body.map((o: { id: number }) => o.id);
        if (JSON.stringify(got) === JSON.stringify(before) || JSON.stringify(got) === JSON.stringify(after)) checked++;
      }
    }
    writing = false;
    const written = await writes;
    expect(written).toBeGreaterThan(5);
    // With the writers stopped, every sampled deep page matches exactly.
    for (const [q, order] of sorts) {
      for (const page of [13, 50, 100, 140]) {
        const want = (await db.unsafe(`SELECT id FROM orders WHERE status = 0 ORDER BY ${order} LIMIT 20 OFFSET ${page * 20}`)).map((r: { id: number }) => Number(r.id));
        const r = await a.api.call("GET", `/orders?size=20&page=${page}${q}`, { token: daveT });
        expect(r.body.map((o: { id: number }) => o.id)).toEqual(want);
      }
    }
    // Under load most pages (50-55 of 60 on an idle machine) equal one side of the bracket; a page read
    // between two commits may equal neither. Lists that had stopped following the log would match none.
    expect(checked).toBeGreaterThan(20);
  }, 180_000);

  test("a token revoked (row deleted) and a login throttle count hold across instances", async () => {
    const url = await freshPostgresDb();
    const [a, b] = await Promise.all([instance(url), instance(url)]);
    await a.api.register("alice", "Customer");
    const token = await a.api.token("alice");
    for (const api of [a.api, b.api]) expect((await api.call("GET", "/authenticated", { token })).status).toBe(200);
    await direct(url)`DELETE FROM tokens`;
    for (const api of [a.api, b.api]) expect((await api.call("GET", "/authenticated", { token })).status).toBe(401);
    // Ten wrong passwords spread over both instances: the eleventh try is refused on either.
    for (let i = 0; i < 10; i++) await expect([a.api, b.api][i % 2].token("alice", "wrong")).rejects.toThrow("400");
    for (const api of [a.api, b.api]) await expect(api.token("alice")).rejects.toThrow("429");
  }, 120_000);

  test("NUL in /oauth/token's username (query or form) and in an order's description: 400 naming the field, the instance still serving", async () => {
    // Issue 36 part 4: `username=a%00b` reached the advisory-lock query and PostgreSQL refused it (500).
    const url = await freshPostgresDb();
    const { p, api } = await instance(url);
    await api.register("alice", "Customer");
    const grant = (username: string) => new URLSearchParams({ grant_type: "password", username, password: "pass", client_id: DEMO_CLIENT.id, client_secret: DEMO_CLIENT.secret });
    const viaQuery = await fetch(`${api.base}/oauth/token?${grant("a\u0000b")}`, { method: "POST" });
    const viaForm = await fetch(`${api.base}/oauth/token`, { method: "POST", body: grant("alice\u0000"), headers: { "content-type": "application/x-www-form-urlencoded" } });
    for (const r of [viaQuery, viaForm]) {
      expect(r.status).toBe(400);
      expect(await r.json()).toEqual({ error: "invalid_request", error_description: expect.stringMatching(/^username contains a NUL character/) });
    }
    const token = await api.token("alice");
    const order = await api.call("POST", "/orders", { token, json: { description: "a\u0000b", price: 10 } });
    expect({ status: order.status, message: order.body.message }).toEqual({ status: 400, message: expect.stringMatching(/^description contains a NUL character/) });
    expect((await api.call("POST", "/orders", { token, json: { description: "fine", price: 10 } })).status).toBe(201);
    expect(p.output()).not.toContain("unexpected error");
    expect(await p.kill("SIGTERM")).toBe(0);
  }, 120_000);

  test("SIGKILL one instance under write load: the other keeps serving, no partial transfer, stuck orders finish", async () => {
    const url = await freshPostgresDb();
    const [a, b] = await Promise.all([instance(url), instance(url)]);
    const pairs: { c: string; p: string }[] = [];
    for (let i = 0; i < 6; i++) {
      await a.api.register(`k-c${i}`, "Customer");
      await a.api.register(`k-p${i}`, "Performer");
      pairs.push({ c: await a.api.token(`k-c${i}`), p: await b.api.token(`k-p${i}`) });
    }
    const stop = { dead: false };
    /** Why each load loop ended, for the failure message if the survivor's loops did no work. */
    const ended: string[] = [];
    /** create → take → pass → accept through `api` until it fails (the instance died). */
    const progress = new Map<string, number>();
    const cycles = async (api: Remote, x: { c: string; p: string }, until: { dead: boolean }) => {
      let done = 0;
      try {
        while (!until.dead) {
          // Whole kopecks divided once: exactly two decimals in the JSON (1 + 0.61 is 1.6099999999999999).
          const o = await api.call("POST", "/orders", { token: x.c, json: { description: `load ${done}`, price: (100 + Math.floor(Math.random() * 400)) / 100 } });
          if (o.status !== 201) {
            ended.push(`${api.base}: POST /orders ${o.status} ${JSON.stringify(o.body)}`);
            break;
          }
          for (const [step, t] of [["take", x.p], ["pass", x.p], ["accept", x.c]] as const) await api.call("PATCH", `/orders/${o.body.id}/${step}`, { token: t });
          done++;
          progress.set(api.base, (progress.get(api.base) ?? 0) + 1);
        }
      } catch (err) {
        // The instance was killed under us: expected (for A).
        ended.push(`${api.base}: ${(err as Error).message}`);
      }
      return done;
    };
    const onB = { dead: false };
    const loadA = pairs.slice(0, 4).map((x) => cycles(a.api, x, stop));
    const loadB = pairs.slice(4).map((x) => cycles(b.api, x, onB));
    // Kill A in the middle of its load: once it has finished a few cycles (a fixed sleep saw none on a
    // loaded machine), then a moment more so requests are in flight.
    const until = Date.now() + 60_000;
    while ((progress.get(a.api.base) ?? 0) < 4 && Date.now() < until) await Bun.sleep(50);
    await Bun.sleep(200);
    a.p.proc.kill("SIGKILL");
    await a.p.proc.exited;
    stop.dead = true;
    const doneA = (await Promise.all(loadA)).reduce((x, y) => x + y, 0);
    expect(doneA).toBeGreaterThan(0);
    // B never stopped: its own load goes on, and A's users carry on through B, every step succeeding.
    const x = pairs[0];
    for (let i = 0; i < 3; i++) {
      const o = await b.api.call("POST", "/orders", { token: x.c, json: { description: `after the kill ${i}`, price: 2 } });
      expect(o.status).toBe(201);
      for (const [step, t] of [["take", x.p], ["pass", x.p], ["accept", x.c]] as const) {
        expect((await b.api.call("PATCH", `/orders/${o.body.id}/${step}`, { token: t })).status).toBe(200);
      }
    }
    onB.dead = true;
    const doneB = (await Promise.all(loadB)).reduce((x, y) => x + y, 0);
    if (doneB === 0) throw new Error(`the survivor's load did no cycle: ${ended.join("; ")}`);
    const db = direct(url);
    expect(await invariantProblems(sqlQuery(db))).toEqual([]);
    // Orders caught mid-lifecycle by the kill are finished through B.
    const stuck = (await db`SELECT id, status, customer_id FROM orders WHERE status < 3`) as { id: number; status: number }[];
    for (const o of stuck) {
      let owner: { c: string; p: string } | undefined;
      for (const x of pairs) if ((await b.api.call("GET", `/orders/${o.id}`, { token: x.c })).status === 200) owner = x;
      expect(owner).toBeDefined();
      if (o.status === 0) expect((await b.api.call("PATCH", `/orders/${o.id}/take`, { token: owner!.p })).status).toBe(200);
      if (o.status <= 1) expect((await b.api.call("PATCH", `/orders/${o.id}/pass`, { token: owner!.p })).status).toBe(200);
      expect((await b.api.call("PATCH", `/orders/${o.id}/accept`, { token: owner!.c })).status).toBe(200);
    }
    expect(await invariantProblems(sqlQuery(db))).toEqual([]);
    expect(Number((await db`SELECT COUNT(*) AS n FROM orders WHERE status < 3`)[0].n)).toBe(0);
    expect(await b.p.kill("SIGTERM")).toBe(0);
  }, 180_000);

  test("an unreachable PostgreSQL is one line naming the URL without its password, exit 1", async () => {
    const port = refusedPort();
    const proc = Bun.spawn([bin, "--port", "0", "--db", `postgres://orders:s3cret@127.0.0.1:${port}/orders`], {
      env: { ...process.env, ...env },
      stdout: "pipe",
      stderr: "pipe",
    });
    const [code, err] = await Promise.all([proc.exited, new Response(proc.stderr).text()]);
    expect(code).toBe(1);
    expect(err.trim().split("\n")).toHaveLength(1);
    expect(err).toContain(`postgres://orders:***@127.0.0.1:${port}/orders`);
    expect(err).not.toContain("s3cret");
  }, 60_000);
});
