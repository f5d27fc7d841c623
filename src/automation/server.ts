// Startup and shutdown of the automation server: the data dir (SQLite + blobs + key files), the
// context every feature receives, and serving it with a graceful stop.
import { Elysia } from "elysia";
import { systemClock, type Clock } from "../kernel/clock";
import { FatalError } from "../kernel/errors";
import { createLogger, type Logger } from "../kernel/logger";
import { Metrics, serveMetricsPort } from "../kernel/metrics";
import { automationMetrics, meteredBlobs, timeStatements } from "./metrics";
import { listen, onShutdownSignal, type Running } from "../kernel/server";
import { buildApp } from "./app";
import { openStorage } from "./db/open";
import { backtestsOf } from "./backtests/service";
import { experimentsOf } from "./experiments/service";
import { runsOf, SHUTDOWN_GRACE_MS } from "./runs/service";
import { stopSandboxes } from "./engine/sandbox/isolate";
import type { AutomationContext } from "./context";
import type { AutomationConfig } from "./config";
import { ensureDataDir } from "./config";
import type { BlobStore } from "./blobs/blobs";
import { openBlobStore } from "./blobs/blob-config";
import { startSweeper } from "./files/gc";
import { startRecheck } from "./sso/recheck";
import { schedulerOf } from "./schedules/scheduler";
import { createGateway } from "./models/gateway";
import { startSmtp, type SmtpReceiver } from "./inbound/smtp";
import { keyMaterial } from "./key-material";
import { auditOf, startRetention } from "./audit/service";

export interface ContextDeps {
  clock?: Clock;
  log?: Logger;
  /** The blob store; defaults to what config.blobs names (else the filesystem store under <dataDir>/blobs). */
  blobs?: BlobStore;
  /** Record metrics even when `config.ops` leaves them off (tests). */
  metrics?: boolean;
}

/**
 * Opens the database (applying embedded migrations), the blob store and the key material.
 * `dataDir: ":memory:"` gives an in-memory database (tests pass their own blob store then).
 */
