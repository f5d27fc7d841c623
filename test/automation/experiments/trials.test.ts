// Trials over HTTP with the real engine: a workflow whose script draws a number seeded by the example
// and `{{ eval.trial }}`, run as an experiment with `trials: 3`. Three runs per example, each told its
// trial; the trial statistics equal what the test computes from the runs' own outputs; a one-trial
// experiment answers exactly the reference's keys, as before; bad `trials` is a 400 with nothing started.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createAutomation } from "../../../src/automation/automations/service";
import { experimentsOf } from "../../../src/automation/experiments/service";
import { runsOf } from "../../../src/automation/runs/service";
import { harness, json, type Harness, type Json } from "../app/harness";

const FLOW = `
name: noisy
version: 1.0.0
inputs: [{name: who, type: string, required: true}]
steps:
  - name: draw
    type: transform.script
    with:
      inputs: {who: "{{ input.who }}", trial: "{{ eval.trial }}"}
      function: |
        function script(who, trial) {
          var s = who + ":" + trial, h = 2166136261;
          for (var i = 0; i < s.length; i++) { h ^= s.charCodeAt(i); h = Math.imul(h, 16777619) >>> 0; }
          var t = (h + 0x6d2b79f5) >>> 0;
          t = Math.imul(t ^ (t >>> 15), t | 1);
          t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
          return { value: Math.round(((t ^ (t >>> 14)) >>> 0) / 4294967296 * 1000) / 1000 };
        }
output: {who: "{{ input.who }}", value: "{{ steps.draw.output.value }}", trial: "{{ eval.trial }}", example: "{{ eval.exampleId }}"}
`;
// who always scores 1; draw scores the drawn value (passes at 0.5); the run passes when (1 + value) / 2 ≥ 0.75.
const EVALUATORS = `passThreshold: 0.75
evaluators:
  - {name: who, type: exact-diff, config: {paths: [who]}}
  - name: draw
    type: custom-script
    config: {passThreshold: 0.5, script: "function scoreScript(expected, actual) { return actual.value }"}
`;
const NAMES = ["ann", "bob", "cid", "dan", "eve"];

type Schema = Record<string, unknown>;
const ref = (await Bun.file(new URL("../compat/eigenpal-openapi.json", import.meta.url)).json()) as { components: { schemas: Record<string, Schema> } };
const schema = (name: string) => ref.components.schemas[name] as { properties: Record<string, { items?: { properties: Record<string, unknown> } }> };

const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

let h: Harness;
let key: string;
let base: string;
const exampleIds: Record<string, string> = {};
const call = (method: string, path: string, body?: unknown) => h.req(method, path, { key, body });

async function completed(id: string): Promise<Json> {
  for (let i = 0; i < 3000; i++) {
    const e = await json(await call("GET", `${base}/experiments/${id}`));
    if (e.status === "completed") return e;
    await Bun.sleep(10);
  }
  throw new Error(`experiment ${id} did not complete`);
}

const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
const sd = (xs: number[]) => (xs.length < 2 ? null : Math.sqrt(xs.reduce((a, x) => a + (x - mean(xs)) ** 2, 0) / (xs.length - 1)));

beforeAll(async () => {
  h = await harness({ workers: 2 });
  const t = await h.tenant(`tr${Math.random().toString(36).slice(2, 8)}`);
  key = t.key;
  const wf = await createAutomation(h.ctx.storage.automations, h.clock, t.id, FLOW);
  base = `/v1/automations/${wf.id}`;
  expect((await call("PUT", `${base}/evaluators`, { yaml: EVALUATORS })).status).toBe(200);
  for (const who of NAMES) exampleIds[who] = (await json(await call("POST", `${base}/examples`, { name: who, input: { who }, expected: { who } }))).id;
}, 60_000);

