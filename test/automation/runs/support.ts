// Runs test support: A's HTTP harness plus a test-only executor whose steps the test can hold open
// (gates), count, fail, and make write files — so queue states, cancel boundaries and resume are
// deterministic. It executes top-level steps only; the real engine has its own tests.
import { createAutomation } from "../../../src/automation/automations/service";
import type { ExecuteOptions, ExecuteResult } from "../../../src/automation/engine/contract";
import { runsOf } from "../../../src/automation/runs/service";
import { workflowRuntime } from "../../../src/automation/runs/runtime-workflow";
import type { Workflow } from "../../../src/automation/engine/workflow-types";
import { harness, json, type Harness, type Json } from "../app/harness";
import type { BlobMode } from "../files/stores";

export { json, type Json };

/** Three top-level steps (the recovery and journal tests hold the run at "second"). */
export const threeSteps = `
name: three
inputs: [{name: n, type: integer, required: true}]
steps:
  - {name: first, type: transform.set, with: {fields: {a: 1}}}
  - {name: second, type: transform.set, with: {fields: {b: 2}}}
  - {name: third, type: transform.set, with: {fields: {c: 3}}}
`;

export class TestEngine {
  /** Executions per `runId/step` (a resumed run must not execute a finished step again). */
  executions = new Map<string, number>();
  private gates = new Map<string, { promise: Promise<void>; open: () => void; reached: Promise<void>; arrive: () => void }>();

  /** Steps named `name` wait until `open(name)`; `reached(name)` resolves once a run is waiting there. */
  hold(name: string): void {
    let open!: () => void;
    let arrive!: () => void;
    const promise = new Promise<void>((r) => (open = r));
    const reached = new Promise<void>((r) => (arrive = r));
    this.gates.set(name, { promise, open, reached, arrive });
  }
  open(name: string): void {
    this.gates.get(name)?.open();
    this.gates.delete(name);
  }
  reached(name: string): Promise<void> {
    return this.gates.get(name)!.reached;
  }

  execute = async (o: ExecuteOptions): Promise<ExecuteResult> => {
    const wf = o.workflow as Workflow;
    const outputs: Record<string, unknown> = {};
    const runKey = JSON.stringify(o.input);
    for (const step of wf.steps) {
      if (o.signal.aborted) return { status: "cancelled" };
      const done = o.journal.completed.get(step.name);
      if (done) {
        outputs[step.name] = done.output;
        continue;
      }
      const startedAt = o.services.clock.now().toISOString();
      await o.journal.stepStarted({ path: step.name, name: step.name, type: step.type, attempt: 1, startedAt });
      const key = `${runKey}/${step.name}`;
      this.executions.set(key, (this.executions.get(key) ?? 0) + 1);
      const gate = this.gates.get(step.name);
      if (gate) {
        gate.arrive();
        await gate.promise;
      }
      const cfg = step.config as { fields?: Record<string, unknown>; message?: string };
      if (step.type === "control.fail") {
        const error = { message: cfg.message ?? "failed", code: "workflow_failed" };
        await o.journal.stepFinished({ path: step.name, name: step.name, type: step.type, status: "failed", error, attempt: 1, startedAt, completedAt: startedAt });
        return { status: "failed", error: { ...error, step: step.name, statusCode: 422 } };
      }
      let output: unknown = cfg.fields ?? {};
      const f = cfg.fields as { fileName?: string; fileText?: string } | undefined;
      if (f?.fileName) {
        const ref = await o.services.writeFile({ name: f.fileName, contentType: "text/plain", bytes: new TextEncoder().encode(f.fileText ?? ""), stepName: step.name });
        output = { file: ref };
      }
      if (step.type === "transform.set" && (cfg.fields as { echoInput?: boolean } | undefined)?.echoInput) output = { input: o.input };
      outputs[step.name] = output;
      await o.journal.stepFinished({ path: step.name, name: step.name, type: step.type, status: "completed", output, attempt: 1, startedAt, completedAt: o.services.clock.now().toISOString() });
    }
    return { status: "completed", output: outputs };
  };
}

export interface RunsHarness extends Harness {
  engine: TestEngine;
  key: Harness["key"];
  t: { id: string; slug: string; key: string };
  deploy(yaml: string): Promise<{ id: string }>;
  /** Starts the worker pool (tests that inspect queued runs leave it stopped). */
  startWorkers(): void;
  post(path: string, body?: unknown, key?: string): Promise<Response>;
  get(path: string, key?: string): Promise<Response>;
  /** Polls until the run is terminal (workers running). */
  settle(id: string): Promise<Json>;
}

export async function runsHarness(over: Parameters<typeof harness>[0] = {}, blobs: BlobMode = "fs"): Promise<RunsHarness> {
  const h = await harness({ workers: 2, ...over }, blobs);
  const engine = new TestEngine();
  runsOf(h.ctx, workflowRuntime(engine.execute));
  const t = await h.tenant(`t${Math.random().toString(36).slice(2, 8)}`);
  const rh: RunsHarness = {
    ...h,
    engine,
    t,
    deploy: (yaml) => createAutomation(h.ctx.storage.automations, h.clock, t.id, yaml),
    startWorkers: () => runsOf(h.ctx).startWorkers(),
    post: (path, body, key = t.key) => h.req("POST", path, { key, body }),
    get: (path, key = t.key) => h.req("GET", path, { key }),
    async settle(id) {
      for (let i = 0; i < 3000; i++) {
        const r = await json(await h.req("GET", `/v1/runs/${id}`, { key: t.key }));
        if (r.finished) return r;
        await Bun.sleep(5);
      }
      throw new Error(`run ${id} did not finish`);
    },
  };
  return rh;
}

export const twoSteps = (name = "two-steps", extra = "") => `
name: ${name}
version: 1.0.0
inputs:
  - {name: who, type: string, required: true}
  - {name: times, type: integer, required: false, default: 1}
${extra}
steps:
  - name: first
    type: transform.set
    with: {fields: {greeting: hello}}
  - name: second
    type: transform.set
    with: {fields: {done: true}}
`;
