// SIGKILL the compiled order-server in the middle of a write load, restart it on the same database:
// no partial transfer, the money invariants hold, and every token issued before the crash still works.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { Database } from "bun:sqlite";
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { orderMigrations } from "../../db/orders";
import { DEMO_CLIENT, invariantProblems, sqliteQuery, type Remote, remote } from "../orders/remote";
import { ensureBuilt, type Proc, start, startServer } from "./support";

let bin = "";
let dir = "";
const procs: Proc[] = [];
const env = { ORDER_OAUTH_CLIENTS: `${DEMO_CLIENT.id}:${DEMO_CLIENT.secret}`, ORDER_PROFILE: undefined, ORDER_DB: undefined };

beforeAll(async () => {
  bin = await ensureBuilt("order-server");
  dir = mkdtempSync(join(tmpdir(), "order-crash-"));
});
afterAll(async () => {
  for (const p of procs) if (p.proc.exitCode === null) await p.kill("SIGKILL");
  rmSync(dir, { recursive: true, force: true });
});

/** Starts the server on a port the kernel picks: each (re)start gets a new one, hence a new `api`. */
async function boot(db: string, args: string[] = []): Promise<{ p: Proc; api: Remote }> {
  const p = await startServer([bin, "--host", "127.0.0.1", "--db", db, ...args], { env });
  procs.push(p);
  return { p, api: remote(p.url) };
}

/** One customer/performer pair running create → take → pass → accept until the server dies. */
async function cycles(api: Remote, c: string, p: string, stop: { dead: boolean }): Promise<number> {
  let done = 0;
  try {
    while (!stop.dead) {
      // Whole kopecks divided once, so the JSON number has two decimals (1 + 0.61 would be 1.6099999999999999,
      // which the server rightly refuses).
      const price = (100 + Math.floor(Math.random() * 400)) / 100;
      const o = await api.call("POST", "/orders", { token: c, json: { description: `load ${done}`, price } });
      if (o.status !== 201) break;
      await api.call("PATCH", `/orders/${o.body.id}/take`, { token: p });
      await api.call("PATCH", `/orders/${o.body.id}/pass`, { token: p });
      await api.call("PATCH", `/orders/${o.body.id}/accept`, { token: c });
      done++;
    }
  } catch {
    // The server was killed under us: expected.
  }
  return done;
}

/** The pair whose customer published order `id` (only the customer can see a taken order). */
async function findOwner(api: Remote, pairs: { c: string; p: string }[], id: number) {
  for (const pair of pairs) {
    const r = await api.call("GET", `/orders/${id}`, { token: pair.c });
    if (r.status === 200) return pair;
  }
  throw new Error(`no owner for order ${id}`);
}

describe("crash recovery", () => {
  test("SIGKILL during writes, twice: invariants hold, tokens survive, the server carries on", async () => {
    const db = join(dir, "crash.db");
    let { p, api } = await boot(db);
    const pairs: { c: string; p: string }[] = [];
    for (let i = 0; i < 6; i++) {
      await api.register(`crash-c${i}`, "Customer");
      await api.register(`crash-p${i}`, "Performer");
      pairs.push({ c: await api.token(`crash-c${i}`), p: await api.token(`crash-p${i}`) });
    }
    const tokens = pairs.flatMap((x) => [x.c, x.p]);

    for (let round = 0; round < 2; round++) {
      const stop = { dead: false };
      const load = pairs.map((x) => cycles(api, x.c, x.p, stop));
      await Bun.sleep(700 + round * 300);
      p.proc.kill("SIGKILL");
      await p.proc.exited;
      stop.dead = true;
      const done = (await Promise.all(load)).reduce((a, b) => a + b, 0);
      expect(done).toBeGreaterThan(0);

      ({ p, api } = await boot(db));
      const conn = new Database(db);
      expect(await invariantProblems(sqliteQuery(conn))).toEqual([]);
      const completed = (conn.query("SELECT COUNT(*) AS n FROM orders WHERE status = 3").get() as { n: number }).n;
      expect(completed).toBeGreaterThanOrEqual(done);
      conn.close();
      for (const t of tokens) expect((await api.call("GET", "/authenticated", { token: t })).status).toBe(200);
    }

    // Orders caught mid-lifecycle by the crash can still be finished afterwards.
    const conn = new Database(db);
    const stuck = conn.query("SELECT id, status, customer_id AS c, performer_id AS p FROM orders WHERE status < 3").all() as { id: number; status: number }[];
    conn.close();
    for (const o of stuck) {
      const order = await findOwner(api, pairs, o.id);
      if (o.status === 0) expect((await api.call("PATCH", `/orders/${o.id}/take`, { token: order.p })).status).toBe(200);
      if (o.status <= 1) expect((await api.call("PATCH", `/orders/${o.id}/pass`, { token: order.p })).status).toBe(200);
      const accepted = await api.call("PATCH", `/orders/${o.id}/accept`, { token: order.c });
      expect(accepted.status).toBe(200);
    }
    expect(await p.kill("SIGTERM")).toBe(0);
    const final = new Database(db);
    expect(await invariantProblems(sqliteQuery(final))).toEqual([]);
    final.close();
  }, 60_000);
});

