// action.http {url, method, headers, body, timeout, failOnError}: one HTTP request to a host on the
// operator's allow-list (services.httpAllowHosts: `host`, `host:port` or `*.suffix`). Redirects are
// followed only to allowed hosts. A host name must also resolve to public addresses only (or ones in
// --outbound-allow), checked on every hop; the request goes to the checked address (Host header and
// TLS name stay the name's), so a second DNS answer cannot send it elsewhere. An IP address the
// operator lists exactly in the allow-list is reached as listed. Output {status, ok, headers, body}
// with a JSON body parsed. Evaluation runs skip non-GET/HEAD/OPTIONS requests.
import * as v from "valibot";
import { ipBytes, OutboundRefused, pinTarget, ResolveFailed } from "../../http/outbound";
import { StepError } from "../errors";
import { defineKind } from "../kind";

const MAX_BODY = 10 * 1024 * 1024;
const MAX_REDIRECTS = 5;

export const schema = v.strictObject({
  url: v.pipe(v.string(), v.url("must be an absolute URL")),
  method: v.optional(v.picklist(["GET", "POST", "PUT", "PATCH", "DELETE", "HEAD", "OPTIONS"]), "GET"),
  headers: v.optional(v.record(v.string(), v.union([v.string(), v.number(), v.boolean()])), {}),
  body: v.optional(v.unknown()),
  timeout: v.optional(v.pipe(v.number(), v.integer(), v.minValue(1), v.maxValue(600_000)), 30_000),
  failOnError: v.optional(v.boolean(), true),
});

/** Whether `url`'s host is allowed by one of `allow` (exact host, host:port, or `*.suffix`). */
export function hostAllowed(url: URL, allow: string[]): boolean {
  const host = url.hostname.toLowerCase().replace(/^\[|\]$/g, "");
  const port = url.port || (url.protocol === "https:" ? "443" : "80");
  return allow.some((raw) => {
    const entry = raw.trim().toLowerCase();
    if (entry.startsWith("*.")) return host.endsWith(entry.slice(1));
    const [h, p] = splitEntry(entry);
    return h === host && (p === undefined || p === port);
  });
}

/** `host`, `host:port`, `[v6]`, `[v6]:port`, or a bare IPv6 address (several colons, no port). */
function splitEntry(entry: string): [string, string | undefined] {
  const bracketed = /^\[([^\]]+)\](?::(\d+))?$/.exec(entry);
  if (bracketed) return [bracketed[1], bracketed[2]];
  if ((entry.match(/:/g) ?? []).length > 1) return [entry, undefined];
  const [h, p] = entry.split(":");
  return [h, p];
}

/**
 * Where the request for `url` goes: the URL with the checked address in place of the name, the Host
 * header and the TLS server name. An IP address named exactly in the allow-list is the operator's
 * own choice and is not checked again.
 */
async function pin(url: URL, allowHosts: string[], outboundAllow: string[]): Promise<{ target: URL; host?: string; serverName?: string }> {
  if (ipBytes(url.hostname) && hostAllowed(url, allowHosts.filter((e) => !e.trim().startsWith("*.")))) return { target: url };
  return pinTarget(url, outboundAllow);
}

async function readLimited(res: Response): Promise<Uint8Array> {
  if (!res.body) return new Uint8Array();
  const chunks: Uint8Array[] = [];
  let size = 0;
  for await (const chunk of res.body) {
    size += chunk.byteLength;
    if (size > MAX_BODY) throw new StepError(`response body exceeds ${MAX_BODY} bytes`, "http_response_too_large", { retryable: false });
    chunks.push(chunk);
  }
  return Buffer.concat(chunks);
}

export default defineKind({
  type: "action.http",
  configAt: "with",
  schema,
  // Safe methods read; the others change something somewhere, which evaluation runs must not do.
  sideEffect: (config) => !["GET", "HEAD", "OPTIONS"].includes(config.method),
  async run(config, ctx) {
    const headers = new Headers(Object.entries(config.headers).map(([k, val]) => [k, String(val)]));
    let body: string | undefined;
    if (config.body !== undefined && config.body !== null) {
      if (typeof config.body === "string") body = config.body;
      else {
        body = JSON.stringify(config.body);
        if (!headers.has("content-type")) headers.set("content-type", "application/json");
      }
    }
    const signal = AbortSignal.any([ctx.signal, AbortSignal.timeout(config.timeout)]);
    let url = new URL(config.url);
    let method: string = config.method;
    let res: Response;
    for (let hop = 0; ; hop++) {
      if (url.protocol !== "http:" && url.protocol !== "https:") throw new StepError(`unsupported URL scheme ${url.protocol}`, "http_forbidden_host", { retryable: false });
      if (!hostAllowed(url, ctx.services.httpAllowHosts)) {
        throw new StepError(`host ${url.host} is not in the HTTP allow-list of this server`, "http_forbidden_host", { retryable: false });
      }
      let pinned: Awaited<ReturnType<typeof pin>>;
      try {
        // The lookup has no signal of its own: the step's timeout and cancel still bound it.
        const aborted = new Promise<never>((_, reject) => signal.addEventListener("abort", () => reject(signal.reason), { once: true }));
        aborted.catch(() => {}); // an abort after the lookup is the fetch's to report
        pinned = await Promise.race([pin(url, ctx.services.httpAllowHosts, ctx.services.outboundAllow ?? []), aborted]);
      } catch (e) {
        if (ctx.signal.aborted) throw ctx.signal.reason;
        if (signal.aborted) throw new StepError(`request to ${url.host} timed out after ${config.timeout} ms`, "http_timeout");
        if (e instanceof OutboundRefused) throw new StepError(e.message, "http_forbidden_host", { retryable: false });
        if (e instanceof ResolveFailed) throw new StepError(`request to ${url.host} failed: ${e.message}`, "http_unreachable");
        throw e;
      }
      const sent = new Headers(headers);
      if (pinned.host) sent.set("host", pinned.host);
      try {
        res = await fetch(pinned.target, {
          method, headers: sent, body: method === "GET" || method === "HEAD" ? undefined : body, redirect: "manual", signal,
          ...(pinned.serverName ? { tls: { serverName: pinned.serverName } } : {}),
        });
      } catch (e) {
        if (ctx.signal.aborted) throw ctx.signal.reason;
        const timedOut = (e as Error).name === "TimeoutError" || signal.aborted;
        throw new StepError(timedOut ? `request to ${url.host} timed out after ${config.timeout} ms` : `request to ${url.host} failed: ${(e as Error).message}`, timedOut ? "http_timeout" : "http_unreachable");
      }
      const location = res.headers.get("location");
      if (res.status < 300 || res.status >= 400 || !location || hop >= MAX_REDIRECTS) break;
      await res.body?.cancel();
      url = new URL(location, url);
      if (res.status === 303) method = "GET";
    }
    const bytes = await readLimited(res);
    const text = new TextDecoder().decode(bytes);
    let parsed: unknown = text;
    if ((res.headers.get("content-type") ?? "").includes("json") && text !== "") {
      try {
        parsed = JSON.parse(text);
      } catch {
        parsed = text;
      }
    }
    const out = { status: res.status, ok: res.ok, headers: Object.fromEntries(res.headers), body: parsed };
    if (config.failOnError && !res.ok) {
      // 5xx and 429 may pass on retry; other 4xx will not.
      const retryable = res.status >= 500 || res.status === 429;
      throw new StepError(`${method} ${url.host}${url.pathname} answered ${res.status}`, "http_error", { retryable });
    }
    return out;
  },
});
