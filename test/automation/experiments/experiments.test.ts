import { beforeAll, describe, expect, test } from "bun:test";
import { json, runsHarness, type Json, type RunsHarness } from "../runs/support";

let h: RunsHarness;
let wf: { id: string };
const exps = () => `/v1/automations/${wf.id}/experiments`;

const echo = `
name: exp-flow
version: 1.0.0
inputs:
  - {name: who, type: string, required: true}
steps:
  - name: echo
    type: transform.set
    with: {fields: {echoInput: true}}
  - name: after
    type: transform.set
    with: {fields: {ok: true}}
`;

async function until(path: string, pred: (j: Json) => boolean): Promise<Json> {
  for (let i = 0; i < 1000; i++) {
    const j = await json(await h.get(path));
    if (pred(j)) return j;
    await Bun.sleep(10);
  }
  throw new Error(`timed out waiting on ${path}`);
}

const ids: Record<string, string> = {};

beforeAll(async () => {
  h = await runsHarness();
  wf = await h.deploy(echo);
  await h.req("PUT", `/v1/automations/${wf.id}/evaluators`, {
    key: h.t.key,
    body: { yaml: "passThreshold: 1\nevaluators:\n  - name: exact\n    type: exact-diff\n    config: {paths: [echo.input.who]}\n" },
  });
  for (const who of ["ann", "bob", "cid", "dan"]) {
    // dan's expected output is wrong on purpose: three pass, one fails.
    const ex = await json(await h.post(`/v1/automations/${wf.id}/examples`, { name: who, input: { who }, expected: { echo: { input: { who: who === "dan" ? "x" : who } } } }));
    ids[who] = ex.id;
  }
});

