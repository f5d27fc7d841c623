import { describe, expect, test } from "bun:test";
import { harness, springError, forEachBackend } from "./harness";

forEachBackend("POST /users", () => {
  test("201 with the wire format; customers start with 500, performers with 300", async () => {
    const h = await harness();
    const c = await h.call("POST", "/users", { json: { username: "alice", password: "pass", userType: "Customer" } });
    expect(c.status).toBe(201);
    expect(c.body).toEqual({ id: c.body.id, username: "alice", userType: "Customer", type: "Customer", money: 500 });
    const p = await h.call("POST", "/users", { json: { username: "bob", password: "pass", userType: "Performer" } });
    expect(p.body).toEqual({ id: p.body.id, username: "bob", userType: "Performer", type: "Performer", money: 300 });
    expect(p.body.id).not.toBe(c.body.id);
  }, 30_000);

  test("username is trimmed and unique case-insensitively → 409", async () => {
    const h = await harness();
    const r = await h.call("POST", "/users", { json: { username: "  Alice  ", password: "pass", userType: "Customer" } });
    expect(r.body.username).toBe("Alice");
    const dup = await h.call("POST", "/users", { json: { username: "aLICE", password: "pass", userType: "Performer" } });
    expect(springError(dup, 409, "/users")).toContain("aLICE");
  }, 30_000);

  test("username 1–64 characters, password 4–128; the message names the field", async () => {
    const h = await harness();
    const cases: [unknown, unknown, string][] = [
      ["", "pass", "username"],
      ["   ", "pass", "username"],
      ["x".repeat(65), "pass", "username"],
      ["ok1", "abc", "password"],
      ["ok2", "p".repeat(129), "password"],
      [42, "pass", "username"],
      ["ok3", null, "password"],
    ];
    for (const [username, password, field] of cases) {
      const r = await h.call("POST", "/users", { json: { username, password, userType: "Customer" } });
      expect(springError(r, 400, "/users")).toContain(field);
    }
    expect((await h.call("POST", "/users", { json: { username: "x".repeat(64), password: "p".repeat(128), userType: "Customer" } })).status).toBe(201);
    expect((await h.call("POST", "/users", { json: { username: "y", password: "abcd", userType: "Customer" } })).status).toBe(201);
  }, 30_000);

  test("userType must be exactly Customer or Performer", async () => {
    const h = await harness();
    for (const userType of ["customer", "Admin", "", undefined, 1]) {
      const r = await h.call("POST", "/users", { json: { username: "u", password: "pass", userType } });
      expect(springError(r, 400, "/users")).toContain("userType");
    }
  }, 30_000);

  test("unicode usernames work and clash case-insensitively; control characters are refused", async () => {
    const h = await harness();
    const r = await h.call("POST", "/users", { json: { username: "Ёжик 🦔", password: "pass", userType: "Performer" } });
    expect(r.status).toBe(201);
    expect(r.body.username).toBe("Ёжик 🦔");
    expect(await h.token("ёжик 🦔")).toBeString();
    const clash = await h.call("POST", "/users", { json: { username: "ЁЖИК 🦔", password: "pass", userType: "Customer" } });
    expect(clash.status).toBe(409);
    const ctl = await h.call("POST", "/users", { json: { username: "bad\u0000name", password: "pass", userType: "Customer" } });
    expect(springError(ctl, 400, "/users")).toContain("username");
    const rtl = await h.call("POST", "/users", { json: { username: "a\u202eb", password: "pass", userType: "Customer" } });
    expect(rtl.status).toBe(400);
  }, 30_000);

  test("SQL-looking usernames are just text", async () => {
    const h = await harness();
    const name = "robert'); DROP TABLE users;--";
    const r = await h.call("POST", "/users", { json: { username: name, password: "pass", userType: "Customer" } });
    expect(r.status).toBe(201);
    const me = await h.call("GET", "/authenticated", { token: await h.token(name) });
    expect(me.body.username).toBe(name);
  }, 30_000);
});

forEachBackend("GET /authenticated", () => {
  test("returns the caller with type repeating userType and money in rubles", async () => {
    const h = await harness();
    const { token, id } = await h.user("perf", "Performer");
    const r = await h.call("GET", "/authenticated", { token });
    expect(r.status).toBe(200);
    expect(r.body).toEqual({ id, username: "perf", userType: "Performer", type: "Performer", money: 300 });
  }, 30_000);
});
