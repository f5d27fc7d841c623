// SIGKILL the compiled order-server in the middle of a write load, restart it on the same database:
// no partial transfer, the money invariants hold, and every token issued before the crash still works.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { Database } from "bun:sqlite";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { DEMO_CLIENT, invariantProblems, sqliteQuery, type Remote, remote } from "../orders/remote";
import { ensureBuilt, freePort, type Proc, start, waitForHttp } from "./support";

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

async function boot(db: string): Promise<{ p: Proc; api: Remote }> {
  const port = freePort();
  const p = start([bin, "--port", String(port), "--host", "127.0.0.1", "--db", db], { env });
  procs.push(p);
  await waitForHttp(`http://127.0.0.1:${port}/health`);
  return { p, api: remote(`http://127.0.0.1:${port}`) };
}

/** One customer/performer pair running create → take → pass → accept until the server dies. */
async function cycles(api: Remote, c: string, p: string, stop: { dead: boolean }): Promise<number> {
  let done = 0;
  try {
    while (!stop.dead) {
      const price = 1 + Math.floor(Math.random() * 400) / 100;
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
