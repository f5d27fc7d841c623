// Schedules through HTTP with a manual clock: version create refuses bad schedules (naming the line),
// each tick starts one run (also when a second scheduler — another instance, or the next process —
// passes over it), the overlap and catch-up policies, DST days, activation and disabling.
import { describe, expect, test } from "bun:test";
import { Scheduler } from "../../../src/automation/schedules/scheduler";
import { runsOf } from "../../../src/automation/runs/service";
import { harness, json, type Harness, type Json } from "../app/harness";

const yaml = (name: string, triggers: string[], opts: { version?: string } = {}) =>
  [
    `name: ${name}`,
    ...(opts.version ? [`version: ${opts.version}`] : []),
    "inputs:",
    "  - {name: who, type: string, required: true}",
    "triggerMethods:",
    "  - type: api",
    ...triggers,
    "steps:",
    "  - name: hello",
    "    type: transform.set",
    '    with: {fields: {greeting: "hi {{ input.who }}"}}',
    "",
  ].join("\n");

const cron = (schedule: string, extra = "") => `  - {type: cron, schedule: "${schedule}", input: {who: cron}${extra ? `, ${extra}` : ""}}`;

async function setup(start: string, triggers: string[], name = "tick") {
  const h = await harness();
  h.clock.set(start);
  const t = await h.tenant("acme");
  const r = await h.req("POST", "/v1/automations", { key: t.key, body: { yaml: yaml(name, triggers) } });
  expect(r.status).toBe(201);
  const a = await json(r);
  return { h, t, a, scheduler: new Scheduler(h.ctx) };
}

/** Cron runs of the tenant, oldest first, with the tick each was started for. */
async function cronRuns(h: Harness, key: string): Promise<Json[]> {
  const list = await json(await h.req("GET", "/v1/runs?trigger=cron&limit=100", { key }));
  const out: Json[] = [];
  for (const r of list.runs) out.push(await json(await h.req("GET", `/v1/runs/${r.id}?expand=input`, { key })));
  return out.sort((x, y) => String(x.input.metadata.schedule.scheduledAt).localeCompare(y.input.metadata.schedule.scheduledAt));
}
const ticksOf = (runs: Json[]) => runs.map((r) => r.input.metadata.schedule.scheduledAt);

async function schedules(h: Harness, key: string, id: string): Promise<Json> {
  const r = await h.req("GET", `/v1/automations/${id}/schedules`, { key });
  expect(r.status).toBe(200);
  return json(r);
}

/** Waits until every run of the tenant has finished (workers running). */
async function settle(h: Harness, key: string) {
  for (let i = 0; i < 500; i++) {
    const { runs } = await json(await h.req("GET", "/v1/runs?limit=100", { key }));
    if (runs.every((r: Json) => ["completed", "failed"].includes(r.execution.status))) return;
    await Bun.sleep(10);
  }
  throw new Error("runs did not finish");
}

/** Advances the clock in steps, one scheduler pass after each (a running server's loop). */
async function runFor(h: Harness, s: Scheduler, ms: number, step: number, after?: () => Promise<void>) {
  for (let done = 0; done < ms; done += step) {
    h.clock.advance(step);
    await s.pass();
    await after?.();
  }
}

