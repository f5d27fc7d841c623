// The automation store contracts, run on both backends with the same assertions: what one backend
// answers, the other answers too (same rows, same order), and every invariant the stores decide
// inside the database (score once, complete once, a name or path taken once) holds when raced.
// SQLite: an in-memory database; PostgreSQL: a fresh database on the test server.
import { afterAll, describe, expect, test } from "bun:test";
import { SQL } from "bun";
import { migrations } from "../../../db/automation/index";
import { openSqlite } from "../../../src/kernel/db";
import { migrateAutomationPg } from "../../../src/automation/db/pg-migrate";
import { pgStorage } from "../../../src/automation/db/pg/index";
import { sqliteStorage } from "../../../src/automation/db/sqlite/index";
import type { AutomationStorage, ExampleFileRow, ExampleRow } from "../../../src/automation/db/storage";
import type { EvalResult } from "../../../src/automation/evaluators/model";
import { freshPostgresDb } from "../../support/postgres";

interface Backend {
  storage: AutomationStorage;
  /** One statement with `?` placeholders, for seeding rows of stores not converted yet (runs). */
  exec(sql: string, args: unknown[]): Promise<void>;
  close(): Promise<void>;
}

async function sqliteBackend(): Promise<Backend> {
  const db = openSqlite(":memory:", migrations);
  return {
    storage: sqliteStorage(db),
    exec: async (sql, args) => void db.query(sql).run(...(args as never[])),
    close: async () => db.close(),
  };
}

async function pgBackend(): Promise<Backend> {
  const url = await freshPostgresDb();
  await migrateAutomationPg(url);
  const pg = new SQL({ url, max: 10 });
  return {
    storage: pgStorage(pg),
    exec: async (sql, args) => {
      let n = 0;
      await pg.unsafe(sql.replace(/\?/g, () => `$${++n}`), args as never[]);
    },
    close: () => pg.close(),
  };
}

const opened: Backend[] = [];
afterAll(async () => {
  for (const b of opened) await b.close();
});

const T0 = Date.parse("2026-11-25T10:00:00.000Z");
const at = (s: number) => new Date(T0 + s * 1000).toISOString();

async function seedRun(b: Backend, id: string, o: { experimentId?: string; exampleId?: string; status?: string; created: number; evaluation?: boolean }) {
  await b.exec(
    "INSERT INTO runs (id, tenant_id, type, automation_id, definition, status, input, sample_rank, created_at, experiment_id, example_id, evaluation) VALUES (?, 't1', 'workflow', 'a1', 'x', ?, '{}', 0.5, ?, ?, ?, ?)",
    [id, o.status ?? "completed", at(o.created), o.experimentId ?? null, o.exampleId ?? null, b.storage.backend === "postgres" ? (o.evaluation ?? false) : o.evaluation ? 1 : 0],
  );
}

const result = (runId: string, i: number): EvalResult => ({
  id: `res_${runId}_${i}`,
  runId,
  automationId: "a1",
  evaluatorName: `ev${i}`,
  evaluatorType: "exact",
  score: i / 2,
  passed: i % 2 === 0,
  label: null,
  weight: 1,
  passThreshold: 0.5,
  description: null,
  details: { i, nested: { z: 1, a: [1, 2] } },
  error: null,
  createdAt: at(100 + i),
});

const example = (id: string, name: string, o: Partial<ExampleRow> = {}): ExampleRow => ({
  id,
  tenantId: "t1",
  automationId: "a1",
  automationType: "workflow",
  name,
  input: '{"b":1,"a":"x"}',
  expected: null,
  metadata: null,
  annotation: "free text",
  rowOrder: null,
  overrides: null,
  latestRunId: null,
  createdAt: at(1),
  updatedAt: at(1),
  ...o,
});

const file = (exampleId: string, path: string, sha: string): ExampleFileRow => ({ exampleId, folder: "input", path, contentType: "application/pdf", size: 3_000_000_000, sha256: sha, createdAt: at(2) });

