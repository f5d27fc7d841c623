import { describe, expect, test } from "bun:test";
import { databaseUnavailable } from "../../src/kernel/pg";
import { harness, springError, forEachBackend } from "./harness";

forEachBackend("Spring-style errors for bad input, never a 500", () => {
  test("unknown routes → 404 with the Spring body", async () => {
    const h = await harness();
    for (const path of ["/nope", "/orders/1/explode", "/users", "/"]) {
      const r = await h.call("GET", path);
      expect(springError(r, path === "/users" ? 405 : 404, path)).toBeString();
    }
  }, 30_000);

  test("a known path with the wrong method → 405 with Allow", async () => {
    const h = await harness();
    const r = await h.call("DELETE", "/orders/1");
    springError(r, 405, "/orders/1");
    expect(r.headers.get("allow")).toBe("GET");
    const put = await h.call("PUT", "/orders");
    springError(put, 405, "/orders");
    expect(put.headers.get("allow")!.split(", ").sort()).toEqual(["GET", "POST"]);
  }, 30_000);

  test("malformed JSON → 400", async () => {
    const h = await harness();
    const { token } = await h.user("alice", "Customer");
    for (const body of ["{", '{"description": "x", "price": }', "nul", "{'a':1}"]) {
      const r = await h.call("POST", "/orders", { token, body, headers: { "content-type": "application/json" } });
      expect(springError(r, 400, "/orders")).toBeString();
    }
    const users = await h.call("POST", "/users", { body: "{oops", headers: { "content-type": "application/json" } });
    expect(springError(users, 400, "/users").toLowerCase()).toContain("malformed");
  }, 30_000);

  test("bodies that are not objects, or wrong types → 400 naming the field", async () => {
    const h = await harness();
    const { token } = await h.user("alice", "Customer");
    for (const json of [[], 42, "text", null]) {
      const r = await h.call("POST", "/orders", { token, json });
      expect(springError(r, 400, "/orders")).toBeString();
    }
    const wrong = await h.call("POST", "/orders", { token, json: { description: ["a"], price: 10 } });
    expect(springError(wrong, 400, "/orders")).toContain("description");
    const noBody = await h.call("POST", "/users");
    expect(springError(noBody, 400, "/users")).toBeString();
  }, 30_000);

  test("huge bodies → 413 before parsing", async () => {
    const h = await harness({ bodyLimit: 64 * 1024 });
    const { token } = await h.user("alice", "Customer");
    const big = JSON.stringify({ description: "x".repeat(100_000), price: 10 });
    const r = await h.call("POST", "/orders", { token, body: big, headers: { "content-type": "application/json", "content-length": String(big.length) } });
    expect(springError(r, 413, "/orders")).toContain("limit");
    // Within the byte limit but over the field limit: 400 naming the field.
    const long = await h.call("POST", "/orders", { token, json: { description: "x".repeat(5000), price: 10 } });
    expect(springError(long, 400, "/orders")).toContain("description");
  }, 30_000);

  test("chunked bodies (no Content-Length) get the same limit, and small ones still parse", async () => {
    const h = await harness({ bodyLimit: 64 * 1024 });
    const { token } = await h.user("alice", "Customer");
    const stream = (text: string) =>
      new ReadableStream<Uint8Array>({
        start(c) {
          const bytes = new TextEncoder().encode(text);
          for (let i = 0; i < bytes.length; i += 8192) c.enqueue(bytes.subarray(i, i + 8192));
          c.close();
        },
      });
    const send = (text: string, type: string) =>
      h.app.handle(new Request("http://localhost/orders", { method: "POST", headers: { "content-type": type, authorization: `Bearer ${token}` }, body: stream(text) }));
    const big = await send(JSON.stringify({ description: "x".repeat(200_000), price: 1 }), "application/json");
    expect(big.status).toBe(413);
    expect(((await big.json()) as { path: string }).path).toBe("/orders");
    expect((await send(JSON.stringify({ description: "chunked", price: 2 }), "application/json")).status).toBe(201);
    expect((await send("description=form&price=3", "application/x-www-form-urlencoded")).status).toBe(201);
    expect((await send("{broken", "application/json")).status).toBe(400);
  }, 30_000);

  test("SQL-looking strings are stored and returned verbatim", async () => {
    const h = await harness();
    const { token } = await h.user("alice", "Customer");
    const description = "'; DELETE FROM orders; -- \" OR 1=1 /*";
    const r = await h.call("POST", "/orders", { token, json: { description, price: 1 } });
    expect(r.status).toBe(201);
    expect(r.body.description).toBe(description);
    const list = await h.call("GET", `/users/${r.body.customerId}/orders?sort=description`, { token });
    expect(list.body).toHaveLength(1);
  }, 30_000);

  test("a sweep of odd inputs never yields a 5xx", async () => {
    const h = await harness();
    const c = await h.user("alice", "Customer");
    const p = await h.user("bob", "Performer");
    const bodies: (string | undefined)[] = [undefined, "", "{}", "[]", "null", "0", '"x"', "{\"price\":1e309}", "\u0000", "{\"description\":{\"$gt\":\"\"},\"price\":1}", "{\"__proto__\":{\"x\":1},\"description\":\"d\",\"price\":1}"];
    const paths = ["/orders", "/users", "/oauth/token", "/orders/1/take", "/orders/%00", "/orders/1%27", "/users/abc/orders", "/users/1/orders?size=1e2", "/orders?page=99999999999999999999"];
    const types = ["application/json", "application/x-www-form-urlencoded", "text/plain", "multipart/form-data; boundary=x"];
    for (const path of paths) {
      for (const method of ["GET", "POST", "PATCH"]) {
        for (const body of method === "GET" ? [undefined] : bodies) {
          for (const type of body === undefined ? [undefined] : types) {
            for (const token of [undefined, c.token, p.token]) {
              const headers: Record<string, string> = type ? { "content-type": type } : {};
              const r = await h.call(method, path, { token, body, headers });
              if (r.status >= 500) throw new Error(`${method} ${path} ${type} ${body} → ${r.status} ${r.text}`);
              expect(r.status).toBeGreaterThanOrEqual(200);
            }
          }
        }
      }
    }
  }, 30_000);
});