/** Users, orders and ledger rows in the SQLite file `path` (zeros when it has no tables yet). */
function demoCounts(path: string): { users: number; orders: number; ledger: number } {
  if (!existsSync(path)) return { users: 0, orders: 0, ledger: 0 };
  const conn = new Database(path);
  try {
    return conn.query("SELECT (SELECT COUNT(*) FROM users) AS users, (SELECT COUNT(*) FROM orders) AS orders, (SELECT COUNT(*) FROM ledger) AS ledger").get() as { users: number; orders: number; ledger: number };
  } catch {
    return { users: 0, orders: 0, ledger: 0 };
  } finally {
    conn.close();
  }
}

/**
 * Spins until a server starting on `path` is inside the demo seed's transaction: it holds the write lock
 * (our BEGIN IMMEDIATE is refused) after every migration ran, with no user committed yet. Nothing else
 * writes between the migrations and listening. False when the server got past seeding first.
 */
function untilSeeding(path: string, p: Proc, timeoutMs = 20_000): boolean {
  const until = Date.now() + timeoutMs;
  let conn: Database | undefined;
  try {
    while (Date.now() < until && p.proc.exitCode === null) {
      if (!conn) {
        if (!existsSync(`${path}-wal`)) continue;
        conn = new Database(path, { readwrite: true, create: false });
        conn.exec("PRAGMA busy_timeout = 0");
      }
      try {
        conn.exec("BEGIN IMMEDIATE");
        conn.exec("ROLLBACK");
        continue;
      } catch {
        // Someone holds the write lock: the migrations or the seed.
      }
      try {
        const migrated = (conn.query("SELECT COUNT(*) AS n FROM __migrations").get() as { n: number }).n;
        const users = (conn.query("SELECT COUNT(*) AS n FROM users").get() as { n: number }).n;
        if (users > 0) return false;
        if (migrated === orderMigrations.length) return true;
      } catch {
        // Tables not created yet.
      }
    }
    return false;
  } finally {
    conn?.close();
  }
}

describe("demo seed crash", () => {
  test("SIGKILL inside the demo seed leaves none of it; every kill leaves none or all; the next start seeds it fully", async () => {
    const db = join(dir, "demo-seed.db");
    const full = { users: 6, orders: 50, ledger: 6 + 12 * 4 };
    let caught = 0;
    // Kill on entering the seed's transaction, then later into it each round, until a round finds the
    // seed already committed (or 6 rounds pass). Each kill must leave all of the demo or nothing.
    for (let round = 0; round < 6; round++) {
      // Killed before it listens: it never needs a port of its own.
      const p = start([bin, "--port", "0", "--host", "127.0.0.1", "--db", db, "--profile", "demo"], { env });
      procs.push(p);
      const inSeed = untilSeeding(db, p);
      if (inSeed && round > 0) Bun.sleepSync(round * 2);
      p.proc.kill("SIGKILL");
      await p.proc.exited;
      const after = demoCounts(db);
      expect([{ users: 0, orders: 0, ledger: 0 }, full]).toContainEqual(after);
      if (inSeed && after.users === 0) caught++;
      if (after.users > 0) break;
    }
    expect(caught).toBeGreaterThan(0);

    const { p, api } = await boot(db, ["--profile", "demo"]);
    expect(demoCounts(db)).toEqual(full);
    const conn = new Database(db);
    expect(await invariantProblems(sqliteQuery(conn))).toEqual([]);
    conn.close();
    expect((await api.call("GET", "/authenticated", { token: await api.token("anna", "pass") })).body.userType).toBe("Customer");
    expect(await p.kill("SIGTERM")).toBe(0);
  }, 120_000);
});
