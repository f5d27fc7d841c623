// The durable queue: a second server over the same data dir (after the first died mid-run) resumes
// running runs after their last finished step, runs queued ones, leaves waiting ones waiting; claims
// are exclusive across connections; an idle pool claims nothing between its safety polls.
import { afterAll, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { buildApp } from "../../../src/automation/app";
import { createAutomation } from "../../../src/automation/automations/service";
import { createBlobStore } from "../../../src/automation/blobs/fs-blobs";
import { runsOf } from "../../../src/automation/runs/service";
import { workflowRuntime } from "../../../src/automation/runs/runtime-workflow";
import { SqliteRunStore } from "../../../src/automation/db/sqlite/runs";
import { MAX_ATTEMPTS } from "../../../src/automation/runs/worker";
import type { AutomationConfig } from "../../../src/automation/config";
import { createTenant } from "../../../src/automation/tenancy/service";
import { ManualClock } from "../../../src/kernel/clock";
import { openSqlite } from "../../../src/kernel/db";
import { silentLogger } from "../../../src/kernel/logger";
import { migrations } from "../../../db/automation/index";
import { testContext } from "../app/harness";
import { json, TestEngine, threeSteps } from "./support";
import { sql } from "../app/sql";

const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});


async function server(dir: string, engine: TestEngine, workers = 2, over: Partial<AutomationConfig> = {}) {
  const ctx = await testContext({ dataDir: dir, workers, ...over }, { clock: new ManualClock(), log: silentLogger, blobs: createBlobStore(join(dir, "blobs")) });
  const svc = runsOf(ctx, workflowRuntime(engine.execute));
  return { ctx, svc, app: buildApp(ctx) };
}

