import { describe, expect, test } from "bun:test";
import { harness, springError, forEachBackend } from "./harness";

/** 7 orders by alice at distinct times and prices; bob takes two, passes one. */
async function listWorld() {
  const h = await harness();
  const alice = await h.user("alice", "Customer");
  const carol = await h.user("carol", "Customer");
  const bob = await h.user("bob", "Performer");
  const dave = await h.user("dave", "Performer");
  const prices = [30, 10, 50, 20, 40, 10, 60];
  const ids: number[] = [];
  for (const [i, price] of prices.entries()) {
    h.clock.advance(60_000);
    ids.push((await h.call("POST", "/orders", { token: alice.token, json: { description: `task ${String.fromCharCode(103 - i)}`, price } })).body.id);
  }
  await h.call("PATCH", `/orders/${ids[0]}/take`, { token: bob.token });
  await h.call("PATCH", `/orders/${ids[1]}/take`, { token: bob.token });
  await h.call("PATCH", `/orders/${ids[1]}/pass`, { token: bob.token });
  return { h, alice, carol, bob, dave, ids };
}

const idsOf = (r: { body: { id: number }[] }) => r.body.map((o) => o.id);

forEachBackend("GET /orders (performers: WAITING orders)", () => {
  test("a plain array of WAITING orders, newest first, with X-Total-Count and Link", async () => {
    const { h, dave, ids } = await listWorld();
    const r = await h.call("GET", "/orders", { token: dave.token });
    expect(r.status).toBe(200);
    expect(Array.isArray(r.body)).toBe(true);
    expect(idsOf(r)).toEqual([ids[6], ids[5], ids[4], ids[3], ids[2]]);
    expect(r.body.every((o: { status: string; performerId: unknown }) => o.status === "WAITING" && o.performerId === null)).toBe(true);
    expect(r.headers.get("x-total-count")).toBe("5");
    expect(r.headers.get("link")).toBe('<http://localhost/orders?page=0&size=20>; rel="first", <http://localhost/orders?page=0&size=20>; rel="last"');
  }, 30_000);

  test("customers get 403", async () => {
    const { h, alice } = await listWorld();
    const r = await h.call("GET", "/orders", { token: alice.token });
    springError(r, 403, "/orders");
    expect(r.body.error).toBe("access_denied");
  }, 30_000);

  test("page and size walk the list; Link has first/prev/next/last and keeps other parameters", async () => {
    const { h, dave, ids } = await listWorld();
    const p0 = await h.call("GET", "/orders?size=2&sort=price,asc", { token: dave.token });
    expect(idsOf(p0)).toEqual([ids[5], ids[3]]);
    const seen: number[] = [];
    for (let page = 0; page < 3; page++) {
      const r = await h.call("GET", `/orders?size=2&page=${page}&sort=price,asc`, { token: dave.token });
      expect(r.headers.get("x-total-count")).toBe("5");
      seen.push(...idsOf(r));
      const link = r.headers.get("link")!;
      expect(link).toContain(`<http://localhost/orders?size=2&page=0&sort=price%2Casc>; rel="first"`);
      expect(link).toContain(`<http://localhost/orders?size=2&page=2&sort=price%2Casc>; rel="last"`);
      expect(link.includes('rel="prev"')).toBe(page > 0);
      expect(link.includes('rel="next"')).toBe(page < 2);
      if (page === 1) {
        expect(link).toContain(`page=0&sort=price%2Casc>; rel="prev"`);
        expect(link).toContain(`page=2&sort=price%2Casc>; rel="next"`);
      }
    }
    // prices 10 (ids 5), 20 (3), 40 (4), 50 (2), 60 (6)
    expect(seen).toEqual([ids[5], ids[3], ids[4], ids[2], ids[6]]);
    const past = await h.call("GET", "/orders?page=9", { token: dave.token });
    expect(past.body).toEqual([]);
    expect(past.headers.get("x-total-count")).toBe("5");
  }, 30_000);

  test("sort: repeatable, asc/desc, ties broken stably", async () => {
    const { h, alice, dave, ids } = await listWorld();
    const byPriceDesc = await h.call("GET", "/orders?sort=price,desc", { token: dave.token });
    expect(idsOf(byPriceDesc)).toEqual([ids[6], ids[2], ids[4], ids[3], ids[5]]);
    const byDesc = await h.call("GET", "/orders?sort=description", { token: dave.token });
    // descriptions are "task g".."task a" for ids[0..6]
    expect(idsOf(byDesc)).toEqual([ids[6], ids[5], ids[4], ids[3], ids[2]]);
    const byId = await h.call("GET", "/orders?sort=id,asc", { token: dave.token });
    expect(idsOf(byId)).toEqual([ids[2], ids[3], ids[4], ids[5], ids[6]]);
    const created = await h.call("GET", "/orders?sort=createdDate,asc", { token: dave.token });
    expect(idsOf(created)).toEqual([ids[2], ids[3], ids[4], ids[5], ids[6]]);
    // Two orders at 10: the second key decides.
    await h.call("POST", "/orders", { token: alice.token, json: { description: "task z", price: 10 } });
    const two = await h.call("GET", "/orders?sort=price&sort=description,desc&size=2", { token: dave.token });
    expect(two.body.map((o: { description: string }) => o.description)).toEqual(["task z", "task b"]);
  }, 30_000);

  test("status sorts in lifecycle order (WAITING, IN_PROGRESS, READY, COMPLETED)", async () => {
    const { h, alice, bob, ids } = await listWorld();
    await h.call("PATCH", `/orders/${ids[2]}/take`, { token: bob.token });
    await h.call("PATCH", `/orders/${ids[2]}/pass`, { token: bob.token });
    await h.call("PATCH", `/orders/${ids[2]}/accept`, { token: alice.token });
    const asc = await h.call("GET", `/users/${alice.id}/orders?sort=status,asc&sort=id,asc`, { token: alice.token });
    expect(asc.body.map((o: { status: string }) => o.status)).toEqual(["WAITING", "WAITING", "WAITING", "WAITING", "IN_PROGRESS", "READY", "COMPLETED"]);
    const desc = await h.call("GET", `/users/${alice.id}/orders?sort=status,desc&size=3`, { token: alice.token });
    expect(desc.body.map((o: { status: string }) => o.status)).toEqual(["COMPLETED", "READY", "IN_PROGRESS"]);
  }, 30_000);

  test("bad paging parameters → 400 naming the parameter", async () => {
    const { h, dave } = await listWorld();
    const bad: [string, string][] = [
      ["page=-1", "page"],
      ["page=abc", "page"],
      ["page=1.5", "page"],
      ["size=0", "size"],
      ["size=101", "size"],
      ["size=", "size"],
      ["sort=password", "sort"],
      ["sort=price,sideways", "sort"],
      ["sort=price;DROP TABLE orders", "sort"],
      ["sort=customerId", "sort"],
      ["page=1&page=2", "page"],
    ];
    for (const [q, field] of bad) {
      const r = await h.call("GET", `/orders?${q}`, { token: dave.token });
      expect(springError(r, 400, "/orders")).toContain(field);
    }
    expect((await h.call("GET", "/orders?size=100&page=0", { token: dave.token })).status).toBe(200);
  }, 30_000);
});

