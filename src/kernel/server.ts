import { renameSync, writeFileSync } from "node:fs";
import type { Elysia } from "elysia";
import { bodyTimeout } from "./body-timeout";
import type { FlagSpec } from "./config";
import { type ConnectionLimits, connectionGuard, connectionLimits } from "./connections";
import { FatalError } from "./errors";
import type { Logger } from "./logger";
import { once } from "./observe";

/** `--ready-file PATH`: for supervisors and tests that start a server with `--port 0`. */
export const readyFileFlag = {
  "ready-file": {
    type: "string",
    value: "PATH",
    help: "once listening, write the URL the server listens on to PATH (atomically; with --port 0 it names the port picked); further listeners (smtp://) follow, one a line",
  },
} satisfies Record<string, FlagSpec>;

/**
 * Tells whoever started the server where it listens: the caller prints `<name> listening on URL` as
 * the first line on stdout; this writes the URL to `path` too when given (temp file + rename, so a
 * reader never sees half a URL), then the URLs of further listeners (`smtp://…`), one a line.
 */
export function writeReadyFile(path: string | undefined, url: string, more: string[] = []): void {
  if (!path) return;
  const tmp = `${path}.${process.pid}.tmp`;
  try {
    writeFileSync(tmp, [url, ...more].map((u) => `${u}\n`).join(""));
    renameSync(tmp, path);
  } catch (err) {
    throw new FatalError(`cannot write --ready-file ${path}: ${(err as Error).message}`);
  }
}

/** `--body-timeout SECONDS`: how long a request body may stall before the answer is 408 and a close. */
export const bodyTimeoutFlag = {
  "body-timeout": {
    type: "number",
    default: 30,
    value: "SECONDS",
    help: "a request body that sends no bytes for this long is answered 408 and its connection closed",
  },
} satisfies Record<string, FlagSpec>;

/** The `--body-timeout` value in milliseconds, or a FatalError for a value out of range. */
export function bodyTimeoutMs(seconds: number): number {
  if (!Number.isFinite(seconds) || seconds <= 0 || seconds > 3600) throw new FatalError(`--body-timeout must be more than 0 and at most 3600 seconds (got ${seconds})`);
  return Math.round(seconds * 1000);
}

export interface Running {
  url: string;
  port: number;
  /** Stops accepting, waits for in-flight requests (bounded), then runs `onClose`. */
  stop(): Promise<void>;
}

/**
 * Starts an Elysia app on Bun's server. A port already in use becomes one clear FatalError.
 * `maxRequestBodySize` bounds every body before routing sees it; `bodyTimeoutMs` (default 30 s) is how
 * long a body may stall before the request is answered 408 and its connection closed. `connections`
 * (default: the flags' defaults) is how long a keep-alive connection may stay idle and how many one
 * address and all clients may keep (src/kernel/connections.ts); `log` says when a bound is reached.
 */
export function listen(
  // biome-ignore lint: Elysia's generic parameters vary per app
  app: Elysia<any, any, any, any, any, any, any>,
  opts: { port: number; hostname: string; maxRequestBodySize?: number; bodyTimeoutMs?: number; connections?: ConnectionLimits; log?: Logger },
): Running {
  const limits = opts.connections ?? connectionLimits({});
  const guard = connectionGuard(limits, () => app.server ?? undefined, opts.log);
  const timed = bodyTimeout(opts.bodyTimeoutMs ?? 30_000);
  app.wrap(once((fn: (request: Request) => unknown) => guard.wrap(timed(fn))) as Parameters<typeof app.wrap>[0]);
  try {
    app.listen({
      port: opts.port,
      hostname: opts.hostname,
      maxRequestBodySize: opts.maxRequestBodySize,
      idleTimeout: limits.idleS,
      // Elysia turns SO_REUSEPORT on by default, which lets a second server silently share a busy port.
      reusePort: false,
    });
  } catch (err) {
    const msg = (err as Error).message ?? String(err);
    if (/in use|EADDRINUSE/i.test(msg)) throw new FatalError(`port ${opts.port} is already in use`);
    if (/EACCES|permission/i.test(msg)) throw new FatalError(`no permission to listen on port ${opts.port}`);
    throw new FatalError(`cannot listen on ${opts.hostname}:${opts.port}: ${msg}`);
  }
  const server = app.server!;
  const host = opts.hostname === "0.0.0.0" || opts.hostname === "::" ? "localhost" : opts.hostname;
  return {
    url: `http://${host}:${server.port}`,
    port: server.port!,
    stop: async () => {
      guard.stop();
      await server.stop(false);
    },
  };
}

/**
 * On SIGTERM/SIGINT runs `shutdown` once (drain, close the database), then exits 0. A second signal
 * exits at once. `graceMs` bounds the drain.
 */
export function onShutdownSignal(shutdown: () => Promise<void> | void, log: Logger, graceMs = 10_000): void {
  let stopping = false;
  const handler = async (signal: string) => {
    if (stopping) process.exit(1);
    stopping = true;
    log.info("shutting down", { signal });
    const timer = setTimeout(() => {
      log.warn("drain took too long; exiting");
      process.exit(1);
    }, graceMs);
    try {
      await shutdown();
    } finally {
      clearTimeout(timer);
      log.info("stopped");
      process.exit(0);
    }
  };
  process.on("SIGTERM", () => void handler("SIGTERM"));
  process.on("SIGINT", () => void handler("SIGINT"));
}
