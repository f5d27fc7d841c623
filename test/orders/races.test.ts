import { describe, expect, test } from "bun:test";
import { harness, forEachBackend } from "./harness";

forEachBackend("concurrent state changes", () => {
  test("20 performers take one order at once → exactly one 200, the rest 409", async () => {
    const h = await harness();
    const alice = await h.user("alice", "Customer");
    const performers = await Promise.all(Array.from({ length: 20 }, (_, i) => h.user(`p${i}`, "Performer")));
    const id = (await h.call("POST", "/orders", { token: alice.token, json: { description: "race", price: 10 } })).body.id;
    const replies = await Promise.all(performers.map((p) => h.call("PATCH", `/orders/${id}/take`, { token: p.token })));
    const ok = replies.filter((r) => r.status === 200);
    expect(ok).toHaveLength(1);
    expect(replies.filter((r) => r.status === 409)).toHaveLength(19);
    const order = (await h.call("GET", `/orders/${id}`, { token: alice.token })).body;
    expect(order.performerId).toBe(ok[0].body.performerId);
  }, 30_000);

  test("two accepts at once → one debit", async () => {
    const h = await harness();
    const alice = await h.user("alice", "Customer");
    const bob = await h.user("bob", "Performer");
    const id = (await h.call("POST", "/orders", { token: alice.token, json: { description: "race", price: 100 } })).body.id;
    await h.call("PATCH", `/orders/${id}/take`, { token: bob.token });
    await h.call("PATCH", `/orders/${id}/pass`, { token: bob.token });
    const replies = await Promise.all([1, 2].map(() => h.call("PATCH", `/orders/${id}/accept`, { token: alice.token })));
    expect(replies.map((r) => r.status).sort()).toEqual([200, 409]);
    expect((await h.call("GET", "/authenticated", { token: alice.token })).body.money).toBe(395);
    expect((await h.call("GET", "/authenticated", { token: bob.token })).body.money).toBe(400);
    expect(await h.sql(`SELECT id FROM ledger WHERE order_id = ${id}`)).toHaveLength(4);
  }, 30_000);
});
