// GET /v1/automations/{id}/experiments/compare over real experiments: three versions of a workflow
// scored by three evaluators, where version 2 is worse on one evaluator and better on another and
// version 3 is worse overall (and fails), plus the 400/404/409 answers.
import { beforeAll, describe, expect, test } from "bun:test";
import { json, runsHarness, type Json, type RunsHarness } from "../runs/support";
import { AutomationClient } from "../../../src/automation/client/index";

let h: RunsHarness;
let wf: { id: string };
const exps = () => `/v1/automations/${wf.id}/experiments`;

// `who` echoes the input (equal in every version); `q.grade` and `z.v` are what versions change.
const flow = (version: string, grade: string, extra: string) => `
name: compare-flow
version: ${version}
inputs:
  - {name: who, type: string, required: true}
steps:
  - name: echo
    type: transform.set
    with: {fields: {echoInput: true}}
  - name: q
    type: transform.set
    with: {fields: {grade: ${grade}}}
  - name: z
    type: transform.set
    with: {fields: {v: ${extra}}}
`;

const EVALUATORS = `passThreshold: 0.6
evaluators:
  - {name: echo, type: exact-diff, config: {paths: [echo.input.who]}}
  - {name: grade, type: exact-diff, config: {paths: [q.grade]}}
  - {name: extra, type: exact-diff, config: {paths: [z.v]}}
`;

async function until(path: string, pred: (j: Json) => boolean): Promise<Json> {
  for (let i = 0; i < 2000; i++) {
    const j = await json(await h.get(path));
    if (pred(j)) return j;
    await Bun.sleep(10);
  }
  throw new Error(`timed out waiting on ${path}`);
}

async function experiment(body: Record<string, unknown>): Promise<string> {
  const created = await json(await h.post(exps(), body));
  await until(`${exps()}/${created.id}`, (j) => j.status === "completed");
  return created.id;
}

const exampleIds: string[] = [];
let v1: string;
let v2: string;
let v3: string;
let v1Part: string;

beforeAll(async () => {
  h = await runsHarness();
  wf = await h.deploy(flow("1.0.0", "good", "old"));
  for (const [version, grade, extra] of [["2.0.0", "bad", "new"], ["3.0.0", "bad", "old"]]) {
    const r = await h.req("POST", `/v1/automations/${wf.id}/versions`, { key: h.t.key, body: { yaml: flow(version, grade, extra), version, activate: false } });
    expect(r.status).toBeLessThan(300);
  }
  await h.req("PUT", `/v1/automations/${wf.id}/evaluators`, { key: h.t.key, body: { yaml: EVALUATORS } });
  for (let i = 0; i < 24; i++) {
    const who = `p${i}`;
    const ex = await json(await h.post(`/v1/automations/${wf.id}/examples`, { name: who, input: { who }, expected: { echo: { input: { who } }, q: { grade: "good" }, z: { v: "new" } } }));
    exampleIds.push(ex.id);
  }
  h.startWorkers();
  v1 = await experiment({ version: "1.0.0", name: "v1" });
  v2 = await experiment({ version: "2.0.0", name: "v2" });
  v3 = await experiment({ version: "3.0.0", name: "v3" });
  // v1 on all but the last two examples, and the one new example it never saw.
  v1Part = await experiment({ version: "1.0.0", examples: exampleIds.slice(0, 22) });
}, 60_000);

const compare = (base: string, candidate: string, extra = "") => h.get(`${exps()}/compare?base=${base}&candidate=${candidate}&seed=7${extra}`);

