// A loopback fake model server speaking the real wire formats: OpenAI chat completions
// (`POST /v1/chat/completions`) and Anthropic Messages (`POST /v1/messages`). Replies are scripted
// (a queue, then a fallback function of the request): text, JSON (as JSON-mode content, or as the
// forced tool call Anthropic structured output uses), tool calls, HTTP errors with Retry-After, a hang,
// a connection dropped in the middle of the answer (reset), or a malformed body. Every request is
// recorded, so tests count calls and inspect what was sent.
//
//   const fake = await startFakeModels();
//   fake.script({ json: { total: 12 } }, { status: 429, retryAfter: 1 });
//   const h = await harness({ models: fake.config() });   // providers "fake" (openai) + "fakeclaude" (anthropic)
import { modelsConfig, type ModelsConfig } from "../../src/automation/models/config";

export interface FakeUsage {
  input?: number;
  output?: number;
  cacheRead?: number;
  cacheWrite?: number;
}

export type FakeReply = (
  | { text: string }
  | { json: unknown }
  | { toolCalls: { name: string; arguments: Record<string, unknown>; id?: string }[]; text?: string }
  | { status: number; body?: unknown; retryAfter?: number | string }
  | { hang: true }
  | { reset: true }
  | { malformed: string }
) & { usage?: FakeUsage; delayMs?: number };

export interface FakeRequest {
  format: "openai" | "anthropic";
  path: string;
  headers: Record<string, string>;
  body: Record<string, unknown>;
  /** Concatenated text of the system prompt and every message, for quick assertions and fallbacks. */
  prompt: string;
}

export interface FakeModels {
  /** `http://127.0.0.1:PORT` (Anthropic base URL); the OpenAI base URL is `${url}/v1`. */
  url: string;
  requests: FakeRequest[];
  /** Queue replies, consumed in order before the fallback. */
  script(...replies: FakeReply[]): void;
  /** Reply used when the queue is empty (default: `{text: "ok"}`). */
  fallback: (req: FakeRequest) => FakeReply;
  /** Added to every reply, e.g. 50 ms for the benchmark. */
  latencyMs: number;
  /** A ModelsConfig over this server: `fake` (OpenAI format, default text+vision) and `fakeclaude` (Anthropic, key `test-key`). */
  config(over?: { timeoutMs?: number; maxRetries?: number; retryBaseMs?: number; defaults?: Record<string, string> }): ModelsConfig;
  /** The same as a `--models` TOML file body, for the compiled server. */
  toml(over?: { timeoutMs?: number; maxRetries?: number; retryBaseMs?: number }): string;
  close(): Promise<void>;
}

export const DEFAULT_USAGE = { input: 100, output: 20, cacheRead: 0, cacheWrite: 0 };

function textOf(body: Record<string, unknown>): string {
  const parts: string[] = [];
  const walk = (x: unknown) => {
    if (typeof x === "string") parts.push(x);
    else if (Array.isArray(x)) x.forEach(walk);
    else if (x && typeof x === "object") {
      const o = x as Record<string, unknown>;
      for (const k of ["text", "content", "system"]) if (k in o) walk(o[k]);
    }
  };
  walk(body.system);
  walk(body.messages);
  return parts.join("\n");
}

function openaiBody(reply: FakeReply, model: string, usage: Required<FakeUsage>): unknown {
  const message: Record<string, unknown> = { role: "assistant", content: null };
  if ("text" in reply && !("toolCalls" in reply)) message.content = reply.text;
  if ("json" in reply) message.content = JSON.stringify(reply.json);
  if ("toolCalls" in reply) {
    message.content = reply.text ?? null;
    message.tool_calls = reply.toolCalls.map((c, i) => ({ id: c.id ?? `call_${i}`, type: "function", function: { name: c.name, arguments: JSON.stringify(c.arguments) } }));
  }
  return {
    id: "chatcmpl-fake",
    object: "chat.completion",
    model,
    choices: [{ index: 0, message, finish_reason: "toolCalls" in reply ? "tool_calls" : "stop" }],
    usage: {
      prompt_tokens: usage.input + usage.cacheRead,
      completion_tokens: usage.output,
      total_tokens: usage.input + usage.cacheRead + usage.output,
      prompt_tokens_details: { cached_tokens: usage.cacheRead },
    },
  };
}

function anthropicBody(reply: FakeReply, req: Record<string, unknown>, model: string, usage: Required<FakeUsage>): unknown {
  const content: Record<string, unknown>[] = [];
  const forced = (req.tool_choice as { type?: string; name?: string } | undefined)?.type === "tool" ? (req.tool_choice as { name: string }).name : undefined;
  if ("json" in reply) {
    if (forced) content.push({ type: "tool_use", id: "toolu_json", name: forced, input: reply.json });
    else content.push({ type: "text", text: JSON.stringify(reply.json) });
  }
  if ("text" in reply && reply.text !== undefined) content.push({ type: "text", text: reply.text });
  if ("toolCalls" in reply) reply.toolCalls.forEach((c, i) => content.push({ type: "tool_use", id: c.id ?? `toolu_${i}`, name: c.name, input: c.arguments }));
  return {
    id: "msg_fake",
    type: "message",
    role: "assistant",
    model,
    content,
    stop_reason: "toolCalls" in reply || (forced && "json" in reply) ? "tool_use" : "end_turn",
    usage: { input_tokens: usage.input, output_tokens: usage.output, cache_read_input_tokens: usage.cacheRead, cache_creation_input_tokens: usage.cacheWrite },
  };
}

