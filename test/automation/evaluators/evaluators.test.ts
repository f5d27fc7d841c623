import { beforeAll, describe, expect, test } from "bun:test";
import { exactDiff } from "../../../src/automation/evaluators/scorers";
import { json, runsHarness, type RunsHarness } from "../runs/support";

let h: RunsHarness;
let wf: { id: string };

const echo = `
name: echo-flow
version: 1.0.0
inputs:
  - {name: who, type: string, required: true}
  - {name: n, type: number, required: false}
steps:
  - name: echo
    type: transform.set
    with: {fields: {echoInput: true}}
`;

const put = (yaml: string, key = h.t.key) => h.req("PUT", `/v1/automations/${wf.id}/evaluators`, { key, body: { yaml } });

async function scoresOf(exampleBody: Record<string, unknown>) {
  const ex = await json(await h.post(`/v1/automations/${wf.id}/examples`, exampleBody));
  const run = await json(await h.post(`/v1/automations/${wf.id}/examples/${ex.id}/run`));
  await h.settle(run.id);
  for (let i = 0; i < 400; i++) {
    const s = await json(await h.get(`/v1/runs/${run.id}/scores`));
    if (s.scores.length) return s.scores as Record<string, unknown>[];
    await Bun.sleep(10);
  }
  throw new Error("never scored");
}

beforeAll(async () => {
  h = await runsHarness();
  wf = await h.deploy(echo);
  h.startWorkers();
});

describe("evaluator files", () => {
  test("GET without a file answers the default exact-diff", async () => {
    const r = await json(await h.get(`/v1/automations/${wf.id}/evaluators`));
    expect(r.automationId).toBe(wf.id);
    expect(r.config.passThreshold).toBe(0.7);
    expect(r.config.evaluators.map((e: { type: string }) => e.type)).toEqual(["exact-diff"]);
  });

  test("PUT validates with line numbers; nothing stored on 400", async () => {
    const bad = "passThreshold: 0.5\nevaluators:\n  - name: Not-Kebab\n    type: exact-diff\n  - name: judge\n    type: llm-judge\n    config:\n      promptExtension: short\n";
    const r = await put(bad);
    expect(r.status).toBe(400);
    const body = await json(r);
    const messages = body.issues.map((i: { message: string }) => i.message).join("\n");
    expect(messages).toContain("line 3");
    expect(messages).toContain("line 8");
    expect((await put("evaluators: [\n  - {name: a, type: nope}\n")).status).toBe(400);
    expect((await put("evaluators:\n  - {name: a, type: exact-diff, bogus: 1}\n")).status).toBe(400);
    expect((await put("evaluators:\n  - {name: a, type: exact-diff}\n  - {name: a, type: exact-diff}\n")).status).toBe(400);
    expect((await put("evaluators:\n  - name: s\n    type: custom-script\n    config: {script: 'function scoreScript(e, a) { return 1 }', timeoutMs: 30001}\n")).status).toBe(400);
    expect((await put("x: [")).status).toBe(400);
    const still = await json(await h.get(`/v1/automations/${wf.id}/evaluators`));
    expect(still.yaml).toContain("No evaluator file yet");
    expect((await put("x".repeat(1024 * 1024 + 1))).status).toBe(413);
  });

  test("PUT stores, GET returns it; scopes and isolation", async () => {
    const yaml = "passThreshold: 0.8\nevaluators:\n  - name: exact\n    type: exact-diff\n    weight: 2\n";
    const r = await put(yaml);
    expect(r.status).toBe(200);
    expect((await json(await h.get(`/v1/automations/workflows.echo-flow/evaluators`))).yaml).toBe(yaml);
    const other = await h.tenant("eval-other");
    expect((await h.get(`/v1/automations/${wf.id}/evaluators`, other.key)).status).toBe(404);
    expect((await put(yaml, other.key)).status).toBe(404);
    expect((await put(yaml, await h.key(h.t.slug, ["automations:read"]))).status).toBe(403);
  });
});

