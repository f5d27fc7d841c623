// The client's run reviews, human-review tasks and model catalog against the real app on a loopback
// port (real engine, real workers): a parked invoice approved and rejected through the client, a
// review with corrected files put/read/deleted, a promotion, review health, and the catalog.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { type AutomationClient, ConflictError, NotFoundError, taskConflict, type Run } from "../../../src/automation/client";
import { demoWorkflows } from "../../../src/automation/demo/workflows";
import { modelsConfig } from "../../../src/automation/models/config";
import { clientOnLoopback } from "./loopback";

let client: AutomationClient;
let close: () => Promise<void>;
const approval = demoWorkflows.find((w) => w.file === "invoice-approval.yaml")!.yaml;

beforeAll(async () => {
  const models = modelsConfig(
    {
      defaults: { text: "local/llama" },
      providers: {
        local: { base_url: "http://127.0.0.1:11434/v1", models: ["llama"] },
        openai: { api_key_env: "OPENAI_KEY_FOR_CLIENT_TEST", models: [{ name: "gpt-4o", capabilities: ["text", "vision"] }] },
      },
    },
    {},
  );
  ({ client, close } = await clientOnLoopback("reviews", { models }));
  await client.automations.create(approval);
});
afterAll(() => close());

/** Polls the run until its status is one of `want`. */
async function until(id: string, want: string[]): Promise<Run> {
  const deadline = Date.now() + 30_000;
  for (;;) {
    const run = await client.runs.get(id);
    if (want.includes(run.execution?.status ?? "")) return run;
    if (Date.now() > deadline) throw new Error(`run ${id} is ${run.execution?.status}, not ${want.join("/")}`);
    await Bun.sleep(25);
  }
}

describe("client ↔ real server: human-review tasks", () => {
  test("a parked invoice: list, get, approve refused until the total is confirmed, set it, approve, the run resumes", async () => {
    const started = await client.run("workflows.invoice-approval", { vendor: "Initech", total: 5000 });
    await until(started.id, ["waiting"]);
    const tasks: string[] = [];
    for await (const t of client.humanReviews.iterate({ limit: 1 })) if (t.executionId === started.id) tasks.push(t.id);
    expect(tasks).toHaveLength(1);
    const task = await client.humanReviews.get(tasks[0]!);
    expect(task).toMatchObject({ status: "pending", version: 1, requiredCount: 1, confirmedCount: 0, decision: null, instructions: "Check the total against the scanned invoice before it is paid." });
    expect(task.data).toEqual({ vendor: "Initech", total: 5000, currency: "EUR" });
    expect(task.decisions.map((d) => [d.path, d.required, d.confirmed])).toEqual([["/total", true, false]]);

    const early = await client.humanReviews.approve(task.id, { expectedVersion: 1 }).catch((e: unknown) => e);
    expect(early).toBeInstanceOf(ConflictError);
    expect(taskConflict(early)).toEqual({ error: "unconfirmed_fields", currentVersion: 1, status: "pending" });

    const set = await client.humanReviews.setField(task.id, { path: "/total", value: 4800, expectedVersion: 1, idempotencyKey: "fix-total" });
    expect(set).toMatchObject({ version: 2, confirmedCount: 1, data: { total: 4800 } });
    // The same key replays the first answer instead of failing on the now stale version.
    expect((await client.humanReviews.setField(task.id, { path: "/total", value: 4800, expectedVersion: 1, idempotencyKey: "fix-total" })).version).toBe(2);
    const stale = await client.humanReviews.approve(task.id, { expectedVersion: 1 }).catch((e: unknown) => e);
    expect(taskConflict(stale)).toEqual({ error: "version_conflict", currentVersion: 2, status: "pending" });

    const approved = await client.humanReviews.approve(task.id, { expectedVersion: 2, idempotencyKey: "ok" });
    expect(approved.status).toBe("approved");
    expect(approved.decision?.status).toBe("approved");
    const done = await until(started.id, ["completed", "failed", "rejected", "cancelled"]);
    expect(done.execution?.status).toBe("completed");
    expect(done.output).toEqual({ vendor: "Initech", total: 4800, review: "completed" });
    expect((await client.humanReviews.list()).tasks.map((t) => t.id)).not.toContain(task.id);
    await expect(client.humanReviews.get("hr_missing")).rejects.toBeInstanceOf(NotFoundError);
  });

  test("reject ends the run rejected with the reason", async () => {
    const started = await client.run("workflows.invoice-approval", { vendor: "Umbrella", total: 2500 });
    await until(started.id, ["waiting"]);
    const task = (await client.humanReviews.list()).tasks.find((t) => t.executionId === started.id)!;
    const rejected = await client.humanReviews.reject(task.id, { reason: "duplicate invoice", expectedVersion: task.version, idempotencyKey: "no" });
    expect(rejected.decision).toMatchObject({ status: "rejected", reason: "duplicate invoice" });
    const done = await until(started.id, ["rejected"]);
    expect(done.execution?.status).toBe("rejected");
    const again = await client.humanReviews.approve(task.id, { expectedVersion: rejected.version }).catch((e: unknown) => e);
    expect(taskConflict(again)?.error).toBe("task_not_pending");
  });
});

