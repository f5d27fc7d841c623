// The automation store contracts, run on both backends with the same assertions: what one backend
// answers, the other answers too (same rows, same order), and every invariant the stores decide
// inside the database (score once, complete once, a name or path taken once) holds when raced.
// SQLite: an in-memory database; PostgreSQL: a fresh database on the test server.
import { afterAll, describe, expect, test } from "bun:test";
import type { ModelCallRow } from "../../../src/automation/models/store";
import type { CorrectionRow, ReviewRow } from "../../../src/automation/reviews/store";
import type { ExampleFileRow, ExampleRow } from "../../../src/automation/datasets/store";
import type { EvalResult } from "../../../src/automation/evaluators/model";
import { bothIn, type Backend } from "./backends";

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
const onBoth = bothIn(opened);

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
        await ex.insert({ id: `exp_${i}`, tenantId: "t1", automationId: "a1", automationType: "workflow", name: `e${i}`, version: null, runTotal: 0, readyAt: null, createdAt: at(i * 10), completedAt: null, cancelledAt: null, batchConcurrency: i === 0 ? 2 : null, trials: i === 1 ? 3 : 1 });
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
        exp1Trials: (await ex.byId("exp_1"))?.trials,
        unfinished: (await ex.unfinished()).map((r) => r.id).sort(),
      };
    });
    expect(out.postgres).toEqual(out.sqlite);
    expect(out.sqlite).toMatchObject({ early: false, notAll: false, winners: 1, window: ["exp_3", "exp_2", "exp_1"], exp1: at(70) });
    expect(out.sqlite.page.total).toBe(5);
    expect(out.sqlite.page.rows.map((r) => r.id)).toEqual(["exp_3", "exp_2"]);
    expect(out.sqlite.stats).toEqual({ runCount: 3, started: 3, scored: 3, passed: 1, failed: 2, avgScore: 0.5 });
    expect(out.sqlite.exp0).toMatchObject({ runTotal: 3, readyAt: at(61), completedAt: at(65), batchConcurrency: 2, trials: 1 });
    expect(out.sqlite.exp1Trials).toBe(3);
    expect(out.sqlite.runs.map((r) => r.trial)).toEqual([null, null, null]);
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

  test("reviews: 10 concurrent read-decide-write puts all count, files and pins, removal, health (summary, buckets, rolling)", async () => {
    const out = await onBoth(async (b) => {
      const rv = b.storage.reviews;
      // 40 runs over 40 days; a review on most of them, correct two times in three.
      for (let i = 0; i < 40; i++) await seedRun(b, `run_${String(i).padStart(2, "0")}`, { created: i * 86_400 + 3600 });
      const row = (runId: string, verdict: string | null, n: number, prev?: ReviewRow): ReviewRow => ({
        runId, id: prev?.id ?? `rev_${runId}`, tenantId: "t1", automationId: "a1", verdict: verdict as ReviewRow["verdict"], status: "open", note: `n=${n}`,
        correctedOutput: '{"total":2,"a":1}', correctionCount: n, reviewedBy: "u1", reviewedByEmail: null, reviewedAt: at(10), closedBy: null, closedByEmail: null,
        closedAt: null, closedNote: null, createdAt: prev?.createdAt ?? at(10), updatedAt: at(11 + n),
      });
      const correction = (runId: string, i: number): CorrectionRow => ({
        id: `cor_${runId}_${i}`, runId, position: i, kind: "field", path: `/f${i}`, label: null, originalValue: '{"v":1}', correctedValue: `{"v":${i + 2},"b":0}`, note: "", correctedArtifactPath: null, createdAt: at(12), updatedAt: at(12),
      });
      // Each put appends one correction to what it reads: only serialised read-decide-write keeps all ten.
      await Promise.all(Array.from({ length: 10 }, () => rv.put("run_00", (prev, cs) => ({ row: row("run_00", "correct", cs.length + 1, prev), corrections: [...cs, correction("run_00", cs.length)] }))));
      for (let i = 1; i < 40; i++) {
        const id = `run_${String(i).padStart(2, "0")}`;
        if (i % 5 !== 4) await rv.put(id, (prev) => ({ row: row(id, i % 3 === 0 ? "incorrect" : i % 7 === 0 ? null : "correct", 0, prev) }));
      }
      const replacedNothing = await rv.putFile("t1", { runId: "run_01", name: "a.pdf", contentType: "application/pdf", size: 10, sha256: "sha_1", createdAt: at(20) });
      const replaced = await rv.putFile("t1", { runId: "run_01", name: "a.pdf", contentType: "application/pdf", size: 11, sha256: "sha_2", createdAt: at(21) });
      await rv.putFile("t1", { runId: "run_01", name: "b.pdf", contentType: "application/pdf", size: 12, sha256: "sha_2", createdAt: at(22) });
      const taken = await rv.renameFile("run_01", "a.pdf", "b.pdf");
      const used = await rv.unpinIfUnused("run_01", "sha_2");
      const unused = await rv.unpinIfUnused("run_01", "sha_1");
      const scope = { tenantId: "t1", automationId: "a1", from: at(0), to: at(50 * 86_400) };
      const result = {
        review: await rv.get("run_00"),
        corrections: await rv.corrections("run_00"),
        replacedNothing, replaced, taken, used, unused,
        files: await rv.files("run_01"),
        summary: await rv.healthSummary(scope),
        days: (await rv.healthBuckets(scope, "day")).length,
        weeks: await rv.healthBuckets(scope, "week"),
        months: await rv.healthBuckets({ ...scope, statuses: ["completed"] }, "month"),
        rolling: await rv.healthRolling(scope, "week", 10, 3),
        pins: await rv.remove("run_01"),
        gone: [await rv.get("run_01"), await rv.files("run_01")],
      };
      return result;
    });
    const round = (x: unknown) => JSON.parse(JSON.stringify(x, (_, v) => (typeof v === "number" ? Math.round(v * 1e9) / 1e9 : v)));
    expect(round(out.postgres)).toEqual(round(out.sqlite));
    expect(out.sqlite.review).toMatchObject({ correctionCount: 10, note: "n=10" });
    expect(out.sqlite.corrections.map((c) => c.position)).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
    expect(out.sqlite).toMatchObject({ replacedNothing: undefined, replaced: "sha_1", taken: "exists", used: false, unused: true, pins: ["sha_2"] });
    expect(out.sqlite.summary.totalRuns).toBe(40);
    expect(out.sqlite.days).toBe(40);
    expect(out.sqlite.weeks[0].bucket).toBe("2026-11-23"); // the Monday of 2026-11-25's week
    expect(out.sqlite.months.map((m) => m.bucket)).toEqual(["2026-11-01", "2026-12-01", "2027-01-01"]);
    expect(out.sqlite.rolling.length).toBeGreaterThan(3);
  }, 60_000);

  test("model calls: 12 parallel appends to one run get seqs 1-12, replay skips used seqs, totals summed", async () => {
    const out = await onBoth(async (b) => {
      const mc = b.storage.models;
      await seedRun(b, "run_m", { created: 1 });
      const call = (i: number): Omit<ModelCallRow, "seq"> => ({
        runId: "run_m", stepPath: `b${i % 3}`, requestHash: i % 2 ? "h_odd" : "h_even", model: "m1", provider: "p1", status: i === 5 ? "failed" : "ok",
        inputTokens: 100 + i, outputTokens: 10 * i, cacheReadTokens: i, cacheWriteTokens: 0, durationMs: 5, startedAt: at(i), error: i === 5 ? "boom" : null,
        request: '{"prompt":"x","z":1}', response: `{"text":"r${i}","usage":{"b":1,"a":2}}`,
      });
      const seqs = await Promise.all(Array.from({ length: 12 }, (_, i) => mc.add(call(i))));
      const calls = await mc.calls("run_m");
      const firstOdd = calls.find((c) => c.requestHash === "h_odd" && c.status === "ok")!.seq;
      return {
        seqs: [...seqs].sort((x, y) => x - y),
        calls: calls.map((c) => ({ ...c, startedAt: "…" })).length,
        replay: (await mc.replayable("run_m", "h_odd", new Set([firstOdd])))?.seq !== firstOdd,
        none: await mc.replayable("run_m", "nope", new Set()),
        totals: await mc.totals("run_m"),
        empty: await mc.totals("run_x"),
      };
    });
    expect(out.postgres).toEqual(out.sqlite);
    expect(out.sqlite.seqs).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12]);
    expect(out.sqlite.totals).toEqual({ tokens: { input: 1266, output: 660, cacheRead: 66, cacheWrite: 0 }, llmCallCount: 12, llmDurationMs: 60 });
    expect(out.sqlite.empty).toEqual({ tokens: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 }, llmCallCount: 0, llmDurationMs: 0 });
  }, 60_000);

  test("inbound e-mail: one token per automation (also when 12 callers race), lookup by token, 30 racing counts of one sender get 1-30, runs by dedupe key", async () => {
    const out = await onBoth(async (b) => {
      const ib = b.storage.inbound;
      let minted = 0;
      const mint = () => `tok${String(++minted).padStart(13, "0")}`;
      const raced = await Promise.all(Array.from({ length: 12 }, () => ib.token("t1", "a1", mint, at(1))));
      const other = await ib.token("t1", "a2", mint, at(2));
      const counts = await Promise.all(Array.from({ length: 30 }, () => ib.countSender("ann@partner.example", 1000)));
      await seedRun(b, "run_mail", { created: 3 });
      await b.exec("UPDATE runs SET dedupe_key = ? WHERE id = ?", ["email:a1:abc", "run_mail"]);
      let duplicate = "";
      try {
        await seedRun(b, "run_mail2", { created: 4 });
        await b.exec("UPDATE runs SET dedupe_key = ? WHERE id = ?", ["email:a1:abc", "run_mail2"]);
      } catch {
        duplicate = "refused";
      }
      return {
        sameToken: new Set(raced).size === 1 && raced[0] !== other,
        // Which racer's minted token won differs by backend; that one wins for all is the contract.
        owner: await ib.byToken(raced[0]).then((o) => o && { ...o, token: o.token === raced[0] }),
        unknown: await ib.byToken("nope"),
        counts: [...counts].sort((x, y) => x - y),
        nextMinute: await ib.countSender("ann@partner.example", 1001),
        run: await ib.runOf("email:a1:abc"),
        none: await ib.runOf("email:a1:zzz"),
        duplicate,
      };
    });
    expect(out.postgres).toEqual(out.sqlite);
    expect(out.sqlite.sameToken).toBe(true);
    expect(out.sqlite.owner).toEqual({ tenantId: "t1", automationId: "a1", token: true });
    expect(out.sqlite.counts).toEqual(Array.from({ length: 30 }, (_, i) => i + 1));
    expect(out.sqlite.nextMinute).toBe(1);
    expect(out.sqlite.run).toBe("run_mail");
    expect(out.sqlite.duplicate).toBe("refused");
  }, 60_000);

  test("agents: a slug registered once (also when 6 registrations race), 6 concurrent syncs apply one after the other", async () => {
    const out = await onBoth(async (b) => {
      const ag = b.storage.agents;
      await b.exec("INSERT INTO tenants (id, slug, name, created_at) VALUES ('t1', 'acme', 'Acme', ?)", [at(0)]);
      const agent = (id: string) => ({ id, tenantId: "t1", type: "agent" as const, slug: "bot", name: "Bot", description: null, status: "active", currentVersionId: null, createdAt: at(1), updatedAt: at(1) });
      const version = (automationId: string, n: number) => ({
        id: `ver_${automationId}_${n}`, tenantId: "t1", automationId, version: `v${n}`, yaml: `name: bot\nversion: v${n}\n`, sourceRef: null, message: null,
        name: "Bot", description: null, triggers: '{"api":true}', inputSchema: null, outputSchema: null, createdAt: at(10 + n),
      });
      const source = (id: string) => ({ automationId: id, tenantId: "t1", repo: `/repos/${id}`, mirror: null, releaseTag: null, releaseCommit: null, syncedAt: null, createdAt: at(1) });
      // Each plan adds the next release after the ones it reads: only serialised syncs give v2..v7 without a clash.
      const nextRelease = (a: { id: string }, rs: { version: string | null }[]) => {
        const v = version(a.id, rs.length + 1);
        return { remove: [], insert: [v], current: v, set: { currentVersionId: v.id, name: "Bot", description: null, updatedAt: v.createdAt } };
      };
      const registered = await Promise.all(Array.from({ length: 6 }, (_, i) => ag.register(agent(`agt_${i}`), source(`agt_${i}`), nextRelease)));
      const winner = `agt_${registered.indexOf("ok")}`;
      const syncs = await Promise.all(Array.from({ length: 6 }, (_, i) => ag.sync("t1", winner, nextRelease, { releaseTag: `v${i}`, releaseCommit: "c0ffee", syncedAt: at(50) })));
      const releases = (await ag.releases(winner)).map((v) => ({ ...v, id: v.id.replace(winner, "W"), automationId: "W", triggers: JSON.parse(v.triggers) }));
      const last = syncs.map((x) => x.current.version).sort().at(-1);
      const src = await ag.source("t1", winner);
      return {
        registered: registered.filter((r) => r === "ok").length,
        taken: registered.filter((r) => r === "slug_taken").length,
        versions: releases.map((v) => v.version).sort(),
        releases: releases.sort((x, y) => (x.id < y.id ? -1 : 1)),
        last,
        byRepo: (await ag.sourceByRepo("t1", `/repos/${winner}`))?.automationId === winner,
        // Which sync committed last differs from run to run: its tag is one of theirs.
        source: { ...src, automationId: "W", repo: "R", releaseTag: /^v[0-5]$/.test(src?.releaseTag ?? "") ? "v*" : src?.releaseTag },
        losers: (await Promise.all(registered.map((_, i) => ag.source("t1", `agt_${i}`)))).filter(Boolean).length,
      };
    });
    expect(out.postgres).toEqual(out.sqlite);
    expect(out.sqlite).toMatchObject({ registered: 1, taken: 5, last: "v7", byRepo: true, losers: 1 });
    expect(out.sqlite.versions).toEqual(["v1", "v2", "v3", "v4", "v5", "v6", "v7"]);
  }, 60_000);

  test("templates: revisions numbered one after another when 8 replaces race, soft delete keeps pinned revisions, newest first", async () => {
    const out = await onBoth(async (b) => {
      const ts = b.storage.templates;
      await b.exec("INSERT INTO tenants (id, slug, name, created_at) VALUES ('t1', 'acme', 'Acme', ?)", [at(0)]);
      const rev = (templateId: string, id: string, n: number) => ({
        id, templateId, tenantId: "t1", number: n, filename: "inv.docx", format: "docx", mimeType: "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
        size: 1234, sha256: `sha_${id}`, tokens: '[{"name":"total"}]', createdAt: at(n),
      });
      const tpl = (id: string, name: string, created: number) => ({ id, tenantId: "t1", name, description: null, currentRevisionId: `${id}_r1`, createdAt: at(created), updatedAt: at(created), deletedAt: null });
      await ts.create(tpl("tmpl_a", "invoice", 1), rev("tmpl_a", "tmpl_a_r1", 1));
      await ts.create(tpl("tmpl_b", "invoice", 2), rev("tmpl_b", "tmpl_b_r1", 1));
      await ts.create(tpl("tmpl_c", "letter", 3), rev("tmpl_c", "tmpl_c_r1", 1));
      const added = await Promise.all(Array.from({ length: 8 }, (_, i) => { const { number: _n, ...r } = rev("tmpl_a", `tmpl_a_x${i}`, 0); return ts.addRevision("t1", "tmpl_a", r, at(20)); }));
      const numbers = added.map((r) => r!.number).sort((x, y) => x - y);
      const deleted = [await ts.softDelete("t1", "tmpl_b", at(30)), await ts.softDelete("t1", "tmpl_b", at(31))];
      return {
        numbers,
        gone: await ts.addRevision("t1", "tmpl_b", rev("tmpl_b", "tmpl_b_r2", 0), at(32)),
        deleted,
        byName: (await ts.byName("t1", "invoice"))?.id,
        // Which racing replace committed last differs from run to run.
        list: await ts.list("t1", 10, 0).then((l) => ({ ...l, rows: l.rows.map((t) => ({ ...t, currentRevisionId: t.currentRevisionId.replace(/_x\d$/, "_x*") })) })),
        pinned: (await ts.revision("t1", "tmpl_b_r1"))?.id,
        revisions: (await ts.revisionsOf("tmpl_a")).map((r) => r.number),
        current: (await ts.byId("t1", "tmpl_a"))?.currentRevisionId.startsWith("tmpl_a_x"),
        missing: await ts.byId("t1", "tmpl_b"),
      };
    });
    expect(out.postgres).toEqual(out.sqlite);
    expect(out.sqlite).toMatchObject({ numbers: [2, 3, 4, 5, 6, 7, 8, 9], gone: null, deleted: [true, false], byName: "tmpl_a", pinned: "tmpl_b_r1", current: true });
    expect(out.sqlite.list.rows.map((t) => t.id)).toEqual(["tmpl_c", "tmpl_a"]);
    expect(out.sqlite.revisions).toEqual([9, 8, 7, 6, 5, 4, 3, 2, 1]);
  }, 60_000);
});