describe("recovery on start", () => {
  test("running runs resume after their last finished step, queued runs run, waiting runs stay waiting", async () => {
    const dir = mkdtempSync(join(tmpdir(), "runs-recovery-"));
    dirs.push(dir);
    const engineA = new TestEngine();
    engineA.hold("second"); // never opened: server A "dies" with runs inside step two
    const a = await server(dir, engineA, 2);
    const tenant = await createTenant(a.ctx.storage.tenancy, a.ctx.clock, { name: "rec", slug: "rec" });
    await createAutomation(a.ctx.storage.automations, a.ctx.clock, tenant.id, threeSteps);
    const actor = { tenantId: tenant.id, keyId: "key_t" };
    const ids: string[] = [];
    for (let n = 0; n < 4; n++) ids.push((await a.svc.start(actor, { target: "workflows.three", input: { n } })).id);
    await sql(a.ctx, "UPDATE runs SET status = 'waiting' WHERE id = ?", ids[3]);
    a.svc.startWorkers();
    await engineA.reached("second");
    // Both claimed runs inside step two (on a busy machine the second claim can come a few turns
    // later), then a moment for their first step's record to commit.
    for (let i = 0; i < 1000 && !engineA.executions.get(`{"n":1}/second`); i++) await Bun.sleep(5);
    await Bun.sleep(20);
    const statuses = () => Promise.all(ids.map((id) => a.svc.store.status(id)));
    expect(await statuses()).toEqual(["running", "running", "pending", "waiting"]);

    // Server B starts over the same data dir (A is gone: its in-flight steps never finish, and its
    // database session, with the liveness lock that keeps its runs from others, went with it).
    await a.svc.store.detach(a.svc.pool.worker);
    const engineB = new TestEngine();
    const b = await server(dir, engineB, 2);
    b.svc.startWorkers();
    for (const id of ids.slice(0, 3)) {
      for (let i = 0; i < 3000 && (await b.svc.store.status(id)) !== "completed"; i++) await Bun.sleep(5);
    }
    expect(await Promise.all(ids.map((id) => b.svc.store.status(id)))).toEqual(["completed", "completed", "completed", "waiting"]);
    for (const n of [0, 1]) {
      // Finished under A, never again under B; the interrupted step re-ran (its completion was never recorded).
      expect(engineA.executions.get(`{"n":${n}}/first`)).toBe(1);
      expect(engineB.executions.get(`{"n":${n}}/first`)).toBeUndefined();
      expect(engineB.executions.get(`{"n":${n}}/second`)).toBe(1);
      expect(engineB.executions.get(`{"n":${n}}/third`)).toBe(1);
    }
    expect(engineB.executions.get(`{"n":2}/first`)).toBe(1);
    const run0 = (await b.svc.store.byId(ids[0]))!;
    expect(JSON.parse(run0.output!)).toEqual({ first: { a: 1 }, second: { b: 2 }, third: { c: 3 } });
    expect(run0.attempts).toBe(2);
    const events = (await b.svc.store.events(ids[0])).map((e) => e.type);
    expect(events).toContain("resumed");
    expect(events.filter((e) => e === "completed")).toHaveLength(1);
    // Through HTTP: the resumed run reads like any other.
    const key = tenant.key;
    const r = await b.app.handle(new Request(`http://localhost/v1/runs/${ids[0]}/steps`, { headers: { authorization: `Bearer ${key}` } }));
    expect((await json(r)).steps.map((s: { name: string; status: string }) => `${s.name}:${s.status}`)).toEqual(["first:completed", "second:completed", "third:completed"]);
    // The waiting run is untouched by recovery.
    expect((await b.svc.store.byId(ids[3]))!.startedAt).toBeNull();
  });

  test("graceful stop leaves in-flight runs running; the next start resumes them", async () => {
    const dir = mkdtempSync(join(tmpdir(), "runs-stop-"));
    dirs.push(dir);
    const engineA = new TestEngine();
    engineA.hold("second");
    const a = await server(dir, engineA, 1);
    const tenant = await createTenant(a.ctx.storage.tenancy, a.ctx.clock, { name: "stop", slug: "stop" });
    await createAutomation(a.ctx.storage.automations, a.ctx.clock, tenant.id, threeSteps);
    const id = (await a.svc.start({ tenantId: tenant.id, keyId: "k" }, { target: "workflows.three", input: { n: 7 } })).id;
    a.svc.startWorkers();
    await engineA.reached("second");
    const stopping = a.svc.stopWorkers(400);
    await Bun.sleep(250); // the run was asked to stop at once; its step is still in flight
    engineA.open("second"); // the step finishes within the grace; the run stops at the boundary after it
    await stopping;
    expect(await a.svc.store.status(id)).toBe("running");
    expect((await a.svc.store.steps(id)).map((s) => s.name)).toEqual(["first", "second"]);
    const engineB = new TestEngine();
    const b = await server(dir, engineB, 1);
    b.svc.startWorkers();
    for (let i = 0; i < 3000 && (await b.svc.store.status(id)) !== "completed"; i++) await Bun.sleep(5);
    expect(await b.svc.store.status(id)).toBe("completed");
    expect([...engineB.executions.keys()]).toEqual(['{"n":7}/third']);
  });
});

describe("queue", () => {
  test("claims are exclusive across connections: each pending run is claimed once", async () => {
    const dir = mkdtempSync(join(tmpdir(), "runs-claim-"));
    dirs.push(dir);
    // Two SQLite connections to one file (test/automation/db/stores-runs.test.ts races claimers on PostgreSQL).
    const a = await server(dir, new TestEngine(), 2, { db: undefined });
    const tenant = await createTenant(a.ctx.storage.tenancy, a.ctx.clock, { name: "claim", slug: "claim" });
    await createAutomation(a.ctx.storage.automations, a.ctx.clock, tenant.id, threeSteps);
    for (let n = 0; n < 6; n++) await a.svc.start({ tenantId: tenant.id, keyId: "k" }, { target: "workflows.three", input: { n } });
    const s1 = new SqliteRunStore(openSqlite(join(dir, "automation.db"), migrations));
    const s2 = new SqliteRunStore(openSqlite(join(dir, "automation.db"), migrations));
    const claimed: string[] = [];
    for (let i = 0; i < 4; i++) {
      for (const [s, w] of [[s1, "w1"], [s2, "w2"]] as const) {
        const [c] = await s.claimMany(1, w, new Date().toISOString(), Date.now(), 60_000);
        if (c) claimed.push(c.id);
      }
    }
    expect(claimed).toHaveLength(6);
    expect(new Set(claimed).size).toBe(6);
    // A live lease is not stolen; a lapsed one is.
    expect(await s1.claimMany(1, "w3", new Date().toISOString(), Date.now(), 60_000)).toEqual([]);
    expect((await s1.claimMany(1, "w3", new Date().toISOString(), Date.now() + 120_000, 60_000))[0]?.resumed).toBe(true);
  });

  test("an idle pool claims nothing between its safety polls (every 2 s); a new run wakes it at once", async () => {
    const dir = mkdtempSync(join(tmpdir(), "runs-idle-"));
    dirs.push(dir);
    const a = await server(dir, new TestEngine());
    const tenant = await createTenant(a.ctx.storage.tenancy, a.ctx.clock, { name: "idle", slug: "idle" });
    await createAutomation(a.ctx.storage.automations, a.ctx.clock, tenant.id, threeSteps);
    let claims = 0;
    const orig = a.svc.store.claimMany.bind(a.svc.store);
    a.svc.store.claimMany = (...args) => {
      claims++;
      return orig(...args);
    };
    await a.svc.startWorkers();
    expect(claims).toBe(1);
    await Bun.sleep(300);
    expect(claims).toBe(1);
    const id = (await a.svc.start({ tenantId: tenant.id, keyId: "k" }, { target: "workflows.three", input: { n: 1 } })).id;
    for (let i = 0; i < 3000 && (await a.svc.store.status(id)) !== "completed"; i++) await Bun.sleep(5);
    expect(await a.svc.store.status(id)).toBe("completed");
    const after = claims;
    await Bun.sleep(300);
    expect(claims).toBe(after);
  });
});

