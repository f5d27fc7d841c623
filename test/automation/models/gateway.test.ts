// The model gateway against the loopback fake: both wire formats, structured output, tool calls,
// retries (429 + Retry-After, 5xx), timeouts on a hanging server, malformed answers, missing models.
import { afterAll, beforeEach, describe, expect, test } from "bun:test";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { loadModelsFile, modelsConfig, modelsFromEnv } from "../../../src/automation/models/config";
import { ModelCallError, NoModelConfigured } from "../../../src/automation/models/contract";
import { createGateway } from "../../../src/automation/models/gateway";
import { startFakeModels } from "../../support/fake-models";

const fake = await startFakeModels();
afterAll(() => fake.close());
beforeEach(() => {
  fake.requests.length = 0;
  fake.fallback = () => ({ text: "ok" });
});
const gw = createGateway(fake.config());

describe("OpenAI-compatible chat completions", () => {
  test("text answer with usage; system, temperature and stream:false on the wire", async () => {
    fake.script({ text: "hello there", usage: { input: 30, output: 7, cacheRead: 4 } });
    const r = await gw.complete({ system: "be brief", messages: [{ role: "user", content: "hi" }], temperature: 0 });
    expect(r).toMatchObject({ model: "fake/small", provider: "fake", text: "hello there", usage: { input: 30, output: 7, cacheRead: 4, cacheWrite: 0 } });
    const sent = fake.requests[0];
    expect(sent.path).toBe("/v1/chat/completions");
    expect(sent.body).toMatchObject({ model: "small", stream: false, temperature: 0, messages: [{ role: "system", content: "be brief" }, { role: "user", content: "hi" }] });
    expect(sent.body.usage).toBeUndefined();
    // input + cacheRead = the prompt tokens the provider reported.
    expect(r.usage.input + r.usage.cacheRead).toBe(34);
  });

  test("JSON mode sends the schema as response_format json_schema", async () => {
    fake.script({ json: { total: 12 } });
    const schema = { type: "object", properties: { total: { type: "number" } } };
    const r = await gw.complete({ messages: [{ role: "user", content: "x" }], json: { name: "invoice fields", schema } });
    expect(JSON.parse(r.text)).toEqual({ total: 12 });
    expect(fake.requests[0].body.response_format).toEqual({ type: "json_schema", json_schema: { name: "invoice_fields", schema } });
  });

  test("tools go out as functions and tool calls come back parsed; tool results go back by id", async () => {
    fake.script({ toolCalls: [{ id: "c1", name: "lookup", arguments: { q: "acme" } }] });
    const tools = [{ name: "lookup", description: "find", parameters: { type: "object" } }];
    const r = await gw.complete({ messages: [{ role: "user", content: "go" }], tools });
    expect(r.toolCalls).toEqual([{ id: "c1", name: "lookup", arguments: { q: "acme" } }]);
    expect(fake.requests[0].body.tools).toEqual([{ type: "function", function: { name: "lookup", description: "find", parameters: { type: "object" } } }]);
    await gw.complete({
      messages: [
        { role: "user", content: "go" },
        { role: "assistant", content: "", toolCalls: r.toolCalls },
        { role: "tool", toolCallId: "c1", content: "found" },
      ],
      tools,
    });
    const msgs = fake.requests[1].body.messages as Record<string, unknown>[];
    expect(msgs[1]).toMatchObject({ role: "assistant", tool_calls: [{ id: "c1", type: "function", function: { name: "lookup", arguments: '{"q":"acme"}' } }] });
    expect(msgs[2]).toEqual({ role: "tool", tool_call_id: "c1", content: "found" });
  });

  test("images go out as data URLs to the vision default", async () => {
    await gw.complete({ capability: "vision", messages: [{ role: "user", content: [{ type: "text", text: "read" }, { type: "image", mimeType: "image/png", base64: "AAAA" }] }] });
    expect(fake.requests[0].body.model).toBe("vision");
    expect((fake.requests[0].body.messages as { content: unknown[] }[])[0].content[1]).toEqual({ type: "image_url", image_url: { url: "data:image/png;base64,AAAA" } });
  });
});

