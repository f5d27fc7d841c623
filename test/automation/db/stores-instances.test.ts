// Promises decided in the database, raced between two separately opened PostgreSQL storages (each with
// its own pool, as two server processes hold): an experiment's batchConcurrency is counted in the
// database (releaseHeld's advisory lock), and an e-mail delivery is claimed once (its primary key),
// whichever instance's worker runs the step. Each fails if the decision moved into process memory.
import { afterAll, describe, expect, test } from "bun:test";
import { SQL } from "bun";
import { migrateAutomationPg } from "../../../src/automation/db/pg-migrate";
import { pgStorage } from "../../../src/automation/db/pg/index";
import type { AutomationStorage } from "../../../src/automation/db/storage";
import { type NewRun, parseAssignment, StaleSource } from "../../../src/automation/runs/store";
import { sqliteBackend } from "./backends";
import { freshPostgresDb } from "../../support/postgres";

const pools: SQL[] = [];
afterAll(async () => {
  for (const p of pools) await p.close();
});

async function twoInstances(): Promise<[AutomationStorage, AutomationStorage, SQL]> {
  const url = await freshPostgresDb();
  await migrateAutomationPg(url);
  const a = new SQL({ url, max: 10 });
  const b = new SQL({ url, max: 10 });
  pools.push(a, b);
  return [pgStorage(a), pgStorage(b), a];
}

const T0 = Date.parse("2026-11-25T10:00:00.000Z");
const at = (s: number) => new Date(T0 + s * 1000).toISOString();

const run = (id: string, created: number, o: Partial<NewRun>): NewRun => ({
  id, tenantId: "t1", type: "workflow", automationId: "aut_1", automationName: "One", automationSlug: "one", versionId: "ver_1",
  versionLabel: "v1", sourceRef: null, requestedRef: null, definition: "name: one\nsteps: []\n", status: "pending", triggerType: "api",
  triggeredBy: "key_1", triggeredByName: "ci key", input: "{}", metadata: "{}", sampleRank: 0.5, createdAt: at(created), ...o,
});

