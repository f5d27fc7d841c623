// Schedules on the compiled binary: three per-second schedules (catchUp all, latest, none) run for
// about 10 s with the server SIGKILLed in the middle and restarted over the same data dir after ~3 s.
// Through the TS client: no tick ever starts two runs, ticks while up each start one, and the ticks
// missed while down are handled as each schedule's policy says. Disabling the automation stops them.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { AutomationClient } from "../../src/automation/client";
import { DEMO_KEY, demoServer, type DemoServer } from "./automation-demo";

const workflow = `
name: every-second
inputs: [{name: policy, type: string, required: true}]
triggerMethods:
  - type: api
  - {type: cron, schedule: "* * * * * *", input: {policy: all}, overlap: allow, catchUp: all, maxCatchUp: 100}
  - {type: cron, schedule: "* * * * * *", input: {policy: latest}, overlap: allow}
  - {type: cron, schedule: "* * * * * *", input: {policy: none}, overlap: allow, catchUp: none}
steps:
  - {name: echo, type: transform.set, with: {fields: {policy: "{{ input.policy }}"}}}
`;

let demo: DemoServer;
const client = () => new AutomationClient({}, { AUTOMATION_BASE_URL: demo.base, AUTOMATION_API_KEY: DEMO_KEY });

beforeAll(async () => {
  demo = await demoServer({ prefix: "automation-schedules-", workers: 2 });
}, 120_000);

afterAll(async () => {
  await demo.close();
});

/** Whole seconds (ms since epoch / 1000) of the ticks each policy's runs were started for. */
async function ticksByPolicy(c: AutomationClient): Promise<Record<string, number[]>> {
  const out: Record<string, number[]> = { all: [], latest: [], none: [] };
  for await (const r of c.runs.iterate({ trigger: "cron", limit: 100 })) {
    const run = await c.runs.get(r.id, { expand: ["input"] });
    const input = run.input as { args: { policy: string }; metadata: { schedule: { scheduledAt: string } } };
    expect(run.trigger).toEqual({ type: "cron", by: null });
    out[input.args.policy].push(Date.parse(input.metadata.schedule.scheduledAt) / 1000);
  }
  for (const k of Object.keys(out)) out[k].sort((a, b) => a - b);
  return out;
}

/** Runs of missing seconds between consecutive ticks: [first missing, count]. */
const gaps = (ticks: number[]) =>
  ticks.slice(1).flatMap((t, i) => (t - ticks[i] > 1 ? [[ticks[i] + 1, t - ticks[i] - 1] as const] : []));

test("per-second schedules across a SIGKILL: one run per tick, missed ticks per policy", async () => {
  let server = await demo.boot();
  let c = client();
  const a = await c.automations.create(workflow);
  await Bun.sleep(5_000);
  await server.kill("SIGKILL");
  const killedAt = Date.now() / 1000;
  await Bun.sleep(3_000);
  const bootAt = Date.now() / 1000;
  server = await demo.boot();
  c = client();
  await Bun.sleep(5_000);

  const view = await c.automations.schedules(a.id);
  expect(view.enabled).toBe(true);
  expect(view.schedules.map((s) => [s.expression, s.catchUp])).toEqual([
    ["* * * * * *", "all"],
    ["* * * * * *", "latest"],
    ["* * * * * *", "none"],
  ]);
  const next = view.schedules[0].nextFireTimes.map((t) => Date.parse(t));
  expect(next).toHaveLength(5);
  expect(next.slice(1).map((t, i) => t - next[i])).toEqual([1000, 1000, 1000, 1000]);
  expect(view.schedules[0].lastTick?.outcome).toBe("started");

  // Disabled: nothing more fires. Then every tick so far is final.
  expect((await c.automations.setStatus(a.id, "disabled")).status).toBe("disabled");
  await Bun.sleep(300); // a pass that read the schedules just before may still start its tick
  const ticks = await ticksByPolicy(c);
  await Bun.sleep(1_500);
  expect(await ticksByPolicy(c)).toEqual(ticks);

  for (const [policy, list] of Object.entries(ticks)) {
    // Never twice, and it ran about 10 s (5 s before the kill, 5 s after the restart).
    expect({ policy, unique: new Set(list).size }).toEqual({ policy, unique: list.length });
    expect(list[list.length - 1] - list[0]).toBeGreaterThanOrEqual(9);
  }
  // all: every tick from the first to the last, the ~3 s of downtime included (caught up after the restart).
  expect(gaps(ticks.all)).toEqual([]);
  // latest: of the ticks missed while down, only the most recent ran: one gap, just before the resumption.
  const latest = gaps(ticks.latest);
  expect(latest).toHaveLength(1);
  expect(latest[0][1]).toBeGreaterThanOrEqual(1);
  // none: no missed tick ran; every second while down is missing, in one gap.
  const none = gaps(ticks.none);
  expect(none).toHaveLength(1);
  const [from, count] = none[0];
  expect(from).toBeLessThanOrEqual(Math.ceil(killedAt));
  expect(from + count - 1).toBeGreaterThanOrEqual(Math.floor(bootAt));
  expect(count).toBeGreaterThan(latest[0][1]);

  // Every run started (including those the kill interrupted) finishes.
  for (let i = 0; i < 100; i++) {
    const open = [];
    for await (const r of c.runs.iterate({ trigger: "cron", limit: 100 })) if (!["completed", "failed"].includes(r.execution?.status ?? "")) open.push(r.id);
    if (open.length === 0) break;
    await Bun.sleep(100);
  }
  for await (const r of c.runs.iterate({ trigger: "cron", limit: 100 })) expect(r.execution?.status).toBe("completed");
  await server.kill("SIGTERM");
}, 120_000);
