// Prometheus metrics shared by both servers (prom-client): one registry per server, the HTTP and
// database series every server has, and the process series (memory, CPU, open fds, event-loop lag).
// Product series (orders_*, automation_*) are registered by the products on the same registry.
// Labels never carry ids or raw paths: routes are templates, methods and statuses come from small sets.
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from "prom-client";
import type { FlagSpec } from "./config";
import { FatalError, UsageError } from "./errors";
import type { Logger } from "./logger";
import { isLogFormat, type LogFormat } from "./logger";

/** Latency buckets in seconds: 1 ms .. 10 s. */
const LATENCY = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];
/** Database statements are faster than requests: 50 µs .. 1 s. */
const DB_LATENCY = [0.00005, 0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1];
const METHODS = new Set(["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"]);

export class Metrics {
  readonly registry = new Registry();
  readonly httpRequests: Counter<"method" | "route" | "status">;
  readonly httpDuration: Histogram<"method" | "route" | "status">;
  readonly httpInFlight: Gauge;
  readonly dbDuration: Histogram<"op">;
  private processStarted = false;
  private readonly bound = new Map<string, { count: { inc(): void }; duration: { observe(v: number): void } }>();

  constructor() {
    const registers = [this.registry];
    this.httpRequests = new Counter({ name: "http_requests_total", help: "HTTP requests answered, by method, route template and status", labelNames: ["method", "route", "status"], registers });
    this.httpDuration = new Histogram({
      name: "http_request_duration_seconds",
      help: "Time from receiving a request to its response headers, by method, route template and status",
      labelNames: ["method", "route", "status"],
      buckets: LATENCY,
      registers,
    });
    this.httpInFlight = new Gauge({ name: "http_requests_in_flight", help: "HTTP requests being handled", registers });
    this.dbDuration = new Histogram({ name: "db_query_duration_seconds", help: "Database latency by operation: a store operation (order-server: users.findByKey, orders.settle, ...) or a statement kind (automation-server: all, get, run, values)", labelNames: ["op"], buckets: DB_LATENCY, registers });
  }

  /** Starts the process series (prom-client's defaults: RSS, heap, CPU, open/max fds, event-loop lag). Once. */
  collectProcess(): void {
    if (this.processStarted) return;
    this.processStarted = true;
    collectDefaultMetrics({ register: this.registry, eventLoopMonitoringPrecision: 10 });
  }

  /** Records one answered request. */
  request(method: string, route: string, status: number, seconds: number): void {
    // Label sets bound once (routes are templates, methods and statuses small sets): prom-client
    // otherwise hashes the label object on every call.
    const m = METHODS.has(method) ? method : "OTHER";
    const key = `${m} ${status} ${route}`;
    let bound = this.bound.get(key);
    if (!bound) {
      const labels = { method: m, route, status: String(status) };
      bound = { count: this.httpRequests.labels(labels), duration: this.httpDuration.labels(labels) };
      this.bound.set(key, bound);
    }
    bound.count.inc();
    bound.duration.observe(seconds);
  }

  /** The exposition text and its content type. */
  async scrape(): Promise<Response> {
    return new Response(await this.registry.metrics(), { headers: { "content-type": this.registry.contentType, "cache-control": "no-store" } });
  }
}

/** Times `fn` into `metrics.dbDuration{op}` (no-op without metrics). */
export function timed<T>(metrics: Metrics | undefined, op: string, fn: () => T): T {
  if (!metrics) return fn();
  const t0 = performance.now();
  try {
    return fn();
  } finally {
    metrics.dbDuration.observe({ op }, (performance.now() - t0) / 1000);
  }
}

/** The operations flags both servers take (flags > env > defaults; see docs/operations.md). */
export const opsFlags = {
  metrics: { type: "boolean", env: "METRICS", help: "serve Prometheus metrics at GET /metrics on the API port (no API key; no tenant data)" },
  "metrics-port": {
    type: "number",
    env: "METRICS_PORT",
    value: "PORT",
    help: "serve GET /metrics on this port instead, on the same --host (0: a free one, reported on stdout); implies --metrics",
  },
  "log-format": { type: "string", env: "LOG_FORMAT", default: "text", value: "text|json", help: "log lines as text or one JSON object per line" },
} satisfies Record<string, FlagSpec>;

export interface OpsOptions {
  /** Where metrics are served: nowhere, on the API port, or on their own port. */
  metrics: { where: "off" } | { where: "api" } | { where: "port"; port: number };
  logFormat: LogFormat;
}

/** Validates the operations flags. */
export function opsOptions(v: { metrics?: boolean; "metrics-port"?: number; "log-format": string }): OpsOptions {
  const format = v["log-format"];
  if (!isLogFormat(format)) throw new UsageError(`--log-format must be text or json (got "${format}")`);
  const port = v["metrics-port"];
  if (port !== undefined && (!Number.isInteger(port) || port < 0 || port > 65535)) throw new UsageError(`--metrics-port must be 0-65535 (got ${port})`);
  const metrics: OpsOptions["metrics"] = port !== undefined ? { where: "port", port } : v.metrics ? { where: "api" } : { where: "off" };
  return { metrics, logFormat: format };
}

/**
 * Serves `GET /metrics` alone on its own port (for `--metrics-port`): nothing else answers there.
 * Returns the URL it listens on and a stop function.
 */
export function serveMetricsPort(metrics: Metrics, hostname: string, port: number, log: Logger): { url: string; stop(): void } {
  let server: ReturnType<typeof Bun.serve>;
  try {
    server = Bun.serve({
      hostname,
      port,
      reusePort: false,
      development: false,
      fetch: (req) => {
        const path = new URL(req.url).pathname;
        if (path !== "/metrics") return new Response("not found: metrics are at /metrics\n", { status: 404 });
        if (req.method !== "GET" && req.method !== "HEAD") return new Response("method not allowed\n", { status: 405, headers: { allow: "GET, HEAD" } });
        return metrics.scrape();
      },
      error: (err) => {
        log.error("metrics scrape failed", { error: err.message });
        return new Response("metrics unavailable\n", { status: 500 });
      },
    });
  } catch (err) {
    const msg = (err as Error).message ?? String(err);
    if (/in use|EADDRINUSE/i.test(msg)) throw new FatalError(`--metrics-port ${port} is already in use`);
    throw new FatalError(`cannot listen on ${hostname}:${port} for metrics: ${msg}`);
  }
  const host = hostname === "0.0.0.0" || hostname === "::" ? "localhost" : hostname;
  return { url: `http://${host}:${server.port}/metrics`, stop: () => void server.stop(true) };
}
