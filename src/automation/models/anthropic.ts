// Anthropic Messages wire format. JSON output is asked for as a forced tool call whose input schema
// is the requested schema (the API's way to structured output); the tool input becomes the text.
import type { ProviderConfig } from "./config";
import type { ModelMessage, ModelRequest, ModelToolCall } from "./contract";
import type { WireCall, WireResult } from "./wire";
import { num, obj, str, WireError } from "./wire";

const VERSION = "2023-06-01";
/** The Messages API requires max_tokens. */
const DEFAULT_MAX_TOKENS = 4096;
const JSON_TOOL = "structured_output";

type Block = Record<string, unknown>;

/** Tool results follow as user turns; consecutive ones are merged, since roles must alternate. */
function messages(list: ModelMessage[]): { role: string; content: Block[] }[] {
  const out: { role: string; content: Block[] }[] = [];
  const push = (role: string, blocks: Block[]) => {
    const last = out[out.length - 1];
    if (last && last.role === role) last.content.push(...blocks);
    else out.push({ role, content: blocks });
  };
  for (const m of list) {
    if (m.role === "tool") push("user", [{ type: "tool_result", tool_use_id: m.toolCallId, content: m.content }]);
    else if (m.role === "assistant") {
      push("assistant", [
        ...(m.content ? [{ type: "text", text: m.content }] : []),
        ...(m.toolCalls ?? []).map((c) => ({ type: "tool_use", id: c.id, name: c.name, input: c.arguments })),
      ]);
    } else if (typeof m.content === "string") push("user", [{ type: "text", text: m.content }]);
    else {
      push("user", m.content.map((p) => (p.type === "text" ? { type: "text", text: p.text } : { type: "image", source: { type: "base64", media_type: p.mimeType, data: p.base64 } })));
    }
  }
  return out;
}

export function anthropicCall(p: ProviderConfig, model: string, req: ModelRequest, key: string | undefined): WireCall {
  const body: Record<string, unknown> = { model, max_tokens: req.maxTokens ?? DEFAULT_MAX_TOKENS, messages: messages(req.messages) };
  if (req.system) body.system = req.system;
  if (req.temperature !== undefined) body.temperature = req.temperature;
  const tools = (req.tools ?? []).map((t) => ({ name: t.name, ...(t.description ? { description: t.description } : {}), input_schema: t.parameters }));
  if (req.json && !tools.length) {
    tools.push({ name: JSON_TOOL, description: `Return the answer as ${req.json.name}`, input_schema: req.json.schema });
    body.tool_choice = { type: "tool", name: JSON_TOOL };
  }
  if (tools.length) body.tools = tools;
  return {
    url: `${p.baseUrl}/v1/messages`,
    headers: { "content-type": "application/json", "anthropic-version": VERSION, ...(key ? { "x-api-key": key } : {}) },
    body,
  };
}

export function anthropicResult(json: unknown): WireResult {
  const root = obj(json);
  if (!Array.isArray(root.content)) throw new WireError("the response has no content array");
  let text = "";
  const toolCalls: ModelToolCall[] = [];
  for (const raw of root.content) {
    const b = obj(raw);
    if (b.type === "text") text += str(b.text);
    else if (b.type === "tool_use" && b.name === JSON_TOOL) text = JSON.stringify(b.input ?? {});
    else if (b.type === "tool_use") toolCalls.push({ id: str(b.id), name: str(b.name), arguments: obj(b.input) });
  }
  const u = obj(root.usage);
  return {
    text,
    toolCalls,
    usage: { input: num(u.input_tokens), output: num(u.output_tokens), cacheRead: num(u.cache_read_input_tokens), cacheWrite: num(u.cache_creation_input_tokens) },
    ...(typeof root.stop_reason === "string" ? { finishReason: root.stop_reason } : {}),
  };
}
