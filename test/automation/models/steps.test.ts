// ai.extract / ai.classify / ai.split through /v1/runs against the loopback fake model server: the step
// outcome and the run's usage and trace for each provider behaviour (JSON mode, forced tool output,
// invalid output and its one repair turn, 429 + Retry-After, 500, a hang, a malformed body).
import { afterAll, beforeEach, describe, expect, test } from "bun:test";
import { startFakeModels } from "../../support/fake-models";
import { aiHarness, type Json } from "./support";

const fake = await startFakeModels();
afterAll(() => fake.close());
beforeEach(() => {
  fake.requests.length = 0;
  fake.fallback = () => ({ text: "ok" });
});

const h = await aiHarness(fake.config({ timeoutMs: 300, maxRetries: 1, retryBaseMs: 10 }));

const extract = (name: string, extra = "") => `
name: ${name}
inputs:
  - {name: text, type: string, required: true}
${extra}
steps:
  - name: fields
    type: ai.extract
    with:
      input: "{{ input.text }}"
      prompt: Extract the invoice fields.
      schema:
        type: object
        properties:
          number: {type: string}
          total: {type: number}
        required: [number, total]
        additionalProperties: false
output: "{{ steps.fields.output }}"
`;
const invoice = "ACME Ltd\nInvoice no. INV-42\nTotal due: 123.45 EUR";

const usage = (run: Json) => h.get(`/v1/runs/${run.id}/usage`).then((b) => b.usage);
const stepError = async (run: Json) => ((await h.get(`/v1/runs/${run.id}?expand=execution`)).execution.steps as Json[]).find((s) => s.status === "failed")?.error;

describe("ai.extract", () => {
  test("validated object with verified _grounding; usage, trace and debug prompt recorded", async () => {
    fake.script({ json: { number: "INV-42", total: 123.45, _grounding: { number: "Invoice no. INV-42", total: "this quote is invented" } }, usage: { input: 321, output: 45, cacheRead: 12 } });
    const run = await h.run(extract("extract-ok"), { text: invoice });
    expect(run.execution.status).toBe("completed");
    // The invented quote is dropped; the real one is kept.
    expect(run.output).toEqual({ number: "INV-42", total: 123.45, _grounding: { number: "Invoice no. INV-42" } });
    const sent = fake.requests[0].body;
    expect(sent.temperature).toBe(0);
    expect((sent.response_format as Json).type).toBe("json_schema");
    expect(fake.requests[0].prompt).toContain("Total due: 123.45 EUR");

    expect(await usage(run)).toMatchObject({ tokens: { input: 321, output: 45, cacheRead: 12, cacheWrite: 0 }, llmCallCount: 1 });
    const expanded = await h.get(`/v1/runs/${run.id}?expand=usage`);
    expect(expanded.usage.llmCallCount).toBe(1);
    const trace = (await h.get(`/v1/runs/${run.id}/trace`)).events as Json[];
    const call = trace.find((e) => e.type === "llm_call")!;
    expect(call).toMatchObject({ model: "fake/small", provider: "fake", stepName: "fields", status: "ok", tokens: { input: 321, output: 45, cacheRead: 12, cacheWrite: 0 } });
    expect(typeof call.latencyMs).toBe("number");
    expect(call.prompt).toBeUndefined();
    const debug = await h.get(`/v1/runs/${run.id}?expand=debug`);
    const withPrompt = debug.debug.observability.llmCalls[0];
    expect(JSON.stringify(withPrompt.prompt)).toContain("Extract the invoice fields.");
  });

  test("invalid output gets one repair turn naming the problem; usage counts both calls", async () => {
    fake.script({ json: { number: "INV-42", total: "123.45" }, usage: { input: 100, output: 10 } }, { json: { number: "INV-42", total: 123.45 }, usage: { input: 150, output: 12 } });
    const run = await h.run(extract("extract-repair"), { text: invoice });
    expect(run.output).toEqual({ number: "INV-42", total: 123.45 });
    expect(fake.requests.length).toBe(2);
    expect(fake.requests[1].prompt).toContain("$.total: expected number, got string");
    expect(await usage(run)).toMatchObject({ tokens: { input: 250, output: 22 }, llmCallCount: 2 });
  });

  test("invalid twice fails the step naming the problem", async () => {
    fake.fallback = () => ({ text: "Sure! The total is 123.45" });
    const run = await h.run(extract("extract-bad"), { text: invoice });
    expect(run.execution.status).toBe("failed");
    expect(run.error).toContain("the model's answer is invalid after one retry");
    expect(run.error).toContain("not valid JSON");
    expect((await stepError(run)).code).toBe("invalid_model_output");
    expect((await usage(run)).llmCallCount).toBe(2);
  });

  test("a missing required field is a schema problem too", async () => {
    fake.fallback = () => ({ json: { number: "INV-42" } });
    const run = await h.run(extract("extract-missing"), { text: invoice });
    expect(run.error).toContain("$.total: is required");
  });

  test("429 with Retry-After: waited for, then completed; one logical call in usage", async () => {
    fake.script({ status: 429, retryAfter: 1 }, { json: { number: "A", total: 1 }, usage: { input: 7, output: 3 } });
    const t0 = performance.now();
    const run = await h.run(extract("extract-429"), { text: "A 1" });
    expect(run.execution.status).toBe("completed");
    expect(performance.now() - t0).toBeGreaterThanOrEqual(950);
    expect(fake.requests.length).toBe(2);
    expect(await usage(run)).toMatchObject({ tokens: { input: 7, output: 3 }, llmCallCount: 1 });
  });

  test("500 on every attempt fails the step with the status; the failed call is traced", async () => {
    fake.fallback = () => ({ status: 500 });
    const run = await h.run(extract("extract-500"), { text: invoice });
    expect(run.execution.status).toBe("failed");
    expect(run.error).toContain("model call failed: fake answered 500");
    expect(fake.requests.length).toBe(2);
    expect(await usage(run)).toMatchObject({ tokens: { input: 0, output: 0 }, llmCallCount: 1 });
    const call = ((await h.get(`/v1/runs/${run.id}/trace`)).events as Json[]).find((e) => e.type === "llm_call")!;
    expect(call.status).toBe("failed");
    expect(call.message).toContain("500");
  });

  test("a hanging server: each attempt times out, the step fails", async () => {
    fake.fallback = () => ({ hang: true });
    const run = await h.run(extract("extract-hang"), { text: invoice });
    expect(run.execution.status).toBe("failed");
    expect(run.error).toContain("no answer within 300 ms");
    expect(fake.requests.length).toBe(2);
  });

  test("a malformed response body fails without a retry", async () => {
    fake.script({ malformed: "<html>bad gateway</html>" });
    const run = await h.run(extract("extract-malformed"), { text: invoice });
    expect(run.error).toContain("not JSON");
    expect(fake.requests.length).toBe(1);
    expect(await usage(run)).toMatchObject({ tokens: { input: 0, output: 0 }, llmCallCount: 1 });
  });

  test("model choice: step model > workflow defaultModel > server default", async () => {
    fake.fallback = () => ({ json: { number: "A", total: 1 } });
    await h.run(extract("extract-default"), { text: "A 1" });
    await h.run(extract("extract-wf-default", "defaultModel: fake/vision"), { text: "A 1" });
    const stepModel = extract("extract-step-model", "defaultModel: fake/vision").replace("prompt: Extract", "model: fakeclaude/claude\n      prompt: Extract");
    await h.run(stepModel, { text: "A 1" });
    expect(fake.requests.map((r) => `${r.format}:${r.body.model}`)).toEqual(["openai:small", "openai:vision", "anthropic:claude"]);
  });
});