describe("two instances on one PostgreSQL", () => {
  test("batchConcurrency: 12 releases racing from two instances, round after round, never put more than the bound in flight", async () => {
    const [a, b, sql] = await twoInstances();
    for (let i = 0; i < 300; i++) await a.runs.insert(run(`exec_h${String(i).padStart(3, "0")}`, i, { status: "created", experimentId: "exp_b" }), []);
    await a.runs.insert(run("exec_busy", 500, { status: "running", experimentId: "exp_b" }), []);
    const inFlight = async () => Number((await sql`SELECT COUNT(*) AS n FROM runs WHERE experiment_id = 'exp_b' AND status IN ('pending', 'running')`)[0].n);
    const seen: number[] = [];
    for (let round = 0; round < 25; round++) {
      // Each caller is one slot freed on one instance: it releases as a finished run's worker would.
      await Promise.all(Array.from({ length: 12 }, (_, i) => (i % 2 ? a : b).runs.releaseHeld("exp_b", 5, at(60 + round))));
      seen.push(await inFlight());
      // The queued runs finish: their slots are free for the next round.
      await sql`UPDATE runs SET status = 'completed' WHERE experiment_id = 'exp_b' AND status = 'pending'`;
    }
    expect(seen).toEqual(Array.from({ length: 25 }, () => 5));
  }, 60_000);

  test("direct dispatch: a lone pending insert takes a worker's standing offer (claimed, leased, started, announced with its row); each offer goes to one run or is withdrawn, never both; none is taken while runs wait", async () => {
    const [a, b, sql] = await twoInstances();
    const heard: string[] = [];
    await b.notifications.subscribe("runs.assigned", (p) => heard.push(p));
    const events = [{ type: "created", status: "created" }, { type: "queued", status: "pending" }];
    const status = async (id: string) => (await a.runs.byId(id))?.status;
    const drain = () => sql`UPDATE runs SET status = 'completed' WHERE status IN ('pending', 'running')`;
    // No offer: queued.
    expect((await a.runs.insert(run("exec_d0", 0, {}), events)).status).toBe("pending");
    await drain();
    // An offer stands: the next lone insert (any instance) is claimed for the offering worker at once.
    expect(await b.runs.offer("wrk_b", "ofr_1", 45_000)).toBe(true);
    const before = Date.now();
    const r1 = await a.runs.insert(run("exec_d1", 1, {}), events);
    expect(r1).toMatchObject({ status: "running", claimedBy: "wrk_b", attempts: 1, startedAt: r1.createdAt });
    expect(r1.leaseUntil).toBeGreaterThanOrEqual(before + 45_000);
    expect(r1.leaseUntil).toBeLessThanOrEqual(Date.now() + 45_000);
    expect((await a.runs.events("exec_d1")).map((e) => `${e.type}:${e.status}`)).toEqual(["created:created", "queued:pending", "started:running"]);
    for (let i = 0; i < 100 && heard.length === 0; i++) await Bun.sleep(10);
    expect(heard.map(parseAssignment)).toEqual([{ worker: "wrk_b", token: "ofr_1", runId: "exec_d1", run: await b.runs.byId("exec_d1") }]);
    // Taken once: the next insert is queued, and the worker learns its offer went to a run.
    expect((await a.runs.insert(run("exec_d2", 2, {}), events)).status).toBe("pending");
    expect(await b.runs.retract("wrk_b", "ofr_1")).toBe(false);
    // While a run waits in the queue a new offer is not taken (a new run never overtakes it) and can be withdrawn.
    await b.runs.offer("wrk_b", "ofr_2", 45_000);
    expect((await b.runs.insert(run("exec_d3", 3, {}), events)).status).toBe("pending");
    expect(await b.runs.retract("wrk_b", "ofr_2")).toBe(true);
    await drain();
    expect((await a.runs.insert(run("exec_d4", 4, {}), events)).status).toBe("pending");
    await drain();
    // A stale start takes nothing: the offer still stands after the refusal.
    await b.runs.offer("wrk_b", "ofr_3", 45_000);
    const stale = await a.runs.insert(run("exec_d5", 5, {}), events, [], { source: { automationId: "aut_gone", versionId: "v", updatedAt: at(0) } }).catch((e) => e);
    expect(stale).toBeInstanceOf(StaleSource);
    expect(await b.runs.retract("wrk_b", "ofr_3")).toBe(true);
    // A row too big for the notification: announced without it (the worker reads it by id).
    await b.runs.offer("wrk_b", "ofr_4", 45_000);
    const big = await a.runs.insert(run("exec_d6", 6, { definition: `name: big\n# ${"x".repeat(9000)}\nsteps: []\n` }), events);
    expect(big.claimedBy).toBe("wrk_b");
    for (let i = 0; i < 100 && heard.length < 2; i++) await Bun.sleep(10);
    expect(parseAssignment(heard[1])).toEqual({ worker: "wrk_b", token: "ofr_4", runId: "exec_d6" });
    await drain();
    // Races: per round, one offer, a lone insert on each instance and a withdrawal at once: the offer
    // goes to exactly one of them (an insert, or the withdrawal); the other insert is queued.
    for (let round = 0; round < 20; round++) {
      const token = `ofr_r${round}`;
      await b.runs.offer("wrk_b", token, 45_000);
      const [x, y, withdrawn] = await Promise.all([
        a.runs.insert(run(`exec_ra${round}`, 10 + round, {}), events),
        b.runs.insert(run(`exec_rb${round}`, 10 + round, {}), events),
        b.runs.retract("wrk_b", token),
      ]);
      const took = [x, y].filter((r) => r.status === "running");
      expect({ round, took: took.length + (withdrawn ? 1 : 0) }).toEqual({ round, took: 1 });
      await drain();
    }
    // The offer of a worker whose process is gone (no liveness lock) is dropped by a live worker's poll.
    await b.runs.offer("wrk_gone", "ofr_g", 45_000);
    await a.runs.attach("wrk_a");
    await a.runs.releaseOrphans("wrk_a");
    expect((await a.runs.insert(run("exec_d7", 40, {}), events)).status).toBe("pending");
    expect(await sql`SELECT worker FROM run_offers WHERE token IS NOT NULL`).toEqual([]);
    await a.runs.detach("wrk_a");
  }, 60_000);

  test("direct dispatch on SQLite: no offers (one process; its pool takes the runs started in it)", async () => {
    const s = await sqliteBackend();
    expect(await s.storage.runs.offer("wrk_s", "ofr_s", 30_000)).toBe(false);
    expect(await s.storage.runs.retract("wrk_s", "ofr_s")).toBe(true);
    await s.close();
  });

  test("e-mail: 12 claims of one delivery racing from two instances: exactly one sends", async () => {
    const [a, b] = await twoInstances();
    const claim = (i: number) => ({ runId: "run_x", stepPath: "send", tenantId: "t1", serverId: `ems_${i}`, state: "sending", result: null, createdAt: at(0) });
    const wins = await Promise.all(Array.from({ length: 12 }, (_, i) => (i % 2 ? a : b).email.claimDelivery(claim(i))));
    expect(wins.filter(Boolean)).toHaveLength(1);
    expect((await a.email.delivery("run_x", "send"))?.serverId).toBe(`ems_${wins.indexOf(true)}`);
    // A second attempt of the step on the other instance finds the claim, sent or not, and does not send.
    await b.email.markSent("run_x", "send", JSON.stringify({ messageId: "m1" }));
    expect(await a.email.claimDelivery(claim(99))).toBe(false);
    expect((await a.email.delivery("run_x", "send"))?.state).toBe("sent");
  }, 60_000);
});
