// Text PostgreSQL cannot store (NUL, lone UTF-16 surrogates) is a 400 naming the field, on both backends
// (issue 36 part 4: `POST /oauth/token` with `username=a%00b` reached the advisory-lock query on
// PostgreSQL and was answered 500).
import { expect, test } from "bun:test";
import { CLIENT, forEachBackend, harness, springError } from "./harness";

const grant = (extra: Record<string, string> = {}) =>
  new URLSearchParams({ grant_type: "password", username: "alice", password: "secret1", client_id: CLIENT.id, client_secret: CLIENT.secret, ...extra });

forEachBackend("NUL and lone surrogates", () => {
  test("/oauth/token: in the query, a form body or JSON, an OAuth invalid_request naming the field", async () => {
    const h = await harness();
    await h.register("alice", "Customer", "secret1");
    const answers = [
      await h.call("POST", `/oauth/token?${grant({ username: "a\u0000b" })}`),
      await h.call("POST", `/oauth/token?${grant({ password: "a\u0000b" })}`),
      await h.call("POST", "/oauth/token", { body: grant({ username: "a\u0000b" }).toString(), headers: { "content-type": "application/x-www-form-urlencoded" } }),
      await h.call("POST", "/oauth/token", { json: Object.fromEntries(grant({ username: "a\u0000b" })) }),
    ];
    for (const r of answers) {
      expect({ status: r.status, error: r.body?.error }).toEqual({ status: 400, error: "invalid_request" });
      expect(r.body.error_description).toMatch(/^(username|password) contains a NUL character or an unpaired UTF-16 surrogate/);
    }
    // Still a login once the text is storable.
    expect((await h.call("POST", `/oauth/token?${grant()}`)).status).toBe(200);
  }, 30_000);

  test("registration, an order's description and a token in the query: the Spring envelope naming the field", async () => {
    const h = await harness();
    const a = await h.user("anna", "Customer");
    const reg = await h.call("POST", "/users", { json: { username: "a\u0000b", password: "pass", userType: "Customer" } });
    expect(springError(reg, 400, "/users")).toMatch(/^username contains a NUL character/);
    const regForm = await h.call("POST", "/users", { body: "username=bob&password=a%00b&userType=Customer", headers: { "content-type": "application/x-www-form-urlencoded" } });
    expect(springError(regForm, 400, "/users")).toMatch(/^password contains/);
    const order = await h.call("POST", "/orders", { token: a.token, json: { description: "a\u0000b", price: 10 } });
    expect(springError(order, 400, "/orders")).toMatch(/^description contains/);
    const surrogate = await h.call("POST", "/orders", { token: a.token, json: { description: "a\uDC00b", price: 10 } });
    expect(springError(surrogate, 400, "/orders")).toMatch(/^description contains/);
    expect(springError(await h.call("GET", "/orders?access_token=a%00b"), 400, "/orders")).toMatch(/^access_token contains/);
    expect(springError(await h.call("GET", "/orders?size=1%00"), 400, "/orders")).toMatch(/^size contains/);
    expect((await h.call("POST", "/orders", { token: a.token, json: { description: "fine", price: 10 } })).status).toBe(201);
  }, 30_000);
});
