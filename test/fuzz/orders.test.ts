// Fuzzing the order server in-process (app.handle): requests for every operation of its own OpenAPI
// document (src/orders/openapi.ts), valid and hostile, as customer A, performer P, with garbage or no
// token. Properties: never a 5xx, every error in the Spring-style (or OAuth) envelope, nothing of
// customer B (whose orders carry a marker) in any answer, and money conserved afterwards. On both
// backends, like every order test: NUL bytes were 500s on PostgreSQL only (issue 36 part 4).
import { expect, setDefaultTimeout, test } from "bun:test";
import fc from "fast-check";
import { openApiDocument } from "../../src/orders/openapi";
import { forEachBackend, harness } from "../orders/harness";
import { fuzzParams, operationsOf, requestArb } from "./requests";
import { isOrdersEnvelope } from "./support";

setDefaultTimeout(120_000);

const MARK = "secretb7q";

forEachBackend("fuzz: order server in-process", (backend) => {
  test("every operation, hostile input: no 5xx, the envelope, no other customer's data, money conserved", async () => {
    const h = await harness();
    const a = await h.user("fuzz-a", "Customer");
    const b = await h.user("fuzz-b", "Customer");
    const p = await h.user("fuzz-p", "Performer");
    const ids = [String(a.id), String(b.id), String(p.id)];
    for (const [who, title] of [[a, "a-order"], [b, `${MARK} order`]] as const) {
      const r = await h.call("POST", "/orders", { token: who.token, json: { description: title, price: 100 } });
      if (r.status === 201 || r.status === 200) ids.push(String((r.body as { id: number }).id));
    }
    const ops = operationsOf(openApiDocument() as unknown as Parameters<typeof operationsOf>[0]);
    expect(ops.length).toBeGreaterThan(5);
    const ctx = { ids, auth: [`Bearer ${a.token}`, `Bearer ${a.token}`, `Bearer ${p.token}`, "Bearer not-a-token", "Basic Zm9vOmJhcg==", undefined], zips: [] };
    const statuses = new Map<number, number>();
    await fc.assert(
      fc.asyncProperty(requestArb(ops, ctx), async (req) => {
        const res = await h.app.handle(new Request(`http://localhost${req.url}`, { method: req.method, headers: req.headers, body: req.body }));
        const text = await res.text();
        statuses.set(res.status, (statuses.get(res.status) ?? 0) + 1);
        if (res.status >= 500) throw new Error(`${res.status} for ${req.describe}: ${text.slice(0, 300)}`);
        if (res.status >= 400 && !isOrdersEnvelope(text)) throw new Error(`no envelope (${res.status}) for ${req.describe}: ${text.slice(0, 300)}`);
        // Performers see open orders of every customer by design; another customer must not.
        if (req.headers.authorization !== `Bearer ${p.token}` && text.includes(MARK)) throw new Error(`customer B's order in the answer to ${req.describe}`);
      }),
      fuzzParams(`orders in-process [${backend}]`, backend === "postgres" ? 1000 : 2000),
    );
    console.log(`[fuzz] orders statuses: ${JSON.stringify(Object.fromEntries(statuses))}`);
    // Conservation: balances plus the platform's commission equal the opening money; no negative balance.
    const [{ balances }] = await h.sql<{ balances: number }>("SELECT COALESCE(SUM(money), 0) AS balances FROM users");
    const [{ opening }] = await h.sql<{ opening: number }>("SELECT COALESCE(SUM(amount), 0) AS opening FROM ledger WHERE kind = 'opening'");
    const [{ platform }] = await h.sql<{ platform: number }>("SELECT COALESCE(SUM(amount), 0) AS platform FROM ledger WHERE user_id IS NULL");
    expect(balances + platform).toBe(opening);
    expect(await h.sql("SELECT id FROM users WHERE money < 0")).toEqual([]);
  });
});