forEachBackend("list replies follow every write", () => {
  test("take, accept and new orders show up in the next list call and in balances", async () => {
    const { h, alice, bob, dave, ids } = await listWorld();
    const before = await h.call("GET", "/orders", { token: dave.token });
    expect(before.headers.get("x-total-count")).toBe("5");
    await h.call("PATCH", `/orders/${ids[6]}/take`, { token: bob.token });
    const after = await h.call("GET", "/orders", { token: dave.token });
    expect(after.headers.get("x-total-count")).toBe("4");
    expect(idsOf(after)).not.toContain(ids[6]);
    const bobs = await h.call("GET", `/users/${bob.id}/orders`, { token: bob.token });
    expect(idsOf(bobs)).toContain(ids[6]);
    await h.call("PATCH", `/orders/${ids[6]}/pass`, { token: bob.token });
    await h.call("GET", "/authenticated", { token: alice.token });
    await h.call("PATCH", `/orders/${ids[6]}/accept`, { token: alice.token });
    expect((await h.call("GET", "/authenticated", { token: alice.token })).body.money).toBe(500 - 63);
    const mine = await h.call("GET", `/users/${alice.id}/orders?sort=id,desc&size=1`, { token: alice.token });
    expect(mine.body[0].status).toBe("COMPLETED");
  }, 30_000);
});

