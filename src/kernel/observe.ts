// What both servers do around every request, outside the app's own routing: a request id (the client's
// `x-request-id` when well-formed, else a new one) echoed on the response, one log line per request
// (method, route template, status, duration, request id and who asked), the HTTP metrics, and
// `GET /metrics` when it is served on the API port. It wraps the app's fetch handler, so it sees the
// final status of every response, errors included (Elysia's own after-response hook does not).
import type { AnyElysia } from "elysia";
import { newId } from "./ids";
import type { Logger } from "./logger";
import type { Metrics } from "./metrics";

// The id and the log fields ride on the request object itself (a symbol-keyed property: cheaper on every
// request than a WeakMap entry, and invisible to anything else).
const ID = Symbol("requestId");
const NOTES = Symbol("requestNotes");
/** On a request made from another one (a body wrapped for its deadline): the request the server received. */
const ORIGIN = Symbol("requestOrigin");
type Marked = Request & { [ID]?: string; [NOTES]?: Record<string, string>; [ORIGIN]?: Request };

/**
 * Declares `derived` a stand-in for `from` (same request, another object, e.g. with a wrapped body):
 * both then have one request id and one set of log fields.
 */
export function derivedRequest(derived: Request, from: Request): void {
  (derived as Marked)[ORIGIN] = (from as Marked)[ORIGIN] ?? from;
}

/** The path of an absolute request URL, without its query: by string search, no URL object (every request asks). */
export function pathOf(url: string): string {
  const at = url.indexOf("/", url.indexOf("//") + 2);
  if (at === -1) return "/";
  const q = url.indexOf("?", at);
  return q === -1 ? url.slice(at) : url.slice(at, q);
}

/** A client's request id is kept when it is 1-128 characters of `[A-Za-z0-9_.:-]`, else a new `req_…`. */
export function acceptedRequestId(given: string | null): string {
  return given && /^[\w.:-]{1,128}$/.test(given) ? given : newId("req");
}

/** The request's id (assigned on first ask, so apps used without `observeHttp` still get one). */
export function requestIdOf(received: Request): string {
  const request: Marked = (received as Marked)[ORIGIN] ?? received;
  return (request[ID] ??= acceptedRequestId(request.headers.get("x-request-id")));
}

/** Adds fields to the request's log line (the tenant or user it authenticated as). Never secrets. */
export function noteRequest(received: Request, fields: Record<string, string>): void {
  const request: Marked = (received as Marked)[ORIGIN] ?? received;
  const had = request[NOTES];
  request[NOTES] = had ? { ...had, ...fields } : fields;
}

interface RouteEntry {
  method: string;
  path: string;
  pattern: RegExp;
}

/**
 * Route templates of an app, for labels and log lines: `GET /v1/runs/exec_123` → `/v1/runs/:id`.
 * Static paths first, then parametrized ones in registration order (as Elysia's router prefers them).
 */
export function routeTemplates(routes: readonly { method: string; path: string }[]): (method: string, path: string) => string | undefined {
  const exact = new Map<string, string>();
  const dynamic: RouteEntry[] = [];
  for (const r of routes) {
    const method = r.method.toUpperCase();
    if (!/[:*]/.test(r.path)) {
      exact.set(`${method} ${r.path}`, r.path);
      continue;
    }
    const source = r.path.replace(/[.+?^${}()|[\]\\]/g, "\\$&").replace(/:[^/]+/g, "[^/]+").replace(/\*/g, ".*");
    dynamic.push({ method, path: r.path, pattern: new RegExp(`^${source}/?$`) });
  }
  // Parametrized routes by their first segment (`/v1`, `/orders`, ...) when it is static, in
  // registration order: a request tests the few that can match, not every route of the app.
  const first = (path: string) => path.slice(0, path.indexOf("/", 1) === -1 ? undefined : path.indexOf("/", 1));
  const byFirst = new Map<string, RouteEntry[]>();
  const anyFirst: RouteEntry[] = [];
  for (const r of dynamic) {
    const head = first(r.path);
    if (/[:*]/.test(head)) anyFirst.push(r);
    else byFirst.set(head, [...(byFirst.get(head) ?? []), r]);
  }
  for (const [head, list] of byFirst) byFirst.set(head, dynamic.filter((r) => list.includes(r) || anyFirst.includes(r)));
  return (method, path) => {
    const m = method === "HEAD" ? "GET" : method;
    const trimmed = path.length > 1 && path.endsWith("/") ? path.slice(0, -1) : path;
    const hit = exact.get(`${m} ${trimmed}`) ?? exact.get(`ALL ${trimmed}`);
    if (hit) return hit;
    for (const r of byFirst.get(first(path)) ?? anyFirst) if ((r.method === m || r.method === "ALL") && r.pattern.test(path)) return r.path;
    return undefined;
  };
}

