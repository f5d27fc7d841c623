// Startup and shutdown of the automation server: the data dir (SQLite + blobs + signing secret), the
// context every feature receives, and serving it with a graceful stop.
import { chmodSync, existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { Elysia } from "elysia";
import { systemClock, type Clock } from "../kernel/clock";
import { FatalError } from "../kernel/errors";
import { newSecret } from "../kernel/ids";
import { createLogger, type Logger } from "../kernel/logger";
import { Metrics, serveMetricsPort } from "../kernel/metrics";
import { automationMetrics, meteredBlobs, timeStatements } from "./metrics";
import { listen, onShutdownSignal, type Running } from "../kernel/server";
import { buildApp } from "./app";
import { openStorage } from "./db/open";
import { experimentsOf } from "./experiments/service";
import { runsOf, SHUTDOWN_GRACE_MS } from "./runs/service";
import { stopSandboxes } from "./engine/sandbox/isolate";
import type { AutomationConfig, AutomationContext } from "./context";
import type { BlobStore } from "./files/blobs";
import { openBlobStore } from "./files/blob-config";
import { startSweeper } from "./files/gc";
import { schedulerOf } from "./schedules/scheduler";
import { createGateway } from "./models/gateway";
import { startSmtp, type SmtpReceiver } from "./inbound/smtp";

export interface ContextDeps {
  clock?: Clock;
  log?: Logger;
  /** The blob store; defaults to what config.blobs names (else the filesystem store under <dataDir>/blobs). */
  blobs?: BlobStore;
  /** Record metrics even when `config.ops` leaves them off (tests). */
  metrics?: boolean;
}

/** Reads `<dataDir>/<name>`, generating it (atomically, mode 600) on first start. */
function dataDirSecret(dataDir: string, name: string): string {
  const file = join(dataDir, name);
  if (existsSync(file)) {
    const s = readFileSync(file, "utf8").trim();
    if (s.length >= 32) return s;
  }
  const secret = newSecret(32);
  const tmp = `${file}.${process.pid}.tmp`;
  writeFileSync(tmp, secret + "\n", { mode: 0o600 });
  chmodSync(tmp, 0o600);
  renameSync(tmp, file);
  return secret;
}

/** The secret for signed URLs and tokens. */
export function loadSigningSecret(dataDir: string): string {
  return dataDirSecret(dataDir, "signing-secret");
}

/** The key material sealing stored third-party secrets when the operator gave none. */
export function loadSecretKey(dataDir: string): string {
  return dataDirSecret(dataDir, "secret-key");
}

export function ensureDataDir(dataDir: string): void {
  try {
    mkdirSync(dataDir, { recursive: true });
  } catch (err) {
    throw new FatalError(`cannot create data dir ${dataDir}: ${(err as Error).message}`);
  }
}

/**
 * Opens the database (applying embedded migrations), the blob store and the signing secret.
 * `dataDir: ":memory:"` gives an in-memory database (tests pass their own blob store then).
 */
export async function createContext(config: AutomationConfig, deps: ContextDeps = {}): Promise<AutomationContext> {
  const memory = config.dataDir === ":memory:";
  if (!memory) ensureDataDir(config.dataDir);
  const signingSecret = config.signingSecret || (memory ? newSecret(32) : loadSigningSecret(config.dataDir));
  const secretKey = config.secretKey || (memory ? newSecret(32) : loadSecretKey(config.dataDir));
  if (memory && !deps.blobs) throw new FatalError("an in-memory context needs an explicit blob store");
  const store = deps.blobs ?? openBlobStore(config, config.dataDir);
  if (!deps.blobs) await store.check?.();
  const log = deps.log ?? createLogger(undefined, undefined, config.ops?.logFormat);
  const kernel = deps.metrics || (config.ops && config.ops.metrics.where !== "off") ? new Metrics() : undefined;
  kernel?.collectProcess();
  // On SQLite every statement is timed: wrapped before the stores prepare theirs.
  const db = await openStorage(config, { onSqlite: kernel ? (sqlite) => timeStatements(sqlite, kernel) : undefined });
  const metrics = kernel ? automationMetrics(kernel, db.storage.stats) : undefined;
  const blobs = metrics ? meteredBlobs(store, metrics) : store;
  return {
    config: { ...config, signingSecret, secretKey },
    storage: db.storage,
    db,
    clock: deps.clock ?? systemClock,
    log,
    blobs,
    ...(metrics ? { metrics } : {}),
    ...(config.models ? { models: createGateway(config.models, { log }) } : {}),
  };
}

export interface Served {
  running: Running;
  /** Where `--metrics-port` serves the metrics (undefined unless it was given). */
  metricsUrl?: string;
  /** The inbound SMTP receiver once it listens (undefined without `--smtp-port`). */
  smtp?: Promise<SmtpReceiver>;
  /** Stops taking requests and mail, drains, closes the database. */
  shutdown(): Promise<void>;
}

/**
 * A worker process: executes runs from the shared queue (and the features that act on finished runs,
 * experiments), no public API. With `port`, GET /health and GET /metrics only. SIGTERM/SIGINT: stop
 * claiming, let steps in flight finish, hand back the rest, close the database.
 */
export async function work(ctx: AutomationContext, opts: { port?: number; handleSignals?: boolean }): Promise<{ worker: string; url?: string; shutdown(): Promise<void> }> {
  const runs = runsOf(ctx);
  experimentsOf(ctx).recover().catch((err) => ctx.log.error("experiment recovery failed", { error: (err as Error)?.stack ?? String(err) }));
  await runs.startWorkers();
  let running: Running | undefined;
  if (opts.port !== undefined) {
    const app = new Elysia()
      .get("/health", () => ({ ok: true, worker: runs.pool.worker, running: runs.pool.running }))
      .get("/metrics", () => ctx.metrics?.kernel.scrape() ?? new Response("metrics are off\n", { status: 404 }))
      .onError(({ code }) => (code === "NOT_FOUND" ? new Response("not found: a worker serves GET /health and GET /metrics only\n", { status: 404 }) : undefined));
    running = listen(app, { port: opts.port, hostname: ctx.config.hostname });
  }
  let closed: Promise<void> | undefined;
  const shutdown = () =>
    (closed ??= (async () => {
      await Promise.all([running?.stop(), runs.stopWorkers()]);
      stopSandboxes();
      await ctx.db.close();
    })());
  if (opts.handleSignals !== false) onShutdownSignal(shutdown, ctx.log, SHUTDOWN_GRACE_MS + 5_000);
  return { worker: runs.pool.worker, ...(running ? { url: running.url } : {}), shutdown };
}

/** Serves the app; SIGTERM/SIGINT shut down gracefully. */
export function serve(ctx: AutomationContext, opts: { handleSignals?: boolean } = {}): Served {
  const app = buildApp(ctx);
  const running = listen(app, {
    port: ctx.config.port,
    hostname: ctx.config.hostname,
    // Uploads stream through the files routes; JSON routes cap their own bodies.
    maxRequestBodySize: 1024 * 1024 * 1024,
    bodyTimeoutMs: ctx.config.bodyTimeoutMs,
  });
  const ops = ctx.config.ops;
  const metricsPort = ctx.metrics && ops?.metrics.where === "port" ? serveMetricsPort(ctx.metrics.kernel, ctx.config.hostname, ops.metrics.port, ctx.log) : undefined;
  runsOf(ctx).startWorkers();
  experimentsOf(ctx).recover().catch((err) => ctx.log.error("experiment recovery failed", { error: (err as Error)?.stack ?? String(err) }));
  const sweeper = startSweeper(ctx);
  const smtp = ctx.config.smtp ? startSmtp(ctx, ctx.config.smtp, ctx.config.hostname) : undefined;
  const scheduler = schedulerOf(ctx);
  scheduler.start();
  let closed: Promise<void> | undefined;
  const shutdown = () =>
    (closed ??= (async () => {
      metricsPort?.stop();
      // A message cut off before its 250 is retried by its sender; one answered 250 is committed.
      const mail = smtp?.then((s) => s.stop(), () => {});
      await Promise.all([mail, running.stop(), scheduler.stop(), runsOf(ctx).stopWorkers(), sweeper.stop()]);
      stopSandboxes();
      await ctx.db.close();
    })());
  // The process-level bound leaves room for the runs' grace, their interruption and closing the database.
  if (opts.handleSignals !== false) onShutdownSignal(shutdown, ctx.log, SHUTDOWN_GRACE_MS + 5_000);
  return { running, shutdown, ...(metricsPort ? { metricsUrl: metricsPort.url } : {}), ...(smtp ? { smtp } : {}) };
}