export async function createContext(config: AutomationConfig, deps: ContextDeps = {}): Promise<AutomationContext> {
  const memory = config.dataDir === ":memory:";
  if (!memory) ensureDataDir(config.dataDir);
  if (memory && !deps.blobs) throw new FatalError("an in-memory context needs an explicit blob store");
  const store = deps.blobs ?? openBlobStore(config, config.dataDir);
  if (!deps.blobs) await store.check?.();
  const log = deps.log ?? createLogger(undefined, undefined, config.ops?.logFormat);
  const kernel = deps.metrics || (config.ops && config.ops.metrics.where !== "off") ? new Metrics() : undefined;
  kernel?.collectProcess();
  // On SQLite every statement is timed: wrapped before the stores prepare theirs.
  const db = await openStorage(config, { onSqlite: kernel ? (sqlite) => timeStatements(sqlite, kernel) : undefined });
  const clock = deps.clock ?? systemClock;
  // After the database: on PostgreSQL the instances' shared secrets live there.
  const { signingSecret, secretKey } = await keyMaterial(config, db.storage, clock.now().toISOString(), log).catch(async (err) => {
    await db.close();
    throw err;
  });
  const metrics = kernel ? automationMetrics(kernel, db.storage.stats) : undefined;
  const blobs = metrics ? meteredBlobs(store, metrics) : store;
  return {
    config: { ...config, signingSecret, secretKey },
    storage: db.storage,
    db,
    clock,
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
 * With several processes on one database every one must read the same blob store. At start, a sample
 * of the blobs the database references must be readable here: when none is, this process looks at
 * another store than the instance that wrote them (a data dir that is not shared), and it is refused.
 */
export async function checkSharedBlobs(ctx: AutomationContext): Promise<void> {
  if (ctx.storage.backend !== "postgres") return;
  const sample = [...(await ctx.storage.files.referencedBlobs())].slice(0, 5);
  if (sample.length === 0) return;
  const present = await Promise.all(sample.map((sha) => ctx.blobs.has(sha)));
  if (present.some(Boolean)) return;
  await ctx.db.close(); // refused: nothing of this process stays open
  throw new FatalError(
    `this process cannot read the blobs the database references (e.g. ${sample[0].slice(0, 12)}… in the ${ctx.blobs.kind === "s3" ? "bucket" : "blob directory"} it was given): ` +
      "every instance on one database needs the same blob store (the same --data-dir on a shared volume, or the same --blobs; docs/automation/scale-out.md)",
  );
}

/**
 * A worker process: executes runs from the shared queue (and the features that act on finished runs,
 * experiments), no public API. With `port`, GET /health and GET /metrics only. SIGTERM/SIGINT: stop
 * claiming, let steps in flight finish, hand back the rest, close the database.
 */
export async function work(ctx: AutomationContext, opts: { port?: number; handleSignals?: boolean }): Promise<{ worker: string; url?: string; shutdown(): Promise<void> }> {
  const runs = runsOf(ctx);
  experimentsOf(ctx).recover().catch((err) => ctx.log.error("experiment recovery failed", { error: (err as Error)?.stack ?? String(err) }));
  backtestsOf(ctx).recover().catch((err) => ctx.log.error("backtest recovery failed", { error: (err as Error)?.stack ?? String(err) }));
  await runs.startWorkers();
  let running: Running | undefined;
  if (opts.port !== undefined) {
    const app = new Elysia()
      .get("/health", () => ({ ok: true, worker: runs.pool.worker, running: runs.pool.running }))
      .get("/metrics", () => ctx.metrics?.kernel.scrape() ?? new Response("metrics are off\n", { status: 404 }))
      .onError(({ code }) => (code === "NOT_FOUND" ? new Response("not found: a worker serves GET /health and GET /metrics only\n", { status: 404 }) : undefined));
    running = listen(app, { port: opts.port, hostname: ctx.config.hostname, connections: ctx.config.connections, log: ctx.log });
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
    connections: ctx.config.connections,
    log: ctx.log,
  });
  const ops = ctx.config.ops;
  const metricsPort = ctx.metrics && ops?.metrics.where === "port" ? serveMetricsPort(ctx.metrics.kernel, ctx.config.hostname, ops.metrics.port, ctx.log) : undefined;
  runsOf(ctx).startWorkers();
  experimentsOf(ctx).recover().catch((err) => ctx.log.error("experiment recovery failed", { error: (err as Error)?.stack ?? String(err) }));
  backtestsOf(ctx).recover().catch((err) => ctx.log.error("backtest recovery failed", { error: (err as Error)?.stack ?? String(err) }));
  const sweeper = startSweeper(ctx);
  const smtp = ctx.config.smtp ? startSmtp(ctx, ctx.config.smtp, ctx.config.hostname) : undefined;
  const scheduler = schedulerOf(ctx);
  scheduler.start();
  const retention = startRetention(ctx);
  const recheck = startRecheck(ctx);
  // On a SQLite file the log is copied back into the file on a thread of its own, not inside a commit
  // on the thread that answers requests (src/kernel/checkpointer.ts).
  ctx.db.checkpointInBackground(ctx.log);
  let closed: Promise<void> | undefined;
  const shutdown = () =>
    (closed ??= (async () => {
      metricsPort?.stop();
      // A message cut off before its 250 is retried by its sender; one answered 250 is committed.
      const mail = smtp?.then((s) => s.stop(), () => {});
      await Promise.all([mail, running.stop(), scheduler.stop(), runsOf(ctx).stopWorkers(), sweeper.stop(), retention.stop(), recheck.stop()]);
      // The audit entries of the last answers are written before the database closes.
      await auditOf(ctx).drain();
      stopSandboxes();
      await ctx.db.close();
    })());
  // The process-level bound leaves room for the runs' grace, their interruption and closing the database.
  if (opts.handleSignals !== false) onShutdownSignal(shutdown, ctx.log, SHUTDOWN_GRACE_MS + 5_000);
  return { running, shutdown, ...(metricsPort ? { metricsUrl: metricsPort.url } : {}), ...(smtp ? { smtp } : {}) };
}