describe("experiments", () => {
  test("queued while no worker runs, then running → completed with counters and results", async () => {
    const r = await h.post(exps(), { name: "first" });
    expect(r.status).toBe(202);
    const created = await json(r);
    expect(created.id).toMatch(/^exp_/);
    expect(created.total).toBe(4);
    expect(created.runs.map((x: { exampleId: string }) => x.exampleId).sort()).toEqual(Object.values(ids).sort());
    const queued = await json(await h.get(`${exps()}/${created.id}`));
    expect(queued).toMatchObject({ status: "queued", runCount: 4, completedCount: 0, passedCount: 0, failedCount: 0, avgScore: null });
    h.startWorkers();
    const done = await until(`${exps()}/${created.id}`, (j) => j.status === "completed");
    expect(done).toMatchObject({ runCount: 4, completedCount: 4, passedCount: 3, failedCount: 1, avgScore: 0.75 });
    expect(done.completedAt).toBeString();
    expect(done.runs).toHaveLength(4);
    expect(done.runs.map((x: { exampleName: string }) => x.exampleName).sort()).toEqual(["ann", "bob", "cid", "dan"]);
    for (const run of done.runs) expect(done.resultsByRun[run.id]).toHaveLength(1);
    const batch = await json(await h.get(`/v1/runs?batch_id=${created.id}&limit=100`));
    expect(batch.runs).toHaveLength(4);
    const only = await json(await h.get(`/v1/runs?experiments=${created.id}&limit=100`));
    expect(only.runs).toHaveLength(4);
    const contains = await json(await h.get(`/v1/runs?example_id_contains=${ids.ann.slice(-6)}&limit=100`));
    expect(contains.runs.every((x: Json) => x.eval.exampleId === ids.ann)).toBe(true);
    expect(await json(await h.get(`/v1/experiments/${created.id}`))).toEqual({ id: created.id, automationId: wf.id });
  });

  test("a subset of examples; unknown example 400; empty body = whole dataset; bad version 404", async () => {
    const sub = await json(await h.post(exps(), { examples: [ids.ann, ids.bob] }));
    expect(sub.total).toBe(2);
    expect((await h.post(exps(), { examples: ["ex_nope"] })).status).toBe(400);
    expect((await h.post(exps(), { examples: [] })).status).toBe(400);
    expect((await h.post(exps(), { version: "9.9.9" })).status).toBe(404);
    await until(`${exps()}/${sub.id}`, (j) => j.status === "completed");
  });

  test("list with limit/offset and dates; tenant isolation", async () => {
    const list = await json(await h.get(`${exps()}?limit=1&from_date=7d`));
    expect(list.total).toBeGreaterThanOrEqual(2);
    expect(list.data).toHaveLength(1);
    expect((await json(await h.get(`${exps()}?to_date=2000-01-01`))).total).toBe(0);
    expect((await h.get(`${exps()}?from_date=yesterday`)).status).toBe(400);
    const other = await h.tenant("exp-other");
    const first = list.data[0].id;
    expect((await h.get(`${exps()}/${first}`, other.key)).status).toBe(404);
    expect((await h.get(`/v1/experiments/${first}`, other.key)).status).toBe(404);
    expect((await h.post(exps(), {}, other.key)).status).toBe(404);
    expect((await h.post(`${exps()}/${first}/cancel`, undefined, other.key)).status).toBe(404);
  });

  test("CSV and JSON exports", async () => {
    const list = await json(await h.get(`${exps()}?limit=100`));
    const id = list.data.at(-1).id;
    const csv = await (await h.get(`${exps()}/${id}/export?format=csv`)).text();
    const lines = csv.trim().split("\r\n");
    expect(lines[0]).toBe("runId,exampleId,exampleName,batchId,evaluatorName,evaluatorType,score,passed,label,weight,createdAt,error");
    expect(lines).toHaveLength(5);
    expect(lines.filter((l) => l.includes(",true,")).length).toBe(3);
    const j = await json(await h.get(`${exps()}/${id}/export?format=json&include_trace=1`));
    expect(j.experiments[0].results).toHaveLength(4);
    const firstRun = j.experiments[0].results[0].runId;
    expect(j.experiments[0].traces[firstRun].map((s: { name: string }) => s.name)).toEqual(["echo", "after"]);
    const all = await (await h.get(`${exps()}/export?format=csv`)).text();
    expect(all.trim().split("\r\n").length).toBe(1 + 4 + 2);
    expect((await h.get(`${exps()}/${id}/export?format=xml`)).status).toBe(400);
  });

  test("formula-leading cells are neutralised and quoted per RFC 4180", async () => {
    const ex = await json(await h.post(`/v1/automations/${wf.id}/examples`, { name: "formula", input: { who: "=cmd()" }, expected: { echo: { input: { who: "=cmd()" } } } }));
    await h.req("PATCH", `/v1/automations/${wf.id}/examples/${ex.id}`, { key: h.t.key, body: { name: "formula" } });
    const created = await json(await h.post(exps(), { examples: [ex.id] }));
    await until(`${exps()}/${created.id}`, (j) => j.status === "completed");
    await h.req("PUT", `/v1/automations/${wf.id}/evaluators`, {
      key: h.t.key,
      body: { yaml: "passThreshold: 1\nevaluators:\n  - name: exact\n    type: exact-diff\n    config: {paths: [echo.input.who]}\n" },
    });
    const { csvCell } = await import("../../../src/automation/experiments/export");
    expect(csvCell("=SUM(A1)")).toBe("'=SUM(A1)");
    expect(csvCell('a,"b"')).toBe('"a,""b"""');
    expect(csvCell("-1.5")).toBe("-1.5");
    expect(csvCell("@x")).toBe("'@x");
  });

  test("NDJSON stream: a line per finished run, then the summary", async () => {
    const res = await h.post(`${exps()}/stream`, { examples: [ids.ann, ids.dan] });
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toContain("ndjson");
    const lines = (await res.text()).trim().split("\n").map((l) => JSON.parse(l));
    expect(lines).toHaveLength(3);
    expect(lines.slice(0, 2).map((l) => l.type)).toEqual(["run", "run"]);
    expect(lines.slice(0, 2).map((l) => l.exampleName).sort()).toEqual(["ann", "dan"]);
    expect(lines[2]).toMatchObject({ type: "summary", experiment: { id: res.headers.get("x-experiment-id"), status: "completed", runCount: 2, passedCount: 1, failedCount: 1 } });
  });

  test("closing the NDJSON stream does not cancel the experiment", async () => {
    h.engine.hold("after");
    const res = await h.post(`${exps()}/stream`, { examples: [ids.bob, ids.cid] });
    const id = res.headers.get("x-experiment-id")!;
    await h.engine.reached("after");
    await res.body!.cancel();
    h.engine.open("after");
    const done = await until(`${exps()}/${id}`, (j) => j.status === "completed");
    expect(done).toMatchObject({ runCount: 2, completedCount: 2, passedCount: 2 });
    expect(done.runs.every((r: { status: string }) => r.status === "completed")).toBe(true);
  });

  test("cancel: finished runs stay, held ones are cancelled; completed with the cancellation", async () => {
    h.engine.hold("after");
    const created = await json(await h.post(exps(), {}));
    await h.engine.reached("after");
    const c = await h.post(`${exps()}/${created.id}/cancel`);
    expect(c.status).toBe(200);
    h.engine.open("after");
    const done = await until(`${exps()}/${created.id}`, (j) => j.status === "completed");
    const exported = await json(await h.get(`${exps()}/${created.id}/export?format=json`));
    expect(exported.experiments[0].cancelledAt).toBeString();
    const statuses = done.runs.map((r: { status: string }) => r.status);
    expect(statuses.every((s: string) => s === "cancelled" || s === "completed")).toBe(true);
    expect(statuses).toContain("cancelled");
    expect(done.completedCount).toBe(done.runCount);
    expect(done.passedCount + done.failedCount).toBe(statuses.filter((s: string) => s === "completed").length);
  });
});
