// The read caches (token → user, list replies) against writes made through another connection to the
// same database file: what a second server process on that file does. Two apps, two connections.
// `nextTurn()` stands for the socket round trip a real client makes between seeing a write and asking
// again: the server reads SQLite's data_version once per event-loop turn (see DataVersion).
import { afterEach, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ManualClock } from "../../src/kernel/clock";
import { hashSecret } from "../../src/kernel/ids";
import { createOrderApp } from "../../src/orders/app";
import { orderConfig } from "../../src/orders/config";
import { openOrderStorage } from "../../src/orders/db/open";
import type { OrderStorage } from "../../src/orders/db/storage";
import { freshPostgresDb } from "../support/postgres";
import { STATUSES } from "../../src/orders/orders/model";
import { type Backend, CHEAP, CLIENT, forEachBackend, springError } from "./harness";

const nextTurn = () => new Promise<void>((resolve) => setImmediate(resolve));
const dirs: string[] = [];
const opened: OrderStorage[] = [];
afterEach(async () => {
  for (const s of opened.splice(0)) await s.close();
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

/** Two apps, each with its own storage (connection or pool) on one database: two server instances. */
async function twoServers(backend: Backend) {
  let target: string;
  if (backend === "sqlite") {
    const dir = mkdtempSync(join(tmpdir(), "orders-caches-"));
    dirs.push(dir);
    target = join(dir, "orders.db");
  } else {
    target = await freshPostgresDb();
  }
  const config = orderConfig({ clients: [CLIENT], clock: new ManualClock("2026-11-22T09:30:12Z"), password: CHEAP });
  const a = await openOrderStorage(target);
  const b = await openOrderStorage(target);
  // The operator's own connection (a third one), for revoking tokens by hand.
  const operator = await openOrderStorage(target);
  opened.push(a, b, operator);
  const apps = [createOrderApp(config, a), createOrderApp(config, b)];
  const call = async (which: 0 | 1, method: string, path: string, token?: string, json?: unknown) => {
    const headers: Record<string, string> = {};
    if (token) headers.authorization = `Bearer ${token}`;
    if (json !== undefined) headers["content-type"] = "application/json";
    const res = await apps[which].handle(new Request(`http://localhost${path}`, { method, headers, body: json === undefined ? undefined : JSON.stringify(json) }));
    const text = await res.text();
    return { status: res.status, headers: res.headers, text, body: text ? JSON.parse(text) : undefined };
  };
  const login = async (which: 0 | 1, username: string, userType: "Customer" | "Performer") => {
    const u = (await call(which, "POST", "/users", undefined, { username, password: "pass", userType })).body;
    const q = new URLSearchParams({ grant_type: "password", username, password: "pass", client_id: CLIENT.id, client_secret: CLIENT.secret });
    return { id: u.id as number, token: (await call(which, "POST", `/oauth/token?${q}`)).body.access_token as string };
  };
  return { operator, call, login };
}

forEachBackend("read caches never outlive a write by another instance", (backend) => {
  test("a list cached by server A shows an order created, then taken, through server B at once", async () => {
    const { call, login } = await twoServers(backend);
    const alice = await login(1, "alice", "Customer");
    const dave = await login(0, "dave", "Performer");
    const bob = await login(1, "bob", "Performer");
    for (let round = 0; round < 5; round++) {
      const before = await call(0, "GET", "/orders", dave.token);
      expect(before.headers.get("x-total-count")).toBe("0");
      // The same URL twice: the second answer comes from A's cache.
      expect((await call(0, "GET", "/orders", dave.token)).text).toBe(before.text);
      const id = (await call(1, "POST", "/orders", alice.token, { description: `job ${round}`, price: 1 })).body.id;
      await nextTurn();
      const after = await call(0, "GET", "/orders", dave.token);
      expect(after.headers.get("x-total-count")).toBe("1");
      expect(after.body.map((o: { id: number }) => o.id)).toEqual([id]);
      expect((await call(1, "PATCH", `/orders/${id}/take`, bob.token)).status).toBe(200);
      await nextTurn();
      expect((await call(0, "GET", "/orders", dave.token)).body).toEqual([]);
    }
  }, 30_000);

  test("a token deleted from the database (revoked) is refused at once by a server that had it cached", async () => {
    const { operator, call, login } = await twoServers(backend);
    const alice = await login(1, "alice", "Customer");
    const other = await login(1, "carol", "Customer");
    expect((await call(0, "GET", "/authenticated", alice.token)).status).toBe(200);
    expect((await call(0, "GET", "/authenticated", alice.token)).status).toBe(200);
    await operator.query(`DELETE FROM tokens WHERE hash = '${hashSecret(alice.token)}'`);
    await nextTurn();
    const r = await call(0, "GET", "/authenticated", alice.token);
    springError(r, 401, "/authenticated");
    expect(r.body.error).toBe("invalid_token");
    expect((await call(1, "GET", "/authenticated", alice.token)).status).toBe(401);
    // Other tokens are unaffected.
    expect((await call(0, "GET", "/authenticated", other.token)).status).toBe(200);
  }, 30_000);
});

/** `n` WAITING orders straight into the database (one statement), three to a creation time, prices repeating. */
function bulkOrders(operator: OrderStorage, customerId: number, n: number, from: number) {
  return operator.query(`WITH RECURSIVE s(i) AS (SELECT ${from} UNION ALL SELECT i + 1 FROM s WHERE i < ${from + n - 1})
    INSERT INTO orders (description, price, status, created_at, customer_id)
    SELECT 'bulk ' || i, ((i * 7) % 13 + 1) * 100, 0, 1700000000000 + (i / 3) * 1000, ${customerId} FROM s`);
}

forEachBackend("deep pages kept by one instance follow writes made through another", (backend) => {
  test("orders inserted, created, taken and deleted elsewhere show on server A's deep pages at once, in every kept order", async () => {
    const { operator, call, login } = await twoServers(backend);
    const alice = await login(1, "alice", "Customer");
    const dave = await login(0, "dave", "Performer");
    const bob = await login(1, "bob", "Performer");
    const bulk = (n: number, from: number) => bulkOrders(operator, alice.id, n, from);
    await bulk(600, 0);
    const sorts: [string, string][] = [
      ["", "created_at DESC, id DESC"],
      ["&sort=price", "price ASC, id ASC"],
      ["&sort=id,desc", "id DESC"],
    ];
    const check = async () => {
      await nextTurn();
      for (const [q, order] of sorts) {
        // The database's own order is the truth the pages must match.
        const want = (await operator.query<{ id: number | string }>(`SELECT id FROM orders WHERE status = 0 ORDER BY ${order}`)).map((r) => Number(r.id));
        for (const page of [0, 13, 14, 20, Math.ceil(want.length / 20) - 1]) {
          const r = await call(0, "GET", `/orders?size=20&page=${page}${q}`, dave.token);
          expect(r.headers.get("x-total-count")).toBe(String(want.length));
          expect(r.body.map((o: { id: number }) => o.id)).toEqual(want.slice(page * 20, page * 20 + 20));
        }
      }
    };
    await check();
    // Through server B: new orders (newest: they go first), takes spread over the list; by hand: deletions.
    for (let i = 0; i < 3; i++) expect((await call(1, "POST", "/orders", alice.token, { description: `new ${i}`, price: 2 })).status).toBe(201);
    const ids = (await operator.query<{ id: number | string }>("SELECT id FROM orders WHERE status = 0 ORDER BY id")).map((r) => Number(r.id));
    for (const id of [ids[5], ids[300], ids[301], ids[599]]) expect((await call(1, "PATCH", `/orders/${id}/take`, bob.token)).status).toBe(200);
    await operator.query(`DELETE FROM orders WHERE id IN (${ids[10]}, ${ids[450]})`);
    await check();
    // A bulk load longer than a catch-up patches: the kept lists are rebuilt.
    await bulk(2500, 600);
    await check();
  }, 120_000);
});

forEachBackend("deep pages under random writes through another instance", (backend) => {
  test("40 rounds of random creations, takes and passes through B and edits by hand: A's deep pages (ids and statuses) always match the database", async () => {
    const { operator, call, login } = await twoServers(backend);
    const alice = await login(1, "alice", "Customer");
    const dave = await login(0, "dave", "Performer");
    const bob = await login(1, "bob", "Performer");
    const aliceA = await login(0, "alice2", "Customer");
    await bulkOrders(operator, aliceA.id, 700, 0);
    const ids = async (where: string, order: string) =>
      (await operator.query<{ id: number | string }>(`SELECT id FROM orders WHERE ${where} ORDER BY ${order}`)).map((r) => Number(r.id));
    let seed = 7;
    const rand = (n: number) => {
      seed = (seed * 1103515245 + 12345) % 2147483648;
      return seed % n;
    };
    const lists: [string, string, string, string][] = [
      ["/orders?size=20", "status = 0", "created_at DESC, id DESC", dave.token],
      ["/orders?size=20&sort=price,desc", "status = 0", "price DESC, id DESC", dave.token],
      [`/users/${aliceA.id}/orders?size=20`, `customer_id = ${aliceA.id}`, "created_at DESC, id DESC", aliceA.token],
      [`/users/${aliceA.id}/orders?size=20&sort=id`, `customer_id = ${aliceA.id}`, "id ASC", aliceA.token],
    ];
    for (let round = 0; round < 40; round++) {
      for (let op = rand(4); op >= 0; op--) {
        const waiting = await ids("status = 0", "id");
        const mine = await ids(`performer_id = ${bob.id} AND status < 3`, "id");
        const pick = rand(4);
        if (pick === 0) expect((await call(1, "POST", "/orders", alice.token, { description: `r${round}`, price: 1 + rand(3) })).status).toBe(201);
        else if (pick === 1) expect((await call(1, "PATCH", `/orders/${waiting[rand(waiting.length)]}/take`, bob.token)).status).toBe(200);
        else if (pick === 2 && mine.length) await call(1, "PATCH", `/orders/${mine[rand(mine.length)]}/pass`, bob.token);
        else await operator.query(`UPDATE orders SET status = 0, performer_id = NULL WHERE id = (SELECT min(id) FROM orders WHERE status = 1)`);
      }
      await nextTurn();
      for (const [path, where, order, token] of lists) {
        // Ids with statuses: a row shown from memory must be the row as it is now.
        const want = (await operator.query<{ id: number | string; status: number | string }>(`SELECT id, status FROM orders WHERE ${where} ORDER BY ${order}`)).map(
          (r) => `${r.id}:${STATUSES[Number(r.status)]}`,
        );
        // Every deep page each round, so pages shown before (their rows kept in memory) are shown again.
        for (let page = 13; page < Math.ceil(want.length / 20); page++) {
          const r = await call(0, "GET", `${path}&page=${page}`, token);
          expect(r.headers.get("x-total-count")).toBe(String(want.length));
          expect(r.body.map((o: { id: number; status: string }) => `${o.id}:${o.status}`)).toEqual(want.slice(page * 20, page * 20 + 20));
        }
      }
    }
  }, 120_000);
});