describe("Anthropic Messages", () => {
  test("key header, version, max_tokens; JSON through a forced tool call", async () => {
    fake.script({ json: { label: "invoice" }, usage: { input: 50, output: 9, cacheRead: 10, cacheWrite: 3 } });
    const schema = { type: "object", properties: { label: { type: "string" } } };
    const r = await gw.complete({ model: "fakeclaude/claude", system: "sys", messages: [{ role: "user", content: "x" }], json: { name: "answer", schema } });
    expect(JSON.parse(r.text)).toEqual({ label: "invoice" });
    expect(r.usage).toEqual({ input: 50, output: 9, cacheRead: 10, cacheWrite: 3 });
    const sent = fake.requests[0];
    expect(sent.path).toBe("/v1/messages");
    expect(sent.headers["x-api-key"]).toBe("test-key");
    expect(sent.headers["anthropic-version"]).toBe("2023-06-01");
    expect(sent.body).toMatchObject({ model: "claude", system: "sys", max_tokens: 4096, tool_choice: { type: "tool" } });
    expect((sent.body.tools as { input_schema: unknown }[])[0].input_schema).toEqual(schema);
  });

  test("tool calls and merged tool results", async () => {
    fake.script({ toolCalls: [{ id: "t1", name: "a", arguments: { n: 1 } }, { id: "t2", name: "b", arguments: {} }] });
    const r = await gw.complete({ model: "claude", messages: [{ role: "user", content: "go" }], tools: [{ name: "a", parameters: {} }, { name: "b", parameters: {} }] });
    expect(r.toolCalls.map((c) => c.name)).toEqual(["a", "b"]);
    await gw.complete({
      model: "claude",
      messages: [
        { role: "user", content: "go" },
        { role: "assistant", content: "", toolCalls: r.toolCalls },
        { role: "tool", toolCallId: "t1", content: "one" },
        { role: "tool", toolCallId: "t2", content: "two" },
      ],
    });
    const msgs = fake.requests[1].body.messages as { role: string; content: { type: string }[] }[];
    expect(msgs.map((m) => m.role)).toEqual(["user", "assistant", "user"]);
    expect(msgs[2].content.map((b) => b.type)).toEqual(["tool_result", "tool_result"]);
  });
});

describe("failures and retries", () => {
  test("429 with Retry-After is waited for, then the call succeeds", async () => {
    fake.script({ status: 429, retryAfter: 1 }, { text: "late" });
    const t0 = performance.now();
    const r = await gw.complete({ messages: [{ role: "user", content: "x" }] });
    expect(r.text).toBe("late");
    expect(fake.requests.length).toBe(2);
    expect(performance.now() - t0).toBeGreaterThanOrEqual(950);
    expect(r.durationMs).toBeGreaterThanOrEqual(950);
  });

  test("500s are retried max_retries times, then a ModelCallError with the status", async () => {
    fake.fallback = () => ({ status: 500 });
    const err = await gw.complete({ messages: [{ role: "user", content: "x" }] }).catch((e) => e);
    expect(err).toBeInstanceOf(ModelCallError);
    expect(err.status).toBe(500);
    expect(err.message).toContain("after 3 attempts");
    expect(fake.requests.length).toBe(3);
  });

  test("a 400 is not retried", async () => {
    fake.script({ status: 400, body: { error: { message: "bad schema" } } });
    const err = await gw.complete({ messages: [{ role: "user", content: "x" }] }).catch((e) => e);
    expect(err.message).toContain("bad schema");
    expect(fake.requests.length).toBe(1);
  });

  test("a hanging server times out per attempt", async () => {
    const slow = createGateway(fake.config({ timeoutMs: 200, maxRetries: 1 }));
    fake.fallback = () => ({ hang: true });
    const t0 = performance.now();
    const err = await slow.complete({ messages: [{ role: "user", content: "x" }] }).catch((e) => e);
    expect(err).toBeInstanceOf(ModelCallError);
    expect(err.message).toContain("no answer within 200 ms");
    expect(fake.requests.length).toBe(2);
    expect(performance.now() - t0).toBeLessThan(5_000);
  });

  test("a body that is not JSON fails without retrying", async () => {
    fake.script({ malformed: "{not json" });
    const err = await gw.complete({ messages: [{ role: "user", content: "x" }] }).catch((e) => e);
    expect(err.message).toContain("not JSON");
    expect(fake.requests.length).toBe(1);
  });

  test("a Retry-After beyond the cap fails at once", async () => {
    fake.script({ status: 429, retryAfter: 3600 });
    const err = await gw.complete({ messages: [{ role: "user", content: "x" }] }).catch((e) => e);
    expect(err.message).toContain("asked to retry after 3600 s");
    expect(fake.requests.length).toBe(1);
  });

  test("no model configured / unknown model / missing key name the fix", async () => {
    const none = createGateway(modelsConfig({ providers: { x: { type: "openai", base_url: `${fake.url}/v1` } } }, {}));
    expect(none.resolve(undefined)).toBeUndefined();
    const e1 = await none.complete({ messages: [{ role: "user", content: "x" }] }).catch((e) => e);
    expect(e1).toBeInstanceOf(NoModelConfigured);
    expect(e1.message).toContain("--models");
    const e2 = await gw.complete({ model: "nope/m", messages: [] }).catch((e) => e);
    expect(e2.message).toContain('"nope/m" is not a configured model');
    const keyless = createGateway(modelsConfig({ providers: { claude: { type: "anthropic", base_url: fake.url, api_key_env: "NO_SUCH_KEY", models: ["c"] } } }, {}));
    const e3 = await keyless.complete({ messages: [{ role: "user", content: "x" }] }).catch((e) => e);
    expect(e3.message).toContain("set NO_SUCH_KEY");
    expect(fake.requests.length).toBe(0);
  });
});

