// Agents from real Git repositories: registration, the automation list and aliases, versions = release
// tags (a bad manifest tag left out, a deleted tag pruned), sync idempotence and its 400/404 cases,
// tenant isolation, and version writes refused on agents.
import { describe, expect, test } from "bun:test";
import { renameSync } from "node:fs";
import { addAgent, agentDeps, syncAgent } from "../../../src/automation/agents/service";
import { harness, json, type Harness, type Json } from "../app/harness";
import { gitSync, manifest, testRepo } from "./git-repo";

const LOOKUP = `
name: lookup
description: Finds an invoice
inputs: [{name: number, type: string, required: true}]
steps:
  - {name: found, type: transform.set, with: {fields: {number: "{{ input.number }}", total: 120}}}
output: "{{ steps.found.output }}"
`;

async function setup() {
  const h = await harness();
  const t = await h.tenant("acme");
  expect((await h.req("POST", "/v1/automations", { key: t.key, body: { yaml: LOOKUP } })).status).toBe(201);
  const repo = testRepo("invoice-agent");
  repo.commit({ "agent.yaml": manifest({ name: "Invoice helper v1" }) });
  repo.tag("v1.0.0");
  repo.commit({ "agent.yaml": "name: [broken\n" }, "bad manifest");
  repo.tag("v1.0.1");
  repo.commit({ "agent.yaml": manifest({ name: "Invoice helper" }) });
  repo.tag("v1.1.0", { annotated: true });
  repo.tag("not-a-release");
  return { h, t, repo };
}

const sync = (h: Harness, key: string, ref: string, body?: unknown) => h.req("POST", `/v1/automations/${ref}/sync`, { key, body });
const versions = async (h: Harness, key: string, ref: string) =>
  ((await json(await h.req("GET", `/v1/automations/${ref}/versions`, { key }))).data as { version: string; isCurrent: boolean }[]).map((v) => `${v.version}${v.isCurrent ? "*" : ""}`);

