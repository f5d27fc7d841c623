// Agent runs over HTTP against a loopback fake model server: the tool loop (each tool call a child
// workflow run), the version a run picks, /steps, maxSteps, unknown tools, and no model configured.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { addAgent, agentDeps } from "../../../src/automation/agents/service";
import { runsOf } from "../../../src/automation/runs/service";
import { startFakeModels, type FakeModels, type FakeRequest } from "../../support/fake-models";
import { harness, json, type Harness, type Json } from "../app/harness";
import { gitSync, manifest, testRepo } from "./git-repo";

const LOOKUP = `
name: lookup
description: Finds an invoice by number
inputs: [{name: number, type: string, required: true}]
steps:
  - {name: found, type: transform.set, with: {fields: {number: "{{ input.number }}", amount: 120}}}
output: "{{ steps.found.output }}"
`;
const TAX = `
name: tax
description: Adds tax to an amount
inputs: [{name: amount, type: number, required: true}]
steps:
  - {name: taxed, type: transform.set, with: {fields: {gross: "{{ input.amount | times: 1.2 }}"}}}
output: "{{ steps.taxed.output }}"
`;

let fake: FakeModels;
beforeAll(async () => {
  fake = await startFakeModels();
});
afterAll(() => fake.close());

/** Tool results the conversation already holds (OpenAI wire: role "tool"). */
const toolResults = (r: FakeRequest) => ((r.body.messages as { role: string; content: string }[]) ?? []).filter((m) => m.role === "tool");

/** The scripted agent: look the invoice up, add tax to its amount, answer. */
function invoiceAgent(r: FakeRequest) {
  const results = toolResults(r);
  if (results.length === 0) return { toolCalls: [{ name: "lookup", arguments: { number: "INV-7" }, id: "c1" }] };
  if (results.length === 1) {
    const found = JSON.parse(results[0].content) as { output: { amount: number } };
    return { toolCalls: [{ name: "tax", arguments: { amount: found.output.amount }, id: "c2" }] };
  }
  const taxed = JSON.parse(results[1].content) as { output: { gross: number } };
  return { text: `INV-7 comes to ${taxed.output.gross} with tax` };
}

async function setup(opts: { models?: boolean; maxSteps?: number } = {}) {
  const h: Harness = await harness(opts.models === false ? {} : { models: fake.config() });
  const t = await h.tenant("acme");
  for (const yaml of [LOOKUP, TAX]) expect((await h.req("POST", "/v1/automations", { key: t.key, body: { yaml } })).status).toBe(201);
  const repo = testRepo("invoice-agent");
  repo.commit({ "agent.yaml": manifest({ name: "Old helper", tools: ["workflows.lookup"], model: "fake/small" }).replace("Use the tools.", "OLD INSTRUCTIONS") });
  repo.tag("v1.0.0");
  repo.commit({ "agent.yaml": manifest({ tools: ["workflows.lookup", "workflows.tax"], model: "fake/small", maxSteps: opts.maxSteps ?? 5 }) });
  repo.tag("v1.1.0");
  await addAgent(agentDeps(h.ctx), t.id, { repo: repo.dir });
  runsOf(h.ctx).startWorkers();
  const run = async (body: Record<string, unknown>, query = "wait_for_completion=30") => json(await h.req("POST", `/v1/runs?${query}`, { key: t.key, body }));
  return { h, t, run, repo };
}