/** Runs `body` on both backends and returns what each produced, for a cross-backend comparison. */
async function onBoth<T>(body: (b: Backend) => Promise<T>): Promise<{ sqlite: T; postgres: T }> {
  const s = await sqliteBackend();
  const p = await pgBackend();
  opened.push(s, p);
  return { sqlite: await body(s), postgres: await body(p) };
}

describe("store contracts on SQLite and PostgreSQL", () => {
  test("evaluators: YAML upsert, scores recorded once when 12 scorers race, results in order", async () => {
    const out = await onBoth(async (b) => {
      const ev = b.storage.evaluators;
      await ev.put("t1", "a1", "one: 1", at(1));
      await ev.put("t1", "a1", "two: 2", at(2));
      await seedRun(b, "run_1", { created: 1, exampleId: "ex_1", evaluation: true });
      await seedRun(b, "run_2", { created: 2, exampleId: "ex_1", evaluation: true });
      const wins = await Promise.all(Array.from({ length: 12 }, () => ev.record({ runId: "run_1", experimentId: null, score: 0.75, passed: true, at: at(5) }, [result("run_1", 0), result("run_1", 1)])));
      expect(wins.filter(Boolean)).toHaveLength(1);
      return { yaml: await ev.yaml("a1"), none: await ev.yaml("nope"), results: await ev.results("run_1"), evaluation: await ev.evaluation("run_1"), scored: [await ev.scored("run_1"), await ev.scored("run_2")], unscored: await ev.unscored(10) };
    });
    expect(out.postgres).toEqual(out.sqlite);
    expect(out.sqlite.yaml).toBe("two: 2");
    expect(out.sqlite.results.map((r) => r.id)).toEqual(["res_run_1_0", "res_run_1_1"]);
    expect(out.sqlite.results[0].details).toEqual({ i: 0, nested: { z: 1, a: [1, 2] } });
    expect(out.sqlite.unscored).toEqual(["run_2"]);
  }, 60_000);

  test("experiments: list pages newest first within [from, to], stats counted, completed by exactly one of 12 racers", async () => {
    const out = await onBoth(async (b) => {
      const ex = b.storage.experiments;
      for (let i = 0; i < 5; i++) {
        await ex.insert({ id: `exp_${i}`, tenantId: "t1", automationId: "a1", automationType: "workflow", name: `e${i}`, version: null, runTotal: 0, readyAt: null, createdAt: at(i * 10), completedAt: null, cancelledAt: null, batchConcurrency: i === 0 ? 2 : null });
      }
      for (let i = 0; i < 3; i++) await seedRun(b, `run_${i}`, { created: 50 + i, experimentId: "exp_0", exampleId: "ex_1", evaluation: true, status: i === 2 ? "running" : "completed" });
      const early = await ex.completeIfDone("exp_0", at(60)); // not ready yet
      await ex.setReady("exp_0", at(61));
      for (const id of ["run_0", "run_1"]) await b.storage.evaluators.record({ runId: id, experimentId: "exp_0", score: id === "run_0" ? 1 : 0, passed: id === "run_0", at: at(62) }, []);
      const notAll = await ex.completeIfDone("exp_0", at(63)); // run_2 unscored
      await b.exec("UPDATE runs SET status = 'completed' WHERE id = ?", ["run_2"]);
      await b.storage.evaluators.record({ runId: "run_2", experimentId: "exp_0", score: null, passed: false, at: at(64) }, []);
      const racers = await Promise.all(Array.from({ length: 12 }, () => ex.completeIfDone("exp_0", at(65))));
      await ex.setCancelled("exp_1", at(70));
      await ex.setCancelled("exp_1", at(71));
      return {
        early,
        notAll,
        winners: racers.filter(Boolean).length,
        page: await ex.list("t1", "a1", { limit: 2, offset: 1 }),
        window: (await ex.list("t1", "a1", { from: at(10), to: at(30), limit: 10, offset: 0 })).rows.map((r) => r.id),
        stats: await ex.stats("exp_0"),
        runs: await ex.runs("exp_0"),
        exp0: await ex.get("t1", "exp_0"),
        exp1: (await ex.byId("exp_1"))?.cancelledAt,
        unfinished: (await ex.unfinished()).map((r) => r.id).sort(),
      };
    });
    expect(out.postgres).toEqual(out.sqlite);
    expect(out.sqlite).toMatchObject({ early: false, notAll: false, winners: 1, window: ["exp_3", "exp_2", "exp_1"], exp1: at(70) });
    expect(out.sqlite.page.total).toBe(5);
    expect(out.sqlite.page.rows.map((r) => r.id)).toEqual(["exp_3", "exp_2"]);
    expect(out.sqlite.stats).toEqual({ runCount: 3, started: 3, scored: 3, passed: 1, failed: 2, avgScore: 0.5 });
    expect(out.sqlite.exp0).toMatchObject({ runTotal: 3, readyAt: at(61), completedAt: at(65), batchConcurrency: 2 });
  }, 60_000);

  test("datasets: names and paths taken once (also when 8 creators race), replace, pins kept with files, display order", async () => {
    const out = await onBoth(async (b) => {
      const ds = b.storage.datasets;
      const first = await ds.create("t1", [
        { row: example("ex_1", "one", { rowOrder: 2 }), files: [file("ex_1", "a.pdf", "sha_a")] },
        { row: example("ex_2", "two", { rowOrder: 1, createdAt: at(3) }), files: [] },
        { row: example("ex_3", "three", { createdAt: at(0) }), files: [] },
      ]);
      const clash = await ds.create("t1", [{ row: example("ex_4", "four"), files: [] }, { row: example("ex_5", "one"), files: [] }]);
      const raced = await Promise.all(Array.from({ length: 8 }, (_, i) => ds.create("t1", [{ row: example(`race_${i}`, "same"), files: [] }])));
      const rename = await ds.update({ ...example("ex_2", "one"), updatedAt: at(9) });
      const edit = await ds.update({ ...example("ex_2", "deux", { rowOrder: 1, createdAt: at(3), expected: '{"z":0}' }), updatedAt: at(9) });
      const replaced = await ds.putFiles("t1", [file("ex_1", "a.pdf", "sha_b"), file("ex_1", "b.pdf", "sha_c")]);
      const taken = await ds.renameFile("ex_1", "input", "a.pdf", "b.pdf");
      const moved = await ds.renameFile("ex_1", "input", "a.pdf", "c.pdf");
      const stillUsed = await ds.unpinIfUnused("ex_1", "sha_b");
      await ds.removeFile("ex_1", "input", "c.pdf");
      const unused = await ds.unpinIfUnused("ex_1", "sha_b");
      const order = (await ds.list("t1", "a1", 10, 0)).map((r) => r.name);
      const replacedAll = await ds.create("t1", [{ row: example("ex_9", "nine"), files: [] }], { automationId: "a1" });
      return {
        first,
        clash,
        racedOk: raced.filter((r) => r !== "name_taken").length,
        rename,
        edit,
        replaced,
        taken,
        moved,
        stillUsed,
        unused,
        order,
        // Which racer won differs from run to run: compare the winner as "race_*".
        replacedAll: typeof replacedAll === "string" ? replacedAll : { removed: replacedAll.removed.map((id) => id.replace(/^race_\d+$/, "race_*")).sort(), filesRemoved: replacedAll.filesRemoved },
        after: (await ds.all("t1", "a1")).map((r) => r.id),
        count: await ds.count("t1", "a1"),
        gone: await ds.byId("ex_2"),
      };
    });
    expect(out.postgres).toEqual(out.sqlite);
    expect(out.sqlite).toMatchObject({ clash: "name_taken", racedOk: 1, rename: "name_taken", edit: "ok", replaced: ["sha_a"], taken: "exists", moved: "ok", stillUsed: false, unused: true });
    expect(out.sqlite.order).toEqual(["deux", "one", "three", "same"]);
    expect(out.sqlite.replacedAll).toEqual({ removed: ["ex_1", "ex_2", "ex_3", "race_*"], filesRemoved: 1 });
    expect(out.sqlite.after).toEqual(["ex_9"]);
  }, 60_000);
});
