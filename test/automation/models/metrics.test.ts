// Model usage in the metrics: an ai.extract run against the loopback fake model server counts the
// call and its tokens under the configured model, the step under its kind and the run as completed.
import { afterAll, describe, expect, test } from "bun:test";
import { startFakeModels } from "../../support/fake-models";
import { aiHarness } from "./support";

const fake = await startFakeModels();
afterAll(() => fake.close());

const h = await aiHarness(fake.config({ timeoutMs: 2000, maxRetries: 0 }), { ops: { metrics: { where: "api" }, logFormat: "text" } });

const workflow = `
name: metered-extract
inputs:
  - {name: text, type: string, required: true}
steps:
  - name: fields
    type: ai.extract
    with:
      input: "{{ input.text }}"
      prompt: Extract the invoice number.
      schema:
        type: object
        properties:
          number: {type: string}
        required: [number]
        additionalProperties: false
output: "{{ steps.fields.output }}"
`;

describe("model metrics", () => {
  test("tokens by model and kind, calls by status, the step by kind, the run by status", async () => {
    fake.script({ json: { number: "INV-42" }, usage: { input: 321, output: 45, cacheRead: 12 } });
    const run = await h.run(workflow, { text: "Invoice no. INV-42" });
    expect(run.execution.status).toBe("completed");
    const text = await (await h.req("GET", "/metrics")).text();
    expect(text).toContain('automation_model_tokens_total{model="fake/small",kind="input"} 321');
    expect(text).toContain('automation_model_tokens_total{model="fake/small",kind="output"} 45');
    expect(text).toContain('automation_model_tokens_total{model="fake/small",kind="cache_read"} 12');
    expect(text).toContain('automation_model_calls_total{model="fake/small",status="ok"} 1');
    expect(text).toContain('automation_step_duration_seconds_count{kind="ai.extract",status="completed"} 1');
    expect(text).toContain('automation_runs_finished_total{status="completed"} 1');
    expect(text).toContain("automation_runs_started_total 1");
  });
});
