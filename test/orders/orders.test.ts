import { describe, expect, test } from "bun:test";
import { harness, springError, forEachBackend, type Harness } from "./harness";

async function world() {
  const h = await harness();
  const alice = await h.user("alice", "Customer");
  const carol = await h.user("carol", "Customer");
  const bob = await h.user("bob", "Performer");
  const dave = await h.user("dave", "Performer");
  const create = async (price: unknown = 100, description = "Fix the fence", token = alice.token) =>
    h.call("POST", "/orders", { token, json: { description, price } });
  return { h, alice, carol, bob, dave, create };
}

const money = async (h: Harness, token: string) => (await h.call("GET", "/authenticated", { token })).body.money;

forEachBackend("POST /orders", () => {
  test("a customer publishes an order: 201 WAITING with the original field names", async () => {
    const { h, alice, create } = await world();
    const r = await create(123.45);
    expect(r.status).toBe(201);
    expect(r.body).toEqual({
      id: r.body.id,
      description: "Fix the fence",
      price: 123.45,
      status: "WAITING",
      createdDate: "2026-11-22T09:30:12",
      customerId: alice.id,
      customerName: "alice",
      performerId: null,
      performerName: null,
    });
    expect(r.headers.get("location")).toBe(`/orders/${r.body.id}`);
  }, 30_000);

  test("performers cannot publish → 403 access_denied", async () => {
    const { h, bob } = await world();
    const r = await h.call("POST", "/orders", { token: bob.token, json: { description: "x", price: 1 } });
    springError(r, 403, "/orders");
    expect(r.body.error).toBe("access_denied");
  }, 30_000);

  test("price > 0, ≤ 1 000 000 000, at most 2 decimals; description 1–2000 chars; messages name the field", async () => {
    const { h, alice, create } = await world();
    for (const price of [0, -5, 10.005, 10.000000001, 0.0000001, "10.000000001", 1_000_000_000.01, "abc", null, true, [], {}, "1e3", 1e21]) {
      expect(springError(await create(price), 400, "/orders")).toContain("price");
    }
    // Two decimals that binary floats cannot hold exactly are still two decimals.
    for (const price of [0.29, 1.15, 4.35, 19.99]) expect((await create(price)).body.price).toBe(price);
    for (const description of ["", "   ", "d".repeat(2001)]) {
      expect(springError(await create(10, description), 400, "/orders")).toContain("description");
    }
    const noPrice = await h.call("POST", "/orders", { token: alice.token, json: { description: "x" } });
    expect(springError(noPrice, 400, "/orders")).toContain("price");
    expect((await create(0.01)).status).toBe(201);
    expect((await create(12.3)).body.price).toBe(12.3);
    expect((await create("19.99")).body.price).toBe(19.99);
    expect((await create(10, "d".repeat(2000))).status).toBe(201);
  }, 30_000);

  test("an order the customer could not pay now (price + 5 % > balance) → 409 naming balance and amount", async () => {
    const { h, alice, create } = await world();
    // 476.20 + 23.81 = 500.01 > 500.00
    const r = await create(476.2);
    const msg = springError(r, 409, "/orders");
    expect(msg).toContain("500.00");
    expect(msg).toContain("500.01");
    // 476.19 + 23.81 = 500.00 is exactly affordable.
    expect((await create(476.19)).status).toBe(201);
    // The price of a 1 000 000 000 order passes validation and fails on money.
    expect((await create(1_000_000_000)).status).toBe(409);
    expect(await money(h, alice.token)).toBe(500);
  }, 30_000);
});

