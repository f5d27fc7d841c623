// --demo: the invoice-summary workflow comes with a dataset and an evaluator file, so an experiment
// runs out of the box (real engine, real sandbox for the custom-script evaluator).
import { expect, test } from "bun:test";
import { DEMO_KEY, runDemo } from "../../../src/automation/demo/seed";
import { runsOf } from "../../../src/automation/runs/service";
import { harness, json } from "../app/harness";

test("the demo dataset runs as an experiment and every example passes; seeding twice changes nothing", async () => {
  const h = await harness({ workers: 2 });
  await runDemo(h.ctx);
  await runDemo(h.ctx);
  runsOf(h.ctx).startWorkers();
  const base = "/v1/automations/workflows.invoice-summary";
  const list = await json(await h.req("GET", `${base}/examples`, { key: DEMO_KEY }));
  expect(list.total).toBe(3);
  const ev = await json(await h.req("GET", `${base}/evaluators`, { key: DEMO_KEY }));
  expect(ev.config.evaluators.map((e: { type: string }) => e.type)).toEqual(["exact-diff", "custom-script"]);
  const created = await h.req("POST", `${base}/experiments`, { key: DEMO_KEY, body: {} });
  expect(created.status).toBe(202);
  const { id } = await json(created);
  let exp = await json(await h.req("GET", `${base}/experiments/${id}`, { key: DEMO_KEY }));
  for (let i = 0; i < 1500 && exp.status !== "completed"; i++) {
    await Bun.sleep(10);
    exp = await json(await h.req("GET", `${base}/experiments/${id}`, { key: DEMO_KEY }));
  }
  expect(exp).toMatchObject({ status: "completed", runCount: 3, completedCount: 3, passedCount: 3, failedCount: 0, avgScore: 1 });
  await runsOf(h.ctx).stopWorkers(1000);
}, 60_000);
