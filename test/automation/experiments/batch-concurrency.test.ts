// batchConcurrency bounds how many of an experiment's runs are in flight at once, whatever the
// server's worker count. With the real engine, every run's `action.http` GET blocks on a loopback
// server that counts the calls open at the same time.
import { afterAll, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createAutomation } from "../../../src/automation/automations/service";
import { runsOf } from "../../../src/automation/runs/service";
import { experimentsOf } from "../../../src/automation/experiments/service";
import { harness, json, type Harness, type Json } from "../app/harness";
import { sql } from "../app/sql";

let open = 0;
let peak = 0;
let calls = 0;
const gate = Bun.serve({
  port: 0,
  hostname: "127.0.0.1",
  async fetch() {
    calls++;
    peak = Math.max(peak, ++open);
    await Bun.sleep(150);
    open--;
    return Response.json({ ok: true });
  },
});
const dirs: string[] = [];
afterAll(() => {
  gate.stop(true);
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

const flow = `
name: slow
version: 1.0.0
inputs: [{name: who, type: string, required: true}]
steps:
  - {name: call, type: action.http, with: {url: "http://127.0.0.1:${gate.port}/slow?who={{ input.who }}", method: GET}}
output: {who: "{{ input.who }}"}
`;

async function setup(h: Harness, slug: string, n: number) {
  const t = await h.tenant(slug);
  const wf = await createAutomation(h.ctx.storage.automations, h.clock, t.id, flow);
  const req = (method: string, path: string, body?: unknown) => h.req(method, path, { key: t.key, body });
  for (let i = 0; i < n; i++) await req("POST", `/v1/automations/${wf.id}/examples`, { name: `ex-${i}`, input: { who: `w${i}` }, expected: { who: `w${i}` } });
  return { wf, req, key: t.key };
}

async function completed(req: (m: string, p: string) => Promise<Response>, path: string): Promise<Json> {
  for (let i = 0; i < 1500; i++) {
    const j = await json(await req("GET", path));
    if (j.status === "completed") return j;
    await Bun.sleep(20);
  }
  throw new Error(`${path} did not complete`);
}

test("an experiment with batchConcurrency 2 never has more than 2 runs in flight, and completes", async () => {
  const h = await harness({ workers: 4, httpAllowHosts: [`127.0.0.1:${gate.port}`] });
  const { wf, req } = await setup(h, "bounded", 6);
  runsOf(h.ctx).startWorkers();

  // The same experiment without a bound fills the 4 workers: the counter does see concurrency.
  peak = 0;
  const free = await json(await req("POST", `/v1/automations/${wf.id}/experiments`, {}));
  await completed(req, `/v1/automations/${wf.id}/experiments/${free.id}`);
  expect(peak).toBeGreaterThan(2);

  peak = 0;
  calls = 0;
  const r = await req("POST", `/v1/automations/${wf.id}/experiments`, { batchConcurrency: 2 });
  expect(r.status).toBe(202);
  const bounded = await json(r);
  expect(bounded.total).toBe(6);
  const done = await completed(req, `/v1/automations/${wf.id}/experiments/${bounded.id}`);
  expect(calls).toBe(6);
  expect(peak).toBe(2);
  expect(done).toMatchObject({ runCount: 6, completedCount: 6, passedCount: 6 });
  await runsOf(h.ctx).stopWorkers(1000);
});

test("held runs wait as `created` and are queued as runs finish; a bad batchConcurrency is 400", async () => {
  const h = await harness({ workers: 4, httpAllowHosts: [`127.0.0.1:${gate.port}`] });
  const { wf, req } = await setup(h, "held", 3);
  expect((await req("POST", `/v1/automations/${wf.id}/experiments`, { batchConcurrency: 0 })).status).toBe(400);
  const e = await json(await req("POST", `/v1/automations/${wf.id}/experiments`, { batchConcurrency: 1 }));
  const statuses = async () => (await Promise.all(e.runs.map(async (r: { id: string }) => (await json(await req("GET", `/v1/runs/${r.id}`))).execution.status))) as string[];
  expect(await statuses()).toEqual(["pending", "created", "created"]);
  expect((await json(await req("GET", `/v1/automations/${wf.id}/experiments/${e.id}`))).status).toBe("queued");
  // Cancelling the queued run frees the slot: the next one is queued, the last still waits.
  expect((await req("POST", `/v1/runs/${e.runs[0].id}/cancel`)).status).toBeLessThan(300);
  for (let i = 0; i < 100 && (await statuses())[1] !== "pending"; i++) await Bun.sleep(10);
  expect(await statuses()).toEqual(["cancelled", "pending", "created"]);
  // Cancelling the experiment cancels held runs too.
  await req("POST", `/v1/automations/${wf.id}/experiments/${e.id}/cancel`);
  const done = await completed(req, `/v1/automations/${wf.id}/experiments/${e.id}`);
  expect(done.runs.map((r: { status: string }) => r.status)).toEqual(["cancelled", "cancelled", "cancelled"]);
});

test("across a restart: a slot freed while no process was there is filled by the next one, which completes the experiment", async () => {
  const dir = mkdtempSync(join(tmpdir(), "exp-restart-"));
  dirs.push(dir);
  const config = { workers: 4, dataDir: dir, httpAllowHosts: [`127.0.0.1:${gate.port}`] };
  const first = await harness(config);
  const { wf, req, key } = await setup(first, "restart", 4);
  const e = await json(await req("POST", `/v1/automations/${wf.id}/experiments`, { batchConcurrency: 2 }));
  // The first process dies right after a run's terminal status committed, before it queued the next
  // held run (what a kill between the commit and the finished hook leaves behind).
  await sql(first.ctx, "UPDATE runs SET status = 'cancelled', completed_at = created_at WHERE id = ?", e.runs[0].id);
  await first.ctx.db.close();

  peak = 0;
  const second = await harness(config);
  runsOf(second.ctx).startWorkers();
  await experimentsOf(second.ctx).recover();
  const done = await completed((m, p) => second.req(m, p, { key }), `/v1/automations/${wf.id}/experiments/${e.id}`);
  expect(done.runs.map((r: { status: string }) => r.status)).toEqual(["cancelled", "completed", "completed", "completed"]);
  expect(peak).toBe(2);
  await runsOf(second.ctx).stopWorkers(1000);
});

test("recovery leaves an experiment another process may still be creating alone; an older unready one is taken as abandoned and completes", async () => {
  const h = await harness({ workers: 4, httpAllowHosts: [`127.0.0.1:${gate.port}`] });
  const { wf, req } = await setup(h, "creating", 2);
  runsOf(h.ctx).startWorkers();
  const e = await json(await req("POST", `/v1/automations/${wf.id}/experiments`, {}));
  await completed(req, `/v1/automations/${wf.id}/experiments/${e.id}`);
  // As another instance would leave it while still creating runs: not ready, not completed.
  await sql(h.ctx, "UPDATE experiments SET ready_at = NULL, completed_at = NULL WHERE id = ?", e.id);
  const row = async () => (await sql<{ ready: string | null; done: string | null }>(h.ctx, "SELECT ready_at AS ready, completed_at AS done FROM experiments WHERE id = ?", e.id))[0];
  h.clock.advance(60_000); // a minute after its creation began
  await experimentsOf(h.ctx).recover();
  expect(await row()).toEqual({ ready: null, done: null });
  h.clock.advance(2 * 60_000); // three minutes: no creation is idle that long
  await experimentsOf(h.ctx).recover();
  const after = await row();
  expect(after.ready).not.toBeNull();
  expect(after.done).not.toBeNull();
  await runsOf(h.ctx).stopWorkers(1000);
});