forEachBackend("GET /users/{id}/orders", () => {
  test("a customer's published orders; a performer's taken ones", async () => {
    const { h, alice, carol, bob, dave, ids } = await listWorld();
    const mine = await h.call("GET", `/users/${alice.id}/orders`, { token: alice.token });
    expect(mine.headers.get("x-total-count")).toBe("7");
    expect(idsOf(mine)).toEqual([...ids].reverse());
    const taken = await h.call("GET", `/users/${bob.id}/orders?sort=id`, { token: bob.token });
    expect(idsOf(taken)).toEqual([ids[0], ids[1]]);
    expect(taken.headers.get("x-total-count")).toBe("2");
    const none = await h.call("GET", `/users/${dave.id}/orders`, { token: dave.token });
    expect(none.body).toEqual([]);
    expect(none.headers.get("x-total-count")).toBe("0");
    expect((await h.call("GET", `/users/${carol.id}/orders`, { token: carol.token })).body).toEqual([]);
  }, 30_000);

  test("another user's id → 403; an unknown id → 403 too (no probing)", async () => {
    const { h, alice, bob } = await listWorld();
    for (const path of [`/users/${alice.id}/orders`, "/users/9999/orders", "/users/0/orders", "/users/-3/orders"]) {
      const r = await h.call("GET", path, { token: bob.token });
      springError(r, 403, path);
      expect(r.body.error).toBe("access_denied");
    }
    expect((await h.call("GET", `/users/${alice.id}/orders`)).status).toBe(401);
  }, 30_000);
});

forEachBackend("deep pages (kept list order)", () => {
  test("every page of 700 orders, in the default, price and id sorts, matches the list sorted here; a take shifts deep pages at once", async () => {
    const h = await harness();
    const alice = await h.user("alice", "Customer");
    const bob = await h.user("bob", "Performer");
    const made: { id: number; price: number; at: number }[] = [];
    for (let i = 0; i < 700; i++) {
      // Some orders share a creation time and many share a price, so the id tie-break matters.
      if (i % 3 === 0) h.clock.advance(1000);
      const price = ((i * 7) % 13) + 1;
      const r = await h.call("POST", "/orders", { token: alice.token, json: { description: `deep ${i}`, price: price / 100 } });
      made.push({ id: r.body.id, price, at: h.clock.now().getTime() });
    }
    const sorts: [string, (a: (typeof made)[0], b: (typeof made)[0]) => number][] = [
      ["", (a, b) => b.at - a.at || b.id - a.id],
      ["&sort=price", (a, b) => a.price - b.price || a.id - b.id],
      ["&sort=price,desc", (a, b) => b.price - a.price || b.id - a.id],
      ["&sort=id,desc", (a, b) => b.id - a.id],
      ["&sort=createdDate,asc&sort=id,asc", (a, b) => a.at - b.at || a.id - b.id],
    ];
    const check = async (live: typeof made) => {
      for (const [q, cmp] of sorts) {
        const want = [...live].sort(cmp).map((o) => o.id);
        // Pages from both ends and the middle, shallow (SQL) and deep (the kept list).
        for (const page of [0, 5, 12, 13, 25, 26, 27, 34]) {
          const r = await h.call("GET", `/orders?size=20&page=${page}${q}`, { token: bob.token });
          expect(r.status).toBe(200);
          expect(r.headers.get("x-total-count")).toBe(String(live.length));
          expect(idsOf(r)).toEqual(want.slice(page * 20, page * 20 + 20));
        }
      }
    };
    await check(made);
    // Taking orders near the front moves every later row up; new ones push every row down.
    const taken = new Set([made[699].id, made[650].id, made[3].id, made[400].id]);
    for (const id of taken) expect((await h.call("PATCH", `/orders/${id}/take`, { token: bob.token })).status).toBe(200);
    await check(made.filter((o) => !taken.has(o.id)));
  }, 120_000);
});