export async function startFakeModels(opts: { latencyMs?: number } = {}): Promise<FakeModels> {
  const queue: FakeReply[] = [];
  const hanging = new Set<() => void>();
  const fake: Omit<FakeModels, "url"> & { url: string } = {
    url: "",
    requests: [],
    latencyMs: opts.latencyMs ?? 0,
    script: (...replies) => void queue.push(...replies),
    fallback: () => ({ text: "ok" }),
    config(over = {}) {
      return modelsConfig(
        {
          defaults: over.defaults ?? { text: "fake/small", vision: "fake/vision" },
          providers: {
            fake: {
              type: "openai",
              base_url: `${fake.url}/v1`,
              timeout_ms: over.timeoutMs ?? 5_000,
              max_retries: over.maxRetries ?? 2,
              retry_base_ms: over.retryBaseMs ?? 10,
              models: ["small", { name: "vision", capabilities: ["text", "vision", "ocr"] }],
            },
            fakeclaude: {
              type: "anthropic",
              base_url: fake.url,
              api_key: "test-key",
              timeout_ms: over.timeoutMs ?? 5_000,
              max_retries: over.maxRetries ?? 2,
              retry_base_ms: over.retryBaseMs ?? 10,
              models: ["claude"],
            },
          },
        },
        {},
      );
    },
    toml(over = {}) {
      const common = `timeout_ms = ${over.timeoutMs ?? 5000}\nmax_retries = ${over.maxRetries ?? 2}\nretry_base_ms = ${over.retryBaseMs ?? 10}`;
      return [
        `[defaults]\ntext = "fake/small"\nvision = "fake/vision"\n`,
        `[providers.fake]\ntype = "openai"\nbase_url = "${fake.url}/v1"\n${common}\nmodels = ["small", { name = "vision", capabilities = ["text", "vision", "ocr"] }]\n`,
        `[providers.fakeclaude]\ntype = "anthropic"\nbase_url = "${fake.url}"\napi_key_env = "FAKE_ANTHROPIC_KEY"\n${common}\nmodels = ["claude"]\n`,
      ].join("\n");
    },
    async close() {
      for (const release of hanging) release();
      server.stop(true);
    },
  };

  const server = Bun.serve({
    port: 0,
    hostname: "127.0.0.1",
    idleTimeout: 0, // a hanging reply must hang until the client gives up, not until Bun's idle timer
    async fetch(request) {
      const path = new URL(request.url).pathname;
      const format = path.endsWith("/chat/completions") ? "openai" : path.endsWith("/messages") ? "anthropic" : undefined;
      if (!format || request.method !== "POST") return Response.json({ error: { message: `no route ${request.method} ${path}` } }, { status: 404 });
      const body = (await request.json()) as Record<string, unknown>;
      const headers = Object.fromEntries(request.headers.entries());
      const req: FakeRequest = { format, path, headers, body, prompt: textOf(body) };
      fake.requests.push(req);
      const reply = queue.shift() ?? fake.fallback(req);
      const delay = fake.latencyMs + (reply.delayMs ?? 0);
      if (delay > 0) await Bun.sleep(delay);
      if ("hang" in reply) {
        await new Promise<void>((resolve) => {
          const release = () => (hanging.delete(release), resolve());
          hanging.add(release);
          request.signal.addEventListener("abort", release, { once: true });
        });
        return new Response("released", { status: 503 });
      }
      if ("reset" in reply) {
        // Headers and a few bytes go out, then the body fails: Bun drops the connection mid-answer and
        // the client reads ECONNRESET. (Bun prints the stream's error; it is the scripted reset.)
        const body = new ReadableStream<Uint8Array>({
          async pull(c) {
            c.enqueue(new TextEncoder().encode('{"id":"chatcmpl-'));
            await Bun.sleep(20);
            c.error(new Error("fake-models: scripted connection reset"));
          },
        });
        return new Response(body, { headers: { "content-type": "application/json" } });
      }
      if ("status" in reply) {
        const h: Record<string, string> = reply.retryAfter !== undefined ? { "retry-after": String(reply.retryAfter) } : {};
        return Response.json(reply.body ?? { error: { type: "fake_error", message: `scripted ${reply.status}` } }, { status: reply.status, headers: h });
      }
      if ("malformed" in reply) return new Response(reply.malformed, { headers: { "content-type": "application/json" } });
      const usage = { ...DEFAULT_USAGE, ...reply.usage };
      const model = String(body.model ?? "");
      return Response.json(format === "openai" ? openaiBody(reply, model, usage) : anthropicBody(reply, body, model, usage));
    },
  });
  fake.url = `http://127.0.0.1:${server.port}`;
  return fake;
}
