import { describe, expect, test } from "bun:test";
import { hashSecret } from "../../src/kernel/ids";
import { CLIENT, harness, springError, forEachBackend } from "./harness";

const grant = (extra: Record<string, string> = {}) =>
  new URLSearchParams({ grant_type: "password", username: "alice", password: "secret1", client_id: CLIENT.id, client_secret: CLIENT.secret, ...extra });

forEachBackend("POST /oauth/token", () => {
  test("query parameters: 200 bearer token, 24 h, read write, no-store, no refresh token", async () => {
    const h = await harness();
    await h.register("alice", "Customer", "secret1");
    const r = await h.call("POST", `/oauth/token?${grant()}`);
    expect(r.status).toBe(200);
    expect(r.headers.get("cache-control")).toBe("no-store");
    expect(r.body.token_type).toBe("bearer");
    expect(r.body.expires_in).toBe(86400);
    expect(r.body.scope).toBe("read write");
    expect(r.body.refresh_token).toBeUndefined();
    // ≥ 128 bits: 32 random bytes in base64url are 43 characters.
    expect(r.body.access_token).toMatch(/^[A-Za-z0-9_-]{43}$/);
    const me = await h.call("GET", "/authenticated", { token: r.body.access_token });
    expect(me.body.username).toBe("alice");
  }, 30_000);

  test("form body and HTTP Basic client authentication both work", async () => {
    const h = await harness();
    await h.register("alice", "Customer", "secret1");
    const form = await h.call("POST", "/oauth/token", {
      body: grant().toString(),
      headers: { "content-type": "application/x-www-form-urlencoded" },
    });
    expect(form.status).toBe(200);
    const basic = await h.call("POST", "/oauth/token", {
      body: new URLSearchParams({ grant_type: "password", username: "alice", password: "secret1" }).toString(),
      headers: {
        "content-type": "application/x-www-form-urlencoded",
        authorization: `Basic ${btoa(`${CLIENT.id}:${CLIENT.secret}`)}`,
      },
    });
    expect(basic.status).toBe(200);
    expect(basic.body.access_token).not.toBe(form.body.access_token);
  }, 30_000);

  test("only the token's hash is stored", async () => {
    const h = await harness();
    await h.register("alice", "Customer", "secret1");
    const token = (await h.call("POST", `/oauth/token?${grant()}`)).body.access_token;
    const rows = await h.sql<{ hash: string; user_id: number }>("SELECT * FROM tokens");
    expect(rows).toHaveLength(1);
    expect(rows[0].hash).toBe(hashSecret(token));
    expect(JSON.stringify(rows)).not.toContain(token);
  }, 30_000);

  test("the token expires after 24 hours", async () => {
    const h = await harness();
    await h.register("alice", "Customer", "secret1");
    const token = (await h.call("POST", `/oauth/token?${grant()}`)).body.access_token;
    h.clock.advance(24 * 3600_000 - 1000);
    expect((await h.call("GET", "/authenticated", { token })).status).toBe(200);
    h.clock.advance(1000);
    const r = await h.call("GET", "/authenticated", { token });
    expect(r.status).toBe(401);
    expect(r.body.error).toBe("invalid_token");
    expect(r.headers.get("www-authenticate")).toContain('error="invalid_token"');
  }, 30_000);

  test("the hourly sweep deletes only expired token rows", async () => {
    const h = await harness();
    await h.register("alice", "Customer", "secret1");
    await h.call("POST", `/oauth/token?${grant()}`);
    h.clock.advance(12 * 3600_000);
    const fresh = (await h.call("POST", `/oauth/token?${grant()}`)).body.access_token;
    h.clock.advance(12 * 3600_000);
    expect(await h.storage.tokens.deleteExpired(h.clock.now().getTime())).toBe(1);
    expect((await h.sql<{ hash: string }>("SELECT hash FROM tokens")).map((t) => t.hash)).toEqual([hashSecret(fresh)]);
    expect((await h.call("GET", "/authenticated", { token: fresh })).status).toBe(200);
  }, 30_000);

  test("unknown user and wrong password give the same 400 invalid_grant Bad credentials", async () => {
    const h = await harness();
    await h.register("alice", "Customer", "secret1");
    const wrong = await h.call("POST", `/oauth/token?${grant({ password: "nope" })}`);
    const unknown = await h.call("POST", `/oauth/token?${grant({ username: "nobody" })}`);
    for (const r of [wrong, unknown]) {
      expect(r.status).toBe(400);
      expect(r.body).toEqual({ error: "invalid_grant", error_description: "Bad credentials" });
    }
  }, 30_000);

  test("bad client → 401 invalid_client; other grant → unsupported_grant_type; missing parameter → invalid_request", async () => {
    const h = await harness();
    await h.register("alice", "Customer", "secret1");
    for (const q of [grant({ client_secret: "wrong" }), grant({ client_id: "other" })]) {
      const r = await h.call("POST", `/oauth/token?${q}`);
      expect(r.status).toBe(401);
      expect(r.body.error).toBe("invalid_client");
    }
    const noClient = await h.call("POST", "/oauth/token?grant_type=password&username=alice&password=secret1");
    expect(noClient.status).toBe(401);
    expect(noClient.body.error).toBe("invalid_client");
    const badBasic = await h.call("POST", `/oauth/token?grant_type=password&username=alice&password=secret1`, {
      headers: { authorization: `Basic ${btoa(`${CLIENT.id}:nope`)}` },
    });
    expect(badBasic.status).toBe(401);
    expect(badBasic.body.error).toBe("invalid_client");

    const other = await h.call("POST", `/oauth/token?${grant({ grant_type: "client_credentials" })}`);
    expect(other.status).toBe(400);
    expect(other.body.error).toBe("unsupported_grant_type");

    for (const missing of ["grant_type", "username", "password"]) {
      const q = grant();
      q.delete(missing);
      const r = await h.call("POST", `/oauth/token?${q}`);
      expect(r.status).toBe(400);
      expect(r.body.error).toBe("invalid_request");
      expect(r.body.error_description.toLowerCase()).toContain(missing.replace("_", " "));
    }
  }, 30_000);

  test("a parameter that is not text → 400 invalid_request naming it", async () => {
    const h = await harness();
    await h.register("alice", "Customer", "secret1");
    const r = await h.call("POST", "/oauth/token", {
      json: { grant_type: "password", username: ["alice"], password: "secret1", client_id: CLIENT.id, client_secret: CLIENT.secret },
    });
    expect(r.status).toBe(400);
    expect(r.body.error).toBe("invalid_request");
    expect(r.body.error_description).toContain("username");
  }, 30_000);

  test("GET /oauth/token → 405", async () => {
    const h = await harness();
    const r = await h.call("GET", `/oauth/token?${grant()}`);
    expect(r.status).toBe(405);
    expect(r.headers.get("allow")).toBe("POST");
    expect(typeof r.body.error).toBe("string");
  }, 30_000);

  test("login is case-insensitive on the username", async () => {
    const h = await harness();
    await h.register("Alice", "Customer", "secret1");
    expect((await h.call("POST", `/oauth/token?${grant({ username: "ALICE" })}`)).status).toBe(200);
  }, 30_000);

  test("passwords are stored as argon2id and never returned", async () => {
    const h = await harness();
    const created = await h.call("POST", "/users", { json: { username: "alice", password: "secret1", userType: "Customer" } });
    expect(created.text).not.toContain("secret1");
    expect(created.body.password).toBeUndefined();
    const [row] = await h.sql<{ password_hash: string }>("SELECT password_hash FROM users");
    expect(row.password_hash).toStartWith("$argon2id$");
    expect(row.password_hash).not.toContain("secret1");
  }, 30_000);
});

