// Tenant isolation and scope refusal on every endpoint of the foundation.
import { describe, expect, test } from "bun:test";
import { harness, json } from "../app/harness";
import { wf } from "./fixtures";

async function twoTenants() {
  const h = await harness();
  const a = await h.tenant("alpha");
  const b = await h.tenant("beta");
  const created = await json(await h.req("POST", "/v1/automations", { key: a.key, body: { yaml: wf("shared-name", { version: "1.0.0" }) } }));
  const versionId = (await json(await h.req("GET", `/v1/automations/${created.id}/versions`, { key: a.key }))).data[0].id as string;
  return { h, a, b, id: created.id as string, versionId };
}

describe("tenant isolation", () => {
  test("another tenant's automation answers 404 exactly like a missing one, on every endpoint", async () => {
    const { h, b, id, versionId } = await twoTenants();
    const calls: [string, string, unknown?][] = [
      ["GET", `/v1/automations/${id}`],
      ["GET", "/v1/automations/workflows.shared-name"],
      ["GET", `/v1/automations/${id}/triggers`],
      ["GET", `/v1/automations/${id}/versions`],
      ["POST", `/v1/automations/${id}/versions`, { yaml: wf("shared-name"), version: "2.0.0" }],
      ["POST", `/v1/automations/${id}/versions`, { historyId: versionId, version: "2.0.0" }],
      ["POST", `/v1/automations/${id}/versions/${versionId}/promote`, {}],
      ["POST", `/v1/automations/${id}/versions/${versionId}/restore`, {}],
    ];
    for (const [method, path, body] of calls) {
      const theirs = await h.req(method, path, { key: b.key, body });
      const missing = await h.req(method, path.replace(id, "wf_doesnotexist").replace("workflows.shared-name", "workflows.nope"), { key: b.key, body });
      expect(theirs.status).toBe(404);
      expect(missing.status).toBe(404);
      const [x, y] = [await json(theirs), await json(missing)];
      expect(x.issues[0].code).toBe(y.issues[0].code);
      expect(x.issues[0].field).toBe(y.issues[0].field);
    }
  });

  test("lists only show the caller's automations; same slug may exist in both tenants", async () => {
    const { h, a, b, id } = await twoTenants();
    expect((await json(await h.req("GET", "/v1/automations", { key: b.key }))).total).toBe(0);
    const mine = await json(await h.req("GET", "/v1/automations", { key: a.key }));
    expect(mine.data.map((x: { id: string }) => x.id)).toEqual([id]);
    const theirs = await h.req("POST", "/v1/automations", { key: b.key, body: { yaml: wf("shared-name") } });
    expect(theirs.status).toBe(201);
    const bid = (await json(theirs)).id;
    expect(bid).not.toBe(id);
    expect((await json(await h.req("GET", "/v1/automations/workflows.shared-name", { key: a.key }))).id).toBe(id);
    expect((await json(await h.req("GET", "/v1/automations/workflows.shared-name", { key: b.key }))).id).toBe(bid);
  });

  test("a version id of another automation cannot be promoted, restored or copied through mine", async () => {
    const { h, a, b, versionId } = await twoTenants();
    const mine = await json(await h.req("POST", "/v1/automations", { key: b.key, body: { yaml: wf("b-flow", { version: "1.0.0" }) } }));
    for (const path of [`/v1/automations/${mine.id}/versions/${versionId}/promote`, `/v1/automations/${mine.id}/versions/${versionId}/restore`]) {
      expect((await h.req("POST", path, { key: b.key, body: {} })).status).toBe(404);
    }
    const copy = await h.req("POST", `/v1/automations/${mine.id}/versions`, { key: b.key, body: { historyId: versionId, version: "9.0.0" } });
    expect(copy.status).toBe(404);
    // The owner still sees its version untouched.
    expect((await h.req("GET", "/v1/automations/workflows.shared-name", { key: a.key })).status).toBe(200);
  });

  test("auth check reports the caller's own tenant", async () => {
    const { h, a, b } = await twoTenants();
    expect((await json(await h.req("GET", "/v1/auth/check", { key: a.key }))).tenantSlug).toBe("alpha");
    expect((await json(await h.req("GET", "/v1/auth/check", { key: b.key }))).tenantSlug).toBe("beta");
  });
});

describe("scopes", () => {
  test("a key without automations scopes gets 403 on reads and writes; read-only key can read, not write", async () => {
    const { h, id, versionId } = await twoTenants();
    const runsOnly = await h.key("alpha", ["runs:read", "runs:write"]);
    const reader = await h.key("alpha", ["automations:read"]);
    const writer = await h.key("alpha", ["automations:write"]);
    const reads: [string, string][] = [
      ["GET", "/v1/automations"],
      ["GET", `/v1/automations/${id}`],
      ["GET", `/v1/automations/${id}/triggers`],
      ["GET", `/v1/automations/${id}/versions`],
    ];
    const writes: [string, string, unknown][] = [
      ["POST", "/v1/automations", { yaml: wf("new-one") }],
      ["POST", `/v1/automations/${id}/versions`, { yaml: wf("shared-name"), version: "3.0.0" }],
      ["POST", `/v1/automations/${id}/versions/${versionId}/promote`, {}],
      ["POST", `/v1/automations/${id}/versions/${versionId}/restore`, {}],
    ];
    for (const [m, p] of reads) {
      const r = await h.req(m, p, { key: runsOnly });
      expect(r.status).toBe(403);
      expect((await json(r)).issues[0]).toMatchObject({ code: "insufficient_scope", severity: "error" });
      expect((await h.req(m, p, { key: reader })).status).toBe(200);
      expect((await h.req(m, p, { key: writer })).status).toBe(200);
    }
    for (const [m, p, body] of writes) {
      expect((await h.req(m, p, { key: runsOnly, body })).status).toBe(403);
      expect((await h.req(m, p, { key: reader, body })).status).toBe(403);
    }
    // auth/check needs no particular scope.
    expect((await h.req("GET", "/v1/auth/check", { key: runsOnly })).status).toBe(200);
    // Nothing was written by the refused calls.
    expect((await json(await h.req("GET", `/v1/automations/${id}/versions`, { key: reader }))).total).toBe(1);
  });

  test("every automations endpoint refuses a missing key with 401", async () => {
    const { h, id, versionId } = await twoTenants();
    for (const [m, p] of [
      ["GET", "/v1/automations"],
      ["POST", "/v1/automations"],
      ["GET", `/v1/automations/${id}`],
      ["GET", `/v1/automations/${id}/triggers`],
      ["GET", `/v1/automations/${id}/versions`],
      ["POST", `/v1/automations/${id}/versions`],
      ["POST", `/v1/automations/${id}/versions/${versionId}/promote`],
      ["POST", `/api/v1/automations/${id}/versions/${versionId}/restore`],
    ]) {
      const r = await h.req(m, p);
      expect(r.status).toBe(401);
    }
  });
});

describe("auth before body", () => {
  test("an anonymous or bad-key request with a broken or huge body gets 401, not 400/413", async () => {
    const h = await harness();
    await h.tenant("acme");
    for (const headers of [{ "content-type": "application/json" } as Record<string, string>, { "content-type": "application/json", authorization: "Bearer wrong" }]) {
      const broken = await h.req("POST", "/v1/automations", { body: "{nope", headers });
      expect(broken.status).toBe(401);
      const huge = await h.req("POST", "/v1/automations", { body: `{"yaml": "${"x".repeat(5 * 1024 * 1024)}"}`, headers });
      expect(huge.status).toBe(401);
    }
  });
});