export interface ObserveOptions {
  log: Logger;
  /** Records the HTTP series when given. */
  metrics?: Metrics;
  /** Answer `GET /metrics` on this app (no credentials; the series carry no tenant data). */
  serveMetrics?: boolean;
}

/** The label for a path no route matched: unmatched paths never become label values. */
export const UNMATCHED = "<unmatched>";

/**
 * Wraps every request of `app` (an Elysia higher-order function, `app.wrap`) with the request id, the
 * per-request log line and the HTTP metrics. With Bun's own router (Elysia's default `systemRouter`)
 * a matched route's handler and the fallback `fetch` (unmatched paths, `/metrics`) both run through
 * it, and it sees the final status of every answer, errors included (Elysia's after-response hook
 * does not). Call it last, once every route is registered.
 */
export function observeHttp<A extends AnyElysia>(app: A, opts: ObserveOptions): A {
  const template = routeTemplates(app.routes);
  const { log, metrics } = opts;
  // The level is fixed for the process: with LOG_LEVEL=warn no request line is built at all.
  const logRequests = log.enabled?.("info") ?? true;
  const needPath = logRequests || metrics !== undefined;
  /** The echo, the metric and the log line, once the answer is there. */
  const answered = (request: Request, id: string, path: string, t0: number, response: Response): Response => {
    metrics?.httpInFlight.dec();
    if (!response.headers.has("x-request-id")) {
      try {
        response.headers.set("x-request-id", id);
      } catch {
        // A response with immutable headers (a proxied fetch) goes out without the echo.
      }
    }
    if (!needPath) return response;
    const seconds = (performance.now() - t0) / 1000;
    const route = template(request.method, path) ?? UNMATCHED;
    metrics?.request(request.method, route, response.status, seconds);
    if (logRequests) {
      log.info("request", {
        method: request.method,
        route,
        status: response.status,
        ms: Math.round(seconds * 10_000) / 10,
        requestId: id,
        ...(((request as Marked)[ORIGIN] ?? request) as Marked)[NOTES],
      });
    }
    return response;
  };
  // Not an async function: a handler that answers synchronously is finished synchronously (no promise
  // and no microtask per request), one that answers later costs one `then`.
  const wrap = (inner: (request: Request) => unknown) => (request: Request): Response | Promise<Response> => {
    const t0 = needPath ? performance.now() : 0;
    const id = requestIdOf(request);
    // The path only when something uses it: /metrics on this port, a metric's label, a log line.
    const path = needPath ? pathOf(request.url) : "";
    if (opts.serveMetrics && metrics && path === "/metrics" && (request.method === "GET" || request.method === "HEAD")) {
      return metrics.scrape();
    }
    metrics?.httpInFlight.inc();
    let out: unknown;
    try {
      out = inner(request);
    } catch (err) {
      metrics?.httpInFlight.dec();
      throw err;
    }
    if (out instanceof Promise) {
      return out.then(
        (response: Response) => answered(request, id, path, t0, response),
        (err) => {
          metrics?.httpInFlight.dec();
          throw err;
        },
      );
    }
    return answered(request, id, path, t0, out as Response);
  };
  app.wrap(once(wrap) as unknown as Parameters<A["wrap"]>[0]);
  return app;
}

/**
 * A higher-order function for `app.wrap` that wraps each handler once. Elysia calls a higher-order
 * function with the handler on every request; the wrapper is made the first time and reused.
 */
export function once<H extends (request: Request) => unknown>(wrap: (fn: H) => H): (fn: H) => H {
  // The wrapper rides on the handler itself (a symbol-keyed property): one property read per request.
  const made = Symbol("wrapped");
  return (fn) => ((fn as H & { [made]?: H })[made] ??= wrap(fn));
}
