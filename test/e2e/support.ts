// Shared helpers for end-to-end tests: build an executable once per test process, free ports,
// start a compiled binary and wait until it answers.
import { compile, root } from "../../src/kernel/build";
import { basename, join, resolve } from "node:path";

export { root };
const built = new Map<string, Promise<string>>();

/** Compiles bin/<name>.ts into dist/<name> once per test process, exactly as `bun run build` does. */
export function ensureBuilt(name: string): Promise<string> {
  let p = built.get(name);
  if (!p) {
    p = compile(name);
    built.set(name, p);
  }
  return p;
}

/**
 * A port that was free a moment ago on 127.0.0.1: only for a connection that must be refused. Never
 * start a server on it (another process can take it in between); start servers with `startServer`.
 */
export function refusedPort(): number {
  const s = Bun.serve({ port: 0, hostname: "127.0.0.1", fetch: () => new Response() });
  const port = s.port!;
  s.stop(true);
  return port;
}

/** Polls `url` until it answers 2xx or `timeoutMs` passes. */
export async function waitForHttp(url: string, timeoutMs = 15_000): Promise<void> {
  const until = Date.now() + timeoutMs;
  let last = "";
  while (Date.now() < until) {
    try {
      const r = await fetch(url);
      if (r.ok) return;
      last = `status ${r.status}`;
    } catch (err) {
      last = (err as Error).message;
    }
    await Bun.sleep(50);
  }
  throw new Error(`${url} did not come up: ${last}`);
}

export interface Proc {
  proc: Bun.Subprocess<"ignore", "pipe", "pipe">;
  output(): string;
  kill(signal?: NodeJS.Signals): Promise<number>;
}

/** Starts an executable with args/env in `cwd`, capturing stdout+stderr. */
export function start(cmd: string[], opts: { cwd?: string; env?: Record<string, string | undefined> } = {}): Proc {
  const proc = Bun.spawn(cmd, {
    cwd: opts.cwd,
    env: { ...process.env, ...opts.env },
    stdin: "ignore",
    stdout: "pipe",
    stderr: "pipe",
  });
  let out = "";
  const pump = async (s: ReadableStream<Uint8Array>) => {
    const dec = new TextDecoder();
    for await (const chunk of s) out += dec.decode(chunk);
  };
  void pump(proc.stdout);
  void pump(proc.stderr);
  return {
    proc,
    output: () => out,
    kill: async (signal = "SIGTERM") => {
      proc.kill(signal);
      return proc.exited;
    },
  };
}

export interface Server extends Proc {
  /** `http://127.0.0.1:PORT` (or the host the server bound, when it is not a wildcard). */
  url: string;
  port: number;
}

/**
 * Starts a server executable with `--port 0` appended and resolves once it reports the address it
 * bound (`<name> listening on http://HOST:PORT`, its first stdout line). Rejects with the server's
 * output when it exits first or says nothing within `timeoutMs`.
 */
export async function startServer(
  cmd: string[],
  opts: { cwd?: string; env?: Record<string, string | undefined>; timeoutMs?: number; /** Stay on SQLite in the PostgreSQL pass too (tests of the SQLite file itself). */ sqlite?: boolean } = {},
): Promise<Server> {
  const db = await automationTestDb(cmd, opts);
  const p = start([...cmd, ...db, "--port", "0"], { cwd: opts.cwd, env: { PORT: undefined, ...opts.env } });
  const until = Date.now() + (opts.timeoutMs ?? 30_000);
  for (;;) {
    const m = /listening on http:\/\/([^\s/]+):(\d+)/.exec(p.output());
    if (m) {
      const host = ["localhost", "0.0.0.0", "[::]"].includes(m[1]) ? "127.0.0.1" : m[1];
      const port = Number(m[2]);
      return { ...p, url: `http://${host}:${port}`, port };
    }
    if (p.proc.exitCode !== null || Date.now() > until) {
      if (p.proc.exitCode === null) await p.kill("SIGKILL");
      throw new Error(`${cmd[0]} did not report its address (exit ${p.proc.exitCode}):\n${p.output()}`);
    }
    await Bun.sleep(20);
  }
}

const pgByDataDir = new Map<string, string>();

/**
 * With `AUTOMATION_TEST_DB=postgres` (the suite's PostgreSQL pass) an automation-server started to serve
 * without `--db` gets one: a fresh database per data dir, the same one again when a test restarts a
 * server on the same data dir (crash and restart tests), so the whole e2e suite runs on PostgreSQL.
 */
async function automationTestDb(cmd: string[], opts: { cwd?: string; env?: Record<string, string | undefined>; sqlite?: boolean }): Promise<string[]> {
  if (process.env.AUTOMATION_TEST_DB !== "postgres" || opts.sqlite || basename(cmd[0]) !== "automation-server") return [];
  const sub = cmd[1];
  if ((sub !== undefined && sub !== "serve" && !sub.startsWith("-")) || cmd.includes("--db") || opts.env?.AUTOMATION_DB) return [];
  const flag = cmd.indexOf("--data-dir");
  const env = opts.env && "AUTOMATION_DATA_DIR" in opts.env ? opts.env.AUTOMATION_DATA_DIR : process.env.AUTOMATION_DATA_DIR;
  const dataDir = resolve(opts.cwd ?? process.cwd(), flag >= 0 ? cmd[flag + 1] : (env ?? "data/automation"));
  let url = pgByDataDir.get(dataDir);
  if (!url) {
    const { freshPostgresDb } = await import("../support/postgres");
    url = await freshPostgresDb();
    pgByDataDir.set(dataDir, url);
  }
  return ["--db", url];
}

/** The PostgreSQL database the PostgreSQL pass gave the server of `dataDir`; undefined = it runs on SQLite. */
export const automationPgUrl = (dataDir: string): string | undefined => pgByDataDir.get(resolve(dataDir));

/**
 * One statement on the database of the automation server of `dataDir`, whichever backend it runs on:
 * `?` placeholders, SQL both dialects understand (`->`/`->>` for JSON, `CAST(COUNT(*) AS INTEGER)`
 * for counts). Opened and closed per call, so what a killed server left behind is read as it is.
 */
export async function automationSql<T = Record<string, unknown>>(dataDir: string, text: string, ...args: (string | number | null)[]): Promise<T[]> {
  const url = automationPgUrl(dataDir);
  if (!url) {
    const { Database } = await import("bun:sqlite");
    const db = new Database(join(dataDir, "automation.db"));
    try {
      return db.query(text).all(...args) as T[];
    } finally {
      db.close();
    }
  }
  const { SQL } = await import("bun");
  const pg = new SQL({ url, max: 1 });
  try {
    let n = 0;
    return (await pg.unsafe(text.replace(/\?/g, () => `$${++n}`), args)) as T[];
  } finally {
    await pg.close();
  }
}

/** The `name{labels} value` lines of a Prometheus text exposition (what `/metrics` answers). */
export function metricSamples(text: string): { name: string; labels: Record<string, string>; value: number }[] {
  const out: { name: string; labels: Record<string, string>; value: number }[] = [];
  for (const line of text.split("\n")) {
    const m = /^([a-zA-Z_:][\w:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (!m) continue;
    const labels: Record<string, string> = {};
    for (const l of (m[2] ?? "").matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g)) labels[l[1]] = l[2];
    out.push({ name: m[1], labels, value: Number(m[3]) });
  }
  return out;
}
