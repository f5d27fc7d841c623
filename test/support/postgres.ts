// A real PostgreSQL server for tests: initdb into a temp directory, a port on 127.0.0.1, the unix
// socket in that directory, started once per test process and stopped (and deleted) when it exits.
// PostgreSQL cannot be told to pick a free port itself (no port 0), so the port is one that was free a
// moment ago; when another process takes it in between, the server exits ("could not bind") and the
// start is retried on another. The server counts as ready only when its own log says so while it runs.
// Postgres refuses to run as root, so as root the server runs as the `postgres` user (setpriv).
import { SQL } from "bun";
import { atRunEnd } from "./file-end";
import { chownSync, existsSync, mkdtempSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

export interface TestPostgres {
  /** A URL for database `db` on the server. */
  url(db?: string): string;
  port: number;
  /** Stops the server and deletes its directory; the promise settles once both are done. */
  stop(): Promise<void>;
  /** Shuts the server down (fast mode: open connections are terminated) and keeps its data; resolves once it is gone. */
  pause(): Promise<void>;
  /** Starts the paused server again on the same data and port; resolves once it accepts connections. */
  resume(): Promise<void>;
}

/** The directory of PostgreSQL's server programs (Debian keeps them out of PATH). */
function binDir(): string {
  for (const v of existsSync("/usr/lib/postgresql") ? readdirSync("/usr/lib/postgresql").sort().reverse() : []) {
    const dir = `/usr/lib/postgresql/${v}/bin`;
    if (existsSync(`${dir}/initdb`)) return dir;
  }
  const found = Bun.which("initdb");
  if (found) return found.slice(0, found.lastIndexOf("/"));
  throw new Error("PostgreSQL server programs not found: apt-get install -y postgresql");
}

/** A port free on 127.0.0.1 a moment ago: another process may take it before PostgreSQL binds it. */
function candidatePort(): number {
  const s = Bun.serve({ port: 0, hostname: "127.0.0.1", fetch: () => new Response() });
  const port = s.port!;
  s.stop(true);
  return port;
}

/** Runs as the postgres user when we are root. */
function asPostgres(cmd: string[]): string[] {
  if (process.getuid?.() !== 0) return cmd;
  return ["setpriv", "--reuid=postgres", "--regid=postgres", "--init-groups", "--", ...cmd];
}

function owner(): { uid: number; gid: number } | undefined {
  if (process.getuid?.() !== 0) return undefined;
  const line = Bun.spawnSync(["getent", "passwd", "postgres"]).stdout.toString().trim();
  const [, , uid, gid] = line.split(":");
  if (!uid) throw new Error("no postgres user: apt-get install -y postgresql creates it");
  return { uid: Number(uid), gid: Number(gid) };
}

/** Starts a throwaway server; resolves once it accepts connections. */
export async function startPostgres(): Promise<TestPostgres> {
  const bin = binDir();
  const attempts = 5;
  for (let attempt = 1; ; attempt++) {
    const r = await attemptStart(bin, candidatePort());
    if ("pg" in r) return r.pg;
    if (!r.portTaken || attempt >= attempts) throw new Error(`postgres did not start${r.portTaken ? ` (${attempts} attempts, each port taken by another process meanwhile)` : ""}: ${r.reason}\n${r.log}`);
  }
}

/** The server's own log names an address it could not bind: another process took the port meanwhile. */
const portTakenIn = (log: string) => /could not bind|already in use/i.test(log);

/**
 * One start on `port`, in a directory of its own (the watchdog deletes it when the server ends, so a
 * retry initdb's afresh). Resolves with the server once its log says "ready to accept connections"
 * while it is still running, or with why not.
 */
async function attemptStart(bin: string, port: number): Promise<{ pg: TestPostgres } | { portTaken: boolean; reason: string; log: string }> {
  const dir = mkdtempSync(join(tmpdir(), "orders-pg-"));
  const who = owner();
  if (who) chownSync(dir, who.uid, who.gid);
  const data = join(dir, "data");
  const init = Bun.spawnSync(asPostgres([`${bin}/initdb`, "-D", data, "-U", "postgres", "-A", "trust", "-E", "UTF8", "--locale=C", "--no-sync"]), { stdout: "pipe", stderr: "pipe" });
  if (init.exitCode !== 0) {
    rmSync(dir, { recursive: true, force: true });
    throw new Error(`initdb failed: ${init.stderr.toString()}`);
  }
  const server = asPostgres([
    `${bin}/postgres`, "-D", data, "-p", String(port), "-k", dir,
    "-c", "listen_addresses=127.0.0.1", "-c", "max_connections=1000", "-c", "fsync=off",
    "-c", "synchronous_commit=off", "-c", "full_page_writes=off", "-c", "shared_buffers=64MB",
  ]);
  // A watchdog shell owns the server: it stops it and deletes the directory when told to (stop()) or
  // when this process is gone, however it ended (a killed test runner leaves nothing behind).
  // USR1 pauses (fast shutdown, data kept), USR2 starts the server again on the same data and port.
  const watchdog = `args=("$@"); "\${args[@]}" & pg=$!; paused=0
cleanup() { kill -QUIT $pg 2>/dev/null; wait $pg 2>/dev/null; rm -rf "$DIR"; exit 0; }
trap cleanup TERM INT
trap 'kill -INT $pg; wait $pg; paused=1; echo "paused" >&2' USR1
trap '"\${args[@]}" & pg=$!; paused=0' USR2
while kill -0 "$PARENT" 2>/dev/null && { [ $paused = 1 ] || kill -0 $pg 2>/dev/null; }; do sleep 0.3; done
cleanup`;
  const proc = Bun.spawn(["bash", "-c", watchdog, "pg-watchdog", ...server], {
    env: { ...process.env, DIR: dir, PARENT: String(process.pid) },
    stdout: "ignore",
    stderr: "pipe",
  });
  let log = "";
  const logged = (async () => {
    const dec = new TextDecoder();
    for await (const chunk of proc.stderr) log += dec.decode(chunk, { stream: true });
  })();
  const url = (db = "postgres") => `postgres://postgres@127.0.0.1:${port}/${db}`;
  let stopped = false;
  const stop = async () => {
    if (!stopped) {
      stopped = true;
      proc.kill("SIGTERM");
    }
    await proc.exited;
  };
  const stopOnExit = () => void stop();
  process.on("exit", stopOnExit);
  // Stopped (and its directory removed by the watchdog) before the test run's temp root is removed.
  atRunEnd(stop);
  /** Waits until `pattern` occurs `count` times in the log (the server's own word, while the watchdog runs). */
  const untilLogged = async (pattern: RegExp, count: number, what: string) => {
    const until = Date.now() + 30_000;
    while ((log.match(pattern) ?? []).length < count) {
      if (proc.exitCode !== null || Date.now() > until) throw new Error(`postgres did not ${what} (port ${port}):\n${log}`);
      await Bun.sleep(50);
    }
  };
  const pause = async () => {
    const n = (log.match(/^paused$/gm) ?? []).length;
    proc.kill("SIGUSR1");
    await untilLogged(/^paused$/gm, n + 1, "stop");
  };
  const resume = async () => {
    const n = (log.match(/ready to accept connections/g) ?? []).length;
    proc.kill("SIGUSR2");
    await untilLogged(/ready to accept connections/g, n + 1, "start again");
  };
  // Ready only on our server's own word while it runs: a connection that succeeds could be another
  // server's that holds the port.
  const until = Date.now() + 30_000;
  for (;;) {
    if (proc.exitCode !== null) {
      // The watchdog ends once the server has: read the rest of the log (bounded, should a child of the
      // server still hold the pipe).
      await Promise.race([logged, Bun.sleep(2000)]);
      process.off("exit", stopOnExit);
      return { portTaken: portTakenIn(log), reason: `the server exited (port ${port})`, log };
    }
    if (/ready to accept connections/.test(log)) return { pg: { url, port, stop, pause, resume } };
    if (Date.now() > until) {
      await stop();
      process.off("exit", stopOnExit);
      return { portTaken: false, reason: `not ready within 30 s (port ${port})`, log };
    }
    await Bun.sleep(50);
  }
}

let shared: Promise<TestPostgres> | undefined;
let admin: SQL | undefined;
let made = 0;

/** The server this test process shares (started on first use). */
export function sharedPostgres(): Promise<TestPostgres> {
  shared ??= startPostgres();
  return shared;
}

/** A new empty database on the shared server (a copy of database `template` when given); its URL. */
export async function freshPostgresDb(template?: string): Promise<string> {
  const pg = await sharedPostgres();
  admin ??= new SQL({ url: pg.url(), max: 1 });
  const name = `t_${process.pid}_${++made}`;
  await admin.unsafe(`CREATE DATABASE ${name}${template ? ` TEMPLATE ${template}` : ""}`);
  return pg.url(name);
}
