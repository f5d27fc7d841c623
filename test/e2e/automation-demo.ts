// A compiled automation-server for end-to-end tests: copied alone into a temp dir, started with --demo
// on a loopback port the kernel picks (a new one at each start) over <dir>/data, restartable on the
// same data (crash and shutdown tests).
import { Database } from "bun:sqlite";
import { SQL } from "bun";
import { copyFileSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ensureBuilt, startServer, type Server } from "./support";

export const DEMO_KEY = "eak_demo_0123456789abcdefghijklmnopqrstuv";

export interface DemoServer {
  dir: string;
  /** The SQLite file under the data dir, for checks of what a killed process left behind. */
  dbPath: string;
  /** `http://127.0.0.1:PORT` of the server started last: each boot() gets a new port, so read it after. */
  readonly base: string;
  /** Starts (or restarts) the server and resolves once it listens. */
  boot(): Promise<Server>;
  /** The PostgreSQL database the server runs on in the PostgreSQL pass; undefined on SQLite. */
  pgUrl?: string;
  /**
   * One query on the server's database, whichever backend it runs on: `?` placeholders, SQL both
   * dialects understand (no json_extract). Opened and closed per call, so a killed server's leftovers
   * are read as they are.
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
  const pgUrl = !opts.sqlite && process.env.AUTOMATION_TEST_DB === "postgres" ? await (await import("../support/postgres")).freshPostgresDb() : undefined;
  const dbPath = join(dir, "data", "automation.db");
  const base = () => {
    if (!current) throw new Error("demo server not started yet: call boot() first");
    return current.url;
  };
  return {
    dir,
    dbPath,
    ...(pgUrl ? { pgUrl } : {}),
    async sql<T>(text: string, ...args: (string | number | null)[]): Promise<T[]> {
      if (!pgUrl) {
        const db = new Database(dbPath, { readonly: true });
        try {
          return db.query(text).all(...args) as T[];
        } finally {
          db.close();
        }
      }
      const pg = new SQL({ url: pgUrl, max: 1 });
      try {
        let n = 0;
        // PostgreSQL answers bigint counts as strings: numbers come back as numbers, as from SQLite.
        const rows = (await pg.unsafe(text.replace(/\?/g, () => `$${++n}`), args)) as Record<string, unknown>[];
        return rows.map((r) => Object.fromEntries(Object.entries(r).map(([k, v]) => [k, typeof v === "bigint" || (typeof v === "string" && /^\d+$/.test(v) && /^(n|count|c)$/.test(k)) ? Number(v) : v]))) as T[];
      } finally {
        await pg.close();
      }
    },
    get base() {
      return base();
    },
    async boot() {
      current = await startServer(
        [bin, "--demo", "--host", "127.0.0.1", "--workers", String(opts.workers), "--data-dir", join(dir, "data"), ...(pgUrl ? ["--db", pgUrl] : []), ...(opts.args ?? [])],
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
