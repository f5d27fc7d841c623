import { describe, expect, test } from "bun:test";
import { seedDemo, DEMO_USERS } from "../../src/orders/demo/seed";
import { harness, forEachBackend } from "./harness";
import { CHEAP } from "./harness";

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
});