describe("crash loops", () => {
  test("a run interrupted by more restarts than allowed is failed instead of resumed again", async () => {
    const dir = mkdtempSync(join(tmpdir(), "runs-poison-"));
    dirs.push(dir);
    const engine = new TestEngine();
    const a = await server(dir, engine);
    const tenant = await createTenant(a.ctx.storage.tenancy, a.ctx.clock, { name: "poison", slug: "poison" });
    await createAutomation(a.ctx.storage.automations, a.ctx.clock, tenant.id, threeSteps);
    const id = (await a.svc.start({ tenantId: tenant.id, keyId: "k" }, { target: "workflows.three", input: { n: 1 } })).id;
    // As if five earlier server processes each died while running it.
    await sql(a.ctx, "UPDATE runs SET status = 'running', attempts = ?, claimed_by = 'wrk_dead' WHERE id = ?", MAX_ATTEMPTS, id);
    a.svc.startWorkers();
    for (let i = 0; i < 3000 && (await a.svc.store.status(id)) === "running"; i++) await Bun.sleep(5);
    const run = (await a.svc.store.byId(id))!;
    expect(run.status).toBe("failed");
    expect(JSON.parse(run.error!).code).toBe("too_many_restarts");
    expect(engine.executions.size).toBe(0);
  });
});


