// The evaluation loop on the compiled binary: an experiment of 200 examples, SIGKILL halfway, restart
// over the same data dir. What must hold: the experiment completes, every example ran exactly once to
// a terminal state, every run is scored once, and the counters equal the rows.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { demoServer, type DemoServer } from "./automation-demo";
import type { Proc } from "./support";

const EXAMPLES = 200;

const workflow = `
name: evalcrash
inputs: [{name: n, type: integer, required: true}]
steps:
  - {name: pause, type: control.wait, duration: 40}
  - {name: double, type: transform.set, with: {fields: {doubled: "{{ input.n | times: 2 }}"}}}
output: {n: "{{ input.n }}"}
`;

let demo: DemoServer;
let server: Proc;

beforeAll(async () => {
  demo = await demoServer({ prefix: "automation-eval-", workers: 4 });
});

afterAll(async () => {
  await demo.close();
});

interface Experiment {
  status: string;
  runCount: number;
  completedCount: number;
  passedCount: number;
  failedCount: number;
  avgScore: number | null;
  runs: { id: string; status: string; exampleId: string }[];
}

test("--demo: the invoice-summary dataset runs as an experiment out of the box", async () => {
  server = await demo.boot();
  const created = await demo.api("POST", "/v1/automations/workflows.invoice-summary/experiments", {});
  expect(created.status).toBe(202);
  const { id } = (await created.json()) as { id: string };
  let exp: Experiment | undefined;
  for (let i = 0; i < 600; i++) {
    exp = (await (await demo.api("GET", `/v1/automations/workflows.invoice-summary/experiments/${id}`)).json()) as Experiment;
    if (exp.status === "completed") break;
    await Bun.sleep(50);
  }
  expect(exp).toMatchObject({ status: "completed", runCount: 3, passedCount: 3, failedCount: 0, avgScore: 1 });
}, 60_000);

test("200 examples, SIGKILL halfway, restart: completes, each example ran once, counters equal the rows", async () => {
  expect((await demo.api("POST", "/v1/automations", { yaml: workflow })).status).toBe(201);
  const yaml = "passThreshold: 1\nevaluators:\n  - name: same-n\n    type: exact-diff\n    config: {paths: [n]}\n";
  expect((await demo.api("PUT", "/v1/automations/workflows.evalcrash/evaluators", { yaml })).status).toBe(200);
  // Every tenth example expects a wrong n: 180 pass, 20 fail.
  for (let b = 0; b < EXAMPLES; b += 50) {
    const rs = await Promise.all(
      Array.from({ length: 50 }, (_, i) => {
        const n = b + i;
        return demo.api("POST", "/v1/automations/workflows.evalcrash/examples", { name: `n-${n}`, input: { n }, expected: { n: n % 10 === 0 ? -1 : n } });
      }),
    );
    for (const r of rs) expect(r.status).toBe(201);
  }
  const created = await demo.api("POST", "/v1/automations/workflows.evalcrash/experiments", {});
  expect(created.status).toBe(202);
  const { id, total } = (await created.json()) as { id: string; total: number };
  expect(total).toBe(EXAMPLES);
  const path = `/v1/automations/workflows.evalcrash/experiments/${id}`;

  for (let i = 0; i < 3000; i++) {
    const e = (await (await demo.api("GET", path)).json()) as Experiment;
    if (e.completedCount >= EXAMPLES / 2) break;
    await Bun.sleep(10);
  }
  await server.kill("SIGKILL");
  expect(server.proc.exitCode ?? server.proc.signalCode).toBeTruthy();
  const [{ n: atKill }] = await demo.sql<{ n: number }>("SELECT CAST(COUNT(*) AS INTEGER) AS n FROM runs WHERE experiment_id = ? AND status NOT IN ('completed','failed','cancelled')", id);
  expect(atKill).toBeGreaterThan(0); // the kill really landed mid-way

  server = await demo.boot();
  // Log lines go to stderr once per event-loop turn: the line may follow the stdout "listening" line.
  for (let i = 0; i < 100 && !server.output().includes("recovering interrupted runs"); i++) await Bun.sleep(50);
  expect(server.output()).toContain("recovering interrupted runs");
  let exp: Experiment | undefined;
  for (let i = 0; i < 1200; i++) {
    exp = (await (await demo.api("GET", path)).json()) as Experiment;
    if (exp.status === "completed") break;
    await Bun.sleep(50);
  }
  expect(exp).toMatchObject({ status: "completed", runCount: EXAMPLES, completedCount: EXAMPLES, passedCount: 180, failedCount: 20 });
  expect(exp!.avgScore).toBeCloseTo(0.9, 10);

  // Each example exactly once, each run terminal (completed) with exactly one terminal event.
  expect(exp!.runs).toHaveLength(EXAMPLES);
  expect(new Set(exp!.runs.map((r) => r.exampleId)).size).toBe(EXAMPLES);
  expect(exp!.runs.every((r) => r.status === "completed")).toBe(true);
  const [{ n: terminalEvents }] = await demo.sql<{ n: number }>(
    "SELECT CAST(COUNT(*) AS INTEGER) AS n FROM run_events e JOIN runs r ON r.id = e.run_id WHERE r.experiment_id = ? AND e.type IN ('completed','failed','cancelled')",
    id,
  );
  const [scored] = await demo.sql<{ n: number; passed: number }>(
    "SELECT CAST(COUNT(*) AS INTEGER) AS n, CAST(SUM(CASE WHEN passed THEN 1 ELSE 0 END) AS INTEGER) AS passed FROM run_evaluations WHERE experiment_id = ?",
    id,
  );
  const [{ n: results }] = await demo.sql<{ n: number }>("SELECT CAST(COUNT(*) AS INTEGER) AS n FROM eval_results e JOIN runs r ON r.id = e.run_id WHERE r.experiment_id = ?", id);
  expect(terminalEvents).toBe(EXAMPLES);
  expect(scored).toEqual({ n: EXAMPLES, passed: exp!.passedCount });
  expect(results).toBe(EXAMPLES);
  console.log(`eval crash test: ${atKill} of ${EXAMPLES} runs unfinished at SIGKILL`);
}, 120_000);