describe("agent runs", () => {
  test("a tool loop: two workflow tools as child runs, then the answer; /steps shows turns and calls", async () => {
    const { h, t, run, repo } = await setup();
    fake.requests.length = 0;
    fake.fallback = invoiceAgent;
    const r = await run({ target: "agents.invoice-agent", input: { question: "How much is INV-7?" } });
    expect(r.execution.status).toBe("completed");
    expect(r.type).toBe("agent");
    expect(r.source).toMatchObject({ slug: "invoice-agent", version: "1.1.0" });
    expect(r.output).toEqual({ answer: "INV-7 comes to 144 with tax", turns: 3, toolCalls: 2, model: "fake/small" });

    expect(fake.requests).toHaveLength(3);
    const first = fake.requests[0].body as { model: string; tools: { function: { name: string; description: string; parameters: { required: string[] } } }[] };
    expect(first.model).toBe("small");
    expect(first.tools.map((x) => x.function.name)).toEqual(["lookup", "tax"]);
    expect(first.tools[0].function.description).toBe("Finds an invoice by number");
    expect(first.tools[0].function.parameters.required).toEqual(["number"]);
    expect(first.tools[0].function.parameters).not.toHaveProperty("$schema");
    expect(fake.requests[0].prompt).toContain("Use the tools.");
    expect(fake.requests[0].prompt).toContain("How much is INV-7?");

    const steps = (await json(await h.req("GET", `/v1/runs/${r.id}/steps`, { key: t.key }))).steps as { name: string; type: string; status: string; output: unknown }[];
    expect(steps.map((s) => `${s.name}:${s.type}:${s.status}`)).toEqual([
      "agent:agent.loop:completed",
      "turn-1:agent.model:completed",
      "tool-1-1:agent.tool:completed",
      "turn-2:agent.model:completed",
      "tool-2-1:agent.tool:completed",
      "turn-3:agent.model:completed",
    ]);
    expect(steps[2].output).toEqual({ output: { number: "INV-7", amount: 120 } });

    // Usage sums the three model turns (the fake reports 100 input / 20 output tokens a call).
    const usage = (await json(await h.req("GET", `/v1/runs/${r.id}/usage`, { key: t.key }))).usage;
    expect(usage.llmCallCount).toBe(3);
    expect(usage.agentTurns).toBe(3);
    // The reference's agent-run fields: the model that answered and the release's Git provenance.
    const commit = gitSync(repo.dir, "rev-parse", "v1.1.0^{commit}");
    expect(r.source).toMatchObject({ model: "fake/small", git: { requestedRef: null, resolvedRef: commit, resolvedTag: "v1.1.0", commitSha: commit } });
    const reference = (await Bun.file(new URL("../compat/eigenpal-openapi.json", import.meta.url)).json()) as Json;
    const schemas = reference.components.schemas;
    expect(Object.keys(r.source).filter((k) => !(k in schemas.RunSource.properties))).toEqual([]);
    expect(Object.keys(r.source.git).sort()).toEqual(Object.keys(schemas.RunSourceGit.properties).sort());
    expect(Object.keys(usage).filter((k) => !(k in schemas.RunUsage.properties))).toEqual([]);
    const versionsList = (await json(await h.req("GET", "/v1/automations/agents.invoice-agent/versions", { key: t.key }))).data as { version: string; sourceRef: string }[];
    expect(versionsList[0]).toMatchObject({ version: "1.1.0", sourceRef: `v1.1.0@${commit}` });
    expect(usage.tokens).toMatchObject({ input: 300, output: 60 });

    const children = (await json(await h.req("GET", "/v1/runs?source=workflows.lookup", { key: t.key }))).runs as { id: string; trigger: { type: string } }[];
    expect(children).toHaveLength(1);
    expect(children[0].trigger.type).toBe("workflow");
    expect((await json(await h.req("GET", "/v1/runs?source=workflows.tax", { key: t.key }))).runs).toHaveLength(1);
    const agentRuns = (await json(await h.req("GET", "/v1/runs?type=agent", { key: t.key }))).runs as { id: string }[];
    expect(agentRuns.map((x) => x.id)).toEqual([r.id]);
  });

  test("version picks a release tag: v1.0.0 runs the old manifest", async () => {
    const { run } = await setup();
    fake.requests.length = 0;
    fake.fallback = () => ({ text: "old answer" });
    const r = await run({ target: "agents.invoice-agent", input: { question: "?" } }, "version=v1.0.0&wait_for_completion=30");
    expect(r.execution.status).toBe("completed");
    expect(r.source.version).toBe("1.0.0");
    expect(fake.requests[0].prompt).toContain("OLD INSTRUCTIONS");
    expect((fake.requests[0].body.tools as unknown[]).length).toBe(1);
    const missing = await run({ target: "agents.invoice-agent", input: { question: "?" } }, "version=9.9.9");
    expect(missing.issues[0].code).toBe("not_found");
  });

  test("source.git.requestedRef is the version the caller asked for, as given; null when none was", async () => {
    const { h, t, run, repo } = await setup();
    fake.fallback = () => ({ text: "ok" });
    const old = gitSync(repo.dir, "rev-parse", "v1.0.0^{commit}");
    const current = gitSync(repo.dir, "rev-parse", "v1.1.0^{commit}");
    const input = { target: "agents.invoice-agent", input: { question: "?" } };
    const cases: [string | null, string, string][] = [
      [null, "v1.1.0", current],
      ["v1.0.0", "v1.0.0", old],
      ["1.0.0", "v1.0.0", old],
      ["latest", "v1.1.0", current],
    ];
    const ids: string[] = [];
    for (const [asked, tag, commit] of cases) {
      const r = await run(input, asked === null ? "wait_for_completion=30" : `version=${asked}&wait_for_completion=30`);
      expect(r.execution.status).toBe("completed");
      expect(r.source.git).toEqual({ requestedRef: asked, resolvedRef: commit, resolvedTag: tag, commitSha: commit });
      // Kept on the row: the detail read later says the same.
      const detail = await json(await h.req("GET", `/v1/runs/${r.id}`, { key: t.key }));
      expect(detail.source.git.requestedRef).toBe(asked);
      ids.push(r.id);
    }
    // A rerun of the original definition keeps what was asked; one resolved anew asks what its caller did.
    const original = await json(await h.req("POST", `/v1/runs/${ids[1]}/rerun?version=original&wait_for_completion=30`, { key: t.key }));
    expect(original.source.git).toMatchObject({ requestedRef: "v1.0.0", resolvedTag: "v1.0.0" });
    const fresh = await json(await h.req("POST", `/v1/runs/${ids[1]}/rerun?wait_for_completion=30`, { key: t.key }));
    expect(fresh.source.git).toMatchObject({ requestedRef: null, resolvedTag: "v1.1.0" });
  });

  test("inputs are validated like a workflow's: a missing question → 400", async () => {
    const { h, t } = await setup();
    const r = await h.req("POST", "/v1/runs", { key: t.key, body: { target: "agents.invoice-agent", input: {} } });
    expect(r.status).toBe(400);
    expect((await json(r)).issues[0].field).toBe("input.question");
  });

  test("maxSteps bounds the model turns: a model that never answers fails the run", async () => {
    const { h, t, run } = await setup({ maxSteps: 3 });
    fake.requests.length = 0;
    fake.fallback = () => ({ toolCalls: [{ name: "lookup", arguments: { number: "again" } }] });
    const r = await run({ target: "agents.invoice-agent", input: { question: "loop" } });
    expect(r.execution.status).toBe("failed");
    expect(r.error).toContain("maxSteps (3 model turns)");
    expect(fake.requests).toHaveLength(3);
    const steps = (await json(await h.req("GET", `/v1/runs/${r.id}/steps`, { key: t.key }))).steps as { name: string; error?: { code: string } }[];
    expect(steps.find((s) => s.name === "agent")!.error!.code).toBe("max_steps_exceeded");
    expect(steps.filter((s) => s.name.startsWith("tool-"))).toHaveLength(3);
  });

  test("a tool the agent does not have, or a tool run that fails, is the tool's answer to the model", async () => {
    const { run } = await setup();
    fake.requests.length = 0;
    fake.fallback = (req) => {
      const results = toolResults(req);
      if (results.length === 0) return { toolCalls: [{ name: "delete_everything", arguments: {}, id: "x1" }, { name: "tax", arguments: { amount: "not a number" }, id: "x2" }] };
      return { text: results.map((m) => m.content).join(" | ") };
    };
    const r = await run({ target: "agents.invoice-agent", input: { question: "?" } });
    expect(r.execution.status).toBe("completed");
    expect(r.output.answer).toContain('unknown tool \\"delete_everything\\"');
    expect(r.output.answer).toContain("amount");
  });

  test("a cancel stops the loop at the next boundary: the tool the model asked for is not called", async () => {
    const { h, t, run } = await setup();
    fake.requests.length = 0;
    fake.fallback = () => ({ toolCalls: [{ name: "lookup", arguments: { number: "slow" } }], delayMs: 400 });
    const started = await run({ target: "agents.invoice-agent", input: { question: "?" } }, "");
    for (let i = 0; i < 200 && fake.requests.length === 0; i++) await Bun.sleep(10);
    const cancel = await json(await h.req("POST", `/v1/runs/${started.id}/cancel`, { key: t.key }));
    expect(cancel.cancellation.state).toBe("requested");
    await runsOf(h.ctx).waitFor(started.id, 10);
    const done = await json(await h.req("GET", `/v1/runs/${started.id}`, { key: t.key }));
    expect(done.execution.status).toBe("cancelled");
    expect(fake.requests).toHaveLength(1);
    expect((await json(await h.req("GET", "/v1/runs?source=workflows.lookup", { key: t.key }))).runs).toHaveLength(0);
  });

  test("without a configured model the run fails naming the --models flag", async () => {
    const { h, t, run } = await setup({ models: false });
    const r = await run({ target: "agents.invoice-agent", input: { question: "?" } });
    expect(r.execution.status).toBe("failed");
    expect(r.error).toContain("--models");
    const steps = (await json(await h.req("GET", `/v1/runs/${r.id}/steps`, { key: t.key }))).steps as { name: string; error?: { code: string } }[];
    expect(steps.find((s) => s.name === "turn-1")!.error!.code).toBe("no_model_configured");
  });
});