describe("stop and restart with the real engine", () => {
  const effects: string[] = [];
  const sink = Bun.serve({
    port: 0,
    hostname: "127.0.0.1",
    async fetch(req) {
      const path = new URL(req.url).pathname;
      effects.push(path);
      if (path.startsWith("/slow")) await Bun.sleep(1_500);
      return Response.json({ ok: true });
    },
  });
  afterAll(() => sink.stop(true));

  const parentYaml = `
name: parent
steps:
  - {name: call, type: action.invoke-workflow, with: {workflow: workflows.child}}
  - {name: after, type: transform.set, with: {fields: {child: "{{ steps.call.output }}"}}}
output: "{{ steps.after.output }}"
`;
  const childYaml = (tag: string) => `
name: child
steps:
  - {name: effect, type: action.http, with: {url: "http://127.0.0.1:${sink.port}/${tag}", method: POST}}
  - {name: nap, type: control.wait, duration: 800}
  - {name: done, type: transform.set, with: {fields: {ok: true}}}
output: "{{ steps.done.output }}"
`;

  async function realServer(dir: string, workers: number) {
    const ctx = await testContext({ dataDir: dir, workers, httpAllowHosts: [`127.0.0.1:${sink.port}`] }, { log: silentLogger, blobs: createBlobStore(join(dir, "blobs")) });
    return { ctx, svc: runsOf(ctx) };
  }

  for (const workers of [1, 2]) {
    test(`a parent stopped while its child runs continues that child after the restart, not a new one (workers ${workers})`, async () => {
      const dir = mkdtempSync(join(tmpdir(), "runs-invoke-"));
      dirs.push(dir);
      const tag = `effect-${workers}`;
      const a = await realServer(dir, 2);
      const tenant = await createTenant(a.ctx.storage.tenancy, a.ctx.clock, { name: "inv", slug: "inv" });
      await createAutomation(a.ctx.storage.automations, a.ctx.clock, tenant.id, childYaml(tag));
      await createAutomation(a.ctx.storage.automations, a.ctx.clock, tenant.id, parentYaml);
      const parent = (await a.svc.start({ tenantId: tenant.id, keyId: "k" }, { target: "workflows.parent" })).id;
      a.svc.startWorkers();
      const children = async (svc: typeof a.svc) =>
        Promise.all((await svc.store.list({ tenantId: tenant.id, sort: "createdAt", order: "asc", limit: 10 })).filter((r) => r.parentRunId === parent).map(async (r) => ({ id: r.id, status: (await svc.store.status(r.id))! })));
      const napping = async () => {
        const [c] = await children(a.svc);
        return !!c && (await a.svc.store.steps(c.id)).some((s) => s.name === "nap");
      };
      for (let i = 0; i < 2000 && !(await napping()); i++) await Bun.sleep(5);
      await a.svc.stopWorkers(2_000); // graceful stop while the child waits: both stay running
      expect((await children(a.svc)).map((c) => c.status)).toEqual(["running"]);
      expect(await a.svc.store.status(parent)).toBe("running");
      // The parent's invoke step is not recorded as failed: it runs again on resume and finds the child.
      expect((await a.svc.store.steps(parent)).filter((s) => s.status !== "running")).toEqual([]);
      await a.ctx.db.close();

      const b = await realServer(dir, workers);
      b.svc.startWorkers();
      for (let i = 0; i < 3000 && (await b.svc.store.status(parent)) !== "completed"; i++) await Bun.sleep(5);
      expect(await b.svc.store.status(parent)).toBe("completed");
      expect(JSON.parse((await b.svc.store.byId(parent))!.output!)).toEqual({ child: { ok: true } });
      expect((await children(b.svc)).map((c) => c.status)).toEqual(["completed"]); // one child, finished
      expect(effects.filter((e) => e === `/${tag}`)).toHaveLength(1); // its side effect not repeated
      await b.svc.stopWorkers(500);
      await b.ctx.db.close();
    }, 30_000);
  }

  test("a step still running when the stop's grace runs out is interrupted, not recorded, and runs again after the restart", async () => {
    const dir = mkdtempSync(join(tmpdir(), "runs-interrupt-"));
    dirs.push(dir);
    const a = await realServer(dir, 1);
    const tenant = await createTenant(a.ctx.storage.tenancy, a.ctx.clock, { name: "int", slug: "int" });
    await createAutomation(a.ctx.storage.automations, a.ctx.clock, tenant.id, `
name: slowpoke
steps:
  - {name: call, type: action.http, with: {url: "http://127.0.0.1:${sink.port}/slow-int", method: POST}}
  - {name: after, type: transform.set, with: {fields: {x: 1}}}
`);
    const id = (await a.svc.start({ tenantId: tenant.id, keyId: "k" }, { target: "workflows.slowpoke" })).id;
    a.svc.startWorkers();
    for (let i = 0; i < 2000 && !effects.includes("/slow-int"); i++) await Bun.sleep(5);
    await a.svc.stopWorkers(200); // the call needs 1.5 s: the grace runs out first
    expect(await a.svc.store.status(id)).toBe("running");
    expect((await a.svc.store.steps(id)).filter((s) => s.status === "completed")).toEqual([]);
    await a.ctx.db.close();

    const b = await realServer(dir, 1);
    b.svc.startWorkers();
    for (let i = 0; i < 3000 && (await b.svc.store.status(id)) !== "completed"; i++) await Bun.sleep(5);
    expect(await b.svc.store.status(id)).toBe("completed");
    // At-least-once: the interrupted call was made again (its completion was never recorded).
    expect(effects.filter((e) => e === "/slow-int")).toHaveLength(2);
    await b.svc.stopWorkers(500);
    await b.ctx.db.close();
  }, 30_000);
});
