// The agent loop's step kinds (agent.loop, agent.model, agent.tool) are internal: hand-written workflow
// YAML naming them is refused at validation (create, new version, push) with the parser's issue shape,
// while an agent release from Git, whose generated workflow is one agent.loop step, still syncs and runs.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { addAgent, agentDeps } from "../../../src/automation/agents/service";
import { pushWorkflow } from "../../../src/automation/automations/service";
import { runsOf } from "../../../src/automation/runs/service";
import { startFakeModels, type FakeModels } from "../../support/fake-models";
import { harness, json, type Harness } from "../app/harness";
import { manifest, testRepo } from "./git-repo";

const LOOP = `name: sneaky
steps:
  - name: first
    type: transform.set
    with: {fields: {a: 1}}
  - name: agent
    type: agent.loop
    with: {instructions: "Answer.", tools: [], input: {}}
`;

let fake: FakeModels;
beforeAll(async () => {
  fake = await startFakeModels();
});
afterAll(() => fake.close());

async function setup(): Promise<{ h: Harness; key: string; tenantId: string }> {
  const h = await harness({ models: fake.config() });
  const t = await h.tenant("acme");
  return { h, key: t.key, tenantId: t.id };
}

const issueOf = async (r: Response) => {
  const body = await json(r);
  return { status: r.status, issues: body.issues as { field: string; message: string; code: string }[] };
};

describe("internal agent step kinds in workflow YAML", () => {
  test("creating a workflow with an agent.loop step → 400 naming the field, the line and the way out", async () => {
    const { h, key } = await setup();
    const r = await issueOf(await h.req("POST", "/v1/automations", { key, body: { yaml: LOOP } }));
    expect(r.status).toBe(400);
    expect(r.issues).toHaveLength(1);
    expect(r.issues[0]).toMatchObject({ field: "yaml.steps.1.type", code: "internal_step_type" });
    expect(r.issues[0].message).toBe('step type "agent.loop" is internal to agents; use an agents.<slug> automation instead (line 7)');
    expect((await json(await h.req("GET", "/v1/automations?type=workflow", { key }))).data).toEqual([]);
  });

  test("agent.model and agent.tool too, nested under a control step; the known-types list does not offer them", async () => {
    const { h, key } = await setup();
    const yaml = `name: nested
steps:
  - name: branch
    type: control.if
    condition: true
    then:
      - name: turn
        type: agent.model
        with: {system: s, messages: [], tools: []}
    else:
      - name: call
        type: agent.tool
        with: {workflow: null, name: x, arguments: {}}
`;
    const r = await issueOf(await h.req("POST", "/v1/automations", { key, body: { yaml } }));
    expect(r.status).toBe(400);
    expect(r.issues.map((i) => [i.field, i.code, i.message.match(/\(line (\d+)\)$/)?.[1]])).toEqual([
      ["yaml.steps.0.then.0.type", "internal_step_type", "8"],
      ["yaml.steps.0.else.0.type", "internal_step_type", "12"],
    ]);
    const unknown = await issueOf(await h.req("POST", "/v1/automations", { key, body: { yaml: "name: x\nsteps:\n  - {name: a, type: agent.nope}\n" } }));
    expect(unknown.issues[0].code).toBe("unknown_step_type");
    expect(unknown.issues[0].message).toContain("transform.set");
    for (const kind of ["agent.loop", "agent.model", "agent.tool"]) expect(unknown.issues[0].message).not.toContain(kind);
  });

  test("a new version of an existing workflow, and a push, are refused the same way", async () => {
    const { h, key, tenantId } = await setup();
    const ok = "name: sneaky\nsteps:\n  - {name: first, type: transform.set, with: {fields: {a: 1}}}\n";
    expect((await h.req("POST", "/v1/automations", { key, body: { yaml: ok } })).status).toBe(201);
    const v = await issueOf(await h.req("POST", "/v1/automations/workflows.sneaky/versions", { key, body: { yaml: LOOP, version: "2.0.0" } }));
    expect(v.status).toBe(400);
    expect(v.issues[0]).toMatchObject({ field: "yaml.steps.1.type", code: "internal_step_type" });
    expect(v.issues[0].message).toContain("line 7");
    await expect(pushWorkflow(h.ctx.storage.automations, h.clock, tenantId, LOOP)).rejects.toThrow(/step type "agent.loop" is internal to agents/);
  });

  test("an agent from a Git release still syncs and runs its generated agent.loop workflow", async () => {
    const { h, key, tenantId } = await setup();
    const repo = testRepo("helper");
    repo.commit({ "agent.yaml": manifest({ model: "fake/small", tools: [] }) });
    repo.tag("v1.0.0");
    await addAgent(agentDeps(h.ctx), tenantId, { repo: repo.dir });
    runsOf(h.ctx).startWorkers();
    fake.fallback = () => ({ text: "hello" });
    const r = await json(await h.req("POST", "/v1/runs?wait_for_completion=30", { key, body: { target: "agents.helper", input: { question: "?" } } }));
    expect(r.error).toBeNull();
    expect(r.execution.status).toBe("completed");
    expect(r.output).toMatchObject({ answer: "hello", turns: 1 });
    const steps = (await json(await h.req("GET", `/v1/runs/${r.id}/steps`, { key }))).steps as { type: string }[];
    expect(steps.map((s) => s.type)).toContain("agent.loop");
  });
});
