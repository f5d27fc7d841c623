// One HTTP call with the client's policy: Bearer auth (or a browser's session cookie), a per-request timeout, retries with backoff on
// 429/5xx/timeouts/network errors (honouring Retry-After), and typed errors for the rest.
import { AutomationError, errorFor, TimeoutError, type ApiErrorEnvelope } from "./errors";

export interface TransportOptions {
  baseUrl: string;
  /** Absent in session mode. */
  apiKey?: string;
  /** Cookie session (a browser): the cookie goes along; writes send the CSRF token. */
  session?: { csrfToken?: string };
  timeoutMs: number;
  maxRetries: number;
  /** First backoff step; doubles per attempt (250 ms → 500 ms → 1 s ...). */
  retryBaseMs: number;
  /** Upper bound for one wait, also for a server's Retry-After. */
  maxRetryDelayMs: number;
  defaultHeaders: Record<string, string>;
}

export type QueryValue = string | number | boolean | undefined | null | string[];

export interface RequestSpec {
  method: string;
  /** `/v1/...` (joined to the base URL) or an absolute URL (signed upload URLs). */
  path: string;
  query?: Record<string, QueryValue>;
  json?: unknown;
  body?: Blob | FormData | Uint8Array | string;
  headers?: Record<string, string>;
  /** false for signed URLs: never send the API key to them. */
  auth?: boolean;
  timeoutMs?: number;
  signal?: AbortSignal;
}

/** A fetch body, named the same under Bun's types and the DOM's (the console's build). */
type FetchBody = NonNullable<Parameters<typeof fetch>[1]>["body"];

const SAFE_METHODS = new Set(["GET", "HEAD", "OPTIONS"]);

const RETRIABLE = (status: number) => status === 408 || status === 429 || status >= 500;

/** Seconds from a Retry-After header (delta-seconds or an HTTP date), or undefined. */
export function parseRetryAfter(value: string | null, now = Date.now()): number | undefined {
  if (!value) return undefined;
  if (/^\s*\d+(\.\d+)?\s*$/.test(value)) return Number(value);
  const at = Date.parse(value);
  return Number.isNaN(at) ? undefined : Math.max(0, (at - now) / 1000);
}

const sleep = (ms: number, signal?: AbortSignal) =>
  new Promise<void>((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const t = setTimeout(resolve, ms);
    signal?.addEventListener("abort", () => {
      clearTimeout(t);
      reject(signal.reason);
    }, { once: true });
  });

export class Transport {
  constructor(readonly opts: TransportOptions) {}

  url(path: string, query?: Record<string, QueryValue>): string {
    const u = /^https?:\/\//i.test(path) ? new URL(path) : new URL(this.opts.baseUrl.replace(/\/+$/, "") + path);
    for (const [k, v] of Object.entries(query ?? {})) {
      if (v === undefined || v === null) continue;
      u.searchParams.set(k, Array.isArray(v) ? v.join(",") : String(v));
    }
    return u.toString();
  }

  /** The parsed JSON answer of a 2xx response. */
  async json<T>(spec: RequestSpec): Promise<T> {
    return this.send(spec, async (r) => (r.status === 204 ? (undefined as T) : ((await r.json()) as T)));
  }

  /** The 2xx Response itself (bodies to stream); the timeout stops once the headers are in. */
  async response(spec: RequestSpec): Promise<Response> {
    return this.send(spec, async (r) => r, true);
  }

  private async send<T>(spec: RequestSpec, read: (r: Response) => Promise<T>, stream = false): Promise<T> {
    const headers: Record<string, string> = { ...this.opts.defaultHeaders, ...spec.headers };
    const session = this.opts.session;
    if (spec.auth !== false && this.opts.apiKey) headers.authorization = `Bearer ${this.opts.apiKey}`;
    if (spec.auth !== false && session?.csrfToken && !SAFE_METHODS.has(spec.method.toUpperCase())) headers["x-csrf-token"] = session.csrfToken;
    let body: Blob | FormData | Uint8Array | string | undefined = spec.body;
    if (spec.json !== undefined) {
      body = JSON.stringify(spec.json);
      headers["content-type"] = "application/json";
    }
    const url = this.url(spec.path, spec.query);
    const timeoutMs = spec.timeoutMs ?? this.opts.timeoutMs;
    for (let attempt = 0; ; attempt++) {
      const last = attempt >= this.opts.maxRetries;
      const ctl = new AbortController();
      let timedOut = false;
      const timer = setTimeout(() => {
        timedOut = true;
        ctl.abort(new TimeoutError(`${spec.method} ${spec.path} timed out after ${timeoutMs} ms`));
      }, timeoutMs);
      const onAbort = () => ctl.abort(spec.signal?.reason);
      spec.signal?.addEventListener("abort", onAbort, { once: true });
      const done = () => {
        clearTimeout(timer);
        spec.signal?.removeEventListener("abort", onAbort);
      };
      let res: Response;
      try {
        res = await fetch(url, { method: spec.method, headers, body: body as FetchBody, signal: ctl.signal, ...(session && spec.auth !== false ? { credentials: "same-origin" as const } : {}) });
      } catch (err) {
        done();
        if (spec.signal?.aborted) throw spec.signal.reason ?? err;
        if (last) {
          if (timedOut) throw new TimeoutError(`${spec.method} ${spec.path} timed out after ${timeoutMs} ms`);
          throw new AutomationError(`${spec.method} ${spec.path} failed: ${(err as Error).message}`, { status: 0 });
        }
        await sleep(this.backoff(attempt), spec.signal);
        continue;
      }
      if (res.ok) {
        if (stream) {
          done();
          return read(res);
        }
        try {
          return await read(res);
        } catch (err) {
          if (spec.signal?.aborted) throw spec.signal.reason ?? err;
          if (!timedOut || last) throw timedOut ? new TimeoutError(`${spec.method} ${spec.path} timed out reading the answer`) : err;
          await sleep(this.backoff(attempt), spec.signal);
          continue;
        } finally {
          done();
        }
      }
      const retryAfter = parseRetryAfter(res.headers.get("retry-after"));
      if (RETRIABLE(res.status) && !last) {
        await res.body?.cancel().catch(() => {});
        done();
        const wait = retryAfter !== undefined ? Math.min(retryAfter * 1000, this.opts.maxRetryDelayMs) : this.backoff(attempt);
        await sleep(wait, spec.signal);
        continue;
      }
      let envelope: ApiErrorEnvelope | undefined;
      try {
        const parsed = (await res.json()) as ApiErrorEnvelope;
        if (parsed && Array.isArray(parsed.issues)) envelope = parsed;
      } catch {
        // not an envelope (a proxy's HTML page, an empty body)
      } finally {
        done();
      }
      throw errorFor(res.status, { envelope, requestId: envelope?.requestId ?? res.headers.get("x-request-id") ?? undefined, retryAfter });
    }
  }

  private backoff(attempt: number): number {
    return Math.min(this.opts.retryBaseMs * 2 ** attempt, this.opts.maxRetryDelayMs);
  }
}
