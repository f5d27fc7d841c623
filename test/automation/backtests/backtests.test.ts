// Backtests over HTTP with the real engine, on the backend under test (AUTOMATION_TEST_DB=postgres):
// 30 production runs of v1, a candidate v2 that fixes one kind of error and breaks another, reviews
// correcting some originals. The report names the runs that broke and those that got fixed, treats
// the corrections as truth, and its statistics equal what this test computes from the data it made.
// The replays post nothing (a loopback sink counts), a run whose input file bytes are gone is skipped,
// and bad requests are 400s with nothing started.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createAutomation } from "../../../src/automation/automations/service";
import { AutomationClient, ValidationError } from "../../../src/automation/client";
import { backtestsOf } from "../../../src/automation/backtests/service";
import { runsOf } from "../../../src/automation/runs/service";
import { harness, json, type Harness, type Json } from "../app/harness";

let hits = 0;
const sink = Bun.serve({ port: 0, hostname: "127.0.0.1", fetch: () => (hits++, Response.json({ ok: true })) });
afterAll(() => sink.stop(true));

// v1 gets kind "a" wrong (n + 1 instead of 2n); v2 gets "a" right and "b" wrong (2n + 1). "c" is right on both.
const flow = (version: string, script: string) => `
name: totals
version: ${version}
inputs: [{name: kind, type: string, required: true}, {name: n, type: number, required: true}]
steps:
  - name: calc
    type: transform.script
    with:
      inputs: {kind: "{{ input.kind }}", n: "{{ input.n }}"}
      function: "${script}"
  - {name: hook, type: action.http, with: {url: "http://127.0.0.1:${sink.port}/hook", method: POST, body: {n: "{{ input.n }}"}}}
output: {total: "{{ steps.calc.output.total }}"}
`;
const V1 = flow("1.0.0", "function script(kind, n) { return { total: kind === 'a' ? Number(n) + 1 : Number(n) * 2 } }");
const V2 = flow("2.0.0", "function script(kind, n) { return { total: kind === 'b' ? Number(n) * 2 + 1 : Number(n) * 2 } }");

const FILE_FLOW = (version: string) => `
name: sizes
version: ${version}
inputs: [{name: doc, type: file, required: true}]
steps:
  - {name: size, type: transform.script, with: {inputs: {size: "{{ input.doc.size }}"}, function: "function script(size) { return { size: Number(size) } }"}}
output: {size: "{{ steps.size.output.size }}"}
`;

let h: Harness;
let key: string;
let tenantId: string;
let tenantSlug: string;
let wfAutomation: string;
let base: string;
/** The production runs: id, kind, n. */
const runs: { id: string; kind: string; n: number }[] = [];
/** Runs whose review corrected the output to the right total. */
const corrected = new Set<string>();
/** Reviewed correct, no correction: the original output stays the truth. */
const approved = new Set<string>();
const call = (method: string, path: string, body?: unknown) => h.req(method, path, { key, body });

async function finished(path: string): Promise<Json> {
  for (let i = 0; i < 6000; i++) {
    const b = await json(await call("GET", path));
    if (b.status === "completed") return b;
    await Bun.sleep(10);
  }
  throw new Error(`${path} did not complete`);
}

beforeAll(async () => {
  h = await harness({ workers: 2, httpAllowHosts: [`127.0.0.1:${sink.port}`] });
  const t = await h.tenant(`bt${Math.random().toString(36).slice(2, 8)}`);
  key = t.key;
  const wf = await createAutomation(h.ctx.storage.automations, h.clock, t.id, V1);
  tenantId = t.id;
  tenantSlug = t.slug;
  wfAutomation = wf.id;
  base = `/v1/automations/${wf.id}`;
  runsOf(h.ctx).startWorkers();
  for (let i = 0; i < 30; i++) {
    const kind = "abc"[i % 3];
    const n = i + 2; // n + 1 = 2n only at n = 1
    h.clock.advance(60_000);
    const r = await json(await call("POST", "/v1/runs?waitForCompletion=30", { target: wf.id, input: { kind, n } }));
    expect(r.status ?? r.execution?.status).toBe("completed");
    runs.push({ id: r.id, kind, n });
  }
  // Reviewers corrected 6 of the 10 "a" runs and approved 2 "c" runs as they were.
  for (const r of runs.filter((x) => x.kind === "a").slice(0, 6)) {
    expect((await call("PUT", `/v1/runs/${r.id}/reviews`, { verdict: "incorrect", correctedOutput: { total: r.n * 2 } })).status).toBe(200);
    corrected.add(r.id);
  }
  for (const r of runs.filter((x) => x.kind === "c").slice(0, 2)) {
    expect((await call("PUT", `/v1/runs/${r.id}/reviews`, { verdict: "correct" })).status).toBe(200);
    approved.add(r.id);
  }
  const v2 = await call("POST", `${base}/versions`, { yaml: V2, version: "2.0.0", activate: false });
  expect(v2.status).toBeLessThan(300);
}, 120_000);

