import { describe, expect, test } from "bun:test";
import { harness, json } from "./harness";

describe("automation app basics", () => {
  test("GET /health answers without auth, with an x-request-id", async () => {
    const h = await harness();
    const r = await h.req("GET", "/health");
    expect(r.status).toBe(200);
    expect(await json(r)).toEqual({ ok: true });
    expect(r.headers.get("x-request-id")).toMatch(/^req_/);
  });

  test("a given x-request-id is echoed on success and in the error envelope", async () => {
    const h = await harness();
    const r = await h.req("GET", "/v1/auth/check", { headers: { "x-request-id": "abc-123" } });
    expect(r.status).toBe(401);
    expect(r.headers.get("x-request-id")).toBe("abc-123");
    const body = await json(r);
    expect(body.requestId).toBe("abc-123");
    expect(body.issues[0]).toMatchObject({ field: "<root>", code: "unauthorized", severity: "error" });
  });

  test("auth check under /v1 and /api/v1", async () => {
    const h = await harness();
    const t = h.tenant("acme");
    for (const prefix of ["/v1", "/api/v1"]) {
      const r = await h.req("GET", `${prefix}/auth/check`, { key: t.key });
      expect(r.status).toBe(200);
      const body = await json(r);
      expect(body).toMatchObject({ ok: true, tenantId: t.id, tenantSlug: "acme", tenantName: "acme", userId: null, email: null, scope: ["*"], wildcardGranted: true });
      expect(body.keyId).toMatch(/^key_/);
    }
  });

  test("unknown route → 404 envelope; wrong method → 405 with Allow", async () => {
    const h = await harness();
    const r = await h.req("GET", "/v1/nope");
    expect(r.status).toBe(404);
    expect((await json(r)).issues[0].code).toBe("not_found");
    const m = await h.req("DELETE", "/v1/auth/check");
    expect(m.status).toBe(405);
    expect(m.headers.get("allow")).toContain("GET");
    expect((await json(m)).issues[0].code).toBe("method_not_allowed");
  });
});
