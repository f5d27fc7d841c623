// Randomized money conservation: thousands of interleaved API calls by many users; after every batch,
// balances + collected commission = starting money, and the ledger explains every balance.
import { describe, expect, test } from "bun:test";
import { harness, forEachBackend, type Harness } from "./harness";
import { randomLoad } from "./random-load";

async function invariants(h: Harness) {
  const q = h.sql;
  const [{ balances }] = await q<{ balances: number }>("SELECT COALESCE(SUM(money), 0) AS balances FROM users");
  const [{ opening }] = await q<{ opening: number }>("SELECT COALESCE(SUM(amount), 0) AS opening FROM ledger WHERE kind = 'opening'");
  const [{ platform }] = await q<{ platform: number }>("SELECT COALESCE(SUM(amount), 0) AS platform FROM ledger WHERE user_id IS NULL");
  expect(balances + platform).toBe(opening);
  const unexplained = await q("SELECT u.id FROM users u LEFT JOIN ledger l ON l.user_id = u.id GROUP BY u.id HAVING u.money <> COALESCE(SUM(l.amount), 0)");
  expect(unexplained).toEqual([]);
  // Money moved for exactly the COMPLETED orders, 4 rows each, each order's rows summing to zero.
  const moved = await q<{ order_id: number; n: number; total: number; status: number }>(
    "SELECT l.order_id, COUNT(*) AS n, SUM(l.amount) AS total, o.status FROM ledger l JOIN orders o ON o.id = l.order_id GROUP BY l.order_id, o.status",
  );
  expect(moved.every((m) => m.n === 4 && m.total === 0 && m.status === 3)).toBe(true);
  const [{ completed }] = await q<{ completed: number }>("SELECT COUNT(*) AS completed FROM orders WHERE status = 3");
  expect(moved).toHaveLength(completed);
  expect(await q("SELECT id FROM users WHERE money < 0")).toEqual([]);
  // The per-status counters (list totals) agree with the table.
  expect(await q("SELECT c.status FROM order_counts c WHERE c.n <> (SELECT COUNT(*) FROM orders o WHERE o.status = c.status)")).toEqual([]);
  return { balances, platform, opening };
}

forEachBackend("money conservation", () => {
  test("3000 random interleaved operations by 16 users keep every invariant", async () => {
    const h = await harness();
    const customers = await Promise.all(Array.from({ length: 8 }, (_, i) => h.user(`c${i}`, "Customer")));
    const performers = await Promise.all(Array.from({ length: 8 }, (_, i) => h.user(`p${i}`, "Performer")));
    const load = randomLoad(20261122, customers, performers);
    for (let batch = 0; batch < 60; batch++) {
      await load.batch(50, () => h.call);
      const { opening } = await invariants(h);
      expect(opening).toBe(8 * 50_000 + 8 * 30_000);
    }
    const { statuses } = load;
    expect(load.ops()).toBe(3000);
    // The run exercised success and every refusal path, and never a 5xx.
    expect(statuses.get(200)).toBeGreaterThan(300);
    expect(statuses.get(201)).toBeGreaterThan(300);
    expect(statuses.get(403)).toBeGreaterThan(0);
    expect(statuses.get(409)).toBeGreaterThan(0);
    expect([...statuses.keys()].every((s) => s < 500)).toBe(true);
    const [completed] = await h.sql("SELECT COUNT(*) AS n FROM orders WHERE status = 3");
    expect(completed.n).toBeGreaterThan(30);
  }, 30_000);
});