describe("backtests", () => {
  test("bad requests: 400 naming the problem, nothing started", async () => {
    const cases: [unknown, string, string][] = [
      [{ candidate: "2.0.0", select: { from: "2099-01-01T00:00:00Z" } }, "select", "no_runs_selected"],
      [{ candidate: "2.0.0", select: { reviewVerdict: "correct", trigger: "cron" } }, "select", "no_runs_selected"],
      [{ candidate: "1.0.0" }, "candidate", "candidate_is_active"],
      [{ candidate: "9.9.9" }, "candidate", "unknown_version"],
      [{}, "candidate", "required"],
      [{ candidate: "2.0.0", select: { limit: 0 } }, "select.limit", "invalid_value"],
      [{ candidate: "2.0.0", select: { limit: 10_001 } }, "select.limit", "invalid_value"],
      [{ candidate: "2.0.0", select: { limit: 2.5 } }, "select.limit", "invalid_value"],
      [{ candidate: "2.0.0", select: { status: "running" } }, "select.status", "invalid_value"],
      [{ candidate: "2.0.0", select: { trigger: ["api", "telepathy"] } }, "select.trigger", "invalid_value"],
      [{ candidate: "2.0.0", select: { reviewVerdict: "maybe" } }, "select.reviewVerdict", "invalid_value"],
      [{ candidate: "2.0.0", select: { from: "yesterday" } }, "select.from", "invalid_value"],
      [{ candidate: "2.0.0", select: { runIds: [] } }, "select.runIds", "invalid_value"],
      [{ candidate: "2.0.0", select: { color: "red" } }, "select.color", "unrecognized_keys"],
      [{ candidate: "2.0.0", select: { from: "2026-12-02T00:00:00Z", to: "2026-12-01T00:00:00Z" } }, "select.from", "invalid_value"],
      [{ candidate: "2.0.0", select: { runIds: [runs[0].id, "exec_nope"] } }, "select.runIds.1", "run_not_selectable"],
    ];
    for (const [body, field, code] of cases) {
      const r = await call("POST", `${base}/backtests`, body);
      const b = await json(r);
      expect([JSON.stringify(body), r.status]).toEqual([JSON.stringify(body), 400]);
      const issue = (b.issues ?? [])[0];
      expect([JSON.stringify(body), issue?.field, issue?.code]).toEqual([JSON.stringify(body), field, code]);
    }
    const noRuns = await json(await call("POST", `${base}/backtests`, { candidate: "2.0.0", select: { from: "2099-01-01T00:00:00Z" } }));
    expect(noRuns.issues[0].message).toContain("matches no finished run");
    expect((await json(await call("GET", `${base}/backtests`))).total).toBe(0);
    // No replay was started: every run of the automation is one of the 30 production runs.
    const all = await json(await call("GET", `/v1/runs?limit=100&experiments=include`));
    expect(all.runs).toHaveLength(30);
  });

  test("a candidate fixing one kind of error and breaking another: both sets named, corrections are the truth", async () => {
    const hitsBefore = hits;
    const r = await call("POST", `${base}/backtests`, { candidate: "2.0.0", select: { limit: 30 } });
    expect(r.status).toBe(202);
    const { id, total } = await json(r);
    expect(id).toMatch(/^bt_/);
    expect(total).toBe(30);
    const done = await finished(`${base}/backtests/${id}`);

    // Expected from the data: with the truth = correction where there is one, else the original output.
    const right = (x: { n: number }) => x.n * 2;
    const v1 = (x: { kind: string; n: number }) => (x.kind === "a" ? x.n + 1 : x.n * 2);
    const v2 = (x: { kind: string; n: number }) => (x.kind === "b" ? x.n * 2 + 1 : x.n * 2);
    const truth = (x: { id: string; kind: string; n: number }) => (corrected.has(x.id) ? right(x) : v1(x));
    const basePass = runs.map((x) => v1(x) === truth(x));
    const candPass = runs.map((x) => v2(x) === truth(x));
    const broke = runs.filter((_, i) => basePass[i] && !candPass[i]).map((x) => x.id);
    const fixed = runs.filter((_, i) => !basePass[i] && candPass[i]).map((x) => x.id);
    expect(broke.length).toBe(14); // the 4 uncorrected "a" runs (their output was the truth) and the 10 "b" runs
    expect(fixed.length).toBe(6); // the corrected "a" runs

    expect(done).toMatchObject({ status: "completed", base: { version: "1.0.0" }, candidate: { version: "2.0.0" }, progress: { total: 30, scored: 30, skipped: 0, pending: 0, started: 0 } });
    expect(done.changes).toEqual({ broke: 14, fixed: 6, scoreDown: 0, scoreUp: 0 });
    expect(done.changedCount).toBe(20);
    // Runs that broke come first, then the fixed ones; each with both runs' ids and links.
    const changed = done.changed as Json[];
    expect(changed.slice(0, 14).every((c) => c.change === "broke")).toBe(true);
    expect(new Set(changed.slice(0, 14).map((c) => c.originalRunId))).toEqual(new Set(broke));
    expect(new Set(changed.slice(14).map((c) => c.originalRunId))).toEqual(new Set(fixed));
    expect(changed.slice(14).every((c) => c.change === "fixed" && c.expectedFrom === "correction")).toBe(true);
    for (const c of changed) {
      expect(c.replayRunId).toMatch(/^exec_/);
      expect(c.replayRunId).not.toBe(c.originalRunId);
      expect(c.links).toEqual({ original: `/v1/runs/${c.originalRunId}`, replay: `/v1/runs/${c.replayRunId}` });
    }
    expect(done.expectedFrom).toEqual({ output: 24, correction: 6 });

    // The replay ran the candidate on the original's input, as an evaluation run, and posted nothing.
    const sample = changed.find((c) => c.originalRunId === broke.at(-1))!;
    const replay = await json(await call("GET", `/v1/runs/${sample.replayRunId}`));
    const orig = runs.find((x) => x.id === sample.originalRunId)!;
    expect(replay.output.total).toBe(v2(orig));
    expect(replay.trigger?.type ?? replay.trigger).toBe("eval");
    const steps = (await json(await call("GET", `/v1/runs/${sample.replayRunId}/steps`))).steps as Json[];
    expect(steps.find((s) => s.name === "hook")?.output?.skipped).toBe(true);
    expect(hits).toBe(hitsBefore);

    // The statistics of compare over the 30 pairs, computed here from the pass/fail above (exact-diff: 1 or 0).
    const mean = (xs: boolean[]) => xs.filter(Boolean).length / xs.length;
    const rep = done.report;
    expect(rep.pairs).toBe(30);
    expect(rep.overall.n).toBe(30);
    expect(rep.overall.baseMean).toBeCloseTo(mean(basePass), 9);
    expect(rep.overall.candidateMean).toBeCloseTo(mean(candPass), 9);
    expect(rep.overall.delta).toBeCloseTo(mean(candPass) - mean(basePass), 9);
    expect(rep.overall.ci[0]).toBeLessThan(rep.overall.delta);
    expect(rep.overall.ci[1]).toBeGreaterThan(rep.overall.delta);
    expect(rep.evaluators.map((e: Json) => e.name)).toEqual(["exact-diff"]);
    expect(rep.passRate).toMatchObject({ n: 30, passedOnlyBase: 14, passedOnlyCandidate: 6 });
    // McNemar: two-sided binomial at ½ of the 20 discordant pairs, 6 of them on one side.
    let tail = 0;
    const choose = (n: number, k: number) => { let c = 1; for (let i = 1; i <= k; i++) c = (c * (n - k + i)) / i; return c; };
    for (let k = 0; k <= 6; k++) tail += choose(20, k) / 2 ** 20;
    expect(rep.passRate.pValue).toBeCloseTo(Math.min(1, 2 * tail), 9);
    expect(rep.regressionCount).toBe(14);
    expect(new Set(rep.regressions.map((x: Json) => x.originalRunId))).toEqual(new Set(broke));
    // Seeded: the same report on every read.
    expect((await json(await call("GET", `${base}/backtests/${id}`))).report).toEqual(rep);

    // The list and the NDJSON progress of a completed backtest: a line per run, then the summary.
    const list = await json(await call("GET", `${base}/backtests`));
    expect(list.data.map((b: Json) => b.id)).toContain(id);
    const text = await (await call("GET", `${base}/backtests/${id}/progress`)).text();
    const lines = text.trim().split("\n").map((l) => JSON.parse(l));
    expect(lines.filter((l) => l.type === "run")).toHaveLength(30);
    expect(new Set(lines.filter((l) => l.type === "run").map((l) => l.originalRunId)).size).toBe(30);
    expect(lines.at(-1)).toMatchObject({ type: "summary", backtest: { id, status: "completed" } });
  }, 120_000);

  test("selection by review verdict and by run ids; a runs' replay only once", async () => {
    const r = await json(await call("POST", `${base}/backtests`, { candidate: "2.0.0", select: { reviewVerdict: "incorrect" } }));
    expect(r.total).toBe(corrected.size);
    const done = await finished(`${base}/backtests/${r.id}`);
    expect(done.changes).toEqual({ broke: 0, fixed: 6, scoreDown: 0, scoreUp: 0 });
    const ids = [runs[1].id, runs[2].id];
    const r2 = await json(await call("POST", `${base}/backtests`, { candidate: "2.0.0", select: { runIds: ids } }));
    expect(r2.total).toBe(2);
    const done2 = await finished(`${base}/backtests/${r2.id}`);
    expect(new Set(done2.changed.map((c: Json) => c.originalRunId))).toEqual(new Set([runs[1].id])); // a "b" run broke, the "c" run did not change
    // Every replay is an evaluation run of one backtest, one per (backtest, run).
    const replays = await json(await call("GET", `/v1/runs?batchId=${r2.id}&limit=100&experiments=include`));
    expect(replays.runs).toHaveLength(2);
  }, 60_000);

  test("cancel: what was not replayed is cancelled, the backtest completes", async () => {
    const r = await json(await call("POST", `${base}/backtests`, { candidate: "2.0.0", select: { limit: 30 } }));
    const c = await call("POST", `${base}/backtests/${r.id}/cancel`);
    expect(c.status).toBe(200);
    expect((await json(c)).cancelledAt).not.toBeNull();
    const done = await finished(`${base}/backtests/${r.id}`);
    expect(done.progress.pending + done.progress.started).toBe(0);
    expect(done.progress.scored + done.progress.cancelled + done.progress.skipped).toBe(30);
    expect(done.cancelledAt).not.toBeNull();
  }, 60_000);

  test("a run whose input file bytes are gone is skipped, not failed; the other one replays with its file", async () => {
    const files = await createAutomation(h.ctx.storage.automations, h.clock, tenantId, FILE_FLOW("1.0.0"));
    const fb = `/v1/automations/${files.id}`;
    const ids: string[] = [];
    for (const text of ["hello", "a longer document"]) {
      h.clock.advance(60_000);
      const r = await json(await call("POST", "/v1/runs?waitForCompletion=30", { target: files.id, files: { doc: { $inline: { filename: "d.txt", mimeType: "text/plain", base64: Buffer.from(text).toString("base64") } } } }));
      expect(r.output.size).toBe(text.length);
      ids.push(r.id);
    }
    const gone = (await h.ctx.storage.runs.files(ids[0], "input"))[0];
    await h.ctx.blobs.delete(gone.sha256);
    expect((await call("POST", `${fb}/versions`, { yaml: FILE_FLOW("2.0.0"), version: "2.0.0", activate: false })).status).toBeLessThan(300);
    const bt = await json(await call("POST", `${fb}/backtests`, { candidate: "2.0.0" }));
    const done = await finished(`${fb}/backtests/${bt.id}`);
    expect(done.progress).toMatchObject({ total: 2, scored: 1, skipped: 1 });
    expect(done.skipped).toEqual([{ originalRunId: ids[0], reason: expect.stringContaining("past its retention") }]);
    expect(done.changedCount).toBe(0);
    expect(done.report.pairs).toBe(1);
  }, 60_000);

  test("scopes as experiments: runs:read reads, starting and cancelling need runs:write", async () => {
    const reader = await h.key(tenantSlug, ["runs:read"]);
    const r = await h.req("POST", `${base}/backtests`, { key: reader, body: { candidate: "2.0.0" } });
    expect(r.status).toBe(403);
    expect((await h.req("GET", `${base}/backtests`, { key: reader })).status).toBe(200);
    const some = (await json(await call("GET", `${base}/backtests`))).data[0].id;
    expect((await h.req("GET", `${base}/backtests/${some}`, { key: reader })).status).toBe(200);
    expect((await h.req("POST", `${base}/backtests/${some}/cancel`, { key: reader })).status).toBe(403);
    // Another tenant's key does not see them.
    const other = await h.tenant(`ot${Math.random().toString(36).slice(2, 8)}`);
    expect((await h.req("GET", `${base}/backtests/${some}`, { key: other.key })).status).toBe(404);
  });

  test("client: backtests.create, progress, get, list, cancel", async () => {
    const server = Bun.serve({ port: 0, hostname: "127.0.0.1", fetch: (req) => h.app.handle(req) });
    try {
      const client = new AutomationClient({ baseUrl: `http://127.0.0.1:${server.port}`, apiKey: key, retryBaseMs: 1 });
      const none = await client.backtests.create(wfAutomation, { candidate: "2.0.0", select: { from: "2099-01-01T00:00:00Z" } }).catch((e) => e);
      expect(none).toBeInstanceOf(ValidationError);
      const { id, total } = await client.backtests.create(wfAutomation, { candidate: "2.0.0", select: { runIds: [runs[0].id, runs[1].id, runs[2].id] } });
      expect(total).toBe(3);
      const lines = [];
      for await (const line of client.backtests.progress(wfAutomation, id)) lines.push(line);
      expect(lines.filter((l) => l.type === "run")).toHaveLength(3);
      expect(lines.at(-1)?.type).toBe("summary");
      const got = await client.backtests.get(wfAutomation, id);
      expect(got.status).toBe("completed");
      // runs[0] is a corrected "a" run (fixed), runs[1] a "b" run (broke), runs[2] a "c" run (unchanged).
      expect(got.changed?.map((c) => [c.originalRunId, c.change])).toEqual([[runs[1].id, "broke"], [runs[0].id, "fixed"]]);
      expect((await client.backtests.list(wfAutomation, { limit: 100 })).data.some((b) => b.id === id)).toBe(true);
      expect((await client.backtests.cancel(wfAutomation, id)).cancelledAt).toBeNull(); // completed: nothing to cancel
    } finally {
      server.stop(true);
    }
  }, 60_000);

  test("recovery: a replay a crashed process started but did not record is adopted, not started again", async () => {
    const svc = backtestsOf(h.ctx);
    const bt = await json(await call("GET", `${base}/backtests`)); // any backtest gives the versions
    const any = (await svc.store.byId(bt.data[0].id))!;
    // What a process that died between starting the first replay and recording it leaves behind.
    const id = `bt_crash${Math.random().toString(36).slice(2, 10)}`;
    const picked = [runs[3], runs[4], runs[5]];
    await svc.store.create({ ...any, id, runTotal: 3, completedAt: null, cancelledAt: null, createdAt: h.clock.now().toISOString() }, picked.map((r) => r.id));
    const orphan = await runsOf(h.ctx).start(
      { tenantId, keyId: "" },
      { target: wfAutomation, input: { kind: picked[0].kind, n: picked[0].n }, version: any.candidateVersionId, trigger: "eval", batchId: id, evaluation: true, dedupeKey: `backtest:${id}:${picked[0].id}` },
    );
    await svc.recover();
    const done = await finished(`${base}/backtests/${id}`);
    expect(done.progress).toMatchObject({ total: 3, scored: 3 });
    const items = await svc.store.items(id);
    expect(items.find((i) => i.originalRunId === picked[0].id)?.replayRunId).toBe(orphan.id);
    const replays = await json(await call("GET", `/v1/runs?batchId=${id}&limit=100&experiments=include`));
    expect(replays.runs).toHaveLength(3);
    // A second recovery (another instance starting) changes nothing.
    await svc.recover();
    expect((await json(await call("GET", `/v1/runs?batchId=${id}&limit=100&experiments=include`))).runs).toHaveLength(3);
  }, 60_000);
});
