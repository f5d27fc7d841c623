// The ModelGateway over the configured providers: picks the model, speaks the provider's wire format,
// applies the per-attempt timeout and retries 429/5xx/timeouts/connection failures with backoff,
// honouring Retry-After. Never logs or echoes the API key (error messages quote the provider's error
// text, which never contains it).
import type { Logger } from "../../kernel/logger";
import { anthropicCall, anthropicResult } from "./anthropic";
import type { ModelsConfig, ProviderConfig } from "./config";
import { type ModelCapability, ModelCallError, type ModelGateway, type ModelRequest, type ModelResponse, NoModelConfigured } from "./contract";
import { openaiCall, openaiResult } from "./openai";
import { obj, str, type WireCall, WireError, type WireResult } from "./wire";

const formats = {
  openai: { call: openaiCall, result: openaiResult },
  anthropic: { call: anthropicCall, result: anthropicResult },
};

export interface GatewayOptions {
  log?: Logger;
}

/** Seconds or an HTTP date, as milliseconds from now; undefined when absent or unreadable. */
export function retryAfterMs(header: string | null, now = Date.now()): number | undefined {
  if (!header) return undefined;
  const s = Number(header);
  if (Number.isFinite(s) && s >= 0) return s * 1000;
  const at = Date.parse(header);
  return Number.isNaN(at) ? undefined : Math.max(0, at - now);
}

function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const t = setTimeout(() => {
      signal?.removeEventListener("abort", stop);
      resolve();
    }, ms);
    const stop = () => {
      clearTimeout(t);
      reject(signal?.reason);
    };
    signal?.addEventListener("abort", stop, { once: true });
  });
}

/** A failed attempt: whether another may help, and how long the server asked us to wait. */
class Attempt extends Error {
  constructor(message: string, readonly retry: boolean, readonly status?: number, readonly waitMs?: number) {
    super(message);
  }
}

/** The provider's own error text (`error.message` in both formats), short. */
function errorText(body: string): string {
  try {
    const e = obj(JSON.parse(body)).error;
    const m = typeof e === "string" ? e : str(obj(e).message);
    if (m) return m.slice(0, 300);
  } catch {
    // not JSON: fall through to the raw text
  }
  return body.slice(0, 300).trim();
}

async function attempt(p: ProviderConfig, call: WireCall, read: (json: unknown) => WireResult, signal: AbortSignal | undefined): Promise<WireResult> {
  const timeout = AbortSignal.timeout(p.timeoutMs);
  const sig = signal ? AbortSignal.any([signal, timeout]) : timeout;
  let res: Response;
  let body: string;
  try {
    res = await fetch(call.url, { method: "POST", headers: call.headers, body: JSON.stringify(call.body), signal: sig, redirect: "error" });
    body = await res.text();
  } catch (err) {
    if (signal?.aborted) throw signal.reason;
    if (timeout.aborted) throw new Attempt(`${p.id}: no answer within ${p.timeoutMs} ms`, true);
    throw new Attempt(`${p.id}: cannot reach ${new URL(call.url).origin}: ${(err as Error).message}`, true);
  }
  if (!res.ok) {
    const retry = res.status === 429 || res.status >= 500;
    throw new Attempt(`${p.id} answered ${res.status}: ${errorText(body) || res.statusText}`, retry, res.status, retryAfterMs(res.headers.get("retry-after")));
  }
  let json: unknown;
  try {
    json = JSON.parse(body);
  } catch {
    throw new Attempt(`${p.id} answered ${res.status} with a body that is not JSON: ${body.slice(0, 200)}`, false, res.status);
  }
  try {
    return read(json);
  } catch (err) {
    if (err instanceof WireError) throw new Attempt(`${p.id}: unreadable response: ${err.message}`, false, res.status);
    throw err;
  }
}

export function createGateway(config: ModelsConfig, opts: GatewayOptions = {}): ModelGateway {
  const providers = new Map(config.providers.map((p) => [p.id, p]));

  /** `provider/model`, or a bare model name listed by exactly one provider (first wins). */
  const locate = (id: string): { provider: ProviderConfig; model: string } | undefined => {
    const slash = id.indexOf("/");
    if (slash > 0) {
      const provider = providers.get(id.slice(0, slash));
      if (provider) return { provider, model: id.slice(slash + 1) };
    }
    for (const provider of config.providers) if (provider.models.some((m) => m.name === id)) return { provider, model: id };
    return undefined;
  };

  const resolve = (model: string | undefined, capability?: ModelCapability): string | undefined => {
    const id = model ?? config.defaults[capability ?? "text"];
    if (!id) return undefined;
    const at = locate(id);
    return at ? `${at.provider.id}/${at.model}` : undefined;
  };

  async function complete(req: ModelRequest): Promise<ModelResponse> {
    const id = resolve(req.model, req.capability);
    if (!id) {
      throw new NoModelConfigured(req.model ? `"${req.model}" is not a configured model` : `no default ${req.capability ?? "text"} model`);
    }
    const { provider, model } = locate(id)!;
    const key = config.keys.get(provider.id);
    if (provider.keyRequired && !key) {
      throw new NoModelConfigured(`provider ${provider.id} has no API key${provider.apiKeyEnv ? `: set ${provider.apiKeyEnv}` : ""}`);
    }
    const format = formats[provider.type];
    const call = format.call(provider, model, req, key);
    const started = performance.now();
    for (let n = 0; ; n++) {
      try {
        const result = await attempt(provider, call, format.result, req.signal);
        return { model: id, provider: provider.id, ...result, durationMs: Math.round(performance.now() - started) };
      } catch (err) {
        if (!(err instanceof Attempt)) throw err;
        const last = n >= provider.maxRetries;
        if (!err.retry || last) {
          throw new ModelCallError(last && err.retry && n > 0 ? `${err.message} (after ${n + 1} attempts)` : err.message, err.status);
        }
        const backoff = provider.retryBaseMs * 2 ** n * (0.5 + Math.random() / 2);
        const wait = err.waitMs ?? backoff;
        if (wait > provider.maxRetryAfterMs) throw new ModelCallError(`${err.message} (asked to retry after ${Math.round(wait / 1000)} s)`, err.status);
        opts.log?.warn("model call retried", { model: id, status: err.status, attempt: n + 1, waitMs: Math.round(wait) });
        await sleep(wait, req.signal);
      }
    }
  }

  return { resolve, complete };
}
