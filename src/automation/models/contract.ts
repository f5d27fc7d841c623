// The model seam: the one interface through which AI steps (ai.*), the llm-judge evaluator and the
// agent loop call language models. The providers (OpenAI-compatible chat completions, Anthropic
// Messages), their configuration, retries and timeouts live behind it (models/ feature); callers only
// see requests and responses in this neutral shape. Absent (`ctx.models` undefined) = no model
// configured: callers fail with NoModelConfigured, never with a made-up answer.

/** One part of a message: text, or an image for vision-capable models. */
export type ModelContent = { type: "text"; text: string } | { type: "image"; mimeType: string; base64: string };

export interface ModelToolCall {
  /** Provider's call id (echoed back in the tool result message). */
  id: string;
  name: string;
  arguments: Record<string, unknown>;
}

export type ModelMessage =
  | { role: "user"; content: string | ModelContent[] }
  | { role: "assistant"; content: string; toolCalls?: ModelToolCall[] }
  | { role: "tool"; toolCallId: string; content: string };

export interface ModelTool {
  name: string;
  description?: string;
  /** JSON Schema of the arguments object. */
  parameters: Record<string, unknown>;
}

export type ModelCapability = "text" | "vision" | "ocr";

export interface ModelRequest {
  /** Catalog id (`openai/gpt-4o-mini`, `ollama/llama3.1`) or undefined for the server default. */
  model?: string;
  /** Needed capability; the default model for it is used when `model` is undefined. */
  capability?: ModelCapability;
  system?: string;
  messages: ModelMessage[];
  temperature?: number;
  maxTokens?: number;
  /** Ask for a JSON object matching this schema (structured output / JSON mode where supported). */
  json?: { name: string; schema: Record<string, unknown> };
  tools?: ModelTool[];
  signal?: AbortSignal;
  /** Path of the workflow step making the call (`extract`, `loop[2].classify`), for the run's trace. */
  step?: string;
}

export interface ModelUsage {
  input: number;
  output: number;
  cacheRead: number;
  cacheWrite: number;
}

export interface ModelResponse {
  /** Catalog id of the model that answered. */
  model: string;
  provider: string;
  text: string;
  toolCalls: ModelToolCall[];
  usage: ModelUsage;
  /** Wall time of the call including retries. */
  durationMs: number;
  finishReason?: string;
}

export interface ModelGateway {
  /** Catalog id that a request for `model` / `capability` would use, or undefined when none is configured. */
  resolve(model: string | undefined, capability?: ModelCapability): string | undefined;
  /** Calls the model. Throws NoModelConfigured, or a ModelCallError after retries are exhausted. */
  complete(request: ModelRequest): Promise<ModelResponse>;
}

/** No model could be chosen for the request: the message names the server flag to set. */
export class NoModelConfigured extends Error {
  readonly code = "no_model_configured";
  constructor(detail?: string) {
    super(`no model configured${detail ? ` (${detail})` : ""}: start the server with --models FILE (see docs/automation/models.md)`);
  }
}

/** A model call that failed for good (HTTP error after retries, timeout, unusable answer). */
export class ModelCallError extends Error {
  readonly code = "model_call_failed";
  constructor(message: string, readonly status?: number) {
    super(message);
  }
}
