// The runs store contract (runs, journal, events, files, queue), run on both backends with the same
// assertions: the same rows in the same order (list with every filter, sort and cursor), and every
// invariant the store decides inside the database holds when raced over the PostgreSQL pool: a run is
// claimed once, finished once, a cancel and a finish never both win, held runs are queued within
// their experiment's bound, a cron tick starts one run.
import { afterAll, describe, expect, test } from "bun:test";
import type { ListFilter, NewRun } from "../../../src/automation/runs/store";
import type { DecisionRow, TaskRow, TaskWrite } from "../../../src/automation/human-review/store";
import { TickTaken } from "../../../src/automation/schedules/store";
import { StaleSource } from "../../../src/automation/runs/store";
import { bothIn, type Backend } from "./backends";

const opened: Backend[] = [];
afterAll(async () => {
  for (const b of opened) await b.close();
});

/** Runs `body` on both backends and returns what each produced, for a cross-backend comparison. */
const onBoth = bothIn(opened);

const T0 = Date.parse("2026-11-25T10:00:00.000Z");
const at = (s: number) => new Date(T0 + s * 1000).toISOString();

function newRun(id: string, created: number, o: Partial<NewRun> = {}): NewRun {
  return {
    id,
    tenantId: "t1",
    type: "workflow",
    automationId: "aut_1",
    automationName: "One",
    automationSlug: "one",
    versionId: "ver_1",
    versionLabel: "v1",
    sourceRef: null,
    requestedRef: null,
    definition: "name: one\nsteps: []\n",
    status: "pending",
    triggerType: "api",
    triggeredBy: "key_1",
    triggeredByName: "ci key",
    input: '{"b":1,"a":{"z":[1,2],"c":"x"}}',
    // Key order and spacing as written: both backends hand back this very text.
    metadata: '{"zeta":1,"alpha":{"invokedBy":{"step":"s1"}}}',
    sampleRank: 0.5,
    createdAt: at(created),
    ...o,
  };
}

const events = [{ type: "created", status: "created", message: "run of one" }, { type: "queued", status: "pending" }];

/** Every page of a listing, following cursors the way runs/list.ts builds them. */
async function allPages(b: Backend, f: Omit<ListFilter, "limit" | "after">, size: number): Promise<string[]> {
  const ids: string[] = [];
  let after: ListFilter["after"];
  for (let guard = 0; guard < 50; guard++) {
    const rows = await b.storage.runs.list({ ...f, limit: size + 1, after });
    const kept = rows.slice(0, size);
    ids.push(...kept.map((r) => r.id));
    if (rows.length <= size) return ids;
    const last = kept.at(-1)!;
    after = { key: (f.sort === "completedAt" ? last.completedAt : f.sort === "startedAt" ? last.startedAt : last.createdAt) ?? "", id: last.id };
  }
  throw new Error("paging did not end");
}

