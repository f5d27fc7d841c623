import { describe, expect, test } from "bun:test";
import { Database } from "bun:sqlite";
import type { AtomicStores, OrderStorage } from "../../src/orders/db/storage";
import { openOrderStorage } from "../../src/orders/db/open";
import { seedDemo, DEMO_USERS } from "../../src/orders/demo/seed";
import { freshPostgresDb } from "../support/postgres";
import { harness, forEachBackend } from "./harness";
import { CHEAP } from "./harness";

const COUNTS = "SELECT (SELECT COUNT(*) FROM users) AS users, (SELECT COUNT(*) FROM orders) AS orders, (SELECT COUNT(*) FROM ledger) AS ledger";

/** `storage` whose atomically hands `fn` stores changed by `wrap`: the seam tests inject faults and waits through. */
function wrapped(storage: OrderStorage, wrap: (s: AtomicStores) => AtomicStores): OrderStorage {
  return { ...storage, atomically: (fn) => storage.atomically((s) => fn(wrap(s))) };
}

// biome-ignore lint: any function type
type Fn = (...args: any[]) => any;

/** `store` with its method `method` replaced by `fn(original, ...args)`. */
function around<S extends object, K extends keyof S>(store: S, method: K, fn: S[K] extends Fn ? (orig: S[K], ...args: Parameters<S[K]>) => ReturnType<S[K]> : never): S {
  return new Proxy(store, {
    get(target, prop) {
      const value = Reflect.get(target, prop, target);
      if (typeof value !== "function") return value;
      const orig = value.bind(target);
      return prop === method ? (...args: unknown[]) => (fn as Fn)(orig, ...args) : orig;
    },
  });
}

/** A complete demo: 6 users, 50 orders; an opening ledger row per user and 4 per COMPLETED order (12). */
const FULL = { users: 6, orders: 50, ledger: 6 + 12 * 4 };

forEachBackend("demo data", () => {
  test("≥ 3 customers and 3 performers with password pass, ~50 orders in all four statuses, ledger-consistent", async () => {
    const h = await harness();
    expect(await seedDemo(h.storage, h.clock, CHEAP)).toBe(true);
    const q = h.sql;
    expect(DEMO_USERS.filter((u) => u.userType === "Customer").length).toBeGreaterThanOrEqual(3);
    expect(DEMO_USERS.filter((u) => u.userType === "Performer").length).toBeGreaterThanOrEqual(3);
    for (const u of DEMO_USERS) {
      const me = await h.call("GET", "/authenticated", { token: await h.token(u.username, "pass") });
      expect(me.body.userType).toBe(u.userType);
    }
    const byStatus = await q<{ status: number; n: number }>("SELECT status, COUNT(*) AS n FROM orders GROUP BY status ORDER BY status");
    expect(byStatus.map((s) => s.status)).toEqual([0, 1, 2, 3]);
    const total = byStatus.reduce((a, s) => a + s.n, 0);
    expect(total).toBeGreaterThanOrEqual(45);
    expect(total).toBeLessThanOrEqual(60);
    // COMPLETED orders really moved money: balances differ from the start and the ledger explains them.
    expect(await q("SELECT id FROM users u WHERE money <> (SELECT SUM(amount) FROM ledger WHERE user_id = u.id)")).toEqual([]);
    const [{ sum }] = await q<{ sum: number }>("SELECT SUM(money) + (SELECT SUM(amount) FROM ledger WHERE user_id IS NULL) AS sum FROM users");
    expect(sum).toBe(3 * 50_000 + 3 * 30_000);
    const [{ fee }] = await q<{ fee: number }>("SELECT SUM(amount) AS fee FROM ledger WHERE user_id IS NULL");
    expect(fee).toBeGreaterThan(0);
    // Created dates are spread out and in the past.
    const dates = await q<{ created_at: number }>("SELECT DISTINCT created_at FROM orders");
    expect(dates.length).toBe(total);
    expect(dates.every((d) => d.created_at < h.clock.now().getTime())).toBe(true);
  }, 30_000);

  test("seeding is idempotent: a second run on a non-empty database adds nothing", async () => {
    const h = await harness();
    await seedDemo(h.storage, h.clock, CHEAP);
    const count = () => h.sql("SELECT (SELECT COUNT(*) FROM users) AS u, (SELECT COUNT(*) FROM orders) AS o, (SELECT COUNT(*) FROM ledger) AS l");
    const before = await count();
    expect(await seedDemo(h.storage, h.clock, CHEAP)).toBe(false);
    expect(await count()).toEqual(before);
  }, 30_000);

  test("never seeds into a database that already has users", async () => {
    const h = await harness();
    await h.register("someone", "Customer");
    expect(await seedDemo(h.storage, h.clock, CHEAP)).toBe(false);
    expect((await h.sql("SELECT COUNT(*) AS n FROM orders"))[0].n).toBe(0);
  }, 30_000);

  test("a failure in the middle of seeding leaves nothing behind, and the next seed is complete", async () => {
    const h = await harness();
    let created = 0;
    const failing = wrapped(h.storage, (s) => ({
      users: s.users,
      orders: around(s.orders, "create", async (orig, o) => {
        if (++created > 25) throw new Error("injected: killed mid-seed");
        return orig(o);
      }),
    }));
    await expect(seedDemo(failing, h.clock, CHEAP)).rejects.toThrow("injected: killed mid-seed");
    expect(created).toBe(26);
    expect(await h.sql(COUNTS)).toEqual([{ users: 0, orders: 0, ledger: 0 }]);
    expect(await h.sql("SELECT status, n FROM order_counts WHERE n <> 0")).toEqual([]);

    expect(await seedDemo(h.storage, h.clock, CHEAP)).toBe(true);
    expect(await h.sql(COUNTS)).toEqual([FULL]);
    expect(await h.sql("SELECT id FROM users u WHERE money <> (SELECT SUM(amount) FROM ledger WHERE user_id = u.id)")).toEqual([]);
    expect((await h.call("GET", "/authenticated", { token: await h.token("anna") })).body.userType).toBe("Customer");
  }, 30_000);

  test("every query of the stores atomically hands out runs in its transaction, deep pages' raw ones too", async () => {
    const h = await harness();
    const customer = { username: "deep", key: "deep", passwordHash: "h", userType: "Customer" as const, money: 1_000_000, at: 0 };
    const page = await h.storage.atomically(async ({ users, orders }) => {
      const me = (await users.insert(customer))!;
      for (let i = 0; i < 300; i++) await orders.create({ description: `o${i}`, price: 1, customerId: me.id, at: i, need: 1 });
      // Offset 280 is past DEEP: the store builds the list's order with a raw query of its own.
      return orders.page({ customerId: me.id }, [{ field: "id", dir: "asc" }], 20, 280);
    });
    expect(page.total).toBe(300);
    expect(page.rows.map((r) => r.description)).toEqual(Array.from({ length: 20 }, (_, i) => `o${280 + i}`));
  }, 30_000);
});