describe("configuration", () => {
  test("keys come from env and never serialise", () => {
    const c = modelsConfig({ providers: { openai: { api_key_env: "K", models: ["gpt"] } } }, { K: "sk-secret-123" });
    expect(c.keys.get("openai")).toBe("sk-secret-123");
    expect(JSON.stringify(c)).not.toContain("sk-secret-123");
    expect(c.defaults.text).toBe("openai/gpt");
  });

  test("bad config names the field", () => {
    expect(() => modelsConfig({ providers: { p: { type: "gemini" } } })).toThrow(/providers\.p\.type/);
    expect(() => modelsConfig({ providers: { p: { models: ["m"] } }, defaults: { text: "q/m" } })).toThrow(/defaults\.text/);
  });

  test("--models FILE: a missing file or bad TOML is one line naming the file (and the line)", () => {
    const dir = mkdtempSync(join(tmpdir(), "models-config-"));
    expect(() => loadModelsFile(join(dir, "nope.toml"))).toThrow(/--models: cannot read .*nope\.toml: ENOENT/);
    writeFileSync(join(dir, "bad.toml"), "[providers.x]\ntype = \n");
    expect(() => loadModelsFile(join(dir, "bad.toml"))).toThrow(/bad\.toml line 2: invalid TOML/);
    writeFileSync(join(dir, "ok.toml"), fake.toml());
    const c = loadModelsFile(join(dir, "ok.toml"), { FAKE_ANTHROPIC_KEY: "k" });
    expect(c.providers.map((p) => p.id)).toEqual(["fake", "fakeclaude"]);
    expect(c.keys.get("fakeclaude")).toBe("k");
  });

  test("environment only: AUTOMATION_DEFAULT_MODEL switches it on; a key alone configures nothing", () => {
    expect(modelsFromEnv({ OPENAI_API_KEY: "sk-x" })).toBeUndefined();
    const ollama = modelsFromEnv({ AUTOMATION_DEFAULT_MODEL: "ollama/llama3.1", OLLAMA_HOST: "127.0.0.1:11500" })!;
    expect(ollama.defaults.text).toBe("ollama/llama3.1");
    expect(ollama.providers[0]).toMatchObject({ id: "ollama", type: "openai", baseUrl: "http://127.0.0.1:11500/v1", keyRequired: false });
    const openai = modelsFromEnv({ AUTOMATION_DEFAULT_MODEL: "openai/gpt-4o-mini", OPENAI_API_KEY: "sk-y" })!;
    expect(openai.keys.get("openai")).toBe("sk-y");
    expect(() => modelsFromEnv({ AUTOMATION_DEFAULT_MODEL: "gemini/x" })).toThrow(/unknown provider "gemini"/);
    expect(() => modelsFromEnv({ AUTOMATION_DEFAULT_MODEL: "llama" })).toThrow(/must be provider\/model/);
  });
});
