// The interactive terminal UI of `quotas` (no mode flag). See specs/quotas.md, "Terminal UI".
import type { TuiHost } from "../model/types.ts";
import { runDriver } from "./driver.ts";
import { processTerminal, type Terminal } from "./terminal.ts";

export type { Terminal } from "./terminal.ts";

/**
 * Runs the TUI on the process's terminal until the user quits; returns the exit code (0 on Q, 130 on
 * Ctrl-C/SIGINT, 143 on SIGTERM, 129 on SIGHUP, 1 on an unexpected error, 2 when stdin/stdout is not
 * a terminal). The terminal is already restored when it resolves. Fetches still in flight are
 * abandoned, so the caller should exit the process with the code rather than wait for the event loop
 * to drain (which would keep a quit user waiting up to the 10 s fetch timeout).
 */
export async function runTui(host: TuiHost, term: Terminal = processTerminal()): Promise<number> {
  if (!term.isTTY) {
    process.stderr.write("quotas: the interactive view needs a terminal; use --json or --statusline\n");
    return 2;
  }
  return runDriver(host, term);
}