forEachBackend("lifecycle", () => {
  test("take, pass, accept: statuses, performer fields and money (price + 5 % half-up)", async () => {
    const { h, alice, bob, create } = await world();
    const o = (await create(100.5)).body;
    const taken = await h.call("PATCH", `/orders/${o.id}/take`, { token: bob.token });
    expect(taken.status).toBe(200);
    expect(taken.body).toMatchObject({ status: "IN_PROGRESS", performerId: bob.id, performerName: "bob" });
    const passed = await h.call("PATCH", `/orders/${o.id}/pass`, { token: bob.token });
    expect(passed.body.status).toBe("READY");
    const accepted = await h.call("PATCH", `/orders/${o.id}/accept`, { token: alice.token });
    expect(accepted.status).toBe(200);
    expect(accepted.body.status).toBe("COMPLETED");
    // 5 % of 100.50 = 5.025 → 5.03 (half-up): 500 − 100.50 − 5.03 = 394.47
    expect(await money(h, alice.token)).toBe(394.47);
    expect(await money(h, bob.token)).toBe(400.5);
  }, 30_000);

  test("commission rounds half-up to the kopeck", async () => {
    const { h, alice, bob, create } = await world();
    // [price, commission]: 0.10 → 0.005 → 0.01; 0.09 → 0.0045 → 0.00; 0.30 → 0.015 → 0.02; 10 → 0.50
    let expected = 500;
    for (const [price, fee] of [[0.1, 0.01], [0.09, 0], [0.3, 0.02], [10, 0.5]]) {
      const id = (await create(price)).body.id;
      await h.call("PATCH", `/orders/${id}/take`, { token: bob.token });
      await h.call("PATCH", `/orders/${id}/pass`, { token: bob.token });
      expect((await h.call("PATCH", `/orders/${id}/accept`, { token: alice.token })).status).toBe(200);
      expected = Math.round((expected - price - fee) * 100) / 100;
      expect(await money(h, alice.token)).toBe(expected);
      const fees = await h.sql<{ amount: number }>(`SELECT amount FROM ledger WHERE order_id = ${id} AND user_id IS NULL`);
      expect(fees.map((l) => l.amount)).toEqual([Math.round(fee * 100)]);
    }
  }, 30_000);

  test("wrong state → 409 Spring body with a message naming the state", async () => {
    const { h, alice, bob, create } = await world();
    const id = (await create(10)).body.id;
    const pass = await h.call("PATCH", `/orders/${id}/take`, { token: bob.token }).then(() => h.call("PATCH", `/orders/${id}/accept`, { token: alice.token }));
    expect(springError(pass, 409, `/orders/${id}/accept`)).toBe(`Order ${id} is IN_PROGRESS; only a READY order can be accepted`);
    await h.call("PATCH", `/orders/${id}/pass`, { token: bob.token });
    const again = await h.call("PATCH", `/orders/${id}/take`, { token: bob.token });
    expect(springError(again, 409, `/orders/${id}/take`)).toBe(`Order ${id} is READY; only a WAITING order can be taken`);
    const pass2 = await h.call("PATCH", `/orders/${id}/pass`, { token: bob.token });
    expect(springError(pass2, 409, `/orders/${id}/pass`)).toBe(`Order ${id} is READY; only an IN_PROGRESS order can be passed`);
    await h.call("PATCH", `/orders/${id}/accept`, { token: alice.token });
    const twice = await h.call("PATCH", `/orders/${id}/accept`, { token: alice.token });
    expect(springError(twice, 409, `/orders/${id}/accept`)).toContain("is COMPLETED");
    expect(await money(h, alice.token)).toBe(489.5);
  }, 30_000);

  test("unknown order → 404; roles and ownership → 403 access_denied", async () => {
    const { h, alice, carol, bob, dave, create } = await world();
    expect(springError(await h.call("PATCH", "/orders/999/take", { token: bob.token }), 404, "/orders/999/take")).toContain("999");
    expect((await h.call("PATCH", "/orders/999/pass", { token: bob.token })).status).toBe(404);
    expect((await h.call("PATCH", "/orders/999/accept", { token: alice.token })).status).toBe(404);
    const id = (await create(10)).body.id;
    const denied = async (token: string, action: string) => {
      const r = await h.call("PATCH", `/orders/${id}/${action}`, { token });
      springError(r, 403, `/orders/${id}/${action}`);
      expect(r.body.error).toBe("access_denied");
    };
    await denied(alice.token, "take"); // customers cannot take
    await denied(bob.token, "pass"); // WAITING: nobody's performer yet
    await h.call("PATCH", `/orders/${id}/take`, { token: bob.token });
    await denied(dave.token, "pass"); // another performer
    await denied(alice.token, "pass"); // the customer
    await h.call("PATCH", `/orders/${id}/pass`, { token: bob.token });
    await denied(carol.token, "accept"); // another customer
    await denied(bob.token, "accept"); // the performer
    expect((await h.call("PATCH", `/orders/${id}/accept`, { token: alice.token })).status).toBe(200);
  }, 30_000);

  test("accept with too little money → 409 naming balance and amount; nothing changes", async () => {
    const { h, alice, bob, dave, create } = await world();
    // Two orders of 300: each affordable alone (315 ≤ 500), not both.
    const a = (await create(300)).body.id;
    const b = (await create(300)).body.id;
    for (const [id, p] of [[a, bob], [b, dave]] as const) {
      await h.call("PATCH", `/orders/${id}/take`, { token: p.token });
      await h.call("PATCH", `/orders/${id}/pass`, { token: p.token });
    }
    expect((await h.call("PATCH", `/orders/${a}/accept`, { token: alice.token })).status).toBe(200);
    const r = await h.call("PATCH", `/orders/${b}/accept`, { token: alice.token });
    const msg = springError(r, 409, `/orders/${b}/accept`);
    expect(msg).toContain("185.00");
    expect(msg).toContain("315.00");
    expect((await h.call("GET", `/orders/${b}`, { token: alice.token })).body.status).toBe("READY");
    expect(await money(h, alice.token)).toBe(185);
    expect(await money(h, dave.token)).toBe(300);
    expect(await h.sql(`SELECT * FROM ledger WHERE order_id = ${b}`)).toEqual([]);
  }, 30_000);

  test("accept writes the ledger: payment, commission, earning, platform commission", async () => {
    const { h, alice, bob, create } = await world();
    const id = (await create(20)).body.id;
    await h.call("PATCH", `/orders/${id}/take`, { token: bob.token });
    await h.call("PATCH", `/orders/${id}/pass`, { token: bob.token });
    h.clock.advance(60_000);
    await h.call("PATCH", `/orders/${id}/accept`, { token: alice.token });
    const rows = await h.sql<{ user_id: number | null; kind: string; amount: number; created_at: number }>(`SELECT * FROM ledger WHERE order_id = ${id}`);
    const shape: unknown[][] = rows.map((r) => [r.user_id, r.kind, r.amount]).sort();
    expect(shape).toEqual(
      [
        [alice.id, "payment", -2000],
        [alice.id, "commission", -100],
        [bob.id, "earning", 2000],
        [null, "commission", 100],
      ].sort(),
    );
    expect(rows.every((r) => r.created_at === Date.parse("2026-11-22T09:31:12Z"))).toBe(true);
    const balances = await h.sql<{ id: number; money: number }>("SELECT id, money FROM users");
    expect(balances.find((b) => b.id === alice.id)!.money).toBe(50_000 - 2100);
  }, 30_000);
});

