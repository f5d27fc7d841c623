/**
 * A small leveled logger to stderr. One line per event: `2026-11-22T09:00:00.000Z info  message k=v`.
 * Callers pass fields explicitly; never pass secrets (tokens, passwords, keys).
 */
export type Level = "debug" | "info" | "warn" | "error" | "silent";
const order: Record<Level, number> = { debug: 10, info: 20, warn: 30, error: 40, silent: 99 };

export interface Logger {
  debug(msg: string, fields?: Record<string, unknown>): void;
  info(msg: string, fields?: Record<string, unknown>): void;
  warn(msg: string, fields?: Record<string, unknown>): void;
  error(msg: string, fields?: Record<string, unknown>): void;
}

function fmt(fields?: Record<string, unknown>): string {
  if (!fields) return "";
  let s = "";
  for (const [k, v] of Object.entries(fields)) {
    if (v === undefined) continue;
    const text = typeof v === "string" ? v : JSON.stringify(v);
    s += ` ${k}=${/\s/.test(text) ? JSON.stringify(text) : text}`;
  }
  return s;
}

export function createLogger(
  level: Level = (process.env.LOG_LEVEL as Level) || "info",
  write: (line: string) => void = (line) => process.stderr.write(line + "\n"),
): Logger {
  const min = order[level] ?? order.info;
  const log = (lvl: Exclude<Level, "silent">) => (msg: string, fields?: Record<string, unknown>) => {
    if (order[lvl] < min) return;
    write(`${new Date().toISOString()} ${lvl.padEnd(5)} ${msg}${fmt(fields)}`);
  };
  return { debug: log("debug"), info: log("info"), warn: log("warn"), error: log("error") };
}

export const silentLogger: Logger = createLogger("silent");