forEachBackend("health and OpenAPI", () => {
  test("GET /health → {status: ok} without auth", async () => {
    const h = await harness();
    const r = await h.call("GET", "/health");
    expect(r.status).toBe(200);
    expect(r.text).toBe('{"status":"ok"}');
    // The headers the web client and the original service saw: JSON with a charset, and CORS.
    expect(r.headers.get("content-type")).toBe("application/json;charset=utf-8");
    expect(r.headers.get("access-control-allow-origin")).toBe("*");
    expect(r.headers.get("access-control-expose-headers")).toContain("X-Total-Count");
  }, 30_000);

  test("GET /openapi/json describes every endpoint", async () => {
    const h = await harness();
    const r = await h.call("GET", "/openapi/json");
    expect(r.status).toBe(200);
    expect(r.body.openapi).toStartWith("3.");
    const ops = Object.entries(r.body.paths as Record<string, Record<string, unknown>>).flatMap(([p, m]) => Object.keys(m).map((k) => `${k.toUpperCase()} ${p}`));
    for (const op of ["POST /oauth/token", "POST /users", "GET /authenticated", "GET /orders", "POST /orders", "GET /orders/{id}", "PATCH /orders/{id}/take", "PATCH /orders/{id}/pass", "PATCH /orders/{id}/accept", "GET /users/{id}/orders", "GET /health"]) {
      expect(ops).toContain(op);
    }
    expect(Object.keys(r.body.components.schemas.Order.properties)).toEqual(["id", "description", "price", "status", "createdDate", "customerId", "customerName", "performerId", "performerName"]);
  }, 30_000);
});

describe("a database that cannot be reached is a retryable 503, anything else is not", () => {
  test("Bun SQL connection errors, PostgreSQL shutdown/connection states and socket errors, also wrapped by drizzle", () => {
    const pg = (fields: Record<string, string>) => Object.assign(new Error("x"), { name: "PostgresError", ...fields });
    for (const e of [
      pg({ code: "ERR_POSTGRES_CONNECTION_REFUSED" }),
      pg({ code: "ERR_POSTGRES_CONNECTION_CLOSED" }),
      pg({ code: "ERR_POSTGRES_CONNECTION_TIMEOUT" }),
      pg({ code: "ERR_POSTGRES_SERVER_ERROR", errno: "57P01" }), // terminating connection due to administrator command
      pg({ code: "ERR_POSTGRES_SERVER_ERROR", errno: "57P03" }), // the database system is starting up
      pg({ code: "ERR_POSTGRES_SERVER_ERROR", errno: "08006" }),
      Object.assign(new Error("Failed query: select 1"), { cause: pg({ code: "ERR_POSTGRES_CONNECTION_REFUSED" }) }),
      Object.assign(new Error("connect"), { code: "ECONNREFUSED" }),
    ]) expect(databaseUnavailable(e)).toBe(true);
    for (const e of [
      pg({ code: "ERR_POSTGRES_SERVER_ERROR", errno: "23505" }), // unique violation: a real conflict
      pg({ code: "ERR_POSTGRES_SERVER_ERROR", errno: "42P01" }), // undefined table: a bug
      new Error("plain"),
      undefined,
      "a string",
    ]) expect(databaseUnavailable(e)).toBe(false);
  });
});
