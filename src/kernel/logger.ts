/**
 * A small leveled logger to stderr, one line per event, in one of two formats:
 * - `text` (default): `2026-11-22T09:00:00.000Z info  message k=v`
 * - `json`: `{"time":"2026-11-22T09:00:00.000Z","level":"info","msg":"message","k":"v"}` (one object a line,
 *   for log shippers).
 * Callers pass fields explicitly; never pass secrets (tokens, passwords, keys). `child(fields)` gives a
 * logger that adds `fields` to every line (a request id carried into a run's lines).
 */
import { writeSync } from "node:fs";

export type Level = "debug" | "info" | "warn" | "error" | "silent";
export type LogFormat = "text" | "json";
const order: Record<Level, number> = { debug: 10, info: 20, warn: 30, error: 40, silent: 99 };

export interface Logger {
  debug(msg: string, fields?: Record<string, unknown>): void;
  info(msg: string, fields?: Record<string, unknown>): void;
  warn(msg: string, fields?: Record<string, unknown>): void;
  error(msg: string, fields?: Record<string, unknown>): void;
  /** A logger writing the same way with `fields` added to every line (the line's own fields win). */
  child(fields: Record<string, unknown>): Logger;
  /** Whether a line at `level` is written: a hot path builds no fields for a line nobody reads. */
  enabled?(level: Exclude<Level, "silent">): boolean;
}

export const LOG_FORMATS: readonly LogFormat[] = ["text", "json"];

/** `text` or `json` (anything else is a usage error the caller reports). */
export function isLogFormat(s: string): s is LogFormat {
  return (LOG_FORMATS as readonly string[]).includes(s);
}

function textFields(fields: Record<string, unknown>): string {
  let s = "";
  for (const [k, v] of Object.entries(fields)) {
    if (v === undefined) continue;
    let text: string;
    try {
      text = typeof v === "string" ? v : String(JSON.stringify(v));
    } catch {
      text = String(v);
    }
    s += ` ${k}=${/\s/.test(text) ? JSON.stringify(text) : text}`;
  }
  return s;
}

function jsonLine(time: string, level: string, msg: string, fields: Record<string, unknown>): string {
  const line: Record<string, unknown> = { time, level, msg };
  for (const [k, v] of Object.entries(fields)) {
    // The envelope keys stay the envelope's: a field of the same name is kept under a prefix.
    if (v !== undefined) line[k in line ? `field_${k}` : k] = v;
  }
  try {
    return JSON.stringify(line);
  } catch {
    // A field that cannot be serialized (a cycle, a BigInt) must not lose the line.
    return JSON.stringify({ time, level, msg, fields: String(fields) });
  }
}

let pending: string[] = [];
let scheduled = false;

function flushStderr(): void {
  scheduled = false;
  if (pending.length === 0) return;
  const bytes = Buffer.from(pending.join(""));
  pending = [];
  let off = 0;
  for (let tries = 0; off < bytes.length && tries < 100; ) {
    try {
      off += writeSync(2, bytes, off);
    } catch (err) {
      // A full non-blocking pipe: wait for the reader a little. Closed or anything else: drop the
      // lines, logging must never take the server down.
      if ((err as NodeJS.ErrnoException).code !== "EAGAIN") return;
      tries++;
      Bun.sleepSync(1);
    }
  }
}

/**
 * Lines to stderr, gathered per event-loop turn into one write: a write per line cost half the
 * throughput of a small request (one line per request). Flushed on exit, so nothing logged is lost.
 */
function stderrLine(line: string): void {
  pending.push(line + "\n");
  if (pending.length >= 256) return flushStderr();
  if (scheduled) return;
  scheduled = true;
  setImmediate(flushStderr);
}
process.on("exit", flushStderr);

export function createLogger(
  level: Level = (process.env.LOG_LEVEL as Level) || "info",
  write: (line: string) => void = stderrLine,
  format: LogFormat = process.env.LOG_FORMAT === "json" ? "json" : "text",
  base: Record<string, unknown> = {},
): Logger {
  const min = order[level] ?? order.info;
  const log = (lvl: Exclude<Level, "silent">) => (msg: string, fields?: Record<string, unknown>) => {
    if (order[lvl] < min) return;
    const all = fields ? { ...base, ...fields } : base;
    const time = new Date().toISOString();
    write(format === "json" ? jsonLine(time, lvl, msg, all) : `${time} ${lvl.padEnd(5)} ${msg}${textFields(all)}`);
  };
  return {
    debug: log("debug"),
    info: log("info"),
    warn: log("warn"),
    error: log("error"),
    child: (fields) => createLogger(level, write, format, { ...base, ...fields }),
    enabled: (lvl) => order[lvl] >= min,
  };
}

export const silentLogger: Logger = createLogger("silent");