describe("schedule validation at version create", () => {
  test("bad expressions, unknown time zones and bad policies are refused with the line", async () => {
    const h = await harness();
    const t = await h.tenant("acme");
    const cases: [string[], string, string, number][] = [
      [['  - {type: cron, schedule: "61 * * * *", input: {who: x}}'], "yaml.triggerMethods.1.schedule", "invalid_cron", 6],
      [['  - {type: cron, schedule: "* * * *", input: {who: x}}'], "yaml.triggerMethods.1.schedule", "invalid_cron", 6],
      [['  - {type: cron, schedule: "0 0 0 * * * *", input: {who: x}}'], "yaml.triggerMethods.1.schedule", "invalid_cron", 6],
      [["  - type: cron", '    schedule: "0 9 * * 1-5"', "    timezone: Mars/Olympus", "    input: {who: x}"], "yaml.triggerMethods.1.timezone", "invalid_timezone", 8],
      [['  - {type: cron, schedule: "* * * * *", overlap: sometimes, input: {who: x}}'], "yaml.triggerMethods.1.overlap", "invalid_value", 6],
      [['  - {type: cron, schedule: "* * * * *", catchUp: all, maxCatchUp: 0, input: {who: x}}'], "yaml.triggerMethods.1.maxCatchUp", "invalid_value", 6],
      [['  - {type: cron, schedule: "* * * * *", input: {who: 7}}'], "yaml.triggerMethods.1.input.who", "invalid_value", 6],
      [['  - {type: cron, schedule: "* * * * *"}'], "yaml.triggerMethods.1.input", "required", 6],
      [["  - {type: cron, input: {who: x}}"], "yaml.triggerMethods.1.schedule", "required", 6],
    ];
    for (const [triggers, field, code, line] of cases) {
      const r = await h.req("POST", "/v1/automations", { key: t.key, body: { yaml: yaml("bad", triggers) } });
      expect(r.status).toBe(400);
      const issue = (await json(r)).issues.find((i: Json) => i.field === field);
      expect({ field: issue?.field, code: issue?.code }).toEqual({ field, code });
      expect(issue.message).toContain(`line ${line}`);
    }
    // The same on a new version of an existing workflow; a valid 6-field (seconds) expression passes.
    const ok = await h.req("POST", "/v1/automations", { key: t.key, body: { yaml: yaml("good", [cron("*/15 * * * * *")]) } });
    expect(ok.status).toBe(201);
    const v = await h.req("POST", "/v1/automations/workflows.good/versions", {
      key: t.key,
      body: { yaml: yaml("good", ['  - {type: cron, schedule: "0 25 * * *", input: {who: x}}']), version: "2.0.0" },
    });
    expect(v.status).toBe(400);
    expect((await json(v)).issues[0]).toMatchObject({ field: "yaml.triggerMethods.1.schedule", code: "invalid_cron" });
  });
});

describe("ticks", () => {
  test("each tick starts exactly one run, trigger {type: cron, by: null}, with the schedule's input", async () => {
    const { h, t, a, scheduler } = await setup("2026-11-22T09:00:30Z", [cron("*/5 * * * *")]);
    runsOf(h.ctx).startWorkers();
    await runFor(h, scheduler, 20 * 60_000, 30_000, () => settle(h, t.key));
    await runsOf(h.ctx).stopWorkers();
    // A second scheduler over the same database (another instance) finds every tick already decided,
    // and two passing at once over a new tick start one run: the claim and the run commit together.
    await new Scheduler(h.ctx).pass();
    h.clock.advance(5 * 60_000);
    const other = new Scheduler(h.ctx);
    await Promise.all([scheduler.pass(), other.pass(), scheduler.pass(), other.pass()]);
    const runs = await cronRuns(h, t.key);
    expect(ticksOf(runs)).toEqual(["05", "10", "15", "20", "25"].map((m) => `2026-11-22T09:${m}:00.000Z`));
    expect(runs[0].trigger).toEqual({ type: "cron", by: null });
    expect(runs[0].input.args).toEqual({ who: "cron" });
    expect(runs[0].execution.status).toBe("completed");
    expect(runs[0].output).toEqual({ hello: { greeting: "hi cron" } });
    const s = await schedules(h, t.key, a.id);
    expect(s.enabled).toBe(true);
    expect(s.schedules).toHaveLength(1);
    expect(s.schedules[0]).toMatchObject({ index: 1, expression: "*/5 * * * *", timezone: "UTC", overlap: "skip", catchUp: "latest", maxCatchUp: 10 });
    expect(s.schedules[0].nextFireTimes).toEqual(["09:30", "09:35", "09:40", "09:45", "09:50"].map((m) => `2026-11-22T${m}:00.000Z`));
    const last = runs[runs.length - 1];
    expect(s.schedules[0].lastTick).toMatchObject({ scheduledAt: "2026-11-22T09:25:00.000Z", outcome: "started", runId: last.id });
  });

  test("several schedules per workflow, seconds field, time zones", async () => {
    const { h, t } = await setup("2026-11-22T07:59:50Z", [cron("*/20 * * * * *", "overlap: allow"), '  - {type: cron, schedule: "0 9 * * 1-5", timezone: Europe/Berlin, input: {who: berlin}}']);
    const s = new Scheduler(h.ctx);
    await runFor(h, s, 40_000, 5_000); // to 08:00:30 UTC = 09:00:30 in Berlin; 2026-11-23 is a Monday, the 22nd a Sunday
    let runs = await cronRuns(h, t.key);
    expect(ticksOf(runs)).toEqual(["2026-11-22T08:00:00.000Z", "2026-11-22T08:00:20.000Z"]);
    h.clock.set("2026-11-23T08:00:01Z");
    await s.pass();
    runs = await cronRuns(h, t.key);
    const berlin = runs.filter((r) => r.input.args.who === "berlin");
    expect(ticksOf(berlin)).toEqual(["2026-11-23T08:00:00.000Z"]);
  });
});