describe("ai.classify (Anthropic Messages)", () => {
  const wf = `
name: classify
inputs: [{name: text, type: string, required: true}]
steps:
  - name: kind
    type: ai.classify
    with:
      input: "{{ input.text }}"
      model: fakeclaude/claude
      labels: [invoice, {name: receipt, description: proof of payment}, contract]
`;
  test("label, confidence and reason through the forced tool call; cache tokens in usage", async () => {
    fake.script({ json: { label: "invoice", confidence: 0.92, reason: "has an invoice number" }, usage: { input: 80, output: 15, cacheRead: 40, cacheWrite: 8 } });
    const run = await h.run(wf, { text: invoice });
    expect(run.output).toEqual({ kind: { label: "invoice", confidence: 0.92, reason: "has an invoice number" } });
    const sent = fake.requests[0];
    expect(sent.format).toBe("anthropic");
    expect(sent.headers["x-api-key"]).toBe("test-key");
    expect(sent.body.temperature).toBe(0);
    expect(String(sent.body.system)).toContain("- receipt: proof of payment");
    expect(await usage(run)).toMatchObject({ tokens: { input: 80, output: 15, cacheRead: 40, cacheWrite: 8 }, llmCallCount: 1 });
  });

  test("a label outside the list is repaired once, then fails", async () => {
    fake.fallback = () => ({ json: { label: "memo", confidence: 0.5, reason: "?" } });
    const run = await h.run(wf, { text: invoice });
    expect(run.execution.status).toBe("failed");
    expect(run.error).toContain('$.label: must be one of "invoice", "receipt", "contract"');
    expect(fake.requests.length).toBe(2);
  });

  test("fewer than 2 labels is refused when the workflow is created", async () => {
    const res = await h.req("POST", "/v1/automations", { key: h.t.key, body: { yaml: wf.replace("name: classify", "name: one-label").replace(/labels: .*/, "labels: [invoice]") } });
    expect(res.status).toBe(400);
    expect(JSON.stringify(await res.json())).toContain("needs at least 2 labels");
  });
});

describe("ai.split", () => {
  test("sections cut locally at the lines the model names", async () => {
    const doc = ["HEADER", "Acme Ltd", "ITEMS", "1 widget 10.00", "2 gadgets 20.00", "TERMS", "Pay in 30 days"].join("\n");
    fake.script({ json: { sections: [{ name: "header", startLine: 1 }, { name: "items", startLine: 3 }, { name: "terms", startLine: 6 }] } });
    const run = await h.run(
      `
name: split
inputs: [{name: text, type: string, required: true}]
steps:
  - name: parts
    type: ai.split
    with: {input: "{{ input.text }}", sections: [header, items, terms]}
`,
      { text: doc },
    );
    expect(run.output.parts.sections).toEqual([
      { name: "header", text: "HEADER\nAcme Ltd", startLine: 1, endLine: 2 },
      { name: "items", text: "ITEMS\n1 widget 10.00\n2 gadgets 20.00", startLine: 3, endLine: 5 },
      { name: "terms", text: "TERMS\nPay in 30 days", startLine: 6, endLine: 7 },
    ]);
    expect(fake.requests[0].prompt).toContain("4: 1 widget 10.00");
  });
});

describe("without models", () => {
  test("AI steps fail with 'no model configured' naming the flag; nothing is counted", async () => {
    const bare = await aiHarness();
    const run = await bare.run(extract("extract-none"), { text: invoice });
    expect(run.execution.status).toBe("failed");
    expect(run.error).toContain("no model configured");
    expect(run.error).toContain("--models FILE");
    expect((await bare.get(`/v1/runs/${run.id}/usage`)).usage.llmCallCount).toBe(0);
  });
});
