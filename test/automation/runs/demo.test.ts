// The --demo example workflows: each deploys and runs to completion with its default input through
// the real engine, and together they use every registered step kind.
import { describe, expect, test } from "bun:test";
import { runDemo } from "../../../src/automation/demo/seed";
import { demoWorkflows } from "../../../src/automation/demo/workflows/index";
import { stepKinds } from "../../../src/automation/engine/registry";
import { runsOf } from "../../../src/automation/runs/service";
import { parseWorkflow } from "../../../src/automation/workflow";
import type { Step } from "../../../src/automation/engine/workflow-types";
import { harness, json } from "../app/harness";

const health = Bun.serve({ port: 0, hostname: "127.0.0.1", fetch: () => Response.json({ ok: true }) });

const kindsIn = (steps: Step[]): string[] => steps.flatMap((s) => [s.type, ...Object.values(s.children).flatMap(kindsIn)]);

describe("demo workflows", () => {
  test("together they show every step kind the engine registers", () => {
    const used = new Set(
      demoWorkflows.flatMap((w) => {
        const r = parseWorkflow(w.yaml);
        if (!r.ok) throw new Error(`${w.file}: ${JSON.stringify(r.issues)}`);
        return kindsIn(r.workflow.steps);
      }),
    );
    // agent.* kinds run inside agents (the demo agent repository shows them), not in workflow YAML.
    expect([...stepKinds.keys()].filter((k) => !used.has(k) && !k.startsWith("agent."))).toEqual([]);
  });

  test("each runs to completion with its default input", async () => {
    const h = await harness({ workers: 2, httpAllowHosts: [`127.0.0.1:${health.port}`] });
    const demo = await runDemo(h.ctx);
    runsOf(h.ctx).startWorkers();
    const key = "eak_demo_0123456789abcdefghijklmnopqrstuv";
    expect(demo.workflows).toContain("workflows.order-routing");
    for (const target of demo.workflows) {
      const input = target === "workflows.call-http" ? { url: `http://127.0.0.1:${health.port}/health` } : target === "workflows.invoice-summary" ? { invoice: { lines: [{ amount: 1200 }] } } : {};
      const r = await h.req("POST", "/v1/runs?wait_for_completion=30", { key, body: { target, input } });
      const run = await json(r);
      // Without --models the AI example fails, and says which flag would make it work.
      if (target === "workflows.document-intake") {
        expect(run.execution?.status).toBe("failed");
        expect(run.error).toContain("no model configured");
        expect(run.error).toContain("--models FILE");
        continue;
      }
      expect({ target, status: run.execution?.status, error: run.error }).toEqual({ target, status: "completed", error: null });
    }
    const routing = await json(await h.req("POST", "/v1/runs?wait_for_completion=30", { key, body: { target: "workflows.order-routing" } }));
    expect(routing.output.net).toBe(150);
    const sheet = await json(await h.req("POST", "/v1/runs?wait_for_completion=30", { key, body: { target: "workflows.spreadsheet-report" } }));
    expect(sheet.files.map((f: { name: string }) => f.name)).toEqual(["hours.xlsx"]);
    const greet = await json(await h.req("POST", "/v1/runs?wait_for_completion=30", { key, body: { target: "workflows.greet-twice" } }));
    expect(greet.output.greetings).toEqual(["Hello, Ada!", "Hello, Grace!"]);
    health.stop(true);
  }, 60_000);
});
