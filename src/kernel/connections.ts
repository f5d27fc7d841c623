// Idle keep-alive connections and how many connections one client may hold (issue 36, part 5).
//
// Bun.serve has one timer per socket, `idleTimeout`, and it covers everything: a keep-alive socket
// waiting for its next request, a handler still working, a streamed answer between two chunks. With
// 120 s, 20,000 idle keep-alive sockets held the process at its descriptor limit for two minutes.
// Now the server's idleTimeout is `--idle-timeout` (short), and a request whose handler is still
// working after half a second gets the old 120 s (`server.timeout`) until it answers; NDJSON and SSE
// answers keep 120 s between chunks and close the connection when they end.
//
// Bun.serve gives no hook when it accepts a connection, and a Request's connection cannot be reached
// once its answer is sent, so connections are counted from their requests: `requestIP` gives the
// client's address and port, and a connection is counted from its first request until it answered
// with `Connection: close` or has been idle for longer than Bun keeps an idle socket. A connection
// that would go over `--max-connections-per-address` or `--max-connections` is not refused: its
// answer carries `Connection: close`, so it never stays open idle. Nothing is refused, so /health
// keeps answering whoever asks.
import { readFileSync } from "node:fs";
import type { Server } from "bun";
import type { FlagSpec } from "./config";
import { FatalError } from "./errors";
import type { Logger } from "./logger";

/** `--idle-timeout`, `--max-connections-per-address`, `--max-connections`: shared by both servers. */
export const connectionFlags = {
  "idle-timeout": {
    type: "number",
    default: 10,
    value: "SECONDS",
    help: "close a keep-alive connection after this long without a request (Bun counts in 4 s ticks: 10 closes it 8-12 s after its last byte); 1 to 255",
  },
  "max-connections-per-address": {
    type: "number",
    default: 256,
    value: "N",
    help: "connections one client address may keep open; the answers of further ones carry Connection: close (logged)",
  },
  "max-connections": {
    type: "number",
    value: "N",
    help: "open connections in all; past it the answers of new connections carry Connection: close (default: three quarters of the open-file limit, less 64)",
  },
} satisfies Record<string, FlagSpec>;

export interface ConnectionLimits {
  /** Seconds a keep-alive connection may wait for its next request. */
  idleS: number;
  perAddress: number;
  total: number;
}

/** The soft RLIMIT_NOFILE of this process (Bun raises it to the hard limit at start), or undefined. */
export function openFileLimit(): number | undefined {
  try {
    const line = readFileSync("/proc/self/limits", "utf8")
      .split("\n")
      .find((l) => l.startsWith("Max open files"));
    const soft = line?.slice("Max open files".length).trim().split(/\s+/)[0];
    if (!soft || soft === "unlimited") return undefined;
    const n = Number(soft);
    return Number.isFinite(n) && n > 0 ? n : undefined;
  } catch {
    return undefined;
  }
}

/** Validates the three flags and fills in the total from the descriptor limit. */
export function connectionLimits(v: { "idle-timeout"?: number; "max-connections-per-address"?: number; "max-connections"?: number }, fileLimit = openFileLimit()): ConnectionLimits {
  const idleS = v["idle-timeout"] ?? 10;
  if (!Number.isInteger(idleS) || idleS < 1 || idleS > 255) throw new FatalError(`--idle-timeout must be a whole number of seconds from 1 to 255 (got ${idleS})`);
  const perAddress = v["max-connections-per-address"] ?? 256;
  if (!Number.isInteger(perAddress) || perAddress < 1) throw new FatalError(`--max-connections-per-address must be a whole number of at least 1 (got ${perAddress})`);
  // Descriptors beyond the connections: the database, WAL, blob and temp files, worker threads, pools.
  const fallback = fileLimit === undefined ? 4096 : Math.max(16, Math.floor((fileLimit * 3) / 4) - 64);
  const total = v["max-connections"] ?? fallback;
  if (!Number.isInteger(total) || total < 1) throw new FatalError(`--max-connections must be a whole number of at least 1 (got ${total})`);
  if (fileLimit !== undefined && total >= fileLimit) throw new FatalError(`--max-connections must stay below the open-file limit of ${fileLimit} (got ${total})`);
  return { idleS, perAddress: Math.min(perAddress, total), total };
}

/** How long a handler (or a streamed answer between chunks) may stay silent: Bun's old default. */
const BUSY_S = 120;
/** A handler still working after this long gets BUSY_S instead of the idle timeout. */
const BUSY_AFTER_MS = 500;
const STREAMING = /^(application\/x-ndjson|text\/event-stream)/;

