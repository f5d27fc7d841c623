// The compiled automation-server with `--models` (via AUTOMATION_MODELS) pointing at the loopback fake:
// the catalog, the demo document-intake workflow end to end on a text PDF (unpdf inside the binary),
// and a SIGKILL after a model call was journaled: the resumed run does not repeat that call.
// Without models, the AI demo workflow fails saying which flag to set.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { textPdf } from "../support/documents";
import { type FakeRequest, startFakeModels } from "../support/fake-models";
import { demoServer, type DemoServer } from "./automation-demo";

const fake = await startFakeModels();
const KEY = "sk-ant-e2e-secret-value";
let demo: DemoServer;

const schemaName = (r: FakeRequest) => (r.body.response_format as { json_schema?: { name?: string } } | undefined)?.json_schema?.name;
const repair = (r: FakeRequest) => r.prompt.includes("That answer is invalid");

const configDir = mkdtempSync(join(tmpdir(), "automation-models-config-"));

beforeAll(async () => {
  const file = join(configDir, "models.toml");
  writeFileSync(file, fake.toml({ timeoutMs: 20_000, maxRetries: 1 }));
  // The models file through the flag's environment twin; the Anthropic key only in the environment.
  demo = await demoServer({ prefix: "automation-models-", workers: 2, env: { AUTOMATION_MODELS: file, FAKE_ANTHROPIC_KEY: KEY } });
}, 120_000);

afterAll(async () => {
  await demo?.close();
  await fake.close();
  rmSync(configDir, { recursive: true, force: true });
});

describe("compiled server with --models", () => {
  test("catalog, then the demo document-intake workflow on a text PDF; usage and trace", async () => {
    const server = await demo.boot();
    try {
      const catalog = await demo.api("GET", "/v1/models");
      const text = await catalog.text();
      expect(catalog.status).toBe(200);
      expect(text).not.toContain(KEY);
      const ids = (JSON.parse(text).data as { id: string; health: string }[]).map((m) => `${m.id}:${m.health}`);
      expect(ids).toEqual(["fake/small:configured", "fake/vision:configured", "fakeclaude/claude:configured"]);

      fake.requests.length = 0;
      fake.fallback = (r) => {
        const name = schemaName(r);
        if (name === "classification") return { json: { label: "invoice", confidence: 0.9, reason: "invoice number" }, usage: { input: 50, output: 10 } };
        if (name === "sections") return { json: { sections: [{ name: "header", startLine: 1 }, { name: "total", startLine: 2 }] }, usage: { input: 60, output: 12 } };
        return { json: { number: "INV-7", total: 99.5, _grounding: { number: "Invoice INV-7" } }, usage: { input: 70, output: 14 } };
      };
      const pdf = await textPdf([["Invoice INV-7", "Total 99.50 EUR"]]);
      const res = await demo.api("POST", "/v1/runs?wait_for_completion=60", {
        target: "workflows.document-intake",
        input: { document: { $inline: { filename: "inv.pdf", mimeType: "application/pdf", base64: Buffer.from(pdf).toString("base64") } } },
      });
      const run = (await res.json()) as { id: string; execution: { status: string }; error: string | null; output: Record<string, any> };
      expect({ status: run.execution.status, error: run.error }).toEqual({ status: "completed", error: null });
      expect(run.output.kind.label).toBe("invoice");
      expect(run.output.fields).toEqual({ number: "INV-7", total: 99.5, _grounding: { number: "Invoice INV-7" } });
      expect(run.output.sections.map((s: { name: string }) => s.name)).toEqual(["header", "total"]);
      // The PDF's text reached the model: unpdf ran inside the binary.
      expect(fake.requests[0].prompt).toContain("Invoice INV-7");
      expect(fake.requests[0].prompt).toContain("Total 99.50 EUR");

      const usage = ((await (await demo.api("GET", `/v1/runs/${run.id}/usage`)).json()) as { usage: Record<string, any> }).usage;
      expect(usage).toMatchObject({ tokens: { input: 180, output: 36, cacheRead: 0, cacheWrite: 0 }, llmCallCount: 3 });
      const trace = ((await (await demo.api("GET", `/v1/runs/${run.id}/trace`)).json()) as { events: Record<string, any>[] }).events;
      const calls = trace.filter((e) => e.type === "llm_call");
      expect(calls.map((c) => c.stepName)).toEqual(["kind", "sections", "fields"]);
      expect(calls.every((c) => c.model === "fake/small" && typeof c.latencyMs === "number" && c.prompt === undefined)).toBe(true);
    } finally {
      await server.kill("SIGTERM");
    }
  }, 120_000);

  test("SIGKILL while a repair call is in flight: the journaled first call is not repeated on resume", async () => {
    let server = await demo.boot();
    const wf = `
name: extract-crash
inputs: [{name: text, type: string, required: true}]
steps:
  - name: fields
    type: ai.extract
    with:
      input: "{{ input.text }}"
      schema: {type: object, properties: {total: {type: number}}, required: [total]}
`;
    expect((await demo.api("POST", "/v1/automations", { yaml: wf })).status).toBe(201);
    fake.requests.length = 0;
    // First answer invalid (journaled), the repair call hangs until the kill; after the restart the repair succeeds.
    fake.script({ json: { total: "twelve" }, usage: { input: 40, output: 4 } }, { hang: true });
    fake.fallback = () => ({ json: { total: 12 }, usage: { input: 45, output: 5 } });
    const started = (await (await demo.api("POST", "/v1/runs", { target: "workflows.extract-crash", input: { text: "Total: 12" } })).json()) as { id: string };
    for (let i = 0; i < 1000 && fake.requests.length < 2; i++) await Bun.sleep(10);
    expect(fake.requests.length).toBe(2);
    await server.kill("SIGKILL");

    server = await demo.boot();
    try {
      let run: { execution: { status: string }; output: unknown; finished: boolean } | undefined;
      for (let i = 0; i < 600; i++) {
        run = (await (await demo.api("GET", `/v1/runs/${started.id}`)).json()) as typeof run;
        if (run!.finished) break;
        await Bun.sleep(50);
      }
      expect(run!.execution.status).toBe("completed");
      expect(run!.output).toEqual({ fields: { total: 12 } });
      // Three requests in all: the first question once, the repair twice (killed in flight, then again).
      expect(fake.requests.filter((r) => !repair(r)).length).toBe(1);
      expect(fake.requests.filter(repair).length).toBe(2);
      const usage = ((await (await demo.api("GET", `/v1/runs/${started.id}/usage`)).json()) as { usage: Record<string, any> }).usage;
      expect(usage).toMatchObject({ tokens: { input: 85, output: 9 }, llmCallCount: 2 });
    } finally {
      await server.kill("SIGTERM");
    }
  }, 120_000);
});

describe("compiled server --demo without models", () => {
  test("the AI demo workflow fails with 'no model configured' naming the flag; the catalog is empty", async () => {
    const bare = await demoServer({ prefix: "automation-nomodels-", workers: 1 });
    const server = await bare.boot();
    try {
      expect(await (await bare.api("GET", "/v1/models")).json()).toEqual({ data: [] });
      const run = (await (await bare.api("POST", "/v1/runs?wait_for_completion=30", { target: "workflows.document-intake" })).json()) as { execution: { status: string }; error: string };
      expect(run.execution.status).toBe("failed");
      expect(run.error).toContain("no model configured");
      expect(run.error).toContain("--models FILE");
    } finally {
      await server.kill("SIGTERM");
      await bare.close();
    }
  }, 120_000);
});