describe("experiments compare", () => {
  test("per evaluator: a worse one regressed, a better one improved, an unchanged one no change (Holm)", async () => {
    const r = await compare(v1, v2);
    expect(r.status).toBe(200);
    const c = await json(r);
    expect(c).toMatchObject({ seed: 7, resamples: 10_000, base: { id: v1, version: "1.0.0" }, candidate: { id: v2, version: "2.0.0" } });
    expect(c.examples).toEqual({ shared: 24, onlyBase: [], onlyCandidate: [], unscored: [] });
    const by = Object.fromEntries(c.evaluators.map((e: Json) => [e.name, e]));
    expect(Object.keys(by)).toEqual(["echo", "grade", "extra"]);
    expect(by.grade).toMatchObject({ n: 24, baseMean: 1, candidateMean: 0, delta: -1, verdict: "regressed" });
    expect(by.grade.ci).toEqual([-1, -1]);
    expect(by.grade.pValue).toBeLessThan(0.001);
    expect(by.grade.adjustedPValue).toBeGreaterThanOrEqual(by.grade.pValue);
    expect(by.extra).toMatchObject({ baseMean: 0, candidateMean: 1, delta: 1, verdict: "improved" });
    expect(by.echo).toMatchObject({ delta: 0, pValue: 1, verdict: "no_detectable_change", sd: 0, mde: 0 });
    // The overall (mean of three) does not move, and every run passes on both sides.
    expect(c.overall).toMatchObject({ verdict: "no_detectable_change", pValue: 1 });
    expect(c.overall.delta).toBeCloseTo(0, 9);
    expect(c.passRate).toMatchObject({ n: 24, base: 1, candidate: 1, passedOnlyBase: 0, passedOnlyCandidate: 0, pValue: 1, verdict: "no_detectable_change" });
    // Every example dropped on `grade`: all listed, the evaluators' scores on both sides.
    expect(c.regressionCount).toBe(24);
    expect(c.regressions[0]).toMatchObject({ drop: 1, base: { evaluators: { grade: 1, extra: 0 } }, candidate: { evaluators: { grade: 0, extra: 1 } } });
    expect(c.regressions[0].exampleName).toMatch(/^p\d+$/);
  });

  test("a worse version: overall and pass rate regressed (McNemar), regressions largest drop first", async () => {
    const c = await json(await compare(v1, v3));
    expect(c.overall).toMatchObject({ verdict: "regressed" });
    expect(c.overall.delta).toBeCloseTo(-1 / 3, 9);
    expect(c.passRate).toMatchObject({ base: 1, candidate: 0, passedOnlyBase: 24, passedOnlyCandidate: 0, verdict: "regressed" });
    expect(c.passRate.pValue).toBeCloseTo(2 * 0.5 ** 24, 12);
    const drops = c.regressions.map((r: Json) => r.drop);
    expect(drops).toEqual([...drops].sort((a: number, b: number) => b - a));
    // The other way round it improved.
    const back = await json(await compare(v3, v1));
    expect(back.overall.verdict).toBe("improved");
    expect(back.passRate.verdict).toBe("improved");
    expect(back.regressionCount).toBe(0);
  });

  test("examples on one side only are named, not dropped silently; the same seed reproduces", async () => {
    const c = await json(await compare(v1Part, v2));
    expect(c.examples.shared).toBe(22);
    expect(c.examples.onlyBase).toEqual([]);
    expect(c.examples.onlyCandidate.map((e: Json) => e.name).sort()).toEqual(["p22", "p23"]);
    expect(c.examples.onlyCandidate.map((e: Json) => e.id).sort()).toEqual(exampleIds.slice(22).sort());
    const swapped = await json(await compare(v2, v1Part));
    expect(swapped.examples.onlyBase.map((e: Json) => e.name).sort()).toEqual(["p22", "p23"]);
    expect(c.evaluators[1].n).toBe(22);
    const again = await json(await compare(v1Part, v2));
    expect(again).toEqual(c);
    const other = await json(await compare(v1, v3, "&resamples=20000"));
    expect(other.resamples).toBe(20_000);
  });

  test("the client's experiments.compare answers the same (app on a loopback port)", async () => {
    const server = Bun.serve({ port: 0, hostname: "127.0.0.1", fetch: (req) => h.app.handle(req) });
    try {
      const client = new AutomationClient({ apiKey: h.t.key, baseUrl: `http://127.0.0.1:${server.port}`, maxRetries: 0 });
      const c = await client.experiments.compare(wf.id, { base: v1, candidate: v2, seed: 7 });
      expect(c as unknown).toEqual(await json(await compare(v1, v2)));
      expect(c.evaluators.map((e) => e.verdict)).toEqual(["no_detectable_change", "regressed", "improved"]);
    } finally {
      server.stop(true);
    }
  });

  test("bad input: 400 with the field, unknown 404, other automation 400, no shared example 400, running 409", async () => {
    const issue = async (r: Response) => ({ status: r.status, field: (await json(r)).issues?.[0]?.field });
    expect(await issue(await h.get(`${exps()}/compare?candidate=${v2}`))).toEqual({ status: 400, field: "base" });
    expect(await issue(await h.get(`${exps()}/compare?base=${v1}`))).toEqual({ status: 400, field: "candidate" });
    expect((await compare(v1, v2, "&resamples=10")).status).toBe(400);
    expect((await compare(v1, v2, "&seed=-1")).status).toBe(400);
    expect((await compare(v1, v2, "&seed=99999999999")).status).toBe(400);
    expect(await issue(await compare(v1, "exp_nope"))).toEqual({ status: 404, field: "candidate" });
    expect(await issue(await compare("exp_nope", v2))).toEqual({ status: 404, field: "base" });
    // The route's scope: runs:read (a key with only files:read is refused; runs:read is enough).
    const filesOnly = await h.key(h.t.slug, ["files:read"]);
    expect((await h.get(`${exps()}/compare?base=${v1}&candidate=${v2}`, filesOnly)).status).toBe(403);
    const runsRead = await h.key(h.t.slug, ["runs:read"]);
    expect((await h.get(`${exps()}/compare?base=${v1}&candidate=${v2}`, runsRead)).status).toBe(200);
    // Another tenant sees neither.
    const stranger = await h.tenant(`s${Math.random().toString(36).slice(2, 8)}`);
    expect((await h.get(`${exps()}/compare?base=${v1}&candidate=${v2}`, stranger.key)).status).toBe(404);
    // An experiment of another automation of the same tenant.
    const otherWf = await h.deploy(flow("1.0.0", "good", "old").replace("compare-flow", "compare-other"));
    const ex = await json(await h.post(`/v1/automations/${otherWf.id}/examples`, { name: "o1", input: { who: "o" }, expected: { echo: { input: { who: "o" } } } }));
    const created = await json(await h.post(`/v1/automations/${otherWf.id}/experiments`, { examples: [ex.id] }));
    await until(`/v1/automations/${otherWf.id}/experiments/${created.id}`, (j) => j.status === "completed");
    const cross = await compare(v1, created.id);
    expect(cross.status).toBe(400);
    expect((await json(cross)).issues[0]).toMatchObject({ field: "candidate", code: "different_automations" });
    // Two experiments of one automation over disjoint examples.
    const a = await experiment({ version: "1.0.0", examples: [exampleIds[0]] });
    const b = await experiment({ version: "2.0.0", examples: [exampleIds[1]] });
    const none = await compare(a, b);
    expect(none.status).toBe(400);
    expect((await json(none)).issues[0]).toMatchObject({ code: "no_shared_examples" });
    // Not completed yet: 409, nothing computed.
    h.engine.hold("echo");
    const running = await json(await h.post(exps(), { version: "1.0.0", examples: [exampleIds[0]] }));
    await h.engine.reached("echo");
    const busy = await compare(v1, running.id);
    expect(busy.status).toBe(409);
    expect((await json(busy)).issues[0]).toMatchObject({ field: "candidate", code: "experiment_not_completed" });
    h.engine.open("echo");
    await until(`${exps()}/${running.id}`, (j) => j.status === "completed");
    expect((await compare(v1, running.id)).status).toBe(200);
  }, 30_000);
});
