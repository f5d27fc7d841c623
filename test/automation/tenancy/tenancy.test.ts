import { describe, expect, test } from "bun:test";
import { hashSecret } from "../../../src/kernel/ids";
import { createKey, createTenant, hasScope, listKeys, revokeKey } from "../../../src/automation/tenancy/service";
import { harness, json } from "../app/harness";

describe("tenants and API keys", () => {
  test("keys are ≥128-bit random, shown once and stored only as a hash", async () => {
    const h = await harness();
    const t = await createTenant(h.ctx.storage.tenancy, h.clock, { name: "Acme Corp" });
    expect(t.slug).toBe("acme-corp");
    expect(t.name).toBe("Acme Corp");
    expect(t.id).toMatch(/^ten_/);
    // 32 random bytes in base64url after the prefix: 256 bits.
    expect(t.key).toMatch(/^eak_[A-Za-z0-9_-]{43}$/);
    const other = await createKey(h.ctx.storage.tenancy, h.clock, { tenant: "acme-corp", scopes: ["runs:read"] });
    expect(other.key).not.toBe(t.key);
    const rows = await h.ctx.storage.tenancy.keys(t.id);
    const dump = JSON.stringify(rows);
    expect(dump).not.toContain(t.key);
    expect(dump).not.toContain(other.key);
    expect(rows.map((r) => r.hash).sort()).toEqual([hashSecret(t.key), hashSecret(other.key)].sort());
  });

  test("duplicate tenant slug is a conflict; bad slug and scopes are invalid", async () => {
    const h = await harness();
    await createTenant(h.ctx.storage.tenancy, h.clock, { name: "acme" });
    await expect(createTenant(h.ctx.storage.tenancy, h.clock, { name: "acme" })).rejects.toThrow(/already exists/);
    await expect(createTenant(h.ctx.storage.tenancy, h.clock, { name: "x", slug: "Bad Slug" })).rejects.toThrow(/slug/);
    await expect(createKey(h.ctx.storage.tenancy, h.clock, { tenant: "acme", scopes: ["runs:delete"] })).rejects.toThrow(/scope/);
    await expect(createKey(h.ctx.storage.tenancy, h.clock, { tenant: "nope", scopes: ["*"] })).rejects.toThrow(/no tenant/);
  });

  test("a revoked key answers 401; list shows it revoked without the key", async () => {
    const h = await harness();
    const t = await h.tenant("acme");
    const k = await createKey(h.ctx.storage.tenancy, h.clock, { tenant: "acme", scopes: ["runs:read"], name: "ci" });
    expect((await h.req("GET", "/v1/auth/check", { key: k.key })).status).toBe(200);
    await revokeKey(h.ctx.storage.tenancy, h.clock, k.id);
    const r = await h.req("GET", "/v1/auth/check", { key: k.key });
    expect(r.status).toBe(401);
    expect((await json(r)).issues[0].code).toBe("unauthorized");
    // Still fine for the other key of the tenant.
    expect((await h.req("GET", "/v1/auth/check", { key: t.key })).status).toBe(200);
    const keys = await listKeys(h.ctx.storage.tenancy, "acme");
    expect(keys.find((x) => x.id === k.id)?.revokedAt).toBe(h.clock.now().toISOString());
    expect(JSON.stringify(keys)).not.toContain(k.key);
    // Revoking twice answers the same.
    expect((await revokeKey(h.ctx.storage.tenancy, h.clock, k.id)).revokedAt).toBe(h.clock.now().toISOString());
  });

  test("401 for missing, malformed and unknown keys", async () => {
    const h = await harness();
    await h.tenant("acme");
    for (const headers of [{} as Record<string, string>, { authorization: "Basic abc" }, { authorization: "Bearer nope" }, { authorization: `Bearer ${"x".repeat(5000)}` }]) {
      const r = await h.req("GET", "/v1/auth/check", { headers });
      expect(r.status).toBe(401);
      const body = await json(r);
      expect(body.issues[0]).toMatchObject({ field: "<root>", code: "unauthorized", severity: "error" });
      expect(body.requestId).toBe(r.headers.get("x-request-id")!);
    }
  });

  test("auth check reports the key's own scopes and name", async () => {
    const h = await harness();
    const t = await h.tenant("acme");
    const k = await createKey(h.ctx.storage.tenancy, h.clock, { tenant: t.id, scopes: ["runs:read", "files:write"], name: "reader" });
    const body = await json(await h.req("GET", "/api/v1/auth/check", { key: k.key }));
    expect(body).toEqual({
      ok: true,
      tenantId: t.id,
      tenantSlug: "acme",
      tenantName: "acme",
      userId: null,
      keyId: k.id,
      email: null,
      name: "reader",
      scope: ["runs:read", "files:write"],
      wildcardGranted: false,
    });
  });

  test("scope rules: * grants all, res:* the resource, write implies read", () => {
    expect(hasScope(["*"], "runs:write")).toBe(true);
    expect(hasScope(["runs:*"], "runs:write")).toBe(true);
    expect(hasScope(["runs:write"], "runs:read")).toBe(true);
    expect(hasScope(["runs:read"], "runs:write")).toBe(false);
    expect(hasScope(["files:write"], "runs:read")).toBe(false);
  });
});