describe("exact-diff", () => {
  const cfg = { numericTolerance: 1e-6, allowExtraFields: true, passThreshold: 1 };
  test("share of equal leaves, numeric tolerance, extra fields", () => {
    expect(exactDiff(cfg, { a: 1, b: { c: "x", d: [1, 2] } }, { a: 1.0000001, b: { c: "y", d: [1, 2] }, extra: 1 }).score).toBe(0.75);
    expect(exactDiff({ ...cfg, allowExtraFields: false }, { a: 1 }, { a: 1, extra: { p: 1, q: 2 } }).score).toBeCloseTo(1 / 3);
    expect(exactDiff(cfg, [1, 2], [1, 2, 3]).score).toBeCloseTo(2 / 3);
  });
  test("paths select leaves, lists with []", () => {
    const expected = { header: { id: "A", date: "x" }, lineItems: [{ total: 5, sku: "a" }, { total: 7, sku: "b" }] };
    const actual = { header: { id: "A", date: "y" }, lineItems: [{ total: 5, sku: "z" }, { total: 8, sku: "b" }] };
    const r = exactDiff({ ...cfg, paths: ["header.id", "lineItems[].total"] }, expected, actual);
    expect(r.score).toBeCloseTo(2 / 3);
    expect(r.passed).toBe(false);
  });
});

describe("scores of an example run", () => {
  test("weights, overall, passThreshold, per-evaluator results", async () => {
    await put(`passThreshold: 0.6
evaluators:
  - name: exact
    type: exact-diff
    weight: 3
  - name: half
    description: always one half
    type: custom-script
    weight: 1
    config:
      script: "function scoreScript(expected, actual) { return actual.echo.input.who === expected.echo.input.who ? 0.5 : 0 }"
  - name: info-only
    type: exact-diff
    weight: 0
    config: {paths: [echo.input.n]}
`);
    const scores = await scoresOf({ name: "weighted", input: { who: "ann", n: 2 }, expected: { echo: { input: { who: "ann", n: 3 } } } });
    const by = Object.fromEntries(scores.map((s) => [s.evaluatorName, s]));
    expect(by.exact).toMatchObject({ evaluatorType: "exact-diff", score: 0.5, passed: false, weight: 3, passThreshold: 1 });
    expect(by.half).toMatchObject({ evaluatorType: "custom-script", score: 0.5, description: "always one half", error: null });
    expect(by["info-only"]).toMatchObject({ score: 0, weight: 0 });
    const run = scores[0].runId as string;
    // overall = (3 × 0.5 + 1 × 0.5) / 4 (weight 0 only informs) = 0.5 < 0.6
    const got = await json(await h.get(`/v1/runs/${run}`));
    expect(got.eval).toMatchObject({ score: 0.5, passed: false });
  });

  test("a throwing or out-of-range script scores 0 with an error; a failed run scores 0", async () => {
    await put(`evaluators:
  - name: boom
    type: custom-script
    config: {script: "function scoreScript(e, a) { throw new Error('nope') }"}
  - name: big
    type: custom-script
    config: {script: "function scoreScript(e, a) { return 7 }"}
`);
    const scores = await scoresOf({ name: "throws", input: { who: "b" }, expected: {} });
    const by = Object.fromEntries(scores.map((s) => [s.evaluatorName, s]));
    expect(by.boom).toMatchObject({ score: 0, passed: false });
    expect(String(by.boom.error)).toContain("nope");
    expect(by.big).toMatchObject({ score: 0, passed: false });
    expect(String(by.big.error)).toContain("between 0 and 1");
  });

  test("llm-judge without a configured model records an error, never a score", async () => {
    await put(`evaluators:
  - name: judge
    type: llm-judge
    config: {promptExtension: "Is the greeting polite enough?"}
`);
    const scores = await scoresOf({ name: "judged", input: { who: "c" }, expected: { echo: {} } });
    expect(scores).toHaveLength(1);
    expect(scores[0]).toMatchObject({ evaluatorType: "llm-judge", score: null, passed: false, error: "no model configured" });
  });

  test("a run that is not an evaluation run has no scores; another tenant's run is 404", async () => {
    const run = await json(await h.post("/v1/runs", { target: wf.id, input: { who: "d" } }));
    await h.settle(run.id);
    expect(await json(await h.get(`/v1/runs/${run.id}/scores`))).toEqual({ scores: [] });
    const other = await h.tenant("scores-other");
    expect((await h.get(`/v1/runs/${run.id}/scores`, other.key)).status).toBe(404);
  });
});
