// Idle keep-alive connections and how many connections one client may hold (issue 36, part 5).
//
// Bun.serve has one timer per socket, `idleTimeout`, and it covers everything: a keep-alive socket
// waiting for its next request, a handler still working, a streamed answer between two chunks. With
// 120 s, 20,000 idle keep-alive sockets held the process at its descriptor limit for two minutes.
// Now the server's idleTimeout is `--idle-timeout` (short), and a request whose handler is still
// working after half a second gets the old 120 s (`server.timeout`) until it answers; NDJSON and SSE
// answers keep 120 s between chunks and close the connection when they end.
//
// Bun.serve gives no hook when it accepts a connection, and asking for a request's client address
// (`server.requestIP`: a system call and an object per request) cost about 8 µs a request, a third of
// what a whole `GET /health` costs. So connections are counted from the kernel's socket table instead,
// off the request path: every quarter second a sweep counts the process's descriptors (one directory
// read), and only when they could be over a bound reads the server port's sockets from
// /proc/net/tcp{,6} by client address. Over a bound, the server closes every idle connection
// (`server.closeIdleConnections()`: keep-alive connections with no request in flight), and until the next sweep the answers to addresses over their bound carry
// `Connection: close`. Nothing is refused, so /health keeps answering whoever asks. The bounds need
// Linux's /proc; elsewhere only the idle timeout applies (documented).
import { closeSync, openSync, readdirSync, readFileSync, readSync } from "node:fs";
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
    help: "connections one client address may keep open; over it, idle connections are closed and its answers carry Connection: close (logged; Linux)",
  },
  "max-connections": {
    type: "number",
    value: "N",
    help: "open connections in all; past it, idle connections are closed and answers carry Connection: close (default: three quarters of the open-file limit, less 64; Linux)",
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
/** How often the bounds are checked and slow handlers looked for. */
const SWEEP_MS = 250;
/** A handler still working after this many sweeps (0.5-0.75 s) gets BUSY_S instead of the idle timeout. */
const BUSY_AFTER_SWEEPS = 3;
/**
 * Bun counts socket timeouts in ticks of one 4 s timer shared by the whole process, so a timeout of
 * 1-4 s is "at the next tick": 0-4 s away, and a request arriving just before a tick was cut before the
 * sweep could give it BUSY_S (a 6 s handler under `--idle-timeout 2`: reset 0.5 s after it arrived,
 * one in eight when arrivals are spread over a tick; CI saw it twice). Under such a short idle timeout
 * each request gets this much (two ticks, 4-8 s) as it arrives, and the idle timeout back with a quick
 * answer.
 */
const ARRIVAL_S = 8;
const ONE_TICK_S = 4;
/** Marks an answer whose body streams with pauses between chunks (see `longLived`). */
const LONG_LIVED = Symbol("longLived");
type LongLived = Response & { [LONG_LIVED]?: true };

/**
 * Declares `res` a streamed answer (NDJSON, SSE) whose chunks may come far apart: the guard gives its
 * connection the long timeout between chunks and closes it when the stream ends. A mark set where the
 * stream is made, so no other answer pays for reading its content type.
 */
export function longLived(res: Response): Response {
  (res as LongLived)[LONG_LIVED] = true;
  return res;
}

type Handler = (request: Request) => unknown;

/** A request being answered: the sweep gives it the long timeout once it has seen it for half a second. */
interface InFlight {
  /** Dropped once answered, so a finished request is not kept alive until the next sweep. */
  request: Request | undefined;
  /** The sweep count when it arrived. */
  tick: number;
  done: boolean;
  extended: boolean;
}

/** Open connections to a port: in all and by client address (the keys `addressKey` makes). */
export interface SocketCount {
  total: number;
  byAddress: Map<string, number>;
}

/**
 * A client address as one key for both sources: `requestIP`'s text (`127.0.0.1`, `::ffff:127.0.0.1`,
 * `::1`) and /proc/net/tcp's hex. IPv4 and IPv4-mapped IPv6 give the dotted quad; other IPv6 the
 * eight groups in full, lowercase.
 */
export function addressKey(text: string): string {
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(text);
  if (mapped) return mapped[1]!;
  if (!text.includes(":")) return text;
  const [head, tail] = text.toLowerCase().split("::") as [string, string | undefined];
  const h = head ? head.split(":") : [];
  const t = tail ? tail.split(":") : [];
  const groups = tail === undefined ? h : [...h, ...Array(8 - h.length - t.length).fill("0"), ...t];
  return groups.map((g) => g.padStart(4, "0")).join(":");
}

/** /proc/net/tcp's `0100007F` (little-endian words) as an address key. */
function hexAddressKey(hex: string): string {
  const words = hex.match(/.{8}/g) ?? [];
  const bytes = words.flatMap((w) => [w.slice(6, 8), w.slice(4, 6), w.slice(2, 4), w.slice(0, 2)].map((b) => Number.parseInt(b, 16)));
  if (bytes.length === 4) return bytes.join(".");
  if (bytes.slice(0, 10).every((b) => b === 0) && bytes[10] === 255 && bytes[11] === 255) return bytes.slice(12).join(".");
  const groups: string[] = [];
  for (let i = 0; i < 16; i += 2) groups.push(((bytes[i]! << 8) | bytes[i + 1]!).toString(16).padStart(4, "0"));
  return groups.join(":");
}

/**
 * The kernel's socket tables (/proc/net/tcp and tcp6), opened once and read again from the start on
 * every look: a process at its open-file limit cannot open a file, and that is when the look matters.
 * Undefined where there are none (not Linux).
 */
export function socketTables(): { read: (port: number) => SocketCount; close: () => void } | undefined {
  const fds: number[] = [];
  for (const file of ["/proc/net/tcp", "/proc/net/tcp6"]) {
    try {
      fds.push(openSync(file, "r"));
    } catch {}
  }
  if (fds.length === 0) return undefined;
  const chunk = Buffer.allocUnsafe(256 * 1024);
  const close = () => {
    for (const fd of fds.splice(0)) closeSync(fd);
  };
  const read = (port: number): SocketCount => {
    const count: SocketCount = { total: 0, byAddress: new Map() };
    const suffix = `:${port.toString(16).toUpperCase().padStart(4, "0")}`;
    for (const fd of fds) {
      let text = "";
      for (let at = 0; ; ) {
        const n = readSync(fd, chunk, 0, chunk.length, at);
        if (n <= 0) break;
        text += chunk.toString("latin1", 0, n);
        at += n;
      }
      for (const line of text.split("\n")) {
        // "  12: 0100007F:1F90 0100007F:C2A8 01 ...": local address:port, remote address:port, state
        const f = line.trim().split(/\s+/, 4);
        if (f.length < 4 || !f[1]!.endsWith(suffix) || f[3] === "0A" || f[3] === "06") continue;
        const remote = hexAddressKey(f[2]!.slice(0, f[2]!.indexOf(":")));
        count.total++;
        count.byAddress.set(remote, (count.byAddress.get(remote) ?? 0) + 1);
      }
    }
    return count;
  };
  return { read, close };
}

/** The number of descriptors this process holds (Linux); Infinity when none is left to look. */
function openDescriptors(): number | undefined {
  try {
    return readdirSync("/proc/self/fd").length;
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    return code === "EMFILE" || code === "ENFILE" ? Number.POSITIVE_INFINITY : undefined;
  }
}

/**
 * An Elysia higher-order function (`app.wrap`) keeping slow handlers and streamed answers from being
 * cut by the short idle timeout, and the connections within their bounds (see the top of this file).
 * `server` is read when needed (the app is wrapped before it listens).
 */
export function connectionGuard(limits: ConnectionLimits, server: () => Server<unknown> | undefined, log?: Logger) {
  // Requests in arrival order, appended per request (no Date.now, no map) and compacted by the sweep.
  let inFlight: InFlight[] = [];
  let tick = 0;
  /** Addresses over their bound at the last sweep (keys of `addressKey`); empty almost always. */
  let over = new Set<string>();
  const warned = new Map<string, number>();
  const warn = (what: string, fields: Record<string, unknown>) => {
    const now = Date.now();
    if ((warned.get(what) ?? 0) > now) return;
    warned.set(what, now + 60_000);
    log?.warn(`connection bound reached: ${what}`, fields);
  };
  // Below this many descriptors no bound can be reached: the socket table is not read.
  const baseline = openDescriptors() ?? 0;
  const quiet = Math.min(limits.perAddress, limits.total) + baseline;
  const sockets = socketTables();
  const oneTick = limits.idleS <= ONE_TICK_S;

  const bounds = (srv: Server<unknown>) => {
    if (over.size > 0) over = new Set();
    const fds = openDescriptors();
    if (fds === undefined || fds <= quiet || srv.port === undefined || !sockets) return;
    const open = sockets.read(srv.port);
    const next = new Set<string>();
    for (const [address, n] of open.byAddress) {
      if (n > limits.perAddress) {
        next.add(address);
        warn(`per address (--max-connections-per-address ${limits.perAddress})`, { address, open: n });
      }
    }
    // Out of descriptors: the bound in all is reached whatever the table says.
    const overTotal = open.total > limits.total || fds === Number.POSITIVE_INFINITY;
    if (overTotal) warn(`in all (--max-connections ${limits.total})`, { open: open.total, addresses: open.byAddress.size });
    if (next.size === 0 && !overTotal) return;
    // Every idle connection goes (the honest clients' keep-alive ones too: they reconnect); answers
    // to the addresses over their bound close theirs until the next sweep.
    srv.closeIdleConnections();
    over = overTotal ? new Set(open.byAddress.keys()) : next;
  };

  const sweep = setInterval(() => {
    const srv = server();
    if (!srv) return;
    tick++;
    const still: InFlight[] = [];
    for (const f of inFlight) {
      if (f.done) continue;
      if (!f.extended && tick - f.tick >= BUSY_AFTER_SWEEPS) {
        f.extended = true;
        if (f.request) socketTimeout(srv, f.request, BUSY_S);
      }
      still.push(f);
    }
    inFlight = still;
    const now = Date.now();
    for (const [what, until] of warned) if (until <= now) warned.delete(what);
    bounds(srv);
  }, SWEEP_MS);
  sweep.unref();

  /** What the answer needs once the handler has one: the long timeout for a stream, `Connection: close` where due. */
  const answered = (request: Request, f: InFlight, srv: Server<unknown>, res: unknown): unknown => {
    f.done = true;
    f.request = undefined;
    if (!(res instanceof Response)) return res;
    const streaming = (res as LongLived)[LONG_LIVED] === true;
    if (streaming) socketTimeout(srv, request, BUSY_S);
    // A handler that got the long timeout, and a streamed answer once it ends, would leave their
    // connection with 120 s: they close it with the answer.
    if (streaming || f.extended) return closing(res);
    // A quick answer under a one-tick idle timeout gets that timeout back; the answer is written in
    // this same turn of the event loop, so no tick falls in between.
    if (oneTick) socketTimeout(srv, request, limits.idleS);
    if (over.size > 0) {
      const ip = srv.requestIP(request);
      if (ip !== null && over.has(addressKey(ip.address))) return closing(res);
    }
    return res;
  };
  const failed = (f: InFlight, err: unknown): never => {
    f.done = true;
    f.request = undefined;
    throw err;
  };
  // Not an async function: a handler that answers synchronously is finished synchronously, and one
  // that answers later costs one `then`, not an async frame around an await.
  const wrap =
    (fn: Handler): Handler =>
    (request: Request): unknown => {
      const srv = server();
      if (!srv) return fn(request);
      const f: InFlight = { request, tick, done: false, extended: false };
      inFlight.push(f);
      if (oneTick) socketTimeout(srv, request, ARRIVAL_S);
      let out: unknown;
      try {
        out = fn(request);
      } catch (err) {
        failed(f, err);
      }
      if (out instanceof Promise) return out.then((res) => answered(request, f, srv, res), (err) => failed(f, err));
      return answered(request, f, srv, out);
    };
  /** Ends the sweep and closes the socket tables (when the server stops). */
  const stop = () => {
    clearInterval(sweep);
    sockets?.close();
  };
  return { wrap, stop };
}

/** `server.timeout`, which never turns an answer into an error (a request its client has left). */
function socketTimeout(srv: Server<unknown>, request: Request, seconds: number): void {
  try {
    srv.timeout(request, seconds);
  } catch {}
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