forEachBackend("login throttling", () => {
  test("10 failures a minute → 429 with Retry-After, even for the right password; it lifts after the window", async () => {
    const h = await harness();
    await h.register("alice", "Customer", "secret1");
    for (let i = 0; i < 10; i++) {
      expect((await h.call("POST", `/oauth/token?${grant({ password: `bad${i}` })}`)).status).toBe(400);
    }
    const locked = await h.call("POST", `/oauth/token?${grant()}`);
    expect(locked.status).toBe(429);
    const retry = Number(locked.headers.get("retry-after"));
    expect(retry).toBeGreaterThan(0);
    expect(retry).toBeLessThanOrEqual(60);
    expect(locked.body.error).toBeString();
    // Another username is not affected.
    await h.register("bob", "Customer", "secret2");
    expect((await h.call("POST", `/oauth/token?${grant({ username: "bob", password: "secret2" })}`)).status).toBe(200);
    h.clock.advance(retry * 1000);
    expect((await h.call("POST", `/oauth/token?${grant()}`)).status).toBe(200);
  }, 30_000);

  test("a correct login resets the failure count", async () => {
    const h = await harness();
    await h.register("alice", "Customer", "secret1");
    for (let i = 0; i < 9; i++) await h.call("POST", `/oauth/token?${grant({ password: "bad" })}`);
    expect((await h.call("POST", `/oauth/token?${grant()}`)).status).toBe(200);
    for (let i = 0; i < 9; i++) {
      expect((await h.call("POST", `/oauth/token?${grant({ password: "bad" })}`)).status).toBe(400);
    }
    expect((await h.call("POST", `/oauth/token?${grant()}`)).status).toBe(200);
  }, 30_000);

  test("a burst of parallel guesses gets only 10 tries: the rest are 429 before the first has failed", async () => {
    const h = await harness();
    await h.register("alice", "Customer", "secret1");
    const replies = await Promise.all(Array.from({ length: 40 }, (_, i) => h.call("POST", `/oauth/token?${grant({ password: `guess${i}` })}`)));
    expect(replies.filter((r) => r.status === 400 && r.body.error === "invalid_grant")).toHaveLength(10);
    const refused = replies.filter((r) => r.status === 429);
    expect(refused).toHaveLength(30);
    expect(Number(refused[0].headers.get("retry-after"))).toBeGreaterThan(0);
    // Even the right password waits out the window.
    expect((await h.call("POST", `/oauth/token?${grant()}`)).status).toBe(429);
    h.clock.advance(60_000);
    expect((await h.call("POST", `/oauth/token?${grant()}`)).status).toBe(200);
  }, 30_000);

  test("unknown usernames are throttled too", async () => {
    const h = await harness();
    for (let i = 0; i < 10; i++) await h.call("POST", `/oauth/token?${grant({ username: "ghost" })}`);
    expect((await h.call("POST", `/oauth/token?${grant({ username: "ghost" })}`)).status).toBe(429);
  }, 30_000);
});

