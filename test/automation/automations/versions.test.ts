import { describe, expect, test } from "bun:test";
import { harness, json, type Harness } from "../app/harness";
import { wf } from "./fixtures";

async function setup() {
  const h = await harness();
  const t = await h.tenant("acme");
  const r = await h.req("POST", "/v1/automations", { key: t.key, body: { yaml: wf("inv", { version: "1.0.0", description: "one" }) } });
  const a = await json(r);
  return { h, t, id: a.id as string };
}

async function post(h: Harness, key: string, path: string, body?: unknown) {
  const r = await h.req("POST", path, { key, body });
  return { status: r.status, body: await json(r) };
}

async function versions(h: Harness, key: string, id: string) {
  return json(await h.req("GET", `/v1/automations/${id}/versions`, { key }));
}

const current = async (h: Harness, key: string, id: string) => (await json(await h.req("GET", `/v1/automations/${id}`, { key })));

describe("versions", () => {
  test("the created workflow lists its first tagged version as current", async () => {
    const { h, t, id } = await setup();
    const list = await versions(h, t.key, id);
    expect(list).toMatchObject({ total: 1, limit: 50, offset: 0 });
    expect(list.data[0]).toMatchObject({ automationId: id, version: "1.0.0", sourceRef: null, isCurrent: true });
    expect(list.data[0].id).toMatch(/^wfh_/);
  });

  test("create from yaml: 201 {id, automationId, version, sourceRef, isCurrent, createdAt}, becomes current", async () => {
    const { h, t, id } = await setup();
    h.clock.advance(60_000);
    const r = await post(h, t.key, `/v1/automations/${id}/versions`, { yaml: wf("inv", { description: "two" }), version: "1.1.0" });
    expect(r.status).toBe(201);
    expect(Object.keys(r.body).sort()).toEqual(["automationId", "createdAt", "id", "isCurrent", "sourceRef", "version"]);
    expect(r.body).toMatchObject({ automationId: id, version: "1.1.0", sourceRef: null, isCurrent: true, createdAt: "2026-11-22T09:01:00.000Z" });
    const a = await current(h, t.key, id);
    expect(a.version).toBe("1.1.0");
    expect(a.description).toBe("two");
    expect(a.updatedAt).toBe("2026-11-22T09:01:00.000Z");
  });

  test("the tag defaults to the YAML's own version; no tag at all → 400", async () => {
    const { h, t, id } = await setup();
    const r = await post(h, t.key, `/v1/automations/${id}/versions`, { yaml: wf("inv", { version: "2.0.0" }) });
    expect(r.status).toBe(201);
    expect(r.body.version).toBe("2.0.0");
    const none = await post(h, t.key, `/v1/automations/${id}/versions`, { yaml: wf("inv") });
    expect(none.status).toBe(400);
    expect(none.body.issues[0].field).toBe("version");
  });

  test("activate: false keeps the current version serving", async () => {
    const { h, t, id } = await setup();
    const r = await post(h, t.key, `/v1/automations/${id}/versions`, { yaml: wf("inv", { description: "dark" }), version: "1.1.0", activate: false });
    expect(r.status).toBe(201);
    expect(r.body.isCurrent).toBe(false);
    const a = await current(h, t.key, id);
    expect(a.version).toBe("1.0.0");
    expect(a.description).toBe("one");
  });

  test("activate: false without a current version → 400", async () => {
    const { h, t } = await setup();
    // An automation with no current version (e.g. one whose only version was never activated).
    const id = "wf_nocurrent";
    const at = h.clock.now().toISOString();
    await h.ctx.storage.automations.create(
      { id, tenantId: t.id, type: "workflow", slug: "inv2", name: "inv2", description: null, status: "active", currentVersionId: null, createdAt: at, updatedAt: at },
      { id: "wfh_dark", tenantId: t.id, automationId: id, version: "1.0.0", yaml: wf("inv2"), sourceRef: null, message: null, name: "inv2", description: null, triggers: "{}", inputSchema: null, outputSchema: null, createdAt: at },
    );
    const r = await post(h, t.key, `/v1/automations/${id}/versions`, { yaml: wf("inv2"), version: "1.1.0", activate: false });
    expect(r.status).toBe(400);
    expect(r.body.issues[0]).toMatchObject({ field: "activate", code: "no_current_version" });
    const ok = await post(h, t.key, `/v1/automations/${id}/versions`, { yaml: wf("inv2"), version: "1.1.0" });
    expect(ok.status).toBe(201);
  });

  test("exactly one of yaml or historyId", async () => {
    const { h, t, id } = await setup();
    const src = (await versions(h, t.key, id)).data[0].id;
    const both = await post(h, t.key, `/v1/automations/${id}/versions`, { yaml: wf("inv"), historyId: src, version: "3.0.0" });
    expect(both.status).toBe(400);
    const neither = await post(h, t.key, `/v1/automations/${id}/versions`, { version: "3.0.0" });
    expect(neither.status).toBe(400);
    expect(neither.body.issues[0].message).toContain("exactly one");
  });

  test("duplicate tag → 409, and nothing is written", async () => {
    const { h, t, id } = await setup();
    const r = await post(h, t.key, `/v1/automations/${id}/versions`, { yaml: wf("inv", { description: "changed" }), version: "1.0.0" });
    expect(r.status).toBe(409);
    expect(r.body.issues[0]).toMatchObject({ field: "version", code: "duplicate_version" });
    expect((await versions(h, t.key, id)).total).toBe(1);
    expect((await current(h, t.key, id)).description).toBe("one");
  });

  test("bad version tags, bad activate, unknown fields, yaml over 1 MiB", async () => {
    const { h, t, id } = await setup();
    for (const [body, field] of [
      [{ yaml: wf("inv"), version: "v1.2.0" }, "version"],
      [{ yaml: wf("inv"), version: "1.2" }, "version"],
      [{ yaml: wf("inv"), version: 3 }, "version"],
      [{ yaml: wf("inv"), version: "1.2.0", activate: "yes" }, "activate"],
      [{ yaml: wf("inv"), version: "1.2.0", colour: "red" }, "colour"],
    ] as const) {
      const r = await post(h, t.key, `/v1/automations/${id}/versions`, body);
      expect(r.status).toBe(400);
      expect(r.body.issues.map((i: { field: string }) => i.field)).toContain(field);
    }
    const huge = await post(h, t.key, `/v1/automations/${id}/versions`, { yaml: wf("inv") + `# ${"y".repeat(1024 * 1024)}\n`, version: "9.0.0" });
    expect(huge.status).toBe(413);
    expect(huge.body.issues[0].field).toBe("yaml");
  });

  test("invalid YAML in a version → 400 with the line; another workflow's name → 400", async () => {
    const { h, t, id } = await setup();
    const r = await post(h, t.key, `/v1/automations/${id}/versions`, { yaml: "name: inv\nsteps:\n  - name: a\n    type: transform.nope\n", version: "1.1.0" });
    expect(r.status).toBe(400);
    expect(r.body.issues[0].field).toBe("yaml.steps.0.type");
    expect(r.body.issues[0].message).toContain("line 4");
    const other = await post(h, t.key, `/v1/automations/${id}/versions`, { yaml: wf("other"), version: "1.1.0" });
    expect(other.status).toBe(400);
    expect(other.body.issues[0].field).toBe("yaml.name");
  });

  test("copy from historyId: new row with the new tag, source tag unchanged, sourceRef = source id", async () => {
    const { h, t, id } = await setup();
    const v1 = (await versions(h, t.key, id)).data[0];
    await post(h, t.key, `/v1/automations/${id}/versions`, { yaml: wf("inv", { description: "two" }), version: "1.1.0" });
    const copy = await post(h, t.key, `/v1/automations/${id}/versions`, { historyId: v1.id, version: "1.2.0" });
    expect(copy.status).toBe(201);
    expect(copy.body).toMatchObject({ version: "1.2.0", sourceRef: v1.id, isCurrent: true });
    const list = await versions(h, t.key, id);
    expect(list.data.find((v: { id: string }) => v.id === v1.id).version).toBe("1.0.0");
    expect((await current(h, t.key, id)).description).toBe("one");
    const missing = await post(h, t.key, `/v1/automations/${id}/versions`, { historyId: "wfh_nope", version: "1.3.0" });
    expect(missing.status).toBe(404);
    const noTag = await post(h, t.key, `/v1/automations/${id}/versions`, { historyId: v1.id });
    expect(noTag.status).toBe(400);
    const dupTag = await post(h, t.key, `/v1/automations/${id}/versions`, { historyId: v1.id, version: "1.1.0" });
    expect(dupTag.status).toBe(409);
  });

  test("promote: a tagged version becomes current without a new row; unknown → 404", async () => {
    const { h, t, id } = await setup();
    const v1 = (await versions(h, t.key, id)).data[0];
    await post(h, t.key, `/v1/automations/${id}/versions`, { yaml: wf("inv", { description: "two" }), version: "1.1.0" });
    const r = await post(h, t.key, `/v1/automations/${id}/versions/${v1.id}/promote`);
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ id: v1.id, version: "1.0.0", isCurrent: true });
    expect((await versions(h, t.key, id)).total).toBe(2);
    const a = await current(h, t.key, id);
    expect(a.version).toBe("1.0.0");
    expect(a.description).toBe("one");
    // Promoting the current one again is harmless.
    expect((await post(h, t.key, `/v1/automations/${id}/versions/${v1.id}/promote`, {})).status).toBe(200);
    expect((await post(h, t.key, `/v1/automations/${id}/versions/wfh_nope/promote`)).status).toBe(404);
  });

  test("restore: a new untagged current row; listed while HEAD; cannot be promoted until a tagged copy", async () => {
    const { h, t, id } = await setup();
    const v1 = (await versions(h, t.key, id)).data[0];
    await post(h, t.key, `/v1/automations/${id}/versions`, { yaml: wf("inv", { description: "two" }), version: "1.1.0" });
    h.clock.advance(1000);
    const r = await post(h, t.key, `/v1/automations/${id}/versions/${v1.id}/restore`, { message: "back to one" });
    expect(r.status).toBe(201);
    expect(r.body).toMatchObject({ version: null, sourceRef: v1.id, isCurrent: true });
    expect(r.body.id).not.toBe(v1.id);
    const a = await current(h, t.key, id);
    expect(a.version).toBeNull();
    expect(a.description).toBe("one");
    let list = await versions(h, t.key, id);
    expect(list.total).toBe(3);
    expect(list.data[0]).toMatchObject({ id: r.body.id, version: null, isCurrent: true });
    // Untagged → 404 on promote.
    expect((await post(h, t.key, `/v1/automations/${id}/versions/${r.body.id}/promote`)).status).toBe(404);
    // A tagged copy of the snapshot can be promoted.
    const tagged = await post(h, t.key, `/v1/automations/${id}/versions`, { historyId: r.body.id, version: "1.2.0", activate: false });
    expect(tagged.status).toBe(201);
    expect((await post(h, t.key, `/v1/automations/${id}/versions/${tagged.body.id}/promote`)).status).toBe(200);
    // The untagged snapshot is no longer HEAD, so it drops out of the list.
    list = await versions(h, t.key, id);
    expect(list.data.map((v: { version: string | null }) => v.version)).toEqual(["1.2.0", "1.1.0", "1.0.0"]);
    // restore with {} and unknown → 404; unknown body field → 400.
    expect((await post(h, t.key, `/v1/automations/${id}/versions/${v1.id}/restore`, {})).status).toBe(201);
    expect((await post(h, t.key, `/v1/automations/${id}/versions/wfh_nope/restore`, {})).status).toBe(404);
    expect((await post(h, t.key, `/v1/automations/${id}/versions/${v1.id}/restore`, { msg: "x" })).status).toBe(400);
  });

  test("versions list pages with limit/offset and rejects bad values", async () => {
    const { h, t, id } = await setup();
    for (const v of ["1.1.0", "1.2.0", "1.3.0"]) {
      h.clock.advance(1000);
      await post(h, t.key, `/v1/automations/${id}/versions`, { yaml: wf("inv"), version: v });
    }
    const page = await json(await h.req("GET", `/v1/automations/${id}/versions?limit=2&offset=1`, { key: t.key }));
    expect(page).toMatchObject({ total: 4, limit: 2, offset: 1 });
    expect(page.data.map((v: { version: string }) => v.version)).toEqual(["1.2.0", "1.1.0"]);
    expect((await h.req("GET", `/v1/automations/${id}/versions?limit=500`, { key: t.key })).status).toBe(400);
  });

  test("agents: versions create / promote / restore → 400", async () => {
    const { h, t } = await setup();
    // Agents come from Git (a later part); insert one as that sync would.
    const at = h.clock.now().toISOString();
    await h.ctx.storage.automations.create(
      { id: "agt_1", tenantId: t.id, type: "agent", slug: "helper", name: "helper", description: null, status: "active", currentVersionId: "wfh_agent", createdAt: at, updatedAt: at },
      { id: "wfh_agent", tenantId: t.id, automationId: "agt_1", version: "1.0.0", yaml: "", sourceRef: null, message: null, name: null, description: null, triggers: '{"api":true}', inputSchema: null, outputSchema: null, createdAt: at },
    );
    expect((await current(h, t.key, "agents.helper")).type).toBe("agent");
    for (const path of ["/v1/automations/agt_1/versions/wfh_agent/restore", "/v1/automations/agt_1/versions/wfh_agent/promote"]) {
      const r = await post(h, t.key, path, {});
      expect(r.status).toBe(400);
      expect(r.body.issues[0].code).toBe("agent_not_supported");
    }
    expect((await post(h, t.key, "/v1/automations/agents.helper/versions", { yaml: wf("helper"), version: "2.0.0" })).status).toBe(400);
  });

  test("alias works for version routes; unknown automation → 404", async () => {
    const { h, t } = await setup();
    const r = await post(h, t.key, "/v1/automations/workflows.inv/versions", { yaml: wf("inv"), version: "1.5.0" });
    expect(r.status).toBe(201);
    expect((await h.req("GET", "/v1/automations/workflows.nope/versions", { key: t.key })).status).toBe(404);
    expect((await post(h, t.key, "/v1/automations/wf_nope/versions", { yaml: wf("inv"), version: "1.6.0" })).status).toBe(404);
  });
});

