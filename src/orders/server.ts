// Starting and stopping the order server: open the database, seed the demo, listen, drain on signals.
import { FatalError } from "../kernel/errors";
import type { FlagSpec } from "../kernel/config";
import { createLogger } from "../kernel/logger";
import { Metrics, opsFlags, opsOptions, serveMetricsPort } from "../kernel/metrics";
import { meteredStorage, orderEvents } from "./metrics";
import { bodyTimeoutFlag, bodyTimeoutMs, listen, onShutdownSignal, readyFileFlag, writeReadyFile } from "../kernel/server";
import { connectionFlags, connectionLimits } from "../kernel/connections";
import { createOrderApp, orderServices } from "./app";
import { DEMO_CLIENT, type OAuthClient, orderConfig, parseClients, parseProfile } from "./config";
import { PG_POOL_MAX, redactUrl } from "../kernel/pg";
import { openOrderStorage } from "./db/open";
import { isPostgresUrl } from "../kernel/pg";
import { DEMO_PASSWORD, DEMO_USERS, seedDemo } from "./demo/seed";

export const orderFlags = {
  port: { type: "number", env: "PORT", default: 8080, help: "TCP port to listen on (0: a free one, reported on the first stdout line)", value: "PORT" },
  host: { type: "string", default: "0.0.0.0", help: "Interface to bind", value: "HOST" },
  db: {
    type: "string",
    env: "ORDER_DB",
    default: "./data/orders.db",
    help: "SQLite database file (:memory: allowed), or a postgres://user:pass@host:5432/db URL (N instances may share it)",
    value: "FILE|URL",
  },
  profile: {
    type: "string",
    env: "ORDER_PROFILE",
    default: "production",
    help: "demo (seeded test data + the web client's OAuth client) or production (empty)",
    value: "NAME",
  },
  ...readyFileFlag,
  ...opsFlags,
  ...bodyTimeoutFlag,
  ...connectionFlags,
  help: { type: "boolean", short: "h", help: "Show this help and exit" },
} satisfies Record<string, FlagSpec>;

export const orderHelpExtra = `Environment:
  ORDER_OAUTH_CLIENTS  OAuth clients allowed to request tokens: "id:secret[,id:secret...]"
                       (required by the production profile)
  LOG_LEVEL            debug, info (default), warn, error or silent`;

export interface OrderServerOptions {
  port: number;
  host: string;
  db: string;
  profile: string;
  oauthClients?: string;
  "ready-file"?: string;
  metrics?: boolean;
  "metrics-port"?: number;
  "log-format": string;
  /** Seconds a request body may stall (default 30). */
  "body-timeout"?: number;
  /** Seconds a keep-alive connection may stay idle (default 10). */
  "idle-timeout"?: number;
  "max-connections-per-address"?: number;
  /** Default: from the open-file limit. */
  "max-connections"?: number;
}

/** Starts the server; resolves once it listens. Prints where it is to stdout. */
export async function startOrderServer(opts: OrderServerOptions): Promise<void> {
  const ops = opsOptions(opts);
  const profile = parseProfile(opts.profile);
  const clients: OAuthClient[] = parseClients(opts.oauthClients);
  if (profile === "demo" && !clients.some((c) => c.id === DEMO_CLIENT.id)) clients.push(DEMO_CLIENT);
  if (clients.length === 0) {
    throw new FatalError('the production profile needs at least one OAuth client: set ORDER_OAUTH_CLIENTS="id:secret"');
  }
  if (!Number.isInteger(opts.port) || opts.port < 0 || opts.port > 65535) {
    throw new FatalError(`--port must be an integer from 0 to 65535 (got ${opts.port})`);
  }
  const logger = createLogger(undefined, undefined, ops.logFormat);
  const connections = connectionLimits(opts);
  const metrics = ops.metrics.where === "off" ? undefined : new Metrics();
  metrics?.collectProcess();
  const config = orderConfig({
    profile,
    clients,
    logger,
    ...(metrics ? { metrics, events: orderEvents(metrics), serveMetrics: ops.metrics.where === "api" } : {}),
  });
  const opened = await openOrderStorage(opts.db);
  const storage = metrics ? meteredStorage(metrics, opened, PG_POOL_MAX) : opened;
  const seeded = profile === "demo" ? await seedDemo(storage, config.clock, config.password) : false;
  const services = orderServices(config, storage);
  const app = createOrderApp(config, storage, services);
  // Bun's own cap is looser: the app enforces bodyLimit itself, with the Spring-style 413 body.
  const running = listen(app, {
    port: opts.port,
    hostname: opts.host,
    maxRequestBodySize: 4 * config.bodyLimit,
    bodyTimeoutMs: bodyTimeoutMs(opts["body-timeout"] ?? 30),
    connections,
    log: logger,
  });

  // Expired tokens are refused anyway; the sweep only keeps the table from growing.
  const sweep = setInterval(() => {
    services.tokens.deleteExpired(config.clock.now().getTime()).catch((err) => logger.warn("token sweep failed", { error: (err as Error).message }));
  }, 3600_000);
  sweep.unref();
  const metricsPort = metrics && ops.metrics.where === "port" ? serveMetricsPort(metrics, opts.host, ops.metrics.port, logger) : undefined;

  const lines = [
    `order-server listening on ${running.url}`,
    `  profile:  ${profile}`,
    `  database: ${isPostgresUrl(opts.db) ? `PostgreSQL ${redactUrl(opts.db)}` : opts.db}${seeded ? " (demo data seeded)" : ""}`,
  ];
  if (profile === "demo") {
    const names = (t: string) => DEMO_USERS.filter((u) => u.userType === t).map((u) => u.username).join(", ");
    lines.push(
      `  demo logins (password "${DEMO_PASSWORD}"): customers ${names("Customer")}; performers ${names("Performer")}`,
      `  demo OAuth client: ${DEMO_CLIENT.id}:${DEMO_CLIENT.secret}`,
      `  try: curl -s -X POST '${running.url}/oauth/token?grant_type=password&username=anna&password=${DEMO_PASSWORD}&client_id=${DEMO_CLIENT.id}&client_secret=${DEMO_CLIENT.secret}'`,
    );
  }
  if (metricsPort) lines.push(`  metrics:  ${metricsPort.url}`);
  else if (metrics) lines.push(`  metrics:  ${running.url}/metrics`);
  console.log(lines.join("\n"));
  writeReadyFile(opts["ready-file"], running.url);

  onShutdownSignal(async () => {
    clearInterval(sweep);
    metricsPort?.stop();
    await running.stop();
    await storage.close();
  }, logger);
}