forEachBackend("protected routes", () => {
  test("no token → 401 unauthorized with WWW-Authenticate: Bearer", async () => {
    const h = await harness();
    for (const [method, path] of [["GET", "/authenticated"], ["GET", "/orders"], ["POST", "/orders"], ["PATCH", "/orders/1/take"], ["GET", "/users/1/orders"], ["GET", "/orders/1"]]) {
      const r = await h.call(method, path);
      springError(r, 401, path);
      expect(r.body.error).toBe("unauthorized");
      expect(r.headers.get("www-authenticate")).toStartWith("Bearer");
    }
  }, 30_000);

  test("garbage, malformed and non-Bearer tokens → 401", async () => {
    const h = await harness();
    const garbage = await h.call("GET", "/authenticated", { token: "not-a-real-token" });
    springError(garbage, 401, "/authenticated");
    expect(garbage.body.error).toBe("invalid_token");
    const weird = await h.call("GET", "/authenticated", { headers: { authorization: "Bearer a b c ' OR 1=1 --" } });
    expect(weird.status).toBe(401);
    expect(weird.body.error).toBe("invalid_token");
    const basic = await h.call("GET", "/authenticated", { headers: { authorization: "Basic Zm9vOmJhcg==" } });
    expect(basic.status).toBe(401);
    expect(basic.headers.get("www-authenticate")).toStartWith("Bearer");
  }, 30_000);

  test("a token survives a new app over the same database (it is stored, not in memory)", async () => {
    const h = await harness();
    await h.register("alice", "Customer", "secret1");
    const token = (await h.call("POST", `/oauth/token?${grant()}`)).body.access_token;
    const { createOrderApp } = await import("../../src/orders/app");
    const again = createOrderApp(h.config, h.storage);
    const r = await again.handle(new Request("http://localhost/authenticated", { headers: { authorization: `Bearer ${token}` } }));
    expect(r.status).toBe(200);
  }, 30_000);
});