describe("pushWorkflow (the service behind `workflows push`)", () => {
  test("creates the workflow, then adds versions; the HTTP API sees them", async () => {
    const { pushWorkflow } = await import("../../../src/automation/automations/service");
    const h = await harness();
    const t = await h.tenant("acme");
    const first = await pushWorkflow(h.ctx.storage.automations, h.clock, t.id, wf("pushed", { version: "1.0.0" }));
    expect(first.created).toBe(true);
    const second = await pushWorkflow(h.ctx.storage.automations, h.clock, t.id, wf("pushed", { version: "1.0.0" }), { version: "1.1.0" });
    expect(second).toMatchObject({ created: false, version: { version: "1.1.0", isCurrent: true } });
    const dark = await pushWorkflow(h.ctx.storage.automations, h.clock, t.id, wf("pushed"), { version: "1.2.0", activate: false });
    expect(dark).toMatchObject({ created: false, version: { version: "1.2.0", isCurrent: false } });
    await expect(pushWorkflow(h.ctx.storage.automations, h.clock, t.id, wf("pushed", { version: "1.0.0" }))).rejects.toThrow(/1\.0\.0 already exists/);
    const got = await json(await h.req("GET", "/v1/automations/workflows.pushed", { key: t.key }));
    expect(got.version).toBe("1.1.0");
    const versions = await json(await h.req("GET", "/v1/automations/workflows.pushed/versions", { key: t.key }));
    expect(versions.data.map((v: { version: string }) => v.version)).toEqual(["1.2.0", "1.1.0", "1.0.0"]);
  });
});
