// Runs through the real engine (no test executor): action.http against a loopback server on the
// allow-list, script + foreach + output mapping, invoke-workflow child runs, cancel during a wait.
import { afterAll, describe, expect, test } from "bun:test";
import { createAutomation } from "../../../src/automation/automations/service";
import { json } from "./support";
import { harness } from "../app/harness";
import { runsOf } from "../../../src/automation/runs/service";
import { sql } from "../app/sql";

const hits: { path: string; body: string }[] = [];
const counter = Bun.serve({
  port: 0,
  hostname: "127.0.0.1",
  async fetch(req) {
    const url = new URL(req.url);
    hits.push({ path: url.pathname, body: await req.text() });
    return Response.json({ seen: hits.length, path: url.pathname });
  },
});
afterAll(() => counter.stop(true));

async function realHarness() {
  const h = await harness({ workers: 2, httpAllowHosts: [`127.0.0.1:${counter.port}`] });
  const t = await h.tenant(`e${Math.random().toString(36).slice(2, 8)}`);
  runsOf(h.ctx).startWorkers();
  const post = (path: string, body?: unknown) => h.req("POST", path, { key: t.key, body });
  const get = (path: string) => h.req("GET", path, { key: t.key });
  return { h, t, post, get, deploy: (yaml: string) => createAutomation(h.ctx.storage.automations, h.clock, t.id, yaml) };
}

