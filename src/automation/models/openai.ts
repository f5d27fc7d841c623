// OpenAI chat completions wire format (OpenAI, Ollama, llama.cpp, vLLM: any `/chat/completions`).
// Streaming off; JSON output through `response_format` as the provider config says.
import type { ProviderConfig } from "./config";
import type { ModelMessage, ModelRequest, ModelToolCall } from "./contract";
import type { WireCall, WireResult } from "./wire";
import { num, obj, parseArgs, str, WireError } from "./wire";

function message(m: ModelMessage): Record<string, unknown> {
  if (m.role === "tool") return { role: "tool", tool_call_id: m.toolCallId, content: m.content };
  if (m.role === "assistant") {
    const calls = (m.toolCalls ?? []).map((c) => ({ id: c.id, type: "function", function: { name: c.name, arguments: JSON.stringify(c.arguments) } }));
    return { role: "assistant", content: m.content, ...(calls.length ? { tool_calls: calls } : {}) };
  }
  if (typeof m.content === "string") return { role: "user", content: m.content };
  return {
    role: "user",
    content: m.content.map((p) => (p.type === "text" ? { type: "text", text: p.text } : { type: "image_url", image_url: { url: `data:${p.mimeType};base64,${p.base64}` } })),
  };
}

/** OpenAI allows `^[a-zA-Z0-9_-]{1,64}$` for schema names. */
const schemaName = (s: string) => s.replace(/[^A-Za-z0-9_-]/g, "_").slice(0, 64) || "output";

export function openaiCall(p: ProviderConfig, model: string, req: ModelRequest, key: string | undefined): WireCall {
  const body: Record<string, unknown> = {
    model,
    stream: false,
    messages: [...(req.system ? [{ role: "system", content: req.system }] : []), ...req.messages.map(message)],
  };
  if (req.temperature !== undefined) body.temperature = req.temperature;
  if (req.maxTokens !== undefined) body.max_tokens = req.maxTokens;
  if (req.json && p.jsonMode === "json_schema") body.response_format = { type: "json_schema", json_schema: { name: schemaName(req.json.name), schema: req.json.schema } };
  if (req.json && p.jsonMode === "json_object") body.response_format = { type: "json_object" };
  if (req.tools?.length) {
    body.tools = req.tools.map((t) => ({ type: "function", function: { name: t.name, ...(t.description ? { description: t.description } : {}), parameters: t.parameters } }));
  }
  return {
    url: `${p.baseUrl}/chat/completions`,
    headers: { "content-type": "application/json", ...(key ? { authorization: `Bearer ${key}` } : {}) },
    body,
  };
}

export function openaiResult(json: unknown): WireResult {
  const choice = obj(Array.isArray(obj(json).choices) ? (obj(json).choices as unknown[])[0] : undefined);
  const msg = obj(choice.message);
  if (!choice.message) throw new WireError("the response has no choices[0].message");
  const toolCalls: ModelToolCall[] = (Array.isArray(msg.tool_calls) ? msg.tool_calls : []).map((raw, i) => {
    const c = obj(raw);
    const fn = obj(c.function);
    return { id: str(c.id) || `call_${i}`, name: str(fn.name), arguments: parseArgs(fn.arguments) };
  });
  const usage = obj(obj(json).usage);
  const prompt = num(usage.prompt_tokens);
  const cached = num(obj(usage.prompt_tokens_details).cached_tokens);
  return {
    text: typeof msg.content === "string" ? msg.content : "",
    toolCalls,
    // Input counts tokens not served from the cache, like Anthropic's, so input + cacheRead = the prompt.
    usage: { input: Math.max(0, prompt - cached), output: num(usage.completion_tokens), cacheRead: cached, cacheWrite: 0 },
    ...(typeof choice.finish_reason === "string" ? { finishReason: choice.finish_reason } : {}),
  };
}
