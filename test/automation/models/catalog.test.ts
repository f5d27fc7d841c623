// GET /v1/models: the configured catalog with health from configuration, filtered by capability.
import { afterAll, describe, expect, test } from "bun:test";
import { modelsConfig } from "../../../src/automation/models/config";
import { harness } from "../app/harness";
import { startFakeModels } from "../../support/fake-models";

const fake = await startFakeModels();
afterAll(() => fake.close());

describe("GET /v1/models", () => {
  test("lists models with capabilities, health and defaultFor; capability filters", async () => {
    const models = modelsConfig(
      {
        defaults: { text: "local/llama", vision: "openai/gpt-4o" },
        providers: {
          local: { base_url: "http://127.0.0.1:11434/v1", models: ["llama"] },
          openai: { api_key_env: "OPENAI_KEY_FOR_TEST", models: [{ name: "gpt-4o", capabilities: ["text", "vision"] }] },
          claude: { type: "anthropic", api_key_env: "ANTHROPIC_KEY_FOR_TEST", models: ["sonnet"] },
        },
      },
      { OPENAI_KEY_FOR_TEST: "sk-live-abcdef" },
    );
    const h = await harness({ models });
    const t = await h.tenant("acme");
    const res = await h.req("GET", "/v1/models", { key: t.key });
    expect(res.status).toBe(200);
    const text = await res.text();
    expect(text).not.toContain("sk-live-abcdef");
    const body = JSON.parse(text);
    expect(body.data).toEqual([
      { id: "local/llama", provider: "local", capabilities: ["text"], health: "configured", defaultFor: ["text"] },
      { id: "openai/gpt-4o", provider: "openai", capabilities: ["text", "vision"], health: "configured", defaultFor: ["vision"] },
      { id: "claude/sonnet", provider: "claude", capabilities: ["text"], health: "unconfigured", defaultFor: [] },
    ]);
    const vision = (await (await h.req("GET", "/api/v1/models?capability=vision", { key: t.key })).json()) as { data: { id: string }[] };
    expect(vision.data.map((m) => m.id)).toEqual(["openai/gpt-4o"]);
    const bad = await h.req("GET", "/v1/models?capability=audio", { key: t.key });
    expect(bad.status).toBe(400);
    expect(((await bad.json()) as { issues: { message: string }[] }).issues[0].message).toContain("capability must be one of text, vision, ocr");
  });

  test("no models configured: empty list; no key: 401", async () => {
    const h = await harness();
    const t = await h.tenant("acme");
    expect(await (await h.req("GET", "/v1/models", { key: t.key })).json()).toEqual({ data: [] });
    expect((await h.req("GET", "/v1/models")).status).toBe(401);
  });
});