describe("client ↔ real server: run reviews", () => {
  test("put/get a review, corrected files (upload, bytes, rename, delete), promote, health, delete", async () => {
    const run = await client.run("workflows.invoice-approval", { vendor: "Hooli", total: 300 }, { waitForCompletion: 30 });
    expect(run.execution?.status).toBe("completed");
    expect(await client.reviews.get(run.id)).toBeNull();

    const put = await client.reviews.put(run.id, {
      verdict: "incorrect",
      note: "wrong vendor",
      correctedOutput: { vendor: "Hooli Inc", total: 300, review: "skipped" },
      corrections: [{ kind: "field", path: "/vendor", originalValue: "Hooli", correctedValue: "Hooli Inc" }],
    });
    expect(put).toMatchObject({ verdict: "incorrect", status: "open", note: "wrong vendor" });
    expect(put.corrections).toMatchObject([{ kind: "field", path: "/vendor", originalValue: "Hooli", correctedValue: "Hooli Inc" }]);
    expect(await client.reviews.get(run.id)).toEqual(put);

    expect(await client.reviews.uploadExpected(run.id, { content: '{"vendor":"Hooli Inc"}', filename: "fixed.json" }, { name: "out/expected.json" })).toEqual({ name: "out/expected.json" });
    expect(await client.reviews.listExpected(run.id)).toEqual(["out/expected.json"]);
    expect(await (await client.reviews.downloadExpected(run.id, "out/expected.json")).text()).toBe('{"vendor":"Hooli Inc"}');
    expect(await client.reviews.renameExpected(run.id, "out/expected.json", "expected.json")).toEqual({ name: "expected.json" });
    expect(await client.reviews.listExpected(run.id)).toEqual(["expected.json"]);
    // This workflow writes no output files: the copy names the missing one.
    await expect(client.reviews.copyExpected(run.id, "report.pdf")).rejects.toBeInstanceOf(NotFoundError);

    const promoted = await client.reviews.promote(run.id, { name: "hooli-fixed" });
    expect(promoted).toMatchObject({ automationType: "workflow", name: "hooli-fixed" });
    const example = await client.examples.get("workflows.invoice-approval", promoted.exampleId);
    expect(example.expected).toEqual({ vendor: "Hooli Inc", total: 300, review: "skipped" });

    const from = new Date(Date.now() - 86_400_000).toISOString();
    const to = new Date(Date.now() + 86_400_000).toISOString();
    const health = await client.reviews.health("workflows.invoice-approval", { from, to });
    expect(health.summary).toMatchObject({ reviewedRuns: 1, incorrectReviews: 1, correctReviews: 0 });
    expect(health.summary.totalRuns).toBeGreaterThanOrEqual(1);
    expect(health.granularity.bucket).toBe("day");

    await client.reviews.deleteExpected(run.id, "expected.json");
    expect(await client.reviews.listExpected(run.id)).toEqual([]);
    await client.reviews.delete(run.id);
    expect(await client.reviews.get(run.id)).toBeNull();
  });
});

describe("client ↔ real server: model catalog", () => {
  test("lists the catalog, filters by capability, groups providers", async () => {
    expect(await client.models.list()).toEqual([
      { id: "local/llama", provider: "local", capabilities: ["text"], health: "configured", defaultFor: ["text"] },
      { id: "openai/gpt-4o", provider: "openai", capabilities: ["text", "vision"], health: "unconfigured", defaultFor: [] },
    ]);
    expect((await client.models.list({ capability: "vision" })).map((m) => m.id)).toEqual(["openai/gpt-4o"]);
    expect(await client.models.providers()).toEqual([
      { id: "local", health: "configured", models: ["local/llama"] },
      { id: "openai", health: "unconfigured", models: ["openai/gpt-4o"] },
    ]);
  });
});
