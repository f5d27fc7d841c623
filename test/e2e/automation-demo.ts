// A compiled automation-server for end-to-end tests: copied alone into a temp dir, started with --demo
// on a loopback port the kernel picks (a new one at each start) over <dir>/data, restartable on the
// same data (crash and shutdown tests).
import { copyFileSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { automationPgUrl, automationSql, ensureBuilt, startServer, type Server } from "./support";

export const DEMO_KEY = "eak_demo_0123456789abcdefghijklmnopqrstuv";

export interface DemoServer {
  dir: string;
  /** The SQLite file under the data dir, for checks of what a killed process left behind. */
  dbPath: string;
  /** `http://127.0.0.1:PORT` of the server started last: each boot() gets a new port, so read it after. */
  readonly base: string;
  /** Starts (or restarts) the server and resolves once it listens. */
  boot(): Promise<Server>;
  /** The PostgreSQL database the server runs on in the PostgreSQL pass (once booted); undefined on SQLite. */
  readonly pgUrl?: string;
  /**
   * One statement on the server's database, whichever backend it runs on (automationSql in support.ts).
   */
  sql<T = Record<string, unknown>>(text: string, ...args: (string | number | null)[]): Promise<T[]>;
  /** A request with the demo tenant's key; `body` is sent as JSON. */
  api(method: string, path: string, body?: unknown): Promise<Response>;
  /** SIGKILLs a server still running and removes the directory. */
  close(): Promise<void>;
}

export async function demoServer(opts: {
  prefix: string;
  workers: number;
  httpAllowHosts?: string;
  env?: Record<string, string | undefined>;
  args?: string[];
  /** Stay on SQLite in the PostgreSQL pass too (the test reads dbPath, or copies the data dir into PostgreSQL itself). */
  sqlite?: boolean;
}): Promise<DemoServer> {
  const built = await ensureBuilt("automation-server");
  const dir = mkdtempSync(join(tmpdir(), opts.prefix));
  const bin = join(dir, "automation-server");
  copyFileSync(built, bin);
  let current: Server | undefined;
  const dbPath = join(dir, "data", "automation.db");
  const base = () => {
    if (!current) throw new Error("demo server not started yet: call boot() first");
    return current.url;
  };
  return {
    dir,
    dbPath,
    get pgUrl() {
      return automationPgUrl(join(dir, "data"));
    },
    sql: <T>(text: string, ...args: (string | number | null)[]) => automationSql<T>(join(dir, "data"), text, ...args),
    get base() {
      return base();
    },
    async boot() {
      current = await startServer(
        [bin, "--demo", "--host", "127.0.0.1", "--workers", String(opts.workers), "--data-dir", join(dir, "data"), ...(opts.args ?? [])],
        { cwd: dir, env: { AUTOMATION_HTTP_ALLOW_HOSTS: opts.httpAllowHosts, AUTOMATION_DATA_DIR: undefined, ...opts.env }, sqlite: opts.sqlite },
      );
      return current;
    },
    api: (method, path, body) =>
      fetch(`${base()}${path}`, {
        method,
        headers: { authorization: `Bearer ${DEMO_KEY}`, ...(body === undefined ? {} : { "content-type": "application/json" }) },
        body: body === undefined ? undefined : JSON.stringify(body),
      }),
    async close() {
      if (current && current.proc.exitCode === null) await current.kill("SIGKILL");
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