describe("runs with the real engine", () => {
  test("script, foreach, http call to an allow-listed host and the output mapping", async () => {
    const { post, get, deploy } = await realHarness();
    await deploy(`
name: invoice-total
inputs:
  - {name: lines, type: array, required: true}
steps:
  - name: total
    type: transform.script
    with:
      inputs: {lines: "{{ input.lines }}"}
      function: |
        function script(lines) { return { total: lines.reduce((s, l) => s + l.amount, 0) } }
  - name: notify
    type: action.http
    with:
      url: "http://127.0.0.1:${counter.port}/notify"
      method: POST
      body: {total: "{{ steps.total.output.total }}"}
  - name: each
    type: control.foreach
    items: "{{ input.lines }}"
    as: line
    steps:
      - {name: label, type: transform.set, with: {fields: {label: "line {{ line.amount }}"}}}
output:
  total: "{{ steps.total.output.total }}"
  seen: "{{ steps.notify.output.body.path }}"
`);
    const r = await post("/v1/runs?wait_for_completion=20", { target: "workflows.invoice-total", input: { lines: [{ amount: 5 }, { amount: 7 }] } });
    const run = await json(r);
    expect(run.error).toBeNull();
    expect(r.status).toBe(200);
    expect(run.output).toEqual({ total: 12, seen: "/notify" });
    expect(hits.filter((h) => h.path === "/notify").map((h) => JSON.parse(h.body))).toEqual([{ total: 12 }]);
    const steps = (await json(await get(`/v1/runs/${run.id}/steps`))).steps.map((s: { path: string }) => s.path);
    expect(steps).toContain("total");
    expect(steps).toContain("notify");
    expect(steps.some((p: string) => p.startsWith("each"))).toBe(true);
  });

  test("a host off the allow-list fails the run cleanly", async () => {
    const { post, deploy } = await realHarness();
    await deploy(`
name: outside
steps:
  - {name: call, type: action.http, with: {url: "http://127.0.0.2:9/x"}}
`);
    const run = await json(await post("/v1/runs?wait_for_completion=20", { target: "workflows.outside" }));
    expect(run.execution.status).toBe("failed");
    expect(run.error).toContain("allow-list");
  });

  test("a child run starts from this process's memory of its automation (as an API start does): a version of the child pushed since is the one that runs", async () => {
    const { h, t, post, get, deploy } = await realHarness();
    const kid = (value: number) => `name: kid\nsteps:\n  - {name: a, type: transform.set, with: {fields: {v: ${value}}}}\noutput:\n  v: "{{ steps.a.output.v }}"\n`;
    await deploy(kid(1));
    await deploy(`name: mom\nsteps:\n  - {name: call, type: action.invoke-workflow, with: {workflow: workflows.kid}}\noutput:\n  got: "{{ steps.call.output.v }}"\n`);
    const run = async () => json(await post("/v1/runs?wait_for_completion=10", { target: "workflows.mom", input: {} }));
    expect((await run()).output).toEqual({ got: 1 });
    expect((await h.ctx.storage.automations.findWithCurrent(t.id, "workflows.kid", { mayRemember: true }))?.remembered).toBe(true);
    expect((await post("/v1/automations/workflows.kid/versions", { yaml: kid(2), version: "1.0.2" })).status).toBe(201);
    const second = await run();
    expect(second.execution.status).toBe("completed");
    expect(second.output).toEqual({ got: 2 });
    // One child a parent run: the stale insert wrote nothing before the fresh one.
    expect((await json(await get("/v1/runs?source=workflows.kid&limit=50"))).runs).toHaveLength(2);
  });

  test("GET of a run younger than 100 ms answers once it finishes (a poll right after the start sees a fast run finished); an older or slower one at once", async () => {
    const { h, post, get, deploy } = await realHarness();
    const flow = (name: string, ms: number) => `name: ${name}\nsteps:\n  - {name: pause, type: control.wait, duration: ${ms}}\n  - {name: a, type: transform.set, with: {fields: {v: 1}}}\n`;
    await deploy(flow("quick", 15));
    await deploy(flow("slow", 600));
    const start = async (target: string) => {
      const r = await post("/v1/runs", { target, input: {} });
      expect(r.status).toBe(201);
      return (await json(r)).id as string;
    };
    // Polled right after its 201, as the SDKs' run_and_wait does: finished at the first read.
    const quick = await start("workflows.quick");
    const first = await json(await get(`/v1/runs/${quick}`));
    expect(first.finished).toBe(true);
    expect(first.execution.status).toBe("completed");
    expect(first.output).toEqual({ pause: { waitedMs: 15 }, a: { v: 1 } });
    // A run that takes longer: the read waits no more than the run's first 100 ms, then answers it running.
    const slow = await start("workflows.slow");
    let t0 = performance.now();
    const running = await json(await get(`/v1/runs/${slow}`));
    const waited = performance.now() - t0;
    expect(running.finished).toBe(false);
    expect(running.execution.status).toBe("running");
    expect(waited).toBeGreaterThanOrEqual(90);
    expect(waited).toBeLessThan(500); // well before the run's 600 ms end
    // Once the run is older than that, a read answers at once.
    h.clock.advance(110);
    t0 = performance.now();
    expect((await json(await get(`/v1/runs/${slow}`))).execution.status).toBe("running");
    expect(performance.now() - t0).toBeLessThan(90); // no settle wait (that would be 100 ms)
  });

  test("action.invoke-workflow runs the child as its own run and returns its output", async () => {
    const { post, get, deploy } = await realHarness();
    await deploy(`
name: child
inputs: [{name: x, type: integer, required: true}]
steps:
  - {name: double, type: transform.script, with: {inputs: {x: "{{ input.x }}"}, function: "function script(x) { return x * 2 }"}}
output: {doubled: "{{ steps.double.output }}"}
`);
    await deploy(`
name: parent
steps:
  - {name: call, type: action.invoke-workflow, with: {workflow: workflows.child, input: {x: 21}}}
output: {answer: "{{ steps.call.output.doubled }}"}
`);
    const run = await json(await post("/v1/runs?wait_for_completion=20", { target: "workflows.parent" }));
    expect(run.output).toEqual({ answer: 42 });
    const children = (await json(await get("/v1/runs?source=workflows.child"))).runs;
    expect(children).toHaveLength(1);
    expect(children[0].trigger.type).toBe("workflow");
    expect(children[0].execution.status).toBe("completed");
  });

  test("a workflow that invokes itself is stopped at the nesting limit", async () => {
    const { post, deploy } = await realHarness();
    await deploy(`
name: loop
steps:
  - {name: again, type: action.invoke-workflow, with: {workflow: workflows.loop}}
`);
    const run = await json(await post("/v1/runs?wait_for_completion=20", { target: "workflows.loop" }));
    expect(run.execution.status).toBe("failed");
    expect(run.error).toContain("nesting");
  });

  test("cancelling a run in a long control.wait cancels it promptly", async () => {
    const { post, get, deploy } = await realHarness();
    await deploy(`
name: slow
steps:
  - {name: nap, type: control.wait, duration: 60000}
  - {name: after, type: transform.set, with: {fields: {x: 1}}}
`);
    const id = (await json(await post("/v1/runs", { target: "workflows.slow" }))).id;
    for (let i = 0; i < 2000; i++) {
      const s = (await json(await get(`/v1/runs/${id}/steps`))).steps;
      if (s.length) break;
      await Bun.sleep(5);
    }
    const c = await json(await post(`/v1/runs/${id}/cancel`));
    expect(c.cancellation.state).toBe("requested");
    let status = "";
    for (let i = 0; i < 2000 && status !== "cancelled"; i++) {
      status = (await json(await get(`/v1/runs/${id}`))).execution.status;
      await Bun.sleep(5);
    }
    expect(status).toBe("cancelled");
    const names = (await json(await get(`/v1/runs/${id}/steps`))).steps.map((s: { name: string }) => s.name);
    expect(names).not.toContain("after");
  });

  test("cancel of a running run: requested at once, the http step in flight completes, then cancelled", async () => {
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    let arrived!: () => void;
    const reached = new Promise<void>((r) => (arrived = r));
    const slowHits: string[] = [];
    const slow = Bun.serve({
      port: 0,
      hostname: "127.0.0.1",
      async fetch(req) {
        slowHits.push(new URL(req.url).pathname);
        arrived();
        await gate;
        return Response.json({ charged: true });
      },
    });
    try {
      const h = await harness({ workers: 2, httpAllowHosts: [`127.0.0.1:${slow.port}`] });
      const t = await h.tenant(`c${Math.random().toString(36).slice(2, 8)}`);
      runsOf(h.ctx).startWorkers();
      await createAutomation(h.ctx.storage.automations, h.clock, t.id, `
name: charge
steps:
  - {name: charge, type: action.http, with: {url: "http://127.0.0.1:${slow.port}/charge", method: POST}}
  - {name: receipt, type: action.http, with: {url: "http://127.0.0.1:${slow.port}/receipt", method: POST}}
`);
      const post = (path: string, body?: unknown) => h.req("POST", path, { key: t.key, body });
      const get = (path: string) => h.req("GET", path, { key: t.key });
      const id = (await json(await post("/v1/runs", { target: "workflows.charge" }))).id;
      await reached;
      const c = await json(await post(`/v1/runs/${id}/cancel`));
      expect(c).toEqual({ id, type: "workflow", finished: false, execution: { status: "running" }, cancellation: { state: "requested", wasStatus: "running" } });
      await Bun.sleep(50);
      expect((await json(await get(`/v1/runs/${id}`))).execution.status).toBe("running"); // still in its step
      release();
      let run = await json(await get(`/v1/runs/${id}`));
      for (let i = 0; i < 2000 && !run.finished; i++) {
        await Bun.sleep(5);
        run = await json(await get(`/v1/runs/${id}`));
      }
      expect(run.execution.status).toBe("cancelled");
      const steps = (await json(await get(`/v1/runs/${id}/steps`))).steps;
      expect(steps.map((s: { name: string; status: string }) => `${s.name}:${s.status}`)).toEqual(["charge:completed"]);
      expect(steps[0].output.body).toEqual({ charged: true });
      expect(slowHits).toEqual(["/charge"]);
      const types = (await json(await get(`/v1/runs/${id}/events`))).events.map((e: { type: string }) => e.type);
      expect(types).toEqual(["created", "queued", "started", "step_started", "cancel_requested", "step_completed", "cancelled"]);
    } finally {
      slow.stop(true);
    }
  });

  test("cancelling a parent cancels the child run it is waiting on", async () => {
    const { post, get, deploy } = await realHarness();
    await deploy(`
name: sleepy-child
steps:
  - {name: nap, type: control.wait, duration: 60000}
`);
    await deploy(`
name: sleepy-parent
steps:
  - {name: call, type: action.invoke-workflow, with: {workflow: workflows.sleepy-child}}
`);
    const id = (await json(await post("/v1/runs", { target: "workflows.sleepy-parent" }))).id;
    let child: { id: string } | undefined;
    for (let i = 0; i < 2000 && !child; i++) {
      child = (await json(await get("/v1/runs?source=workflows.sleepy-child&status=running"))).runs[0];
      await Bun.sleep(5);
    }
    expect(child).toBeDefined();
    expect((await json(await post(`/v1/runs/${id}/cancel`))).cancellation.state).toBe("requested");
    const statusOf = async (runId: string) => (await json(await get(`/v1/runs/${runId}`))).execution.status;
    for (let i = 0; i < 2000 && (await statusOf(id)) !== "cancelled"; i++) await Bun.sleep(5);
    expect(await statusOf(id)).toBe("cancelled");
    expect(await statusOf(child!.id)).toBe("cancelled");
  });

  test("cancelling a parent also cancels a child run that executes apart from it (resumed by a worker)", async () => {
    const { h, post, get, deploy } = await realHarness();
    await deploy(`
name: nap-a
steps:
  - {name: nap, type: control.wait, duration: 60000}
`);
    const parent = (await json(await post("/v1/runs", { target: "workflows.nap-a" }))).id;
    const child = (await json(await post("/v1/runs", { target: "workflows.nap-a" }))).id;
    // As after a restart: the child runs in its own worker slot, not under the parent's signals.
    await sql(h.ctx, "UPDATE runs SET parent_run_id = ? WHERE id = ?", parent, child);
    const statusOf = async (runId: string) => (await json(await get(`/v1/runs/${runId}`))).execution.status;
    for (let i = 0; i < 2000 && ((await statusOf(parent)) !== "running" || (await statusOf(child)) !== "running"); i++) await Bun.sleep(5);
    expect((await json(await post(`/v1/runs/${parent}/cancel`))).cancellation.state).toBe("requested");
    for (let i = 0; i < 2000 && (await statusOf(child)) !== "cancelled"; i++) await Bun.sleep(5);
    expect(await statusOf(parent)).toBe("cancelled");
    expect(await statusOf(child)).toBe("cancelled");
    const events = (await json(await get(`/v1/runs/${child}/events`))).events.map((e: { type: string }) => e.type);
    expect(events).toContain("cancel_requested");
  });

  test("a file produced by the parent can be passed to a child run, which reads it", async () => {
    const { post, deploy } = await realHarness();
    await deploy(`
name: sheet-reader
inputs: [{name: book, type: file, required: true}]
steps:
  - {name: read, type: transform.xlsx-to-json, with: {file: "{{ input.book }}"}}
output: {rows: "{{ steps.read.output }}"}
`);
    await deploy(`
name: sheet-maker
steps:
  - {name: make, type: transform.json-to-xlsx, with: {rows: [{a: 1}, {a: 2}], filename: book.xlsx}}
  - {name: read, type: action.invoke-workflow, with: {workflow: workflows.sheet-reader, input: {book: "{{ steps.make.output.file }}"}}}
output: {child: "{{ steps.read.output.rows }}"}
`);
    const run = await json(await post("/v1/runs?wait_for_completion=20", { target: "workflows.sheet-maker" }));
    expect(run.error).toBeNull();
    expect(JSON.stringify(run.output.child)).toContain('"a":2');
  });
});