describe("agents from Git", () => {
  test("add: listed as type agent, addressable as agents.<slug>, versions = valid release tags", async () => {
    const { h, t, repo } = await setup();
    const added = await addAgent(agentDeps(h.ctx), t.id, { repo: repo.dir });
    expect(added.agent.id).toMatch(/^agt_/);
    expect(added.release).toMatchObject({ version: "1.1.0", tag: "v1.1.0" });
    expect(added.release!.commit).toBe(gitSync(repo.dir, "rev-parse", "v1.1.0^{commit}"));
    expect(added.warnings.join("\n")).toContain("v1.0.1");

    const list = await json(await h.req("GET", "/v1/automations?type=agent", { key: t.key }));
    expect(list.total).toBe(1);
    expect(list.data[0]).toMatchObject({ id: added.agent.id, type: "agent", slug: "invoice-agent", name: "Invoice helper", version: "1.1.0" });
    expect(list.data[0].triggers).toEqual({ api: true, manual: true, email: false, cron: false });
    const workflows = await json(await h.req("GET", "/v1/automations?type=workflow", { key: t.key }));
    expect(workflows.data.map((a: { slug: string }) => a.slug)).toEqual(["lookup"]);

    const detail = await json(await h.req("GET", "/v1/automations/agents.invoice-agent", { key: t.key }));
    expect(detail).toMatchObject({ id: added.agent.id, type: "agent", description: "Answers questions about invoices" });
    expect(detail.inputSchema.required).toEqual(["question"]);
    expect(await versions(h, t.key, "agents.invoice-agent")).toEqual(["1.1.0*", "1.0.0"]);
    const byId = await json(await h.req("GET", `/v1/automations/${added.agent.id}/triggers`, { key: t.key }));
    expect(byId).toMatchObject({ automationId: added.agent.id, type: "agent" });
  });

  test("sync twice gives the same state; a new tag, then its deletion, are followed", async () => {
    const { h, t, repo } = await setup();
    await addAgent(agentDeps(h.ctx), t.id, { repo: repo.dir });
    const state = async () => ({
      detail: await json(await h.req("GET", "/v1/automations/agents.invoice-agent", { key: t.key })),
      versions: await json(await h.req("GET", "/v1/automations/agents.invoice-agent/versions", { key: t.key })),
    });
    const before = await state();
    h.clock.advance(60_000);
    const first = await sync(h, t.key, "agents.invoice-agent");
    expect(first.status).toBe(200);
    const r1 = await json(first);
    // Exactly the reference's keys (its schema forbids others).
    const reference = (await Bun.file(new URL("../compat/eigenpal-openapi.json", import.meta.url)).json()) as Json;
    const schema = reference.paths["/api/v1/automations/{id}/sync"].post.responses["200"].content["application/json"].schema;
    expect(Object.keys(r1).sort()).toEqual(Object.keys(schema.properties).sort());
    expect(Object.keys(r1.automation).sort()).toEqual(Object.keys(schema.properties.automation.properties).sort());
    expect(Object.keys(r1.release).sort()).toEqual(Object.keys(schema.properties.release.properties).sort());
    expect(r1.release).toMatchObject({ version: "1.1.0", tag: "v1.1.0" });
    expect(r1.automation).toMatchObject({ type: "agent", slug: "invoice-agent", status: "active", updatedAt: before.detail.updatedAt });
    h.clock.advance(60_000);
    const r2 = await json(await sync(h, t.key, "agents.invoice-agent", {}));
    expect(r2).toEqual(r1);
    expect(await state()).toEqual(before);

    repo.commit({ "agent.yaml": manifest({ name: "Invoice helper 2", triggers: "[manual]" }) });
    repo.tag("v1.2.0");
    h.clock.advance(60_000);
    const r3 = await json(await sync(h, t.key, "agents.invoice-agent"));
    expect(r3.release.version).toBe("1.2.0");
    expect(r3.automation.updatedAt).not.toBe(before.detail.updatedAt);
    const after = await json(await h.req("GET", "/v1/automations/agents.invoice-agent", { key: t.key }));
    expect(after).toMatchObject({ name: "Invoice helper 2", version: "1.2.0", triggers: { api: false, manual: true } });
    expect(await versions(h, t.key, "agents.invoice-agent")).toEqual(["1.2.0*", "1.1.0", "1.0.0"]);

    repo.deleteTag("v1.2.0");
    repo.deleteTag("v1.0.0");
    const r4 = await json(await sync(h, t.key, "agents.invoice-agent"));
    expect(r4.release.version).toBe("1.1.0");
    expect(await versions(h, t.key, "agents.invoice-agent")).toEqual(["1.1.0*"]);
    expect((await json(await h.req("GET", "/v1/automations/agents.invoice-agent", { key: t.key }))).name).toBe("Invoice helper");
  });

  test("a re-pointed tag replaces its version; pre-releases are not the latest while a stable exists", async () => {
    const { h, t, repo } = await setup();
    await addAgent(agentDeps(h.ctx), t.id, { repo: repo.dir });
    repo.commit({ "agent.yaml": manifest({ name: "Next" }) });
    repo.tag("v2.0.0-rc.1");
    expect((await json(await sync(h, t.key, "agents.invoice-agent"))).release.version).toBe("1.1.0");
    expect(await versions(h, t.key, "agents.invoice-agent")).toContain("2.0.0-rc.1");
    repo.deleteTag("v1.1.0");
    const moved = repo.commit({ "agent.yaml": manifest({ name: "Moved" }) });
    repo.tag("v1.1.0");
    const r = await json(await sync(h, t.key, "agents.invoice-agent"));
    expect(r.release).toEqual({ version: "1.1.0", tag: "v1.1.0", commit: moved });
    expect((await json(await h.req("GET", "/v1/automations/agents.invoice-agent", { key: t.key }))).name).toBe("Moved");
  });

  test("invalid latest manifest → 400 naming field and line, state unchanged; no manifest → 404", async () => {
    const { h, t, repo } = await setup();
    await addAgent(agentDeps(h.ctx), t.id, { repo: repo.dir });
    repo.commit({ "agent.yaml": manifest().replace("maxSteps: 5", "maxSteps: 0").replace("tools: [workflows.lookup]", "tools: [lookup]") });
    repo.tag("v1.3.0");
    const bad = await sync(h, t.key, "agents.invoice-agent");
    expect(bad.status).toBe(400);
    const body = await json(bad);
    const byField = Object.fromEntries(body.issues.map((i: { field: string; message: string }) => [i.field, i.message]));
    expect(byField["manifest.tools.0"]).toContain("line 8");
    expect(byField["manifest.maxSteps"]).toContain("line 9");
    expect(body.issues[0].code).toBe("invalid_value");
    expect(await versions(h, t.key, "agents.invoice-agent")).toEqual(["1.1.0*", "1.0.0"]);

    repo.commit({ "agent.yaml": "name: x\ninstructions: y\nmodel: m\nsurprise: 1\n" });
    repo.tag("v1.4.0");
    const unknown = await json(await sync(h, t.key, "agents.invoice-agent"));
    expect(unknown.issues[0]).toMatchObject({ field: "manifest.surprise", code: "unknown_field" });
    expect(unknown.issues[0].message).toContain("line 4");

    gitSync(repo.dir, "rm", "--quiet", "agent.yaml");
    repo.commit({}, "no manifest");
    repo.tag("v1.5.0");
    const missing = await sync(h, t.key, "agents.invoice-agent");
    expect(missing.status).toBe(404);
    expect((await json(missing)).issues[0].message).toContain("agent.yaml");
  });

  test("sync refusals: versioned target 400, workflow/unknown 404, no release 404, unreachable repo 404", async () => {
    const { h, t, repo } = await setup();
    await addAgent(agentDeps(h.ctx), t.id, { repo: repo.dir });
    expect((await sync(h, t.key, "agents.invoice-agent@1.1.0")).status).toBe(400);
    expect((await json(await sync(h, t.key, "agents.invoice-agent@v1.1.0"))).issues[0].code).toBe("versioned_target");
    expect((await sync(h, t.key, "workflows.lookup")).status).toBe(404);
    expect((await sync(h, t.key, "agents.nope")).status).toBe(404);
    expect((await sync(h, t.key, "agents.invoice-agent", { force: true })).status).toBe(400);
    const doc = await json(await h.req("GET", "/openapi/json"));
    expect(Object.keys(doc.paths["/v1/automations/{id}/sync"].post.responses)).toEqual(expect.arrayContaining(["200", "400", "404"]));

    const empty = testRepo("empty-agent");
    empty.commit({ "README.md": "nothing yet" });
    const added = await addAgent(agentDeps(h.ctx), t.id, { repo: empty.dir });
    expect(added.release).toBeNull();
    expect(added.agent).toMatchObject({ slug: "empty-agent", version: null });
    const none = await sync(h, t.key, "agents.empty-agent");
    expect(none.status).toBe(404);
    expect((await json(none)).issues[0].code).toBe("no_release");

    gitSync(repo.dir, "tag", "-d", "v1.1.0", "v1.0.1", "v1.0.0");
    const gone = await sync(h, t.key, "agents.invoice-agent");
    expect(gone.status).toBe(404);
    expect((await json(gone)).issues[0].code).toBe("no_release");
    renameSync(repo.dir, `${repo.dir}-moved`);
    const moved = await sync(h, t.key, "agents.invoice-agent");
    expect(moved.status).toBe(404);
    expect((await json(moved)).issues[0].code).toBe("repo_not_found");
    // What was synced before stays runnable metadata: the refusals changed nothing.
    expect(await versions(h, t.key, "agents.invoice-agent")).toEqual(["1.1.0*", "1.0.0"]);
  });

  test("another tenant can neither see, read, run nor sync the agent", async () => {
    const { h, t, repo } = await setup();
    const added = await addAgent(agentDeps(h.ctx), t.id, { repo: repo.dir });
    const other = await h.tenant("other");
    expect((await json(await h.req("GET", "/v1/automations?type=agent", { key: other.key }))).total).toBe(0);
    for (const ref of ["agents.invoice-agent", added.agent.id]) {
      expect((await h.req("GET", `/v1/automations/${ref}`, { key: other.key })).status).toBe(404);
      expect((await h.req("GET", `/v1/automations/${ref}/versions`, { key: other.key })).status).toBe(404);
      expect((await sync(h, other.key, ref)).status).toBe(404);
      expect((await h.req("POST", "/v1/runs", { key: other.key, body: { target: ref, input: { question: "?" } } })).status).toBe(404);
    }
    // The same repository may be registered by another tenant as its own agent.
    const theirs = await addAgent(agentDeps(h.ctx), other.id, { repo: repo.dir });
    expect(theirs.agent.id).not.toBe(added.agent.id);
    const readOnly = await h.key("acme", ["automations:read"]);
    expect((await sync(h, readOnly, "agents.invoice-agent")).status).toBe(403);
  });

  test("versions create / promote / restore on an agent → 400", async () => {
    const { h, t, repo } = await setup();
    await addAgent(agentDeps(h.ctx), t.id, { repo: repo.dir });
    const list = await json(await h.req("GET", "/v1/automations/agents.invoice-agent/versions", { key: t.key }));
    const v = list.data[1].id as string;
    for (const path of [`versions/${v}/promote`, `versions/${v}/restore`]) {
      const r = await h.req("POST", `/v1/automations/agents.invoice-agent/${path}`, { key: t.key, body: {} });
      expect(r.status).toBe(400);
      expect((await json(r)).issues[0].code).toBe("agent_not_supported");
    }
    expect((await h.req("POST", "/v1/automations/agents.invoice-agent/versions", { key: t.key, body: { historyId: v, version: "9.0.0" } })).status).toBe(400);
    expect(await versions(h, t.key, "agents.invoice-agent")).toEqual(["1.1.0*", "1.0.0"]);
  });

  test("a URL is mirrored under the data dir; a tag deleted upstream is pruned at sync", async () => {
    const { h, t, repo } = await setup();
    const added = await addAgent(agentDeps(h.ctx), t.id, { repo: `file://${repo.dir}`, slug: "remote-helper" });
    expect(added.agent.slug).toBe("remote-helper");
    expect(await versions(h, t.key, "agents.remote-helper")).toEqual(["1.1.0*", "1.0.0"]);
    repo.deleteTag("v1.0.0");
    repo.commit({ "agent.yaml": manifest({ name: "Remote 2" }) });
    repo.tag("v2.0.0");
    const r = await json(await sync(h, t.key, "agents.remote-helper"));
    expect(r.release.tag).toBe("v2.0.0");
    expect(await versions(h, t.key, "agents.remote-helper")).toEqual(["2.0.0*", "1.1.0"]);
  });

  test("add refusals: not a repository, missing path, duplicate slug, invalid latest manifest registers nothing", async () => {
    const { h, t, repo } = await setup();
    const deps = agentDeps(h.ctx);
    await expect(addAgent(deps, t.id, { repo: "/nonexistent/agent" })).rejects.toMatchObject({ kind: "not_found" });
    await expect(addAgent(deps, t.id, { repo: import.meta.dir })).rejects.toMatchObject({ code: "not_a_repository" });
    await addAgent(deps, t.id, { repo: repo.dir });
    await expect(addAgent(deps, t.id, { repo: repo.dir, slug: "again" })).rejects.toMatchObject({ kind: "conflict" });
    const twin = testRepo("invoice-agent");
    twin.commit({ "agent.yaml": manifest() });
    twin.tag("v1.0.0");
    await expect(addAgent(deps, t.id, { repo: twin.dir })).rejects.toMatchObject({ kind: "conflict", field: "slug" });
    const broken = testRepo("broken-agent");
    broken.commit({ "agent.yaml": "name: b\ninstructions: 42\n" });
    broken.tag("v1.0.0");
    await expect(addAgent(deps, t.id, { repo: broken.dir })).rejects.toMatchObject({ code: "invalid_manifest" });
    expect((await h.req("GET", "/v1/automations/agents.broken-agent", { key: t.key })).status).toBe(404);
    await expect(addAgent(deps, t.id, { repo: twin.dir, slug: "Not A Slug" })).rejects.toMatchObject({ code: "invalid_slug" });
  });
});
