// Open human-review tasks in the metrics: read from the database at scrape time, so each run parked
// on a review shows up, and the runs waiting are neither queued nor running.
import { describe, expect, test } from "bun:test";
import { runsOf } from "../../../src/automation/runs/service";
import { INVOICE_CHECK, reviewHarness } from "./support";

describe("human-review metrics", () => {
  test("automation_human_review_tasks_open counts the parked runs' tasks", async () => {
    const r = await reviewHarness(2, { ops: { metrics: { where: "api" }, logFormat: "text" } });
    await r.deploy(INVOICE_CHECK);
    const scrape = async () => (await r.h.req("GET", "/metrics")).text();
    expect(await scrape()).toContain("automation_human_review_tasks_open 0");
    await r.parked("workflows.invoice-check", { vendor: "ACME", total: 10 });
    await r.parked("workflows.invoice-check", { vendor: "Globex", total: 20 });
    const text = await scrape();
    expect(text).toContain("automation_human_review_tasks_open 2");
    expect(text).toContain("automation_queue_depth 0");
    expect(text).toContain("automation_runs_running 0");
    expect(text).toContain("automation_runs_started_total 2");
    await runsOf(r.h.ctx).stopWorkers(100);
  });
});