describe("overlap", () => {
  test("skip: a tick while the previous scheduled run is unfinished starts nothing; allow starts it", async () => {
    // No workers: runs stay pending, i.e. unfinished.
    const { h, t, a, scheduler } = await setup("2026-11-22T09:00:30Z", [cron("*/5 * * * *"), cron("*/5 * * * *", "overlap: allow").replace("who: cron", "who: allow")]);
    await runFor(h, scheduler, 15 * 60_000, 60_000);
    const runs = await cronRuns(h, t.key);
    expect(ticksOf(runs.filter((r) => r.input.args.who === "cron"))).toEqual(["2026-11-22T09:05:00.000Z"]);
    expect(ticksOf(runs.filter((r) => r.input.args.who === "allow"))).toHaveLength(3);
    const skip = (await schedules(h, t.key, a.id)).schedules.find((s: Json) => s.overlap === "skip");
    expect(skip.lastTick).toMatchObject({ scheduledAt: "2026-11-22T09:15:00.000Z", outcome: "skipped_overlap", runId: null });
    // Once the run finished, the next tick starts again.
    runsOf(h.ctx).startWorkers();
    try {
      // GET has no wait: poll until every run so far has finished (up to 10 s each).
      for (const r of runs) {
        for (let i = 0; i < 1000 && !(await json(await h.req("GET", `/v1/runs/${r.id}`, { key: t.key }))).finished; i++) await Bun.sleep(10);
      }
      await runFor(h, scheduler, 5 * 60_000, 60_000);
      const after = await cronRuns(h, t.key);
      expect(ticksOf(after.filter((r) => r.input.args.who === "cron"))).toEqual(["2026-11-22T09:05:00.000Z", "2026-11-22T09:20:00.000Z"]);
    } finally {
      await runsOf(h.ctx).stopWorkers();
    }
  });
});

describe("catch-up after downtime", () => {
  // Up from 09:00:30 to 09:06 (tick 09:05 runs), down until 09:31:30 (ticks 09:10 … 09:30 missed), up again.
  async function downtime(policy: string) {
    const { h, t, a, scheduler } = await setup("2026-11-22T09:00:30Z", [cron("*/5 * * * *", `overlap: allow, ${policy}`)]);
    await runFor(h, scheduler, 5 * 60_000 + 30_000, 30_000);
    h.clock.set("2026-11-22T09:31:30Z");
    const restarted = new Scheduler(h.ctx);
    await restarted.pass();
    await restarted.pass();
    const missed = ticksOf(await cronRuns(h, t.key));
    await runFor(h, restarted, 5 * 60_000, 60_000);
    return { h, t, a, missed, all: ticksOf(await cronRuns(h, t.key)) };
  }
  const at = (...mins: string[]) => mins.map((m) => `2026-11-22T09:${m}:00.000Z`);

  test("latest (the default): one run for the most recent missed tick", async () => {
    const { missed, all } = await downtime("catchUp: latest");
    expect(missed).toEqual(at("05", "30"));
    expect(all).toEqual(at("05", "30", "35"));
  });
  test("none: missed ticks start nothing; the schedule goes on", async () => {
    const { h, t, a, missed, all } = await downtime("catchUp: none");
    expect(missed).toEqual(at("05"));
    expect(all).toEqual(at("05", "35"));
    expect((await schedules(h, t.key, a.id)).schedules[0].lastTick.scheduledAt).toBe(at("35")[0]);
  });
  test("all: every missed tick, at most maxCatchUp (the most recent ones), in order", async () => {
    const { missed, all } = await downtime("catchUp: all, maxCatchUp: 3");
    expect(missed).toEqual(at("05", "20", "25", "30"));
    expect(all).toEqual(at("05", "20", "25", "30", "35"));
  });
});

