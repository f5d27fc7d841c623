// Benchmark: the generic request path of both servers, A/B against executables of an earlier commit in
// one run (issue 42). Rounds alternate A and B (and a raw Bun.serve constant) so load on the machine
// meets both alike; each figure is the best of the rounds, with the server's CPU time per request read
// from /proc (user + system), which a busy machine disturbs less than throughput.
//   OLD_ORDER_SERVER=… OLD_AUTOMATION_SERVER=… bun test/bench/request-path.ts [--rounds 3] [--seconds 5] [--postgres] [--deep]
// Without OLD_* only the current build is measured (against the raw constant). `--postgres` adds the
// order server's cached page on PostgreSQL (a throwaway server, test/support/postgres.ts; a database per build).
// `--deep` adds random pages of 20 among 100,000 orders on SQLite, and with `--postgres` on PostgreSQL too
// (orders.ts's fixture, a database per build).
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { ensureBuilt, startServer, type Server } from "../e2e/support";
import { remote } from "../orders/remote";
import { freshPostgresDb } from "../support/postgres";
import { BENCH_ENV, postgresOrderFixture, randomPagesLua, sqliteOrderFixture } from "./order-fixture";

const arg = (name: string, dflt: number) => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? Number(process.argv[i + 1]) : dflt;
};
const ROUNDS = arg("rounds", 3);
const POSTGRES = process.argv.includes("--postgres");
const DEEP = process.argv.includes("--deep");
const DEEP_ORDERS = 100_000;
const SECONDS = arg("seconds", 5);
const DEMO_KEY = "eak_demo_0123456789abcdefghijklmnopqrstuv";

if (Bun.spawnSync(["which", "wrk"]).exitCode !== 0) {
  console.error("wrk is not installed: apt-get install -y wrk");
  process.exit(1);
}

const dir = mkdtempSync(join(tmpdir(), "request-path-bench-"));
const servers: Server[] = [];
process.on("exit", () => {
  for (const s of servers) s.proc.kill("SIGKILL");
  rmSync(dir, { recursive: true, force: true });
});

interface Figure {
  rps: number;
  cpuUs: number;
}

const cpuTicks = (pid: number) => {
  const f = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]!.split(" ");
  return Number(f[11]) + Number(f[12]); // utime + stime, after the ") " that ends the command name
};
const TICK_US = 1_000_000 / 100; // CLK_TCK is 100 on Linux

async function wrk(t: Target, seconds = SECONDS): Promise<Figure> {
  const { url, header, script, pid } = t;
  const args = ["wrk", "-t1", "-c32", `-d${seconds}s`];
  if (header) args.push("-H", header);
  if (script) args.push("-s", script);
  const before = cpuTicks(pid);
  const p = Bun.spawn([...args, url], { stdout: "pipe", stderr: "ignore" });
  const out = await new Response(p.stdout).text();
  await p.exited;
  const used = cpuTicks(pid) - before;
  const requests = Number(/(\d+) requests in/.exec(out)?.[1] ?? 0);
  const non2xx = /Non-2xx or 3xx responses:\s+(\d+)/.exec(out)?.[1];
  if (non2xx) throw new Error(`${url}: ${non2xx} answers were not 2xx`);
  return { rps: Number(/Requests\/sec:\s+([\d.]+)/.exec(out)?.[1] ?? 0), cpuUs: requests ? (used * TICK_US) / requests : Number.NaN };
}

const best = (a: Figure | undefined, b: Figure): Figure => (!a ? b : { rps: Math.max(a.rps, b.rps), cpuUs: Math.min(a.cpuUs, b.cpuUs) });

interface Target {
  name: string;
  url: string;
  header?: string;
  /** A wrk Lua script (the deep pages' random URLs). */
  script?: string;
  pid: number;
}

async function orderDemo(bin: string, db: string) {
  const s = await startServer([bin, "--profile", "demo", "--db", db, "--host", "127.0.0.1"], { env: { LOG_LEVEL: "warn" } });
  servers.push(s);
  return { s, auth: `Authorization: Bearer ${await remote(s.url).token("dmitry")}` };
}