forEachBackend("GET /orders/{id}", () => {
  test("the customer and the performer see it; any performer while WAITING; others 403; unknown 404", async () => {
    const { h, alice, carol, bob, dave, create } = await world();
    const id = (await create(10)).body.id;
    const get = (token: string) => h.call("GET", `/orders/${id}`, { token });
    expect((await get(alice.token)).status).toBe(200);
    expect((await get(dave.token)).status).toBe(200);
    expect((await get(carol.token)).status).toBe(403);
    await h.call("PATCH", `/orders/${id}/take`, { token: bob.token });
    expect((await get(bob.token)).body.performerName).toBe("bob");
    expect((await get(alice.token)).status).toBe(200);
    expect(springError(await get(dave.token), 403, `/orders/${id}`)).toBeString();
    expect(springError(await h.call("GET", "/orders/12345", { token: alice.token }), 404, "/orders/12345")).toContain("12345");
    // 0 and negatives are integers naming no order: 404 like any unknown id, as the original's Long ids.
    for (const unknown of ["0", "-1"]) {
      expect(springError(await h.call("GET", `/orders/${unknown}`, { token: alice.token }), 404, `/orders/${unknown}`)).toContain(unknown);
      expect(springError(await h.call("PATCH", `/orders/${unknown}/take`, { token: bob.token }), 404, `/orders/${unknown}/take`)).toContain(unknown);
    }
    for (const bad of ["abc", "1.5", "99999999999999999999"]) {
      expect(springError(await h.call("GET", `/orders/${bad}`, { token: alice.token }), 400, `/orders/${bad}`)).toContain("id");
    }
  }, 30_000);
});