interface Conn {
  /** The request being answered on this connection, if any. */
  req: Request | undefined;
  since: number;
  seen: number;
  extended: boolean;
}

type Handler = (request: Request) => unknown;

/**
 * An Elysia higher-order function (`app.wrap`) counting connections by their requests and keeping
 * slow handlers and streamed answers from being cut by the short idle timeout. `server` is read
 * per request (the app is wrapped before it listens).
 */
export function connectionGuard(limits: ConnectionLimits, server: () => Server<unknown> | undefined, log?: Logger) {
  const byAddress = new Map<string, Map<number, Conn>>();
  let open = 0;
  // Bun closes an idle socket at the end of the 4 s tick its timeout falls in.
  const goneAfterMs = Math.ceil(limits.idleS / 4) * 4000 + 1000;
  const warned = new Map<string, number>();
  const warn = (what: string, fields: Record<string, unknown>) => {
    const now = Date.now();
    if ((warned.get(what) ?? 0) > now) return;
    warned.set(what, now + 60_000);
    log?.warn(`connection bound reached: ${what}`, fields);
  };
  const forget = (address: string, port: number) => {
    const conns = byAddress.get(address);
    if (!conns?.delete(port)) return;
    open--;
    if (conns.size === 0) byAddress.delete(address);
  };

  const sweep = setInterval(() => {
    const srv = server();
    const now = Date.now();
    for (const [address, conns] of byAddress) {
      for (const [port, c] of conns) {
        if (c.req) {
          if (!c.extended && now - c.since >= BUSY_AFTER_MS && srv) {
            c.extended = true;
            try {
              srv.timeout(c.req, BUSY_S);
            } catch {}
          }
        } else if (now - c.seen > goneAfterMs) {
          forget(address, port);
        }
      }
    }
    for (const [what, until] of warned) if (until <= now) warned.delete(what);
  }, BUSY_AFTER_MS);
  sweep.unref();

  return (fn: Handler): Handler =>
    (request: Request): unknown => {
      const srv = server();
      const ip = srv?.requestIP(request);
      if (!srv || !ip) return fn(request);
      const { address, port } = ip;
      let conns = byAddress.get(address);
      let c = conns?.get(port);
      let close = false;
      if (!c) {
        if ((conns?.size ?? 0) >= limits.perAddress) {
          close = true;
          warn(`per address (--max-connections-per-address ${limits.perAddress})`, { address, open: conns?.size ?? 0 });
        } else if (open >= limits.total) {
          close = true;
          warn(`in all (--max-connections ${limits.total})`, { open, addresses: byAddress.size });
        } else {
          c = { req: undefined, since: 0, seen: 0, extended: false };
          if (!conns) byAddress.set(address, (conns = new Map()));
          conns.set(port, c);
          open++;
        }
      }
      if (c) {
        c.req = request;
        c.since = Date.now();
      }
      const done = () => {
        if (!c) return;
        c.req = undefined;
        c.seen = Date.now();
      };
      const settle = (res: unknown): unknown => {
        done();
        if (!(res instanceof Response)) return res;
        const streaming = STREAMING.test(res.headers.get("content-type") ?? "");
        if (streaming) srv.timeout(request, BUSY_S);
        // A handler that got the long timeout closes its connection with the answer: shortening the
        // timeout again here raced the answer (the socket had been silent for longer than the short
        // timeout, so Bun could cut it before the answer was written: ECONNRESET in a CI run).
        const extended = c?.extended === true;
        if (c) c.extended = false;
        // A streamed answer would leave its connection with the long timeout once it ends.
        if (close || streaming || extended) {
          if (c && !streaming) forget(address, port); // a stream keeps its connection (counted) until it ends
          return closing(res);
        }
        if (c && res.headers.get("connection")?.toLowerCase() === "close") forget(address, port);
        return res;
      };
      let out: unknown;
      try {
        out = fn(request);
      } catch (err) {
        done();
        throw err;
      }
      return out instanceof Promise
        ? out.then(settle, (err) => {
            done();
            throw err;
          })
        : settle(out);
    };
}

/** `res` with `Connection: close`, so Bun closes the socket once it is sent. */
function closing(res: Response): Response {
  try {
    res.headers.set("connection", "close");
    return res;
  } catch {
    // Immutable headers (Response.redirect, Response.error): a copy.
    const headers = new Headers(res.headers);
    headers.set("connection", "close");
    return new Response(res.body, { status: res.status, statusText: res.statusText, headers });
  }
}