async function orderServer(bin: string, label: string): Promise<Target[]> {
  const { s, auth } = await orderDemo(bin, ":memory:");
  const out: Target[] = [
    { name: `${label} order-server GET /health`, url: `${s.url}/health`, pid: s.proc.pid },
    { name: `${label} order-server GET /orders?size=20 (cached page)`, url: `${s.url}/orders?size=20`, header: auth, pid: s.proc.pid },
  ];
  if (POSTGRES) {
    const pg = await orderDemo(bin, await freshPostgresDb());
    out.push({ name: `${label} order-server on PostgreSQL GET /orders?size=20 (cached page)`, url: `${pg.s.url}/orders?size=20`, header: pg.auth, pid: pg.s.proc.pid });
  }
  if (DEEP) {
    const deep = async (backend: string, db: string) => {
      const d = await startServer([bin, "--host", "127.0.0.1", "--db", db], { env: BENCH_ENV });
      servers.push(d);
      const script = await randomPagesLua(dir, await remote(d.url).token("bench-performer"), DEEP_ORDERS);
      out.push({ name: `${label} order-server random pages of ${DEEP_ORDERS.toLocaleString("en-US")} (${backend})`, url: `${d.url}/orders`, script, pid: d.proc.pid });
    };
    const file = join(dir, `deep-${label}.db`);
    await sqliteOrderFixture(bin, file, DEEP_ORDERS);
    await deep("SQLite", file);
    if (POSTGRES) {
      const url = await freshPostgresDb();
      await postgresOrderFixture(bin, url, DEEP_ORDERS);
      await deep("PostgreSQL", url);
    }
  }
  return out;
}

async function automationServer(bin: string, label: string): Promise<Target[]> {
  const s = await startServer([bin, "--demo", "--host", "127.0.0.1", "--workers", "1", "--data-dir", join(dir, `data-${label}`)], { env: { LOG_LEVEL: "warn" }, sqlite: true });
  servers.push(s);
  return [
    { name: `${label} automation-server GET /health`, url: `${s.url}/health`, pid: s.proc.pid },
    { name: `${label} automation-server GET /v1/auth/check`, url: `${s.url}/v1/auth/check`, header: `Authorization: Bearer ${DEMO_KEY}`, pid: s.proc.pid },
  ];
}

const [newOrders, newAutomation] = await Promise.all([ensureBuilt("order-server"), ensureBuilt("automation-server")]);
const targets: { a: Target[]; b?: Target[] } = { a: [...(await orderServer(newOrders, "new")), ...(await automationServer(newAutomation, "new"))] };
const oldOrders = process.env.OLD_ORDER_SERVER;
const oldAutomation = process.env.OLD_AUTOMATION_SERVER;
if (oldOrders && oldAutomation) targets.b = [...(await orderServer(oldOrders, "old")), ...(await automationServer(oldAutomation, "old"))];
const reference = await (async (): Promise<Target> => {
  const s = await startServer([process.execPath, join(import.meta.dir, "raw-serve.ts")], { sqlite: true });
  servers.push(s);
  return { name: "raw Bun.serve constant", url: `${s.url}/`, pid: s.proc.pid };
})();

// Warm-up (JIT, caches, connections) of every target before anything counts.
for (const t of [reference, ...targets.a, ...(targets.b ?? [])]) await wrk(t, 1);
const results = new Map<string, Figure>();
console.log(`request path A/B: ${ROUNDS} rounds × ${SECONDS} s per figure, wrk -t1 -c32; load ${loadavg().map((l) => l.toFixed(1)).join(" ")}`);
for (let round = 0; round < ROUNDS; round++) {
  results.set(reference.name, best(results.get(reference.name), await wrk(reference)));
  for (let i = 0; i < targets.a.length; i++) {
    // Alternate which build goes first, so neither always meets the other's aftermath.
    const pair = targets.b ? (round % 2 === 0 ? [targets.a[i]!, targets.b[i]!] : [targets.b[i]!, targets.a[i]!]) : [targets.a[i]!];
    for (const t of pair) results.set(t.name, best(results.get(t.name), await wrk(t)));
  }
}
const ref = results.get(reference.name)!;
const fmt = (n: number) => Math.round(n).toLocaleString("en-US");
console.log(`\n${reference.name}: ${fmt(ref.rps)} req/s, ${ref.cpuUs.toFixed(1)} µs CPU/request`);
for (let i = 0; i < targets.a.length; i++) {
  const a = results.get(targets.a[i]!.name)!;
  const name = targets.a[i]!.name.slice("new ".length);
  let line = `${name}: ${fmt(a.rps)} req/s (${(a.rps / ref.rps).toFixed(2)}× raw), ${a.cpuUs.toFixed(1)} µs CPU/request`;
  if (targets.b) {
    const b = results.get(targets.b[i]!.name)!;
    line += ` | old build ${fmt(b.rps)} req/s, ${b.cpuUs.toFixed(1)} µs | new/old throughput ${(a.rps / b.rps).toFixed(2)}×, CPU per request ${(a.cpuUs / b.cpuUs).toFixed(2)}×`;
  }
  console.log(line);
}
console.log(`load after: ${loadavg().map((l) => l.toFixed(1)).join(" ")}`);
process.exit(0);
