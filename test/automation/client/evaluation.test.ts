// The client's evaluation resources against the real app on a loopback port (real engine).
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { unzipSync } from "fflate";
import type { AutomationClient } from "../../../src/automation/client";
import { ValidationError, type ExperimentLine } from "../../../src/automation/client";
import { clientOnLoopback } from "./loopback";

let client: AutomationClient;
let close: () => Promise<void>;

const flow = `
name: client-eval
version: 1.0.0
inputs: [{name: who, type: string, required: true}]
steps:
  - {name: greet, type: transform.set, with: {fields: {greeting: "Hello, {{ input.who }}!"}}}
output: {greeting: "{{ steps.greet.output.greeting }}"}
`;

beforeAll(async () => {
  ({ client, close } = await clientOnLoopback("eval"));
});
afterAll(() => close());

describe("client ↔ real server: evaluation", () => {
  test("trials: created with trials, the stream says each run's trial, the spread typed; a bad value is a ValidationError", async () => {
    const wf = await client.automations.create(flow.replace("client-eval", "client-trials"));
    const target = `workflows.${wf.slug}`;
    await client.evaluators.update(target, "evaluators:\n  - {name: exact, type: exact-diff}\n");
    await client.examples.create(target, { name: "ann", input: { who: "Ann" }, expected: { greeting: "Hello, Ann!" } });
    await expect(client.experiments.create(target, { trials: 21 })).rejects.toBeInstanceOf(ValidationError);
    const lines: ExperimentLine[] = [];
    for await (const line of client.experiments.stream(target, { trials: 2 })) lines.push(line);
    const runs = lines.filter((l) => l.type === "run");
    expect(runs.map((l) => (l.type === "run" ? l.trial : undefined)).sort()).toEqual([1, 2]);
    const summary = lines.at(-1);
    if (summary?.type !== "summary") throw new Error("no summary line");
    expect(summary.experiment.runCount).toBe(2);
    const stats = await client.experiments.trials(target, summary.experiment.id);
    expect(stats.trials).toBe(2);
    expect(stats.examples[0].overall).toMatchObject({ n: 2, mean: 1, sd: 0, min: 1, max: 1, passRate: 1 });
    expect(stats.overall.passAll).toBe(1);
  });

  test("examples, files, evaluators, an experiment streamed, scores, export, dataset ZIP", async () => {
    const wf = await client.automations.create(flow);
    const target = `workflows.${wf.slug}`;
    await expect(client.evaluators.update(target, "evaluators: [{name: BAD, type: exact-diff}]")).rejects.toBeInstanceOf(ValidationError);
    await client.evaluators.update(target, "evaluators:\n  - {name: exact, type: exact-diff}\n");
    const ann = await client.examples.create(target, { name: "ann", input: { who: "Ann" }, expected: { greeting: "Hello, Ann!" } });
    const bob = await client.examples.create(target, { name: "bob", input: { who: "Bob" }, expected: { greeting: "Hi Bob" } });
    // An expected file on bob (who fails anyway): exact-diff compares expected files with the run's
    // output files, and this workflow writes none.
    await client.examples.uploadFiles(target, bob.id, "expected", [{ content: "reference", filename: "note.txt" }]);
    expect((await client.examples.listFiles(target, bob.id, "expected")).files).toEqual(["note.txt"]);
    expect(await (await client.examples.downloadFile(target, bob.id, "expected", "note.txt")).text()).toBe("reference");
    expect((await client.examples.update(target, ann.id, { annotation: "easy" })).annotation).toBe("easy");

    const lines: ExperimentLine[] = [];
    for await (const line of client.experiments.stream(target)) lines.push(line);
    expect(lines.filter((l) => l.type === "run")).toHaveLength(2);
    const summary = lines.at(-1);
    if (summary?.type !== "summary") throw new Error("no summary line");
    expect(summary.experiment).toMatchObject({ status: "completed", runCount: 2, passedCount: 1, failedCount: 1 });
    const detail = await client.experiments.get(target, summary.experiment.id);
    const annRun = detail.runs.find((r) => r.exampleName === "ann")!;
    expect((await client.runs.scores(annRun.id)).scores[0]).toMatchObject({ evaluatorName: "exact", score: 1, passed: true });
    expect(await client.experiments.resolve(detail.id)).toEqual({ id: detail.id, automationId: wf.id });
    const csv = await client.experiments.export(target, { experimentId: detail.id, format: "csv" });
    expect(csv.split("\r\n")[0]).toStartWith("runId,exampleId");
    expect((await client.experiments.list(target)).total).toBe(1);

    const zip = new Uint8Array(await (await client.dataset.export(target)).arrayBuffer());
    expect(Object.keys(unzipSync(zip))).toContain("examples/bob/expected/note.txt");
    const other = await client.automations.create(flow.replace("name: client-eval", "name: client-eval-copy"));
    const imported = await client.dataset.import(`workflows.${other.slug}`, zip, { mode: "replace" });
    expect(imported).toMatchObject({ mode: "replace", created: 2, expectedSet: 2 });
  });
});
