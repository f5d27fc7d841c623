// How a protected route finds the bearer token (@elysiajs/bearer plus the spec's exact 401s).
import { describe, expect, test } from "bun:test";
import { presentedToken } from "../../src/orders/auth/guard";
import { harness, springError, forEachBackend } from "./harness";

async function world() {
  const h = await harness();
  const alice = await h.user("alice", "Customer");
  const dave = await h.user("dave", "Performer");
  return { h, alice, dave };
}

forEachBackend("bearer token extraction", () => {
  test("the scheme is case-insensitive and extra blanks are ignored (RFC 7235)", async () => {
    const { h, alice } = await world();
    for (const header of [`Bearer ${alice.token}`, `bearer ${alice.token}`, `BEARER ${alice.token}`, `Bearer  ${alice.token} `, `Bearer\t${alice.token}`]) {
      const r = await h.call("GET", "/authenticated", { headers: { authorization: header } });
      expect(r.status).toBe(200);
      expect(r.body.username).toBe("alice");
    }
  }, 30_000);

  test("no bearer credentials → 401 unauthorized; a bearer header without a usable token → 401 invalid_token", async () => {
    const { h } = await world();
    for (const header of ["Basic Zm9vOmJhcg==", "Bearerxyz", "Token abc", "Digest x"]) {
      const r = await h.call("GET", "/authenticated", { headers: { authorization: header } });
      springError(r, 401, "/authenticated");
      expect(r.body.error).toBe("unauthorized");
      expect(r.headers.get("www-authenticate")).toBe('Bearer realm="orders"');
    }
    for (const header of ["Bearer", "Bearer ", "Bearer a b", "Bearer ünï", "Bearer not-ours"]) {
      const r = await h.call("GET", "/authenticated", { headers: { authorization: header } });
      springError(r, 401, "/authenticated");
      expect(r.body.error).toBe("invalid_token");
      expect(r.headers.get("www-authenticate")).toStartWith('Bearer realm="orders", error="invalid_token"');
    }
  }, 30_000);

  test("an access_token query parameter works (RFC 6750 §2.3), with Cache-Control: private, and never appears in Link", async () => {
    const { h, dave } = await world();
    const me = await h.call("GET", `/authenticated?access_token=${dave.token}`);
    expect(me.status).toBe(200);
    expect(me.body.username).toBe("dave");
    expect(me.headers.get("cache-control")).toBe("private");
    const list = await h.call("GET", `/orders?size=1&access_token=${dave.token}`);
    expect(list.status).toBe(200);
    expect(list.headers.get("cache-control")).toBe("private");
    expect(list.headers.get("link")).toContain("size=1");
    expect(list.headers.get("link")).not.toContain("access_token");
    expect(list.headers.get("link")).not.toContain(dave.token);
    // A header-authenticated reply has no such restriction.
    expect((await h.call("GET", "/authenticated", { token: dave.token })).headers.get("cache-control")).toBeNull();
    const bad = await h.call("GET", "/authenticated?access_token=nope");
    springError(bad, 401, "/authenticated");
    expect(bad.body.error).toBe("invalid_token");
  }, 30_000);

  test("the Authorization header wins over the query parameter", async () => {
    const { h, alice, dave } = await world();
    const r = await h.call("GET", `/authenticated?access_token=${dave.token}`, { token: alice.token });
    expect(r.body.username).toBe("alice");
    const wrongHeader = await h.call("GET", `/authenticated?access_token=${dave.token}`, { headers: { authorization: "Bearer nope" } });
    expect(wrongHeader.status).toBe(401);
  }, 30_000);

  test("presentedToken: header forms and the query fallback", () => {
    const u = "http://x/orders";
    expect(presentedToken(null, u)).toBeUndefined();
    expect(presentedToken(null, `${u}?access_token=q`)).toBe("q");
    expect(presentedToken(null, `${u}?page=1&access_token=q&access_token=r`)).toBe("q");
    expect(presentedToken(null, `${u}?access_token=`)).toBeUndefined();
    expect(presentedToken(null, `${u}?access_token=%20`)).toBe("");
    expect(presentedToken(null, `${u}?my_access_token=q`)).toBeUndefined();
    expect(presentedToken("Bearer abc", `${u}?access_token=q`)).toBe("abc");
    expect(presentedToken("Bearer \tabc ", u)).toBe("abc");
    expect(presentedToken("bearer abc", u)).toBe("abc");
    expect(presentedToken("BEARER abc", u)).toBe("abc");
    expect(presentedToken("Bearerxyz", `${u}?access_token=q`)).toBeUndefined();
    expect(presentedToken("Bearer", u)).toBe("");
    expect(presentedToken("Basic Zm9v", `${u}?access_token=q`)).toBe("q");
    expect(presentedToken("bearerxyz", `${u}?access_token=q`)).toBe("q");
  });
});

forEachBackend("role before body", () => {
  test("a performer posting a bad body hears 403 (role), not 400 (body)", async () => {
    const { h, dave } = await world();
    const r = await h.call("POST", "/orders", { token: dave.token, json: { description: "", price: -1 } });
    springError(r, 403, "/orders");
    expect(r.body.error).toBe("access_denied");
  }, 30_000);
});

forEachBackend("authentication comes before the body", () => {
  test("no or a bad token with a broken or huge body → 401, as Spring Security refused before reading it", async () => {
    const h = await harness({ bodyLimit: 1024 });
    const variants: Record<string, string>[] = [{}, { authorization: "Bearer nope" }];
    for (const headers of variants) {
      for (const body of ["{broken", JSON.stringify({ description: "x".repeat(5000), price: 1 })]) {
        const r = await h.call("POST", "/orders", { body, headers: { ...headers, "content-type": "application/json" } });
        springError(r, 401, "/orders");
      }
      const take = await h.call("PATCH", "/orders/1/take", { body: "{broken", headers: { ...headers, "content-type": "application/json" } });
      springError(take, 401, "/orders/1/take");
    }
  }, 30_000);

  test("take, pass and accept take no body: a stray or broken one is ignored", async () => {
    const { h, alice, dave } = await world();
    const id = (await h.call("POST", "/orders", { token: alice.token, json: { description: "job", price: 10 } })).body.id;
    const junk = { body: "{not json", headers: { "content-type": "application/json" } };
    expect((await h.call("PATCH", `/orders/${id}/take`, { token: dave.token, ...junk })).body.status).toBe("IN_PROGRESS");
    expect((await h.call("PATCH", `/orders/${id}/pass`, { token: dave.token, ...junk })).body.status).toBe("READY");
    expect((await h.call("PATCH", `/orders/${id}/accept`, { token: alice.token, ...junk })).body.status).toBe("COMPLETED");
  }, 30_000);

  test("with a valid token the body rules still hold: malformed → 400, over the limit → 413", async () => {
    const h = await harness({ bodyLimit: 1024 });
    const alice = await h.user("alice", "Customer");
    springError(await h.call("POST", "/orders", { token: alice.token, body: "{broken", headers: { "content-type": "application/json" } }), 400, "/orders");
    const big = JSON.stringify({ description: "x".repeat(5000), price: 1 });
    springError(await h.call("POST", "/orders", { token: alice.token, body: big, headers: { "content-type": "application/json" } }), 413, "/orders");
    springError(await h.call("POST", "/orders", { token: alice.token }), 400, "/orders");
  }, 30_000);
});