describe("runs store contract on SQLite and PostgreSQL", () => {
  test("rows, journal, files and events read back the same; list filters, sorts and cursors give the same pages", async () => {
    const out = await onBoth(async (b) => {
      const runs = b.storage.runs;
      // 14 runs: two share a created_at (the id breaks the tie), some completed/started, one in an experiment.
      for (let i = 0; i < 14; i++) {
        const id = `exec_${String(i).padStart(2, "0")}`;
        await runs.insert(
          newRun(id, i === 5 ? 4 : i, {
            automationSlug: i % 3 === 0 ? "three" : "one",
            automationId: i % 3 === 0 ? "aut_3" : "aut_1",
            triggerType: i % 2 ? "cron" : "api",
            exampleId: i % 4 === 0 ? `ex_50%_${i}` : null,
            experimentId: i === 7 ? "exp_1" : null,
            evaluation: i === 8 ? 1 : 0,
            sampleRank: i / 14,
            versionLabel: i < 7 ? "v1" : "v2",
          }),
          events,
          i === 2 ? [{ path: "input/doc/a.pdf", role: "input", name: "a.pdf", contentType: "application/pdf", size: 3_000_000_000, sha256: "s1", stepName: null, fileId: "file_1", createdAt: at(2) }] : [],
        );
      }
      const claimed = await runs.claimMany(6, "wrk_a", at(20), T0 + 20_000, 60_000);
      for (const [n, c] of claimed.entries()) {
        runs.stepStarted(c.id, { path: "first", name: "first", type: "transform.set", attempt: 1, startedAt: at(21) });
        await runs.stepFinished(c.id, { path: "first", name: "first", type: "transform.set", status: "completed", output: { z: 1, a: [true, null] }, attempt: 1, startedAt: at(21), completedAt: at(22) });
        if (n % 2 === 0) await runs.finish(c.id, at(30 + n), n === 4 ? { status: "failed", error: { message: "boom", code: "x" }, message: "boom" } : { status: "completed", output: { ok: n } });
      }
      await runs.putFile({ runId: "exec_00", path: "out.txt", role: "output", name: "out.txt", contentType: "text/plain", size: 3, sha256: "s2", stepName: "first", fileId: null, createdAt: at(31) });
      await runs.putFile({ runId: "exec_00", path: "out.txt", role: "output", name: "out.txt", contentType: "text/csv", size: 4, sha256: "s3", stepName: "first", fileId: null, createdAt: at(31) });
      await b.exec("INSERT INTO run_reviews (run_id, id, tenant_id, automation_id, status, note, correction_count, reviewed_at, created_at, updated_at) VALUES (?, 'rev_1', 't1', 'aut_1', 'open', 'n', 0, ?, ?, ?)", ["exec_01", at(40), at(40), at(40)]);
      const base = { tenantId: "t1" } as const;
      const pages: Record<string, string[]> = {};
      for (const sort of ["createdAt", "completedAt", "startedAt"] as const) {
        for (const order of ["asc", "desc"] as const) pages[`${sort}-${order}`] = await allPages(b, { ...base, sort, order }, 3);
      }
      const ids = async (f: Partial<ListFilter>) => (await runs.list({ ...base, sort: "createdAt", order: "desc", limit: 100, ...f })).map((r) => r.id);
      const filters = {
        typedSource: await ids({ source: "workflows.three" }),
        plainSource: await ids({ source: "aut_3" }),
        statuses: await ids({ statuses: ["completed", "failed"] }),
        trigger: await ids({ trigger: "cron" }),
        triggeredBy: await ids({ triggeredBy: "ci key" }),
        sourceRef: await ids({ sourceRef: "v2" }),
        exampleContains: await ids({ exampleIdContains: "50%_1" }),
        window: await ids({ createdFrom: at(3), createdTo: at(6) }),
        open: await ids({ createdAfter: at(3), createdBefore: at(6) }),
        completed: await ids({ completedAfter: at(30), completedBefore: at(40) }),
        idList: await ids({ ids: ["exec_03", "exec_01", "nope"] }),
        exclude: await ids({ experiments: { mode: "exclude" } }),
        only: await ids({ experiments: { mode: "only" } }),
        expIds: await ids({ experiments: { ids: ["exp_1"] } }),
        sample: await ids({ sampleRate: 0.3 }),
        reviewed: await ids({ review: { hasReview: true } }),
        unreviewed: await ids({ review: { noReview: true }, limit: 3 }),
        offset: await ids({ offset: 10 }),
        otherTenant: await ids({ tenantId: "t2" }),
      };
      const first = claimed[0].id;
      return {
        claimed,
        run: await runs.get("t1", first),
        byId: await runs.byId("exec_04"),
        foreign: await runs.get("t2", first),
        status: await runs.status(first),
        steps: (await runs.steps(first)).map(({ seq, ...s }) => s),
        completedSteps: (await runs.completedSteps(first)).map(({ seq, ...s }) => s),
        events: await runs.events(first),
        files: await runs.files("exec_02"),
        outputs: await runs.files("exec_00", "output"),
        byPath: await runs.file("exec_02", "input/doc/a.pdf"),
        byPoolId: await runs.file("exec_02", "file_1"),
        childless: await runs.openChildren(first),
        pages,
        filters,
      };
    });
    expect(out.postgres).toEqual(out.sqlite);
    // JSON comes back as the very text written (key order, spacing).
    expect(out.sqlite.run!.metadata).toBe('{"zeta":1,"alpha":{"invokedBy":{"step":"s1"}}}');
    expect(out.postgres.run!.input).toBe('{"b":1,"a":{"z":[1,2],"c":"x"}}');
    expect(out.postgres.steps[0].output).toBe('{"z":1,"a":[true,null]}');
    expect(out.sqlite.pages["createdAt-asc"]).toHaveLength(14);
    expect(out.sqlite.pages["createdAt-desc"]).toEqual([...out.sqlite.pages["createdAt-asc"]].reverse());
    expect(out.sqlite.pages["completedAt-desc"].slice(0, 3)).toEqual([out.sqlite.claimed[4].id, out.sqlite.claimed[2].id, out.sqlite.claimed[0].id]);
    expect(out.sqlite.filters.exampleContains).toEqual(["exec_12"]);
    expect(out.sqlite.filters.idList).toEqual(["exec_03", "exec_01"]);
    expect(out.sqlite.filters.reviewed).toEqual(["exec_01"]);
    expect(out.sqlite.outputs).toMatchObject([{ contentType: "text/csv", size: 4, sha256: "s3" }]);
    expect(out.sqlite.files[0].size).toBe(3_000_000_000);
  }, 60_000);

  test("claims: 12 claimers racing over the pool never get the same run, and get every runnable one", async () => {
    const out = await onBoth(async (b) => {
      const runs = b.storage.runs;
      for (let i = 0; i < 40; i++) await runs.insert(newRun(`exec_${String(i).padStart(2, "0")}`, i), events);
      // Two running runs: one whose lease lapsed (claimable, resumed), one held by a live worker (not).
      await runs.insert(newRun("exec_lapsed", 100, { status: "running", claimedBy: "wrk_dead", leaseUntil: T0, attempts: 1 }), []);
      await runs.insert(newRun("exec_live", 101, { status: "running", claimedBy: "wrk_live", leaseUntil: T0 + 10_000_000, attempts: 1 }), []);
      const got: { id: string; resumed: boolean }[] = [];
      for (let round = 0; round < 3; round++) {
        const batches = await Promise.all(Array.from({ length: 12 }, (_, w) => runs.claimMany(2, `wrk_${w}`, at(50), T0 + 50_000, 60_000)));
        got.push(...batches.flat());
      }
      const ids = got.map((c) => c.id);
      return {
        count: ids.length,
        unique: new Set(ids).size,
        all: [...ids].sort(),
        resumed: got.filter((c) => c.resumed).map((c) => c.id),
        attempts: (await runs.byId("exec_lapsed"))?.attempts,
        startedEvents: (await runs.events("exec_00")).filter((e) => e.type === "started").length,
      };
    });
    expect(out.postgres).toEqual(out.sqlite);
    expect(out.sqlite.count).toBe(41);
    expect(out.sqlite.unique).toBe(41);
    expect(out.sqlite.resumed).toEqual(["exec_lapsed"]);
    expect(out.sqlite.attempts).toBe(2);
    expect(out.sqlite.startedEvents).toBe(1);
  }, 60_000);

  test("finish exactly once; a cancel and a finish racing never both win; a child claimed once", async () => {
    const out = await onBoth(async (b) => {
      const runs = b.storage.runs;
      await runs.insert(newRun("exec_f", 1, { status: "running", claimedBy: "w", leaseUntil: T0 + 60_000 }), events);
      // 12 finishes from 4 processes (each batches its own) over the pool.
      const peers = Array.from({ length: 4 }, () => b.peer().runs);
      const finishes = await Promise.all(Array.from({ length: 12 }, (_, i) => peers[i % 4].finish("exec_f", at(10), { status: "completed", output: { i: 1 } })));
      const verdicts: string[] = [];
      for (let i = 0; i < 8; i++) {
        // Half of them queued (a cancel ends them at once), half running (a cancel is only requested).
        const id = `exec_c${i}`;
        await runs.insert(newRun(id, 2 + i, i % 2 ? { status: "running", claimedBy: "w", leaseUntil: T0 + 60_000 } : {}), events);
        const [cancel, finished] = await Promise.all([peers[0].requestCancel(id, at(20)), peers[1].finish(id, at(20), { status: "completed", output: null })]);
        const terminal = (await runs.events(id)).filter((e) => ["completed", "cancelled", "failed"].includes(e.type)).length;
        // Exactly one terminal move, and the cancel's answer agrees with it.
        expect(terminal).toBe(1);
        expect(cancel.state === "cancelled" ? !finished : Boolean(finished)).toBe(true);
        verdicts.push(`${await runs.status(id)}`);
      }
      await runs.insert(newRun("exec_child", 30, { status: "running", parentRunId: "exec_f", metadata: '{"invokedBy":{"runId":"exec_f","step":"s1"}}' }), events);
      const childClaims = await Promise.all(Array.from({ length: 6 }, (_, i) => runs.claimRun("exec_child", `w${i}`, at(31), T0 + 31_000, 60_000)));
      return {
        finishWins: finishes.filter(Boolean).length,
        terminalEvents: (await runs.events("exec_f")).filter((e) => e.type === "completed" || e.type === "failed").length,
        childWins: childClaims.filter(Boolean).length,
        childAt: await runs.childAt("exec_f", "s1"),
        childAtOther: await runs.childAt("exec_f", "nope"),
        open: await runs.openChildren("exec_f"),
        cancelTerminal: await runs.requestCancel("exec_f", at(40)),
        verdicts: verdicts.length,
      };
    });
    expect(out.postgres).toEqual(out.sqlite);
    expect(out.sqlite).toMatchObject({ finishWins: 1, terminalEvents: 1, childWins: 1, childAt: { id: "exec_child", status: "running" }, open: ["exec_child"] });
    expect(out.sqlite.childAtOther).toBeUndefined();
    expect(out.sqlite.cancelTerminal.state).toBe("already_terminal");
  }, 60_000);

  test("fencing: a worker whose lease lapsed and was claimed by another writes no step and cannot finish; liveness locks; hand-back", async () => {
    const out = await onBoth(async (b) => {
      const runs = b.storage.runs;
      await runs.insert(newRun("exec_l", 1), events);
      const [first] = await runs.claimMany(1, "w_old", at(2), T0 + 2_000, 1_000);
      // w_old stalls past its lease; w_new claims the run (attempt 2) and resumes it.
      const [second] = await runs.claimMany(1, "w_new", at(5), T0 + 5_000, 60_000);
      const oldLease = { worker: "w_old", attempt: first.run.attempts };
      const newLease = { worker: "w_new", attempt: second.run.attempts };
      const step = (path: string, o: unknown) => ({ path, name: path, type: "t", status: "completed" as const, output: o, attempt: 1, startedAt: at(6), completedAt: at(6) });
      runs.stepStarted("exec_l", { path: "stale", name: "stale", type: "t", attempt: 1, startedAt: at(6) }, oldLease);
      await runs.stepFinished("exec_l", step("stale", { by: "old" }), oldLease);
      const oldFinish = await runs.finish("exec_l", at(7), { status: "completed", output: { by: "old" } }, oldLease);
      await runs.stepFinished("exec_l", step("fresh", { by: "new" }), newLease);
      const renewedOld = await runs.renewLeases("w_old", T0 + 90_000);
      const renewedNew = await runs.renewLeases("w_new", T0 + 90_000);
      const newFinish = await runs.finish("exec_l", at(8), { status: "completed", output: { by: "new" } }, newLease);
      // Hand-back: the runs a stopping worker holds become claimable at once, by anyone.
      await runs.insert(newRun("exec_hb", 10), events);
      await runs.claimMany(1, "w_stop", at(11), T0 + 11_000, 60_000);
      const handed = await runs.handBack("w_stop");
      const reclaimed = await runs.claimMany(1, "w_other", at(12), T0 + 12_000, 60_000);
      return {
        attempts: [first.run.attempts, second.run.attempts, second.resumed],
        oldFinish: Boolean(oldFinish),
        newFinish: Boolean(newFinish),
        // The finish answers the row as it now stands (what a read right after it returns), and whether
        // the run has output files and a review then.
        finishedRow: newFinish && { ...newFinish.run, has: newFinish.has, same: JSON.stringify(newFinish.run) === JSON.stringify(await runs.byId("exec_l")) },
        finishedWithBoth: await (async () => {
          await runs.insert(newRun("exec_h", 20, { status: "running", claimedBy: "w_h", leaseUntil: T0 + 60_000 }), events);
          await runs.putFile({ runId: "exec_h", path: "out.txt", role: "output", name: "out.txt", contentType: "text/plain", size: 3, sha256: "s9", stepName: "first", fileId: null, createdAt: at(21) });
          await b.exec("INSERT INTO run_reviews (run_id, id, tenant_id, automation_id, status, note, correction_count, reviewed_at, created_at, updated_at) VALUES (?, 'rev_h', 't1', 'aut_1', 'open', 'n', 0, ?, ?, ?)", ["exec_h", at(22), at(22), at(22)]);
          return (await runs.finish("exec_h", at(23), { status: "completed", output: null }, { worker: "w_h", attempt: 0 }))?.has;
        })(),
        renewedOld,
        renewedNew,
        steps: (await runs.steps("exec_l")).map((x) => `${x.path}:${x.output}`),
        eventTypes: (await runs.events("exec_l")).map((e) => e.type),
        output: (await runs.byId("exec_l"))?.output,
        handed,
        reclaimed: reclaimed.map((c) => [c.id, c.resumed]),
      };
    });
    expect(out.postgres).toEqual(out.sqlite);
    expect(out.sqlite).toEqual({
      attempts: [1, 2, true],
      oldFinish: false,
      newFinish: true,
      finishedRow: expect.objectContaining({ id: "exec_l", status: "completed", output: '{"by":"new"}', completedAt: at(8), claimedBy: null, leaseUntil: null, attempts: 2, same: true, has: { outputFiles: false, review: false } }),
      finishedWithBoth: { outputFiles: true, review: true },
      renewedOld: [],
      renewedNew: ["exec_l"],
      steps: ['fresh:{"by":"new"}'],
      eventTypes: ["created", "queued", "started", "resumed", "step_completed", "completed"],
      output: '{"by":"new"}',
      handed: ["exec_hb"],
      reclaimed: [["exec_hb", true]],
    });
  }, 60_000);

  test("journal: starts and finishes of interleaved steps committed together keep the steps' and the events' order; a step finished twice keeps its start's place", async () => {
    const out = await onBoth(async (b) => {
      const runs = b.storage.runs;
      await runs.insert(newRun("exec_j", 1), events);
      const [c] = await runs.claimMany(1, "w_j", at(2), T0 + 2_000, 60_000);
      const lease = { worker: "w_j", attempt: c.run.attempts };
      const start = (path: string, s: number, attempt = 1) => runs.stepStarted("exec_j", { path, name: path, type: "t", attempt, startedAt: at(s) }, lease);
      const done = (path: string, s: number, attempt = 1, status: "completed" | "failed" = "completed") =>
        runs.stepFinished("exec_j", { path, name: path, type: "t", status, output: { path, attempt }, attempt, startedAt: at(s - 1), completedAt: at(s) }, lease);
      // Two parallel branches in one turn (one commit): a starts, b starts, b finishes, a finishes.
      start("par.a", 3);
      start("par.b", 3);
      const one = [done("par.b", 4), done("par.a", 5)];
      await Promise.all(one);
      // A step retried within one commit: attempt 1 fails, attempt 2 starts and completes; then a later step.
      start("r", 6);
      const two = [done("r", 7, 1, "failed")];
      start("r", 8, 2);
      two.push(done("r", 9, 2), done("last", 10));
      await Promise.all(two);
      return {
        steps: (await runs.steps("exec_j")).map((x) => `${x.path}:${x.status}:${x.attempt}:${x.startedAt}:${x.completedAt}:${x.output}`),
        events: (await runs.events("exec_j")).map((e) => `${e.type}:${e.message}:${e.timestamp}`),
      };
    });
    expect(out.postgres).toEqual(out.sqlite);
    expect(out.sqlite.steps).toEqual([
      `par.a:completed:1:${at(4)}:${at(5)}:{"path":"par.a","attempt":1}`,
      `par.b:completed:1:${at(3)}:${at(4)}:{"path":"par.b","attempt":1}`,
      `r:completed:2:${at(8)}:${at(9)}:{"path":"r","attempt":2}`,
      `last:completed:1:${at(9)}:${at(10)}:{"path":"last","attempt":1}`,
    ]);
    expect(out.sqlite.events.slice(3)).toEqual([
      `step_started:par.a:${at(3)}`, `step_started:par.b:${at(3)}`, `step_completed:par.b:${at(4)}`, `step_completed:par.a:${at(5)}`,
      `step_started:r:${at(6)}`, `step_failed:r:${at(7)}`, `step_started:r:${at(8)}`, `step_completed:r:${at(9)}`, `step_completed:last:${at(10)}`,
    ]);
  }, 60_000);

  test("liveness: a live process's runs are never released; a dead one's are (PostgreSQL: its session's lock)", async () => {
    const out = await onBoth(async (b) => {
      const runs = b.storage.runs;
      const other = b.peer().runs;
      await runs.insert(newRun("exec_alive", 1), events);
      await other.attach("w_alive");
      await other.claimMany(1, "w_alive", at(2), T0 + 2_000, 60_000);
      await runs.attach("w_me");
      const whileAlive = await runs.releaseOrphans("w_me");
      await other.detach("w_alive"); // its process ended: the session and its lock are gone
      const afterDeath = await runs.releaseOrphans("w_me");
      await runs.detach("w_me");
      return { whileAlive, afterDeath, holder: (await runs.byId("exec_alive"))?.claimedBy };
    });
    // SQLite is one process per database: every other holder counts as gone.
    expect(out.sqlite).toEqual({ whileAlive: 1, afterDeath: 0, holder: null });
    expect(out.postgres).toEqual({ whileAlive: 0, afterDeath: 1, holder: null });
  }, 60_000);

  test("releaseHeld: 10 callers racing never queue past the experiment's bound", async () => {
    const out = await onBoth(async (b) => {
      const runs = b.storage.runs;
      for (let i = 0; i < 30; i++) await runs.insert(newRun(`exec_h${String(i).padStart(2, "0")}`, i, { status: "created", experimentId: "exp_b" }), events.slice(0, 1));
      await runs.insert(newRun("exec_busy", 50, { status: "running", experimentId: "exp_b" }), []);
      const queued = await Promise.all(Array.from({ length: 10 }, () => runs.releaseHeld("exp_b", 5, at(60))));
      const pending = (await runs.list({ tenantId: "t1", sort: "createdAt", order: "asc", limit: 100, statuses: ["pending"] })).map((r) => r.id);
      return { total: queued.reduce((a, n) => a + n, 0), pending, more: await runs.releaseHeld("exp_b", 5, at(61)) };
    });
    expect(out.postgres).toEqual(out.sqlite);
    expect(out.sqlite.total).toBe(4); // 5 in flight at most: the running one and the 4 oldest held
    expect(out.sqlite.pending).toEqual(["exec_h00", "exec_h01", "exec_h02", "exec_h03"]);
    expect(out.sqlite.more).toBe(0);
  }, 60_000);

  test("inserts started together: each caller gets its own row and events in order; a bad one fails only its caller", async () => {
    const out = await onBoth(async (b) => {
      const runs = b.storage.runs;
      await runs.insert(newRun("exec_b00", 0), events);
      // 40 plain inserts in one turn (PostgreSQL sends them as one statement): some claimable, some
      // already claimed (direct start), one with no events, one repeating a taken id, one a taken dedupe key.
      const tries = await Promise.allSettled(
        Array.from({ length: 40 }, (_, i) =>
          runs.insert(
            newRun(i === 7 ? "exec_b00" : `exec_b${String(i + 1).padStart(2, "0")}`, i + 1, {
              ...(i % 5 === 0 ? { status: "running", claimedBy: "wrk_direct", leaseUntil: T0 + 3_600_000, attempts: 1 } : {}),
              input: JSON.stringify({ i }),
              dedupeKey: i === 9 || i === 10 ? "same-key" : null,
            }),
            i === 3 ? [] : [...events, { type: "note", status: "pending", message: `run ${i}`, metadata: { i } }],
          ),
        ),
      );
      const ok = tries.flatMap((t) => (t.status === "fulfilled" ? [t.value] : []));
      return {
        outcomes: tries.map((t) => (t.status === "fulfilled" ? t.value.id : "rejected")),
        inputs: ok.map((r) => [r.id, r.input, r.status]),
        events: await Promise.all(ok.map(async (r) => (await runs.events(r.id)).map((e) => [e.type, e.message]))),
        stored: (await runs.list({ tenantId: "t1", sort: "createdAt", order: "asc", limit: 100 })).map((r) => r.id),
        claimable: (await runs.claimMany(100, "wrk_b", at(100), T0 + 100_000, 60_000)).map((c) => c.id).sort(),
      };
    });
    expect(out.postgres).toEqual(out.sqlite);
    const { outcomes, inputs, events: evs, stored, claimable } = out.sqlite;
    // The repeated id and the second holder of the dedupe key fail; every other caller has its own row.
    expect(outcomes.filter((o) => o === "rejected")).toHaveLength(2);
    expect(outcomes[7]).toBe("rejected");
    // Of the two with one dedupe key the first given wins, as when they are inserted one by one.
    expect(outcomes[9]).toBe("exec_b10");
    expect(outcomes[10]).toBe("rejected");
    for (const [id, input] of inputs) expect(JSON.parse(input as string).i).toBe(Number((id as string).slice(6)) - 1);
    expect(evs[3]).toEqual([]);
    expect(evs[0]).toEqual([["created", "run of one"], ["queued", null], ["note", "run 0"]]);
    expect(stored).toHaveLength(39);
    // Only pending ones are claimable: the 7 stored running and leased (i = 0, 5, 15, …, 35) are not.
    expect(claimable).toHaveLength(39 - 7);
    expect(claimable).not.toContain("exec_b01");
  }, 60_000);

  test("a start's source check: runs insert only while their automation is as read; a stale one is refused (StaleSource) and leaves nothing, alone or sharing a statement", async () => {
    const out = await onBoth(async (b) => {
      await b.exec("INSERT INTO tenants (id, slug, name, created_at) VALUES ('t1', 't1', 'T1', ?)", [at(0)]);
      await b.exec("INSERT INTO automations (id, tenant_id, type, slug, name, status, created_at, updated_at) VALUES ('aut_1', 't1', 'workflow', 'one', 'One', 'active', ?, ?)", [at(0), at(5)]);
      await b.exec("INSERT INTO automation_versions (id, tenant_id, automation_id, version, yaml, triggers, input_schema, output_schema, created_at) VALUES ('ver_1', 't1', 'aut_1', '1.0.0', 'name: one', '{}', '{}', '{}', ?)", [at(0)]);
      await b.exec("UPDATE automations SET current_version_id = 'ver_1'", []);
      const holds = { automationId: "aut_1", versionId: "ver_1", updatedAt: at(5) };
      const stale = [{ ...holds, versionId: "ver_0" }, { ...holds, updatedAt: at(4) }, { ...holds, automationId: "aut_gone" }];
      const runs = b.storage.runs;
      // One turn: 3 that hold, 3 stale, 2 unchecked (PostgreSQL: one statement).
      const checks = [holds, stale[0], undefined, holds, stale[1], stale[2], undefined, holds];
      const tries = await Promise.allSettled(checks.map((source, i) => runs.insert(newRun(`exec_s${i}`, 10 + i), events, [], { source })));
      // Alone, and in its own transaction (with a file).
      const file = { path: "in.txt", role: "input", name: "in.txt", contentType: "text/plain", size: 1, sha256: "a".repeat(64), stepName: null, fileId: null, createdAt: at(30) };
      const alone = await Promise.allSettled([
        runs.insert(newRun("exec_s8", 20), events, [], { source: stale[0] }),
        runs.insert(newRun("exec_s9", 21), events, [file], { source: stale[1] }),
        runs.insert(newRun("exec_s10", 22), events, [file], { source: holds }),
      ]);
      const outcome = (t: PromiseSettledResult<{ id: string }>) => (t.status === "fulfilled" ? t.value.id : t.reason instanceof StaleSource ? "stale" : String(t.reason));
      return {
        outcomes: [...tries, ...alone].map(outcome),
        stored: (await runs.list({ tenantId: "t1", sort: "createdAt", order: "asc", limit: 100 })).map((r) => r.id),
        leftovers: (await Promise.all(["exec_s1", "exec_s4", "exec_s5", "exec_s8", "exec_s9"].map(async (id) => [...(await runs.events(id)), ...(await runs.files(id))]))).flat().length,
      };
    });
    expect(out.postgres).toEqual(out.sqlite);
    expect(out.sqlite).toEqual({
      outcomes: ["exec_s0", "stale", "exec_s2", "exec_s3", "stale", "stale", "exec_s6", "exec_s7", "stale", "stale", "exec_s10"],
      stored: ["exec_s0", "exec_s2", "exec_s3", "exec_s6", "exec_s7", "exec_s10"],
      leftovers: 0,
    });
  }, 60_000);

  test("a cron tick starts one run: racing inserts claiming it commit one, the others leave nothing", async () => {
    const out = await onBoth(async (b) => {
      await b.exec("INSERT INTO tenants (id, slug, name, created_at) VALUES ('t1', 't1', 'T1', ?)", [at(0)]);
      await b.exec("INSERT INTO automations (id, tenant_id, type, slug, name, status, created_at, updated_at) VALUES ('aut_1', 't1', 'workflow', 'one', 'One', 'active', ?, ?)", [at(0), at(0)]);
      const key = { automationId: "aut_1", scheduleKey: "0", scheduledAt: at(60) };
      const tries = await Promise.allSettled(Array.from({ length: 6 }, (_, i) => b.storage.runs.insert(newRun(`exec_t${i}`, 60 + i), events, [], { tick: { key, tenantId: "t1", at: at(61) } })));
      const exists = await Promise.all(Array.from({ length: 6 }, (_, i) => b.storage.runs.byId(`exec_t${i}`)));
      return {
        ok: tries.filter((t) => t.status === "fulfilled").length,
        taken: tries.filter((t) => t.status === "rejected" && t.reason instanceof TickTaken).length,
        rows: exists.filter(Boolean).length,
        last: (await b.storage.schedules.lastTick("aut_1", "0"))?.outcome,
      };
    });
    expect(out.postgres).toEqual(out.sqlite);
    expect(out.sqlite).toEqual({ ok: 1, taken: 5, rows: 1, last: "started" });
  }, 60_000);

  test("human review: racing parks of one step record one task; of racing decisions one wins, the others conflict, the run is requeued once", async () => {
    const out = await onBoth(async (b) => {
      const runs = b.storage.runs;
      const hr = b.storage.humanReview;
      await runs.insert(newRun("exec_r", 1, { status: "running", claimedBy: "w", leaseUntil: T0 + 60_000 }), events);
      runs.stepStarted("exec_r", { path: "review", name: "review", type: "control.human_review", attempt: 1, startedAt: at(2) });
      const task = (id: string) => ({
        id, tenantId: "t1", runId: "exec_r", stepPath: "review", automationId: "aut_1", automationName: "One", sourceLabel: "review",
        status: "pending" as const, requiredCount: 1, data: '{"b":1,"a":2}', files: '[{"z":1,"a":2}]', instructions: null, meta: '{"k":"v"}', createdAt: at(3),
      });
      const decision = (id: string) => [{ id, position: 0, path: "total", originalValue: "12", currentValue: "12", required: 1, reason: "check it" }];
      const parks = await Promise.all(Array.from({ length: 6 }, (_, i) => hr.park(task(`hrt_${i}`), decision(`hrd_${i}`))));
      const taskId = parks[0]!;
      const before = await hr.get("t1", taskId);
      const confirm = (t: TaskRow, d: DecisionRow[]): TaskWrite => ({ field: { id: "hrd_x", path: d[0].path, position: 0, originalValue: d[0].originalValue!, currentValue: "13", confirmed: true, by: "ann" } });
      const approve = (): TaskWrite => ({ decide: { status: "approved", by: "ann", byId: "usr_ann", output: { total: 13 } } });
      const field = await hr.act("t1", taskId, { expectedVersion: 1, at: at(4), request: "r-field" }, confirm, (t) => t.version);
      // Six reviewers approve version 2 at once: one wins, the others see the decided task.
      const racing = await Promise.all(Array.from({ length: 6 }, (_, i) => hr.act("t1", taskId, { expectedVersion: 2, at: at(5), key: `k${i}`, request: "r-approve" }, approve, (t) => ({ status: t.status, version: t.version }))));
      const replay = await hr.act("t1", taskId, { expectedVersion: 2, at: at(6), request: "r-approve", key: racing.findIndex((r) => r.kind === "done") >= 0 ? `k${racing.findIndex((r) => r.kind === "done")}` : "none" }, approve, () => null);
      return {
        sameTask: parks.every((p) => p === taskId),
        before: before && { ...before, id: "hrt_?" },
        field,
        kinds: racing.map((r) => r.kind).sort(),
        won: racing.find((r) => r.kind === "done"),
        replay,
        task: { ...(await hr.get("t1", taskId))!, id: "hrt_?" },
        decisions: (await hr.decisions(taskId)).map(({ taskId: _, id: __, ...d }) => d),
        list: (await hr.list({ tenantId: "t1", limit: 10 })).length,
        run: (await runs.byId("exec_r"))?.status,
        step: (await runs.steps("exec_r")).map(({ seq, ...s }) => s),
        resumed: (await runs.events("exec_r")).filter((e) => e.type === "resumed").length,
        waiting: (await runs.events("exec_r")).filter((e) => e.type === "waiting").length,
      };
    });
    expect(out.postgres).toEqual(out.sqlite);
    expect(out.sqlite).toMatchObject({ sameTask: true, field: { kind: "done", body: 2 }, won: { kind: "done", body: { status: "approved", version: 3 } }, list: 0, run: "pending", resumed: 1 });
    expect(out.sqlite.kinds).toEqual(["done", "not_pending", "not_pending", "not_pending", "not_pending", "not_pending"]);
    expect(out.sqlite.replay).toEqual({ kind: "replay", status: 200, body: { status: "approved", version: 3 } });
    expect(out.sqlite.before).toMatchObject({ data: '{"b":1,"a":2}', files: '[{"z":1,"a":2}]', meta: '{"k":"v"}', version: 1, status: "pending" });
    expect(out.sqlite.step).toMatchObject([{ status: "completed", output: '{"total":13}' }]);
  }, 60_000);
});