describe("daylight saving (Europe/Berlin)", () => {
  // 02:30 local does not exist on 2026-03-29 (02:00 → 03:00) and happens twice on 2026-10-25 (03:00 → 02:00).
  const daily = '  - {type: cron, schedule: "30 2 * * *", timezone: Europe/Berlin, input: {who: dst}, overlap: allow}';
  test("spring forward: the 02:30 schedule runs once that day, at 03:00 CEST", async () => {
    const { h, t } = await setup("2026-03-27T12:00:00Z", [daily]);
    const s = new Scheduler(h.ctx);
    await runFor(h, s, 4 * 86_400_000, 15 * 60_000);
    expect(ticksOf(await cronRuns(h, t.key))).toEqual([
      "2026-03-28T01:30:00.000Z", // 02:30 CET
      "2026-03-29T01:00:00.000Z", // 03:00 CEST, the first instant after the skipped 02:30
      "2026-03-30T00:30:00.000Z", // 02:30 CEST
      "2026-03-31T00:30:00.000Z",
    ]);
  });
  test("fall back: the 02:30 schedule runs once that day, not at both 02:30s", async () => {
    const { h, t } = await setup("2026-10-23T12:00:00Z", [daily]);
    const s = new Scheduler(h.ctx);
    await runFor(h, s, 4 * 86_400_000, 15 * 60_000);
    expect(ticksOf(await cronRuns(h, t.key))).toEqual([
      "2026-10-24T00:30:00.000Z", // 02:30 CEST
      "2026-10-25T00:30:00.000Z", // the first 02:30 (CEST); the second (01:30Z, CET) starts nothing
      "2026-10-26T01:30:00.000Z", // 02:30 CET
      "2026-10-27T01:30:00.000Z",
    ]);
  });
  test("an hourly schedule has 23 ticks on the spring-forward day and 25 on the fall-back day", async () => {
    const hourly = '  - {type: cron, schedule: "15 * * * *", timezone: Europe/Berlin, input: {who: dst}, overlap: allow}';
    for (const [start, day, n] of [["2026-03-28T22:00:00Z", "2026-03-29", 23], ["2026-10-24T21:50:00Z", "2026-10-25", 25]] as const) {
      const { h, t } = await setup(start, [hourly]);
      const s = new Scheduler(h.ctx);
      await runFor(h, s, 26 * 3_600_000, 10 * 60_000);
      const local = ticksOf(await cronRuns(h, t.key)).filter((iso) => new Date(iso).toLocaleDateString("sv-SE", { timeZone: "Europe/Berlin" }) === day);
      expect(local).toHaveLength(n);
      expect(new Set(local).size).toBe(n);
    }
  });
});

