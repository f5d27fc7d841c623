import { describe, expect, test } from "bun:test";
import { harness, forEachBackend } from "./harness";

forEachBackend("CORS for the browser web client", () => {
  test("preflight allows the API's methods and headers from any origin", async () => {
    const h = await harness();
    const r = await h.call("OPTIONS", "/orders/1/take", { headers: { origin: "http://app.example", "access-control-request-method": "PATCH", "access-control-request-headers": "authorization" } });
    expect(r.status).toBe(204);
    expect(r.headers.get("access-control-allow-origin")).toBe("*");
    expect(r.headers.get("access-control-allow-methods")).toContain("PATCH");
    expect(r.headers.get("access-control-allow-headers")).toContain("Authorization");
  }, 30_000);

  test("every reply (objects, lists, errors, token) allows the origin and exposes the paging headers", async () => {
    const h = await harness();
    const p = await h.user("perf", "Performer");
    const replies = [
      await h.call("GET", "/authenticated", { token: p.token }),
      await h.call("GET", "/orders", { token: p.token }),
      await h.call("GET", "/orders"),
      await h.call("GET", "/missing"),
      await h.call("POST", "/users", { json: { username: "new", password: "pass", userType: "Customer" } }),
      await h.call("POST", "/oauth/token?grant_type=password"),
      await h.call("GET", "/openapi/json"),
    ];
    for (const r of replies) {
      expect(r.headers.get("access-control-allow-origin")).toBe("*");
      expect(r.headers.get("access-control-expose-headers")).toContain("X-Total-Count");
      expect(r.headers.get("access-control-expose-headers")).toContain("Link");
    }
  }, 30_000);
});
