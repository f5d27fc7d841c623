// Promises decided in the database, raced between two separately opened PostgreSQL storages (each with
// its own pool, as two server processes hold): an experiment's batchConcurrency is counted in the
// database (releaseHeld's advisory lock), and an e-mail delivery is claimed once (its primary key),
// whichever instance's worker runs the step. Each fails if the decision moved into process memory.
import { afterAll, describe, expect, test } from "bun:test";
import { SQL } from "bun";
import { migrateAutomationPg } from "../../../src/automation/db/pg-migrate";
import { pgStorage } from "../../../src/automation/db/pg/index";
import type { NewRun } from "../../../src/automation/db/runs-model";
import type { AutomationStorage } from "../../../src/automation/db/storage";
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
