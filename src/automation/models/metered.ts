// A run's view of the model gateway: every call is journaled (model, latency, tokens, the prompt for
// expand=debug) into the run's usage, durably before the answer is handed to the step. A resumed run
// asking the same question again (same step, same request) gets the journaled answer instead of a new,
// paid-for call: a crash after a call never repeats it.
import type { Clock } from "../../kernel/clock";
import type { ModelContent, ModelGateway, ModelMessage, ModelRequest } from "./contract";
import { NoModelConfigured } from "./contract";
import type { ModelCallStore } from "./store";

/** Prompts kept for expand=debug are capped: a long document is evidence enough at this size. */
const MAX_PROMPT_CHARS = 64 * 1024;

const elide = (c: ModelContent) => (c.type === "image" ? { type: "image", mimeType: c.mimeType, bytes: Math.floor((c.base64.length * 3) / 4) } : c);
const promptOf = (m: ModelMessage) => (m.role === "user" && typeof m.content !== "string" ? { ...m, content: m.content.map(elide) } : m);

function debugPrompt(req: ModelRequest): string {
  const s = JSON.stringify({
    system: req.system,
    messages: req.messages.map(promptOf),
    ...(req.json ? { json: req.json.name } : {}),
    ...(req.tools?.length ? { tools: req.tools.map((t) => t.name) } : {}),
  });
  return s.length > MAX_PROMPT_CHARS ? `${s.slice(0, MAX_PROMPT_CHARS)}…` : s;
}

function requestHash(model: string, req: ModelRequest): string {
  const { signal: _signal, ...rest } = req;
  return new Bun.CryptoHasher("sha256").update(JSON.stringify({ ...rest, model })).digest("hex");
}

/** Told of every model call made (not replayed): for the metrics. */
export type ModelUsageObserver = (call: {
  model: string | null;
  status: "ok" | "failed";
  inputTokens: number;
  outputTokens: number;
  cacheReadTokens: number;
  cacheWriteTokens: number;
}) => void;

export function meteredGateway(base: ModelGateway, store: ModelCallStore, runId: string, clock: Clock, observe?: ModelUsageObserver): ModelGateway {
  // Journaled calls this execution already used (replayed or made): each answers one request only.
  const used = new Set<number>();
  return {
    resolve: (model, capability) => base.resolve(model, capability),
    async complete(req) {
      const model = base.resolve(req.model, req.capability);
      const hash = requestHash(model ?? req.model ?? "", req);
      const hit = await store.replayable(runId, hash, used);
      if (hit) {
        used.add(hit.seq);
        return hit.response;
      }
      const startedAt = clock.now().toISOString();
      const t0 = performance.now();
      const row = { runId, stepPath: req.step ?? null, requestHash: hash, startedAt, request: debugPrompt(req) };
      try {
        const res = await base.complete(req);
        const { input, output, cacheRead, cacheWrite } = res.usage;
        used.add(await store.add({
          ...row, model: res.model, provider: res.provider, status: "ok", inputTokens: input, outputTokens: output, cacheReadTokens: cacheRead,
          cacheWriteTokens: cacheWrite, durationMs: res.durationMs, error: null, response: JSON.stringify(res),
        }));
        observe?.({ model: res.model, status: "ok", inputTokens: input, outputTokens: output, cacheReadTokens: cacheRead, cacheWriteTokens: cacheWrite });
        return res;
      } catch (err) {
        // Nothing was sent when no model is configured, and an aborted call is the run stopping, not a call.
        if (!(err instanceof NoModelConfigured) && !req.signal?.aborted) {
          used.add(await store.add({
            ...row, model: model ?? req.model ?? null, provider: model?.split("/")[0] ?? null, status: "failed", inputTokens: 0, outputTokens: 0,
            cacheReadTokens: 0, cacheWriteTokens: 0, durationMs: Math.round(performance.now() - t0), error: (err as Error).message, response: null,
          }));
          observe?.({ model: model ?? req.model ?? null, status: "failed", inputTokens: 0, outputTokens: 0, cacheReadTokens: 0, cacheWriteTokens: 0 });
        }
        throw err;
      }
    },
  };
}

/** The workflow's `defaultModel` answers text requests that name no model (step `model` > workflow > server). */
export function preferModel(base: ModelGateway, model: string): ModelGateway {
  const pick = (m: string | undefined, capability?: string) => m ?? (capability === undefined || capability === "text" ? model : undefined);
  return {
    resolve: (m, capability) => base.resolve(pick(m, capability), capability),
    complete: (req) => base.complete({ ...req, model: pick(req.model, req.capability) }),
  };
}