describe("SQLite atomically", () => {
  test("bun:sqlite nests db.transaction() as a savepoint inside an open transaction", () => {
    const db = new Database(":memory:");
    db.exec("CREATE TABLE t (x INTEGER)");
    db.exec("BEGIN IMMEDIATE");
    expect(() => db.transaction(() => {
      db.exec("INSERT INTO t VALUES (1)");
      throw new Error("inner");
    }).immediate()).toThrow("inner");
    db.transaction(() => db.exec("INSERT INTO t VALUES (2)")).immediate();
    // The inner failure rolled back only its savepoint, and neither inner call ended the outer transaction.
    expect(db.inTransaction).toBe(true);
    expect(db.query("SELECT x FROM t").all()).toEqual([{ x: 2 }]);
    db.exec("ROLLBACK");
    expect(db.query("SELECT COUNT(*) AS n FROM t").get()).toEqual({ n: 0 });
  });

  test("fn yielding to the event loop rolls back instead of committing what could have joined the transaction", async () => {
    const h = await harness({}, "sqlite");
    const user = { username: "x", key: "x", passwordHash: "h", userType: "Customer" as const, money: 1, at: 0 };
    await expect(h.storage.atomically(async ({ users }) => {
      await users.insert(user);
      await Bun.sleep(1);
    })).rejects.toThrow("yielded to the event loop");
    expect(await h.sql(COUNTS)).toEqual([{ users: 0, orders: 0, ledger: 0 }]);
    await h.storage.atomically(async ({ users }) => void (await users.insert(user)));
    expect(await h.sql(COUNTS)).toEqual([{ users: 1, orders: 0, ledger: 1 }]);
  });
});

describe("PostgreSQL: two instances seeding one empty database together", () => {
  test("the second waits for the first to commit, then returns false; the demo is seeded once", async () => {
    const url = await freshPostgresDb();
    const [a, b] = [await openOrderStorage(url, { max: 4 }), await openOrderStorage(url, { max: 4 })];
    try {
      let firstIn!: () => void;
      const aHasAnna = new Promise<void>((r) => (firstIn = r));
      // A inserts the first demo user, then holds its transaction open until B's insert of the same
      // user is seen waiting on a lock; B enters only after A's first insert.
      const holdA = wrapped(a, (s) => ({
        orders: s.orders,
        users: around(s.users, "insert", async (orig, u) => {
          const row = await orig(u);
          if (u.username === DEMO_USERS[0].username) {
            firstIn();
            for (let i = 0; i < 500 && !(await blocked(a)); i++) await Bun.sleep(10);
            expect(await blocked(a)).toBe(true);
          }
          return row;
        }),
      }));
      const gateB: OrderStorage = { ...b, atomically: async (fn) => (await aHasAnna, b.atomically(fn)) };
      const results = await Promise.all([seedDemo(holdA, fixedClock, CHEAP), seedDemo(gateB, fixedClock, CHEAP)]);
      expect(results).toEqual([true, false]);
      const counts = (await a.query<Record<string, unknown>>(COUNTS)).map((r) => Object.fromEntries(Object.entries(r).map(([k, v]) => [k, Number(v)])));
      expect(counts).toEqual([FULL]);
    } finally {
      await a.close();
      await b.close();
    }
  }, 60_000);
});

const fixedClock = { now: () => new Date("2026-11-22T09:30:12Z") };

/** Whether some session on `storage`'s database waits on a lock. */
async function blocked(storage: OrderStorage): Promise<boolean> {
  const rows = await storage.query<{ n: unknown }>("SELECT COUNT(*) AS n FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'");
  return Number(rows[0].n) > 0;
}
