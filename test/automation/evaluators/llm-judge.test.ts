// llm-judge through the model seam against the loopback fake model server (real HTTP, real gateway).
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { startFakeModels, type FakeModels } from "../../support/fake-models";
import { harness, json, type Harness } from "../app/harness";
import { createAutomation } from "../../../src/automation/automations/service";
import { runsOf } from "../../../src/automation/runs/service";

let fake: FakeModels;
let h: Harness;
let key: string;
let wf: { id: string };

const flow = `
name: judged
version: 1.0.0
inputs: [{name: who, type: string, required: true}]
steps:
  - {name: greet, type: transform.set, with: {fields: {greeting: "Hello, {{ input.who }}!"}}}
output: {greeting: "{{ steps.greet.output.greeting }}"}
`;

async function scores(yaml: string, name: string) {
  expect((await h.req("PUT", `/v1/automations/${wf.id}/evaluators`, { key, body: { yaml } })).status).toBe(200);
  const ex = await json(await h.req("POST", `/v1/automations/${wf.id}/examples`, { key, body: { name, input: { who: "Ann" }, expected: { greeting: "Hello, Ann!" } } }));
  const run = await json(await h.req("POST", `/v1/automations/${wf.id}/examples/${ex.id}/run`, { key }));
  for (let i = 0; i < 500; i++) {
    const s = await json(await h.req("GET", `/v1/runs/${run.id}/scores`, { key }));
    if (s.scores.length) return s.scores;
    await Bun.sleep(10);
  }
  throw new Error("never scored");
}

beforeAll(async () => {
  fake = await startFakeModels();
  h = await harness({ workers: 2, models: fake.config({ maxRetries: 0 }) });
  const t = await h.tenant("judge");
  key = t.key;
  wf = await createAutomation(h.ctx.storage.automations, h.clock, t.id, flow);
  runsOf(h.ctx).startWorkers();
});

afterAll(async () => {
  await runsOf(h.ctx).stopWorkers(1000);
  await fake.close();
});

describe("llm-judge", () => {
  test("continuous: the model's score is recorded with its reason; expected and actual reach the prompt", async () => {
    fake.script({ json: { score: 0.85, reason: "close enough" } });
    const before = fake.requests.length;
    const [s] = await scores("evaluators:\n  - name: judge\n    type: llm-judge\n    config: {promptExtension: 'Is the greeting correct and polite?', passThreshold: 0.8}\n", "cont");
    expect(s).toMatchObject({ evaluatorType: "llm-judge", score: 0.85, passed: true, error: null });
    expect(s.details.reason).toBe("close enough");
    const sent = fake.requests.slice(before);
    expect(sent).toHaveLength(1);
    expect(sent[0].prompt).toContain("Hello, Ann!");
    expect(sent[0].prompt).toContain("Is the greeting correct and polite?");
  });

  test("discrete: the label maps to its score", async () => {
    fake.script({ json: { label: "partly", reason: "meh" } });
    const yaml = "evaluators:\n  - name: judge\n    type: llm-judge\n    config:\n      mode: discrete\n      labels: [{label: right, score: 1}, {label: partly, score: 0.5}, {label: wrong, score: 0}]\n      promptExtension: 'Grade the greeting strictly.'\n";
    const [s] = await scores(yaml, "disc");
    expect(s).toMatchObject({ score: 0.5, label: "partly", passed: false });
  });

  test("a model that fails or answers nonsense records an error, not a score", async () => {
    fake.script({ status: 500, body: { error: "boom" } });
    const [failed] = await scores("evaluators:\n  - name: judge\n    type: llm-judge\n    config: {promptExtension: 'Is the greeting correct?'}\n", "fails");
    expect(failed.score).toBeNull();
    expect(failed.error).toBeString();
    fake.script({ json: { score: 7 } });
    const [nonsense] = await scores("evaluators:\n  - name: judge\n    type: llm-judge\n    config: {promptExtension: 'Is the greeting correct?'}\n", "nonsense");
    expect(nonsense).toMatchObject({ score: null, passed: false });
  });

  test("the judge's tokens count in the run's usage, under the evaluator's step path", async () => {
    fake.script({ json: { score: 1, reason: "right" }, usage: { input: 321, output: 45 } });
    const yaml = "evaluators:\n  - name: judge\n    type: llm-judge\n    config: {promptExtension: 'Is the greeting correct?'}\n";
    expect((await h.req("PUT", `/v1/automations/${wf.id}/evaluators`, { key, body: { yaml } })).status).toBe(200);
    const ex = await json(await h.req("POST", `/v1/automations/${wf.id}/examples`, { key, body: { name: "usage", input: { who: "Ann" }, expected: { greeting: "Hello, Ann!" } } }));
    const run = await json(await h.req("POST", `/v1/automations/${wf.id}/examples/${ex.id}/run`, { key }));
    for (let i = 0; i < 500 && (await json(await h.req("GET", `/v1/runs/${run.id}/scores`, { key }))).scores.length === 0; i++) await Bun.sleep(10);
    const { usage } = await json(await h.req("GET", `/v1/runs/${run.id}/usage`, { key }));
    // The workflow itself calls no model: every token here is the judge's.
    expect(usage.llmCallCount).toBe(1);
    expect(usage.tokens).toMatchObject({ input: 321, output: 45 });
    const debug = await json(await h.req("GET", `/v1/runs/${run.id}?expand=usage`, { key }));
    expect(debug.usage.tokens.input).toBe(321);
    const { events } = await json(await h.req("GET", `/v1/runs/${run.id}/trace`, { key }));
    expect(events.filter((e: { type: string }) => e.type === "llm_call").map((e: { path: string; stepName: string }) => [e.path, e.stepName])).toEqual([["evaluators.judge", "judge"]]);
  });
});