describe("trials", () => {
  test("trials out of range or not a whole number: 400 naming trials, no experiment and no run started", async () => {
    const before = (await json(await call("GET", `${base}/experiments`))).total;
    for (const trials of [0, 21, 1.5, "3", -1, null]) {
      const r = await call("POST", `${base}/experiments`, { trials });
      expect(r.status).toBe(400);
      const body = await json(r);
      const issue = body.issues?.[0] ?? body.error?.issues?.[0] ?? body;
      expect(JSON.stringify(body)).toContain("trials");
      if (typeof trials === "number" && Number.isInteger(trials)) expect(JSON.stringify(issue)).toContain("between 1 and 20");
    }
    expect((await json(await call("GET", `${base}/experiments`))).total).toBe(before);
    // Nothing was queued or held for any example.
    for (const id of Object.values(exampleIds)) expect((await json(await call("GET", `${base}/examples/${id}`))).latestRunId).toBeNull();
  });

  test("trials: 3 runs every example three times, each run told its trial; the statistics match the runs' outputs", async () => {
    const r = await call("POST", `${base}/experiments`, { trials: 3, name: "three" });
    expect(r.status).toBe(202);
    const created = await json(r);
    expect(created.total).toBe(NAMES.length * 3);
    expect(Object.keys(created).sort()).toEqual(["id", "runs", "total"]);
    for (const id of Object.values(exampleIds)) expect(created.runs.filter((x: Json) => x.exampleId === id)).toHaveLength(3);
    runsOf(h.ctx).startWorkers();
    const done = await completed(created.id);
    expect(done).toMatchObject({ runCount: 15, completedCount: 15 });
    expect(done.runs).toHaveLength(15);

    // The runs' own outputs: which trial each was told, the value it drew.
    const outputs = new Map<string, { trial: number; value: number; example: string; passed: boolean }>();
    for (const run of done.runs as Json[]) {
      const full = await json(await call("GET", `/v1/runs/${run.id}`));
      expect(full.execution.status).toBe("completed");
      outputs.set(run.id, { trial: full.output.trial, value: full.output.value, example: full.output.example, passed: full.eval.passed });
      expect(full.output.example).toBe(run.exampleId);
    }
    for (const id of Object.values(exampleIds)) {
      const mine = [...outputs.values()].filter((o) => o.example === id);
      expect(mine.map((o) => o.trial).sort()).toEqual([1, 2, 3]);
      expect(new Set(mine.map((o) => o.value)).size).toBeGreaterThan(1); // seeded by trial: the draws differ
    }

    const stats = await json(await call("GET", `${base}/experiments/${created.id}/trials`));
    expect(stats).toMatchObject({ experimentId: created.id, trials: 3, status: "completed" });
    expect(stats.examples).toHaveLength(NAMES.length);
    const near = (a: number | null, b: number | null) => (b === null ? expect(a).toBeNull() : expect(a).toBeCloseTo(b, 9));
    const allValues: number[] = [];
    const exampleMeans: number[] = [];
    const variances: number[] = [];
    let passAll = 0;
    let passAny = 0;
    let passMajority = 0;
    for (const ex of stats.examples as Json[]) {
      const mine = [...outputs.values()].filter((o) => o.example === ex.exampleId).sort((a, b) => a.trial - b.trial);
      const values = mine.map((o) => o.value);
      const overall = values.map((x) => (1 + x) / 2);
      allValues.push(...values);
      exampleMeans.push(mean(overall));
      variances.push(sd(overall)! ** 2);
      expect(ex.runs.map((x: Json) => x.trial)).toEqual([1, 2, 3]);
      const draw = ex.evaluators.find((e: Json) => e.name === "draw");
      near(draw.mean, mean(values));
      near(draw.sd, sd(values));
      near(draw.min, Math.min(...values));
      near(draw.max, Math.max(...values));
      expect(draw.passRate).toBeCloseTo(values.filter((x) => x >= 0.5).length / 3, 9);
      const who = ex.evaluators.find((e: Json) => e.name === "who");
      expect(who).toMatchObject({ n: 3, mean: 1, sd: 0, min: 1, max: 1, passRate: 1 });
      near(ex.overall.mean, mean(overall));
      near(ex.overall.sd, sd(overall));
      near(ex.overall.min, Math.min(...overall));
      near(ex.overall.max, Math.max(...overall));
      const passed = overall.filter((x) => x >= 0.75).length;
      expect(mine.filter((o) => o.passed).length).toBe(passed);
      expect(ex.overall.passRate).toBeCloseTo(passed / 3, 9);
      passAll += passed === 3 ? 1 : 0;
      passAny += passed > 0 ? 1 : 0;
      passMajority += passed >= 2 ? 1 : 0;
    }
    const o = stats.overall;
    near(o.mean, mean(allValues.map((x) => (1 + x) / 2)));
    near(o.exampleMean, mean(exampleMeans));
    near(o.withinSd, Math.sqrt(mean(variances)));
    expect(o).toMatchObject({ n: 15, examples: NAMES.length });
    near(o.passAll, passAll / NAMES.length);
    near(o.passAny, passAny / NAMES.length);
    near(o.passMajority, passMajority / NAMES.length);
    const drawAll = stats.evaluators.find((e: Json) => e.name === "draw");
    near(drawAll.mean, mean(allValues));
    near(drawAll.min, Math.min(...allValues));
    near(drawAll.max, Math.max(...allValues));
    // The experiment's own counters count runs (= examples × trials).
    expect(done.passedCount).toBe([...outputs.values()].filter((o) => o.passed).length);
    expect(done.avgScore).toBeCloseTo(o.mean, 9);

    // Comparing it with itself: per example the mean over its trials, no change.
    const cmp = await json(await call("GET", `${base}/experiments/compare?base=${created.id}&candidate=${created.id}&seed=1`));
    expect(cmp.base.trials).toBe(3);
    expect(cmp.examples.shared).toBe(NAMES.length);
    near(cmp.overall.baseMean, mean(exampleMeans));
    expect(cmp.overall.verdict).toBe("no_detectable_change");
    near(cmp.passRate.base, passMajority / NAMES.length);

    // The JSON export names the trial of every result.
    const exported = JSON.parse(await (await call("GET", `${base}/experiments/${created.id}/export?format=json`)).text());
    expect(exported.experiments[0].trials).toBe(3);
    expect(new Set(exported.experiments[0].results.map((x: Json) => x.trial))).toEqual(new Set([1, 2, 3]));
  }, 60_000);

  test("trials: 1 (given or omitted) answers the same keys as before, all named by the reference", async () => {
    const plain = await json(await call("POST", `${base}/experiments`, { examples: [exampleIds.ann, exampleIds.bob] }));
    const one = await json(await call("POST", `${base}/experiments`, { examples: [exampleIds.ann, exampleIds.bob], trials: 1 }));
    expect(one.total).toBe(2);
    const [a, b] = [await completed(plain.id), await completed(one.id)];
    const keys = (x: Json) => Object.keys(x).sort();
    expect(keys(one)).toEqual(keys(plain));
    expect(keys(one)).toEqual(Object.keys(schema("ExperimentCreateResponse").properties).sort());
    expect(one.runs.map(keys)).toEqual(plain.runs.map(keys));
    expect(keys(b)).toEqual(keys(a));
    expect(keys(b)).toEqual(Object.keys(schema("ExperimentDetail").properties).sort());
    expect(b.runs.map(keys)).toEqual(a.runs.map(keys));
    for (const run of b.runs as Json[]) expect(Object.keys(run).every((k) => k in schema("ExperimentDetail").properties.runs.items!.properties)).toBe(true);
    const listed = (await json(await call("GET", `${base}/experiments?limit=100`))).data as Json[];
    for (const e of listed) expect(keys(e)).toEqual(Object.keys(schema("Experiment").properties).sort());
    // A run of a one-trial experiment: its eval block as the reference has it; the workflow saw trial 1.
    const run = await json(await call("GET", `/v1/runs/${b.runs[0].id}`));
    expect(keys(run.eval)).toEqual(["example", "exampleId", "passed", "score"]);
    expect(run.output.trial).toBe(1);
    // Its trial statistics are those of one run per example.
    const stats = await json(await call("GET", `${base}/experiments/${one.id}/trials`));
    expect(stats.trials).toBe(1);
    for (const ex of stats.examples as Json[]) expect(ex.overall).toMatchObject({ n: 1, sd: null });
    // The NDJSON stream's run lines have no trial key either.
    const stream = await call("POST", `${base}/experiments/stream`, { examples: [exampleIds.cid], trials: 1 });
    const lines = (await stream.text()).trim().split("\n").map((l) => JSON.parse(l));
    expect(lines[0].type).toBe("run");
    expect("trial" in lines[0]).toBe(false);
  }, 60_000);

  test("a stream of a many-trial experiment says each run's trial", async () => {
    const stream = await call("POST", `${base}/experiments/stream`, { examples: [exampleIds.dan], trials: 2 });
    const lines = (await stream.text()).trim().split("\n").map((l) => JSON.parse(l));
    expect(lines.filter((l) => l.type === "run").map((l) => l.trial).sort()).toEqual([1, 2]);
    expect(lines.at(-1).experiment.runCount).toBe(2);
  }, 60_000);

  test("across a restart: a three-trial experiment stopped part-way completes with every (example, trial) run once", async () => {
    const dir = mkdtempSync(join(tmpdir(), "exp-trials-restart-"));
    dirs.push(dir);
    const config = { workers: 2, dataDir: dir };
    const first = await harness(config);
    const t = await first.tenant(`rs${Math.random().toString(36).slice(2, 8)}`);
    const wf = await createAutomation(first.ctx.storage.automations, first.clock, t.id, FLOW);
    const at = `/v1/automations/${wf.id}`;
    const req = (hh: Harness, method: string, path: string, body?: unknown) => hh.req(method, path, { key: t.key, body });
    await req(first, "PUT", `${at}/evaluators`, { yaml: EVALUATORS });
    for (const who of NAMES.slice(0, 4)) await req(first, "POST", `${at}/examples`, { name: who, input: { who }, expected: { who } });
    const e = await json(await req(first, "POST", `${at}/experiments`, { trials: 3, batchConcurrency: 2 }));
    expect(e.total).toBe(12);
    runsOf(first.ctx).startWorkers();
    for (let i = 0; i < 3000 && (await json(await req(first, "GET", `${at}/experiments/${e.id}`))).completedCount < 3; i++) await Bun.sleep(5);
    await runsOf(first.ctx).stopWorkers(1000);
    const part = await json(await req(first, "GET", `${at}/experiments/${e.id}`));
    expect(part.status).not.toBe("completed");
    expect(part.runCount).toBe(12);
    await first.ctx.db.close();

    const second = await harness(config);
    runsOf(second.ctx).startWorkers();
    await experimentsOf(second.ctx).recover();
    let done: Json = {};
    for (let i = 0; i < 3000 && done.status !== "completed"; i++) {
      done = await json(await req(second, "GET", `${at}/experiments/${e.id}`));
      await Bun.sleep(10);
    }
    expect(done).toMatchObject({ status: "completed", runCount: 12, completedCount: 12 });
    const stats = await json(await req(second, "GET", `${at}/experiments/${e.id}/trials`));
    expect(stats.examples).toHaveLength(4);
    for (const ex of stats.examples as Json[]) {
      expect(ex.runs.map((r: Json) => r.trial)).toEqual([1, 2, 3]);
      // Each run ran as the trial it is stored as (a resumed run too).
      for (const r of ex.runs as Json[]) expect((await json(await req(second, "GET", `/v1/runs/${r.id}`))).output.trial).toBe(r.trial);
    }
    await runsOf(second.ctx).stopWorkers(1000);
  }, 60_000);
});
