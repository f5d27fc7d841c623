// The HTTP a provider fetch uses: one base URL (overridable), one abort signal for the whole fetch.
import type { Http, Reply } from "../providers/provider";

/** A transport failure (refused, reset, DNS, timeout): becomes `network_error`. */
export class NetworkError extends Error {}

export function makeHttp(base: string, signal: AbortSignal): Http {
  const call = async (method: string, path: string, body: unknown, headers: Record<string, string> = {}): Promise<Reply> => {
    const url = /^https?:\/\//.test(path) ? path : base + path;
    let res: Response;
    let text: string;
    try {
      res = await fetch(url, {
        method,
        headers: body === undefined ? headers : { "Content-Type": "application/json", ...headers },
        body: body === undefined ? undefined : JSON.stringify(body),
        signal,
      });
      text = await res.text();
    } catch (err) {
      if (signal.aborted) throw new NetworkError("timed out");
      const e = err as { code?: string; message?: string };
      const msg = e.message ?? String(err);
      throw new NetworkError((e.code && !msg.includes(e.code) ? `${e.code}: ${msg}` : msg).slice(0, 200));
    }
    let json: unknown;
    try {
      json = text.trim() ? JSON.parse(text) : undefined;
    } catch {
      json = undefined;
    }
    return { status: res.status, ok: res.ok, json, text, retryAfter: retryAfter(res.headers.get("retry-after")) };
  };
  return {
    base,
    get: (path, headers) => call("GET", path, undefined, headers),
    post: (path, body, headers) => call("POST", path, body, headers),
  };
}

/** Retry-After in seconds (delta-seconds or an HTTP date), capped at a day. */
export function retryAfter(v: string | null, now = Date.now()): number | undefined {
  if (!v) return undefined;
  const secs = /^\d+$/.test(v.trim()) ? Number(v) : (Date.parse(v) - now) / 1000;
  return Number.isFinite(secs) && secs > 0 ? Math.min(Math.ceil(secs), 86_400) : undefined;
}

/** `QUOTAS_ENDPOINT_<PROVIDER>` > `[endpoints]` > the provider's default. */
export function endpointFor(id: string, defaultUrl: string, env: Record<string, string | undefined>, endpoints: Record<string, string>): string {
  const url = env[`QUOTAS_ENDPOINT_${id.toUpperCase()}`] || endpoints[id] || defaultUrl;
  return url.replace(/\/+$/, "");
}
