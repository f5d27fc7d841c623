// Status transitions, cancel in every state, events/steps/trace/usage, expand blocks, sampleRank.
import { describe, expect, test } from "bun:test";
import { sampleRankOf } from "../../../src/automation/runs/envelope";
import { json, runsHarness, twoSteps } from "./support";
import { sql } from "../app/sql";

const failing = `
name: failing
steps:
  - {name: ok, type: transform.set, with: {fields: {a: 1}}}
  - {name: boom, type: control.fail, message: "invoice total is negative"}
  - {name: never, type: transform.set, with: {fields: {b: 2}}}
`;

describe("run lifecycle", () => {
  test("pending → running → completed, with events in order and steps recorded", async () => {
    const h = await runsHarness();
    await h.deploy(twoSteps());
    h.engine.hold("second");
    const id = (await json(await h.post("/v1/runs", { target: "workflows.two-steps", input: { who: "a" } }))).id;
    expect((await json(await h.get(`/v1/runs/${id}`))).execution.status).toBe("pending");
    h.startWorkers();
    await h.engine.reached("second");
    const running = await json(await h.get(`/v1/runs/${id}`));
    expect(running.execution.status).toBe("running");
    expect(running.finished).toBe(false);
    expect(running.timing.startedAt).not.toBeNull();
    expect(running.timing.completedAt).toBeNull();
    h.clock.advance(1500);
    h.engine.open("second");
    const done = await h.settle(id);
    expect(done.execution.status).toBe("completed");
    expect(done.timing.durationMs).toBe(1500);

    const events = (await json(await h.get(`/v1/runs/${id}/events`))).events;
    expect(events.map((e: { type: string }) => e.type)).toEqual([
      "created", "queued", "started", "step_started", "step_completed", "step_started", "step_completed", "completed",
    ]);
    for (const e of events) expect(e.timestamp).toMatch(/Z$/);

    const steps = (await json(await h.get(`/v1/runs/${id}/steps`))).steps;
    expect(steps.map((s: { name: string; status: string }) => [s.name, s.status])).toEqual([["first", "completed"], ["second", "completed"]]);
    expect(steps[0].output).toEqual({ greeting: "hello" });
    expect(steps[1].durationMs).toBe(1500);
    expect(steps[0].attempt).toBe(1);
  });

  test("a failing step: failed, error message on the run, later steps never run", async () => {
    const h = await runsHarness();
    await h.deploy(failing);
    h.startWorkers();
    const r = await h.post("/v1/runs?wait_for_completion=10", { target: "workflows.failing" });
    expect(r.status).toBe(200);
    const run = await json(r);
    expect(run.execution.status).toBe("failed");
    expect(run.finished).toBe(true);
    expect(run.error).toBe("invoice total is negative");
    expect(run.output).toBeNull();
    const steps = (await json(await h.get(`/v1/runs/${run.id}/steps`))).steps;
    expect(steps.map((s: { name: string }) => s.name)).toEqual(["ok", "boom"]);
    expect(steps[1].error.message).toBe("invoice total is negative");
    const types = (await json(await h.get(`/v1/runs/${run.id}/events`))).events.map((e: { type: string }) => e.type);
    expect(types).toContain("step_failed");
    expect(types.at(-1)).toBe("failed");
    const list = await json(await h.get(`/v1/runs?ids=${run.id}`));
    expect(list.runs[0].error).toBe("invoice total is negative");
  });

  test("cancel a queued run: cancelled at once, it never starts", async () => {
    const h = await runsHarness();
    await h.deploy(twoSteps());
    const id = (await json(await h.post("/v1/runs", { target: "workflows.two-steps", input: { who: "a" } }))).id;
    const c = await json(await h.post(`/v1/runs/${id}/cancel`));
    expect(c).toEqual({ id, type: "workflow", finished: true, execution: { status: "cancelled" }, cancellation: { state: "cancelled", wasStatus: "pending" } });
    h.startWorkers();
    await Bun.sleep(30);
    const run = await json(await h.get(`/v1/runs/${id}`));
    expect(run.execution.status).toBe("cancelled");
    expect(run.timing.startedAt).toBeNull();
    expect(run.timing.cancelRequestedAt).not.toBeNull();
    expect((await json(await h.get(`/v1/runs/${id}/steps`))).steps).toEqual([]);
  });

  test("cancel a running run: requested, then cancelled at the next step boundary (the step in flight finishes)", async () => {
    const h = await runsHarness();
    await h.deploy(twoSteps());
    h.engine.hold("first");
    h.startWorkers();
    const id = (await json(await h.post("/v1/runs", { target: "workflows.two-steps", input: { who: "a" } }))).id;
    await h.engine.reached("first");
    const c = await json(await h.post(`/v1/runs/${id}/cancel`));
    expect(c.cancellation).toEqual({ state: "requested", wasStatus: "running" });
    expect(c.execution.status).toBe("running");
    expect(c.finished).toBe(false);
    const mid = await json(await h.get(`/v1/runs/${id}`));
    expect(mid.timing.cancelRequestedAt).not.toBeNull();
    h.engine.open("first");
    const done = await h.settle(id);
    expect(done.execution.status).toBe("cancelled");
    const steps = (await json(await h.get(`/v1/runs/${id}/steps`))).steps;
    expect(steps.map((s: { name: string; status: string }) => [s.name, s.status])).toEqual([["first", "completed"]]);
    const types = (await json(await h.get(`/v1/runs/${id}/events`))).events.map((e: { type: string }) => e.type);
    expect(types).toContain("cancel_requested");
    expect(types.at(-1)).toBe("cancelled");
  });

  test("cancel a finished run: already_terminal, nothing changes; unknown run → 404", async () => {
    const h = await runsHarness();
    await h.deploy(twoSteps());
    h.startWorkers();
    const run = await json(await h.post("/v1/runs?wait_for_completion=10", { target: "workflows.two-steps", input: { who: "a" } }));
    const c = await json(await h.post(`/v1/runs/${run.id}/cancel`));
    expect(c.cancellation).toEqual({ state: "already_terminal", wasStatus: "completed" });
    expect((await json(await h.get(`/v1/runs/${run.id}`))).execution.status).toBe("completed");
    expect((await h.post("/v1/runs/run_missing/cancel")).status).toBe(404);
  });

  test("a waiting run can be cancelled at once", async () => {
    const h = await runsHarness();
    await h.deploy(twoSteps());
    const id = (await json(await h.post("/v1/runs", { target: "workflows.two-steps", input: { who: "a" } }))).id;
    await sql(h.ctx, "UPDATE runs SET status = 'waiting' WHERE id = ?", id);
    const c = await json(await h.post(`/v1/runs/${id}/cancel`));
    expect(c.cancellation).toEqual({ state: "cancelled", wasStatus: "waiting" });
  });

  test("expand=input,usage,execution,debug adds those blocks; a bad expand is 400", async () => {
    const h = await runsHarness();
    await h.deploy(twoSteps());
    h.startWorkers();
    const run = await json(await h.post("/v1/runs?wait_for_completion=10", { target: "workflows.two-steps", input: { who: "a" }, metadata: { ticket: "T-1" } }));
    const plain = await json(await h.get(`/v1/runs/${run.id}`));
    expect(plain.input).toBeUndefined();
    expect(plain.usage).toBeUndefined();
    expect(plain.debug).toBeUndefined();
    expect(plain.execution.steps).toBeUndefined();
    const full = await json(await h.get(`/v1/runs/${run.id}?expand=input,usage,execution,debug`));
    expect(full.input).toEqual({ args: { who: "a", times: 1 }, files: [], metadata: { ticket: "T-1" } });
    expect(full.usage.tokens).toEqual({ input: 0, output: 0, cacheRead: 0, cacheWrite: 0 });
    expect(full.usage.llmCallCount).toBe(0);
    expect(full.execution.steps.map((s: { name: string }) => s.name)).toEqual(["first", "second"]);
    expect(full.execution.definitionSnapshot).toContain("name: two-steps");
    expect(full.execution.retry).toEqual({ number: 0, previousRunId: null, nextRun: null });
    expect(full.debug.observability.phases.at(-1).type).toBe("completed");
    expect((await h.get(`/v1/runs/${run.id}?expand=secrets`)).status).toBe(400);
  });

  test("usage and trace endpoints", async () => {
    const h = await runsHarness();
    await h.deploy(twoSteps());
    h.startWorkers();
    const run = await json(await h.post("/v1/runs?wait_for_completion=10", { target: "workflows.two-steps", input: { who: "a" } }));
    const usage = await json(await h.get(`/v1/runs/${run.id}/usage`));
    expect(usage.usage.creditsCharged).toBe(0);
    expect(usage.usage.durationMs).toBe(0);
    const trace = (await json(await h.get(`/v1/runs/${run.id}/trace`))).events;
    expect(trace.filter((e: { type: string }) => e.type === "step").map((e: { stepName: string }) => e.stepName)).toEqual(["first", "second"]);
    expect(trace.some((e: { phase?: string }) => e.phase === "completed")).toBe(true);
  });

  test("sampleRank is deterministic per run id and lies in [0, 1)", async () => {
    const h = await runsHarness();
    await h.deploy(twoSteps());
    const ranks: number[] = [];
    for (let i = 0; i < 20; i++) {
      const id = (await json(await h.post("/v1/runs", { target: "workflows.two-steps", input: { who: "a" } }))).id;
      const a = (await json(await h.get(`/v1/runs/${id}`))).sampleRank;
      const b = (await json(await h.get(`/v1/runs/${id}`))).sampleRank;
      expect(a).toBe(b);
      // Independent check: the first 48 bits of sha256(id) over 2^48.
      const digest = new Bun.CryptoHasher("sha256").update(id).digest();
      expect(a).toBe(digest.readUIntBE(0, 6) / 2 ** 48);
      expect(a).toBe(sampleRankOf(id));
      ranks.push(a);
    }
    for (const r of ranks) expect(r >= 0 && r < 1).toBe(true);
    expect(new Set(ranks).size).toBe(20);
  });

  test("wait on a run that fails returns 200 (terminal) with the error", async () => {
    const h = await runsHarness();
    await h.deploy(failing);
    h.startWorkers();
    const r = await h.post("/v1/runs?wait_for_completion=5", { target: "workflows.failing" });
    expect(r.status).toBe(200);
    expect((await json(r)).execution.status).toBe("failed");
  });

  test("many concurrent waiters all get their own run back", async () => {
    const h = await runsHarness({ workers: 3 });
    await h.deploy(twoSteps());
    h.startWorkers();
    const rs = await Promise.all(
      Array.from({ length: 30 }, (_, i) => h.post("/v1/runs?wait_for_completion=10", { target: "workflows.two-steps", input: { who: `w${i}` } })),
    );
    const bodies = await Promise.all(rs.map(json));
    expect(rs.map((r) => r.status)).toEqual(Array(30).fill(200));
    expect(new Set(bodies.map((b) => b.id)).size).toBe(30);
  });
});