describe("activation and disabling", () => {
  test("activating another version replaces the live schedules; restoring the first brings them back", async () => {
    const { h, t, a, scheduler } = await setup("2026-11-22T09:00:30Z", [cron("*/5 * * * *", "overlap: allow")]);
    await runFor(h, scheduler, 6 * 60_000, 60_000); // 09:05 runs
    const v2 = await h.req("POST", `/v1/automations/${a.id}/versions`, {
      key: t.key,
      body: { yaml: yaml("tick", ['  - {type: cron, schedule: "*/7 * * * *", input: {who: v2}, overlap: allow}']), version: "2.0.0" },
    });
    expect(v2.status).toBe(201);
    const s = await schedules(h, t.key, a.id);
    expect(s.schedules.map((x: Json) => x.expression)).toEqual(["*/7 * * * *"]);
    expect(s.schedules[0].lastTick).toBeNull();
    await runFor(h, scheduler, 10 * 60_000, 60_000); // to 09:16:30: v2 ticks 09:07, 09:14; v1's 09:10 and 09:15 do not fire
    let runs = await cronRuns(h, t.key);
    expect(runs.map((r) => [r.input.args.who, r.input.metadata.schedule.scheduledAt.slice(11, 16)])).toEqual([
      ["cron", "09:05"],
      ["v2", "09:07"],
      ["v2", "09:14"],
    ]);
    expect(runs[1].source.versionId).toBe(s.versionId);
    // Version create without activation leaves the live schedules alone.
    const quiet = await h.req("POST", `/v1/automations/${a.id}/versions`, {
      key: t.key,
      body: { yaml: yaml("tick", ['  - {type: cron, schedule: "* * * * *", input: {who: quiet}}']), version: "3.0.0", activate: false },
    });
    expect(quiet.status).toBe(201);
    await runFor(h, scheduler, 3 * 60_000, 60_000);
    runs = await cronRuns(h, t.key);
    expect(runs.filter((r) => r.input.args.who === "quiet")).toHaveLength(0);
    expect(runs.filter((r) => r.input.args.who === "v2")).toHaveLength(2);
    // Restoring the first version brings its schedule back; it continues after its last tick (09:05)
    // from the moment it became current again (09:19:30), so 09:10 and 09:15 never fire.
    const back = await h.req("POST", `/v1/automations/${a.id}/versions/${runs[0].source.versionId}/restore`, { key: t.key, body: {} });
    expect(back.status).toBe(201);
    expect((await schedules(h, t.key, a.id)).schedules.map((x: Json) => x.expression)).toEqual(["*/5 * * * *"]);
    await runFor(h, scheduler, 6 * 60_000, 60_000);
    runs = await cronRuns(h, t.key);
    expect(runs.map((r) => [r.input.args.who, r.input.metadata.schedule.scheduledAt.slice(11, 16)]).filter(([w]) => w === "cron")).toEqual([
      ["cron", "09:05"],
      ["cron", "09:20"],
      ["cron", "09:25"],
    ]);
  });

  test("a disabled automation fires nothing; enabled again, the ticks it slept through are not caught up", async () => {
    const { h, t, a, scheduler } = await setup("2026-11-22T09:00:30Z", [cron("*/5 * * * *", "catchUp: all, overlap: allow")]);
    await runFor(h, scheduler, 6 * 60_000, 60_000);
    const off = await h.req("PATCH", `/v1/automations/${a.id}`, { key: t.key, body: { status: "disabled" } });
    expect(off.status).toBe(200);
    expect((await json(off)).status).toBe("disabled");
    expect((await schedules(h, t.key, a.id)).schedules[0].nextFireTimes).toEqual([]);
    await runFor(h, scheduler, 20 * 60_000, 60_000);
    // Even a scheduler that just started (catchUp: all) starts nothing for the disabled time.
    const restarted = new Scheduler(h.ctx);
    await restarted.pass();
    expect(ticksOf(await cronRuns(h, t.key))).toEqual(["2026-11-22T09:05:00.000Z"]);
    const on = await h.req("PATCH", `/v1/automations/${a.id}`, { key: t.key, body: { status: "active" } });
    expect((await json(on)).status).toBe("active");
    await runFor(h, restarted, 5 * 60_000, 60_000);
    expect(ticksOf(await cronRuns(h, t.key))).toEqual(["2026-11-22T09:05:00.000Z", "2026-11-22T09:30:00.000Z"]);
    const bad = await h.req("PATCH", `/v1/automations/${a.id}`, { key: t.key, body: { status: "paused" } });
    expect(bad.status).toBe(400);
  });
});

test("the OpenAPI document declares the schedules route and the status PATCH under both prefixes", async () => {
  const h = await harness();
  const doc = await json(await h.req("GET", "/openapi/json"));
  for (const prefix of ["/v1", "/api/v1"]) {
    const get = doc.paths[`${prefix}/automations/{id}/schedules`].get;
    expect(get.parameters.map((p: Json) => `${p.in}:${p.name}`)).toEqual(["path:id"]);
    const item = get.responses["200"].content["application/json"].schema.properties.schedules.items;
    expect(item.required).toEqual(expect.arrayContaining(["expression", "timezone", "nextFireTimes", "lastTick"]));
    const patch = doc.paths[`${prefix}/automations/{id}`].patch;
    expect(patch.requestBody.content["application/json"].schema.properties.status.enum).toEqual(["active", "disabled"]);
  }
});