describe("Bearer extraction", () => {
  const check = (h: Awaited<ReturnType<typeof harness>>, path: string, authorization?: string) =>
    h.req("GET", path, { headers: authorization === undefined ? {} : { authorization } });

  test("the scheme is case-insensitive and surrounding spaces are tolerated", async () => {
    const h = await harness();
    const t = await h.tenant("acme");
    for (const header of [`Bearer ${t.key}`, `bearer ${t.key}`, `BEARER  ${t.key} `]) {
      const r = await check(h, "/v1/auth/check", header);
      expect(r.status).toBe(200);
      expect((await json(r)).tenantSlug).toBe("acme");
    }
  });

  test("another scheme, an empty or two-part credential → 401 envelope naming the expected form", async () => {
    const h = await harness();
    const t = await h.tenant("acme");
    for (const header of [`Basic ${t.key}`, "Bearer", "Bearer ", `Bearer ${t.key} extra`, `Bearer${t.key}`]) {
      const r = await check(h, "/v1/automations", header);
      expect(r.status).toBe(401);
      const b = await json(r);
      expect(b.issues[0].message).toBe("Authorization must be `Bearer <api key>`");
      expect(b.requestId).toBeString();
    }
  });

  test("a key in the access_token query parameter is refused (401), also next to a valid header it is ignored", async () => {
    const h = await harness();
    const t = await h.tenant("acme");
    const r = await check(h, `/v1/auth/check?access_token=${t.key}`);
    expect(r.status).toBe(401);
    const b = await json(r);
    expect(b.issues[0].field).toBe("access_token");
    expect(b.issues[0].message).toContain("not accepted in the access_token query parameter");
    const files = await check(h, `/v1/files/file_x?access_token=${t.key}`);
    expect(files.status).toBe(401);
    const both = await check(h, "/v1/auth/check?access_token=wrong", `Bearer ${t.key}`);
    expect(both.status).toBe(200);
    // Routes that check the key before reading a JSON body say the same.
    const post = await h.req("POST", `/v1/automations?access_token=${t.key}`, { body: { yaml: "name: x" } });
    expect(post.status).toBe(401);
    expect((await json(post)).issues[0].field).toBe("access_token");
  });
});

describe("rate limit (--rate-limit N per API key)", () => {
  test("off by default: a burst of requests all pass", async () => {
    const h = await harness();
    const t = await h.tenant("acme");
    for (let i = 0; i < 30; i++) expect((await h.req("GET", "/v1/auth/check", { key: t.key })).status).toBe(200);
  });

  test("over N per second → 429 envelope with Retry-After; per key; refills with time; a JSON POST counts once", async () => {
    const h = await harness({ rateLimit: 2 });
    const t = await h.tenant("acme");
    const other = await h.key("acme", ["*"]);
    expect((await h.req("GET", "/v1/auth/check", { key: t.key })).status).toBe(200);
    // The automations POST checks the key before reading its body and again in the handler.
    const created = await h.req("POST", "/v1/automations", { key: t.key, body: { yaml: "name: x\nsteps:\n  - {name: a, type: transform.set, with: {fields: {a: 1}}}\n" } });
    expect(created.status).toBe(201);
    const limited = await h.req("GET", "/v1/automations", { key: t.key });
    expect(limited.status).toBe(429);
    expect(limited.headers.get("retry-after")).toBe("1");
    const b = await json(limited);
    expect(b.issues[0]).toMatchObject({ code: "rate_limited", field: "<root>" });
    expect(b.issues[0].message).toContain("2 requests per second");
    // Another key of the same tenant has its own budget.
    expect((await h.req("GET", "/v1/automations", { key: other })).status).toBe(200);
    h.clock.advance(500);
    expect((await h.req("GET", "/v1/automations", { key: t.key })).status).toBe(200);
    expect((await h.req("GET", "/v1/automations", { key: t.key })).status).toBe(429);
    // Unauthenticated requests are refused (401) before any budget is spent.
    expect((await h.req("GET", "/v1/automations")).status).toBe(401);
  });
});
