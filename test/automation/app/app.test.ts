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
    const t = await h.tenant("acme");
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

describe("conventions", () => {
  test("snake_case query names answer like their camelCase twins", async () => {
    const h = await harness();
    const t = await h.tenant("acme");
    for (const q of ["created_after=not-a-date", "createdAfter=not-a-date"]) {
      const r = await h.req("GET", `/v1/runs?${q}`, { key: t.key });
      expect(r.status).toBe(400);
      expect((await json(r)).issues[0].field).toBe("createdAfter");
    }
    // camelCase wins when both are sent.
    const both = await h.req("GET", "/v1/runs?created_after=not-a-date&createdAfter=2026-01-01T00:00:00Z", { key: t.key });
    expect(both.status).toBe(200);
  });

  test("405 lists the allowed methods for a known path; unknown /api/v1 path → 404 envelope", async () => {
    const h = await harness();
    const t = await h.tenant("acme");
    const r = await h.req("DELETE", "/v1/automations", { key: t.key });
    expect(r.status).toBe(405);
    expect(r.headers.get("allow")!.split(", ").sort()).toEqual(["GET", "POST"]);
    const body = await json(r);
    expect(body.issues[0]).toMatchObject({ field: "<root>", code: "method_not_allowed", severity: "error" });
    expect(body.requestId).toBe(r.headers.get("x-request-id")!);
    const u = await h.req("POST", "/api/v1/definitely/not/here", { key: t.key, body: "{oops", headers: { "content-type": "application/json" } });
    expect(u.status).toBe(404);
    expect((await json(u)).issues[0].code).toBe("not_found");
  });

  test("x-request-id is on every response, also streamed bodies and other features' routes", async () => {
    const h = await harness();
    const t = await h.tenant("acme");
    const form = new FormData();
    form.set("file", new Blob(["hello"], { type: "text/plain" }), "a.txt");
    const up = await h.req("POST", "/v1/files", { key: t.key, body: form, headers: { "x-request-id": "up-1" } });
    expect(up.headers.get("x-request-id")).toBe("up-1");
    const file = await json(up);
    for (const path of ["/health", "/openapi/json", "/v1/auth/check", "/v1/automations", "/v1/runs", `/v1/files/${file.id}/content`]) {
      const r = await h.req("GET", path, { key: t.key, headers: { "x-request-id": `id-${path.length}` } });
      expect(r.status).toBe(200);
      expect(r.headers.get("x-request-id")).toBe(`id-${path.length}`);
    }
  });

  test("an unusable x-request-id is replaced by a generated one", async () => {
    const h = await harness();
    const r = await h.req("GET", "/health", { headers: { "x-request-id": "bad id with spaces" } });
    expect(r.headers.get("x-request-id")).toMatch(/^req_/);
    const long = await h.req("GET", "/health", { headers: { "x-request-id": "a".repeat(500) } });
    expect(long.headers.get("x-request-id")).toMatch(/^req_/);
  });

  test("the OpenAPI document lists our paths under both prefixes", async () => {
    const h = await harness();
    const doc = await json(await h.req("GET", "/openapi/json"));
    const paths = Object.keys(doc.paths);
    for (const p of ["/v1/automations", "/api/v1/automations", "/v1/automations/{id}/versions/{versionId}/promote", "/api/v1/auth/check"]) {
      expect(paths).toContain(p);
    }
    const create = doc.paths["/v1/automations"].post;
    expect(create.requestBody.content["application/json"].schema.required).toEqual(["yaml"]);
    expect(create.responses["201"].content["application/json"].schema.required).toContain("inputSchema");
    expect(create.responses["409"].content["application/json"].schema.required).toEqual(["issues", "requestId"]);
  });

  test("the OpenAPI document keeps list routes' query parameters beside their path parameters", async () => {
    const h = await harness();
    const doc = await json(await h.req("GET", "/openapi/json"));
    const names = (path: string, method: string) =>
      (doc.paths[path][method].parameters as { name: string; in: string }[]).map((p) => `${p.in}:${p.name}`).sort();
    for (const prefix of ["/v1", "/api/v1"]) {
      expect(names(`${prefix}/automations`, "get")).toEqual(["query:expand", "query:limit", "query:offset", "query:search", "query:type"]);
      expect(names(`${prefix}/automations/{id}/versions`, "get")).toEqual(["path:id", "query:expand", "query:limit", "query:offset"]);
      expect(names(`${prefix}/automations/{id}/versions/{versionId}/promote`, "post")).toEqual(["path:id", "path:versionId"]);
      expect(names(`${prefix}/files/uploads/{uploadId}/content`, "put")).toEqual(["path:uploadId", "query:expires", "query:signature"]);
    }
    expect(Object.keys(doc.paths)).not.toContain("/openapi/json");
    // The reference's scheme name; /health and the signed PUT need no key.
    expect(doc.security).toEqual([{ bearerAuth: [] }]);
    expect(doc.components.securitySchemes.bearerAuth).toMatchObject({ type: "http", scheme: "bearer" });
    expect(doc.paths["/health"].get.security).toEqual([]);
    expect(doc.paths["/v1/files/uploads/{uploadId}/content"].put.security).toEqual([]);
  });
});

describe("database contention", () => {
  test("a write lock held by another process's connection too long → 503 envelope with Retry-After, not 500", async () => {
    const { mkdtempSync, rmSync } = await import("node:fs");
    const { tmpdir } = await import("node:os");
    const { join } = await import("node:path");
    const { Database } = await import("bun:sqlite");
    const dir = mkdtempSync(join(tmpdir(), "automation-busy-"));
    try {
      // SQLITE_BUSY is SQLite's: this test stays on SQLite in the PostgreSQL pass (faults-postgres covers PostgreSQL).
      const h = await harness({ dataDir: dir, db: undefined });
      const t = await h.tenant("acme");
      h.ctx.db.sqlite!.exec("PRAGMA busy_timeout = 50");
      const other = new Database(join(dir, "automation.db"));
      other.exec("BEGIN IMMEDIATE");
      const r = await h.req("POST", "/v1/automations", { key: t.key, body: { yaml: "name: x\nsteps:\n  - {name: a, type: transform.set, with: {fields: {a: 1}}}\n" } });
      other.exec("ROLLBACK");
      other.close();
      expect(r.status).toBe(503);
      expect(r.headers.get("retry-after")).toBe("1");
      expect((await json(r)).issues[0].code).toBe("unavailable");
      await h.ctx.db.close();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
