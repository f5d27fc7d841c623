// A step's record that cannot be written (another process holds the SQLite write lock past the busy
// timeout) is never dropped while the run goes on: the run does not finish until the record is written
// again, and a record that stays unwritable fails the run instead of completing it (issue 36.1).
import { Database } from "bun:sqlite";
import { afterAll, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createAutomation } from "../../../src/automation/automations/service";
import { createBlobStore } from "../../../src/automation/blobs/fs-blobs";
import { runsOf } from "../../../src/automation/runs/service";
import { workflowRuntime } from "../../../src/automation/runs/runtime-workflow";
import { createTenant } from "../../../src/automation/tenancy/service";
import { silentLogger } from "../../../src/kernel/logger";
import { testContext } from "../app/harness";
import { sql } from "../app/sql";
import { TestEngine, threeSteps } from "./support";

const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});


async function setup(backend: "sqlite" | "tested" = "sqlite") {
  const dir = mkdtempSync(join(tmpdir(), "runs-journal-locked-"));
  dirs.push(dir);
  const engine = new TestEngine();
  engine.hold("second");
  // SQLite itself (another process holding its write lock): on SQLite in the PostgreSQL pass too.
  const ctx = await testContext({ dataDir: dir, ...(backend === "sqlite" ? { db: undefined } : {}), workers: 1, busyTimeoutMs: 50 }, { log: silentLogger, blobs: createBlobStore(join(dir, "blobs")) });
  const svc = runsOf(ctx, workflowRuntime(engine.execute));
  const tenant = await createTenant(ctx.storage.tenancy, ctx.clock, { name: "lock", slug: "lock" });
  await createAutomation(ctx.storage.automations, ctx.clock, tenant.id, threeSteps);
  const id = (await svc.start({ tenantId: tenant.id, keyId: "k" }, { target: "workflows.three", input: { n: 1 } })).id;
  svc.startWorkers();
  await engine.reached("second");
  // Another process (an admin command) takes the write lock while step "second" finishes.
  const other = new Database(join(dir, "automation.db"));
  other.exec("BEGIN IMMEDIATE");
  const until = async (done: () => Promise<boolean>, ms: number) => {
    for (const end = Date.now() + ms; Date.now() < end && !(await done()); ) await Bun.sleep(10);
  };
  return { ctx, svc, engine, id, other, until, close: () => other.close() };
}

describe("a step record the database refused", () => {
  test("is written again before the run finishes: the completed run has every step in its journal", async () => {
    const s = await setup();
    s.engine.open("second");
    // The lock outlasts the busy timeout several times over: the writes of "second" and "third" fail.
    await Bun.sleep(400);
    expect(await s.svc.store.status(s.id)).toBe("running");
    s.other.exec("COMMIT");
    await s.until(async () => (await s.svc.store.status(s.id)) === "completed", 15_000);
    expect(await s.svc.store.status(s.id)).toBe("completed");
    const steps = await s.svc.store.steps(s.id);
    expect(steps.map((x) => `${x.name}:${x.status}`)).toEqual(["first:completed", "second:completed", "third:completed"]);
    const run = (await s.svc.store.byId(s.id))!;
    expect(JSON.parse(run.output!)).toEqual({ first: { a: 1 }, second: { b: 2 }, third: { c: 3 } });
    await s.svc.stopWorkers(1000);
    s.close();
  });

  test("that stays unwritable fails the run (journal_write_failed) instead of completing it", async () => {
    const s = await setup();
    s.other.exec("COMMIT");
    // The database refuses the finished record of "second" for good (a write error the retries cannot fix).
    s.other.exec(`CREATE TRIGGER refuse_second_insert BEFORE INSERT ON run_steps WHEN NEW.path = 'second' AND NEW.status = 'completed' BEGIN SELECT RAISE(ABORT, 'refused'); END;
      CREATE TRIGGER refuse_second_update BEFORE UPDATE ON run_steps WHEN NEW.path = 'second' AND NEW.status = 'completed' BEGIN SELECT RAISE(ABORT, 'refused'); END;`);
    s.engine.open("second");
    await Bun.sleep(1000);
    expect(await s.svc.store.status(s.id)).toBe("running"); // retrying the record, not completed
    await s.until(async () => (await s.svc.store.status(s.id)) !== "running", 15_000);
    const run = (await s.svc.store.byId(s.id))!;
    expect(run.status).toBe("failed");
    expect(JSON.parse(run.error!).code).toBe("journal_write_failed");
    expect(JSON.parse(run.error!).message).toContain("second");
    await s.svc.stopWorkers(1000);
    s.close();
  }, 40_000);
});

test("on the backend under test (PostgreSQL in its pass): a record refused for good fails the run instead of completing it", async () => {
  const s = await setup("tested");
  s.other.exec("COMMIT");
  if (s.ctx.db.pg) {
    await sql(s.ctx, `CREATE FUNCTION refuse_second() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN
        IF NEW.path = 'second' AND NEW.status = 'completed' THEN RAISE EXCEPTION 'refused'; END IF; RETURN NEW; END $$`);
    await sql(s.ctx, "CREATE TRIGGER refuse_second BEFORE INSERT OR UPDATE ON run_steps FOR EACH ROW EXECUTE FUNCTION refuse_second()");
  } else {
    s.other.exec(`CREATE TRIGGER refuse_second_insert BEFORE INSERT ON run_steps WHEN NEW.path = 'second' AND NEW.status = 'completed' BEGIN SELECT RAISE(ABORT, 'refused'); END;
      CREATE TRIGGER refuse_second_update BEFORE UPDATE ON run_steps WHEN NEW.path = 'second' AND NEW.status = 'completed' BEGIN SELECT RAISE(ABORT, 'refused'); END;`);
  }
  s.engine.open("second");
  await Bun.sleep(1000);
  expect(await s.svc.store.status(s.id)).toBe("running");
  await s.until(async () => (await s.svc.store.status(s.id)) !== "running", 15_000);
  const run = (await s.svc.store.byId(s.id))!;
  expect(run.status).toBe("failed");
  expect(JSON.parse(run.error!).code).toBe("journal_write_failed");
  await s.svc.stopWorkers(1000);
  s.close();
}, 40_000);
