// Benchmark: the compiled order-server on SQLite and on PostgreSQL against a raw Bun.serve constant,
// measured by wrk in one run on one machine.
//   bun test/bench/orders.ts [--seconds 8] [--connections 64] [--orders 100000]
// For each backend, over ORDERS WAITING orders: authenticated GET /orders?size=20 repeated (reply
// cache), random deep pages (cache misses: the kept list order), and random pages while 50 orders a
// second are created through the API (each creation moves the data version: reply caches miss, kept
// lists catch up from the change log).
// Then, on SQLite, token issuance/s and take+pass+accept cycles/s. Ratios are against the raw constant.
// BENCH_BIN=path runs another order-server executable (an A/B against a build of an earlier commit, run
// right before or after this one, as the automation benchmarks do).
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { ensureBuilt, start, startServer } from "../e2e/support";
import { DEMO_CLIENT, remote } from "../orders/remote";
import { BENCH_ENV, postgresOrderFixture, randomPagesLua, sqliteOrderFixture } from "./order-fixture";
import { freshPostgresDb } from "../support/postgres";

const arg = (name: string, dflt: number) => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? Number(process.argv[i + 1]) : dflt;
};
const SECONDS = arg("seconds", 8);
const CONNECTIONS = arg("connections", 64);
const ORDERS = arg("orders", 100_000);

if (Bun.spawnSync(["which", "wrk"]).exitCode !== 0) {
  console.error("wrk is not installed: apt-get install -y wrk");
  process.exit(1);
}

const dir = mkdtempSync(join(tmpdir(), "order-bench-"));
const cleanup: (() => void)[] = [() => rmSync(dir, { recursive: true, force: true })];
process.on("exit", () => cleanup.reverse().forEach((f) => f()));

interface WrkResult {
  rps: number;
  p50: string;
  p99: string;
  errors: string;
}

/** One wrk run; async, so this process can keep writing while it measures. */
async function wrk(url: string, opts: { header?: string; script?: string; seconds?: number; connections?: number } = {}): Promise<WrkResult> {
  const args = ["wrk", "-t2", `-c${opts.connections ?? CONNECTIONS}`, `-d${opts.seconds ?? SECONDS}s`, "--latency"];
  if (opts.header) args.push("-H", opts.header);
  if (opts.script) args.push("-s", opts.script);
  args.push(url);
  const proc = Bun.spawn(args, { stdout: "pipe", stderr: "ignore" });
  const out = await new Response(proc.stdout).text();
  await proc.exited;
  const rps = Number(/Requests\/sec:\s+([\d.]+)/.exec(out)?.[1] ?? 0);
  const p50 = /^\s+50%\s+(\S+)/m.exec(out)?.[1] ?? "?";
  const p99 = /^\s+99%\s+(\S+)/m.exec(out)?.[1] ?? "?";
  const non2xx = /Non-2xx or 3xx responses:\s+(\d+)/.exec(out)?.[1];
  const sock = /Socket errors:.*$/m.exec(out)?.[0];
  return { rps, p50, p99, errors: [non2xx ? `${non2xx} non-2xx` : "", sock ?? ""].filter(Boolean).join("; ") || "none" };
}

function rssMb(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, "utf8");
  return Math.round(Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? 0) / 1024);
}

// 1. The binary; a SQLite database and a PostgreSQL database (a server started here) of ORDERS orders each.
const bin = process.env.BENCH_BIN || (await ensureBuilt("order-server"));

async function serve(db: string) {
  const server = await startServer([bin, "--host", "127.0.0.1", "--db", db], { env: BENCH_ENV });
  cleanup.push(() => server.proc.kill("SIGKILL"));
  return { port: server.port, server, api: remote(server.url) };
}

let t0 = performance.now();
const sqlitePath = join(dir, "bench.db");
await sqliteOrderFixture(bin, sqlitePath, ORDERS);
console.log(`fixture: ${ORDERS} WAITING orders in SQLite in ${Math.round(performance.now() - t0)} ms`);

t0 = performance.now();
const pgUrl = await freshPostgresDb();
await postgresOrderFixture(bin, pgUrl, ORDERS);
console.log(`fixture: ${ORDERS} WAITING orders in PostgreSQL in ${Math.round(performance.now() - t0)} ms`);

// 2. Raw Bun.serve returning a constant: the reference, measured in this run on this machine.
// In its own process (as the server under test is), on a port the kernel picks: it prints the port once listening.
const raw = start([process.execPath, "-e", `const s = Bun.serve({ port: 0, hostname: "127.0.0.1", fetch: () => new Response('{"status":"ok"}', { headers: { "content-type": "application/json" } }) }); console.log(s.port);`]);
cleanup.push(() => raw.proc.kill("SIGKILL"));
const rawPort = await (async () => {
  const until = Date.now() + 30_000;
  for (;;) {
    const m = /^(\d+)$/m.exec(raw.output());
    if (m) return Number(m[1]);
    if (raw.proc.exitCode !== null || Date.now() > until) throw new Error(`the raw Bun.serve reference did not start:\n${raw.output()}`);
    await Bun.sleep(20);
  }
})();
console.log(`load: wrk -t2 -c${CONNECTIONS} -d${SECONDS}s, ${navigator.hardwareConcurrency} CPUs shared by wrk, the server and ${loadavg()[0].toFixed(1)} load average of other work\n`);

const best = (a: WrkResult, b: WrkResult) => (b.rps > a.rps ? b : a);
let ref: WrkResult = { rps: 0, p50: "?", p99: "?", errors: "none" };

/** Repeated page, random deep pages, and random pages under 50 creations/s, against one backend. */
async function measure(db: string) {
  const { port, server, api } = await serve(db);
  const token = await api.token("bench-performer");
  const probe = await api.call("GET", `/orders?size=20&page=${Math.floor(ORDERS / 40)}`, { token });
  if (probe.status !== 200 || probe.body.length !== 20 || probe.headers.get("x-total-count") !== String(ORDERS)) {
    throw new Error(`unexpected list reply: ${probe.status} total=${probe.headers.get("x-total-count")}`);
  }
  const url = `http://127.0.0.1:${port}/orders`;
  const pages = await randomPagesLua(dir, token, ORDERS);
  const auth = `Authorization: Bearer ${token}`;
  // Alternate with the reference and keep each one's best round: on a shared machine this is the
  // fairest comparison one run can make.
  ref = best(ref, await wrk(`http://127.0.0.1:${rawPort}/`));
  let repeated = await wrk(`${url}?size=20`, { header: auth });
  let random = await wrk(url, { script: pages });
  ref = best(ref, await wrk(`http://127.0.0.1:${rawPort}/`));
  repeated = best(repeated, await wrk(`${url}?size=20`, { header: auth }));
  random = best(random, await wrk(url, { script: pages }));
  // Mixed: the same random pages while this process creates 50 orders a second through the API.
  const writer = await api.token("bench-writer");
  let created = 0;
  const failures = new Map<string, number>();
  const fail = (why: string) => failures.set(why, (failures.get(why) ?? 0) + 1);
  const tick = setInterval(() => {
    api.call("POST", "/orders", { token: writer, json: { description: "mixed-load order", price: 0.01 } }).then(
      (x) => (x.status === 201 ? created++ : fail(`HTTP ${x.status}`)),
      (err: Error) => fail(err.message.slice(0, 60)),
    );
  }, 20);
  const m0 = performance.now();
  const mixed = await wrk(url, { script: pages });
  clearInterval(tick);
  const perSec = created / ((performance.now() - m0) / 1000);
  const rss = rssMb(server.proc.pid);
  await server.kill("SIGTERM");
  const failed = [...failures].map(([why, n]) => `${n} × ${why}`).join(", ") || "none";
  return { port, repeated, random, mixed, perSec, failed, rss };
}

const sqlite = await measure(sqlitePath);
const postgres = await measure(pgUrl);
raw.kill("SIGKILL");

const fmt = (n: number) => Math.round(n).toLocaleString("en-US");
const line = (label: string, r: WrkResult, extra = "") =>
  `${label.padEnd(44)}${fmt(r.rps).padStart(9)} req/s ${(r.rps / ref.rps).toFixed(2).padStart(5)}×  p50 ${r.p50.padEnd(8)} p99 ${r.p99.padEnd(8)} errors: ${r.errors}${extra}`;
console.log(line("raw Bun.serve constant (reference)", ref));
for (const [name, f] of [["SQLite", sqlite], ["PostgreSQL", postgres]] as const) {
  console.log(line(`${name}: GET /orders?size=20 repeated`, f.repeated));
  console.log(line(`${name}: random pages 0-${Math.floor(ORDERS / 20) - 1} of ${fmt(ORDERS)}`, f.random));
  console.log(line(`${name}: random pages + creations`, f.mixed, `  (${f.perSec.toFixed(0)} creations/s, failed: ${f.failed}; RSS ${f.rss} MB)`));
}

// 3. On SQLite: token issuance and lifecycle cycles.
const again = await serve(sqlitePath);
const port = again.port;
const server = again.server;
const api = again.api;

// Token issuance (argon2id verify per request, as in production).
const lua = join(dir, "token.lua");
writeFileSync(
  lua,
  `wrk.method = "POST"\nwrk.headers["Content-Type"] = "application/x-www-form-urlencoded"\nwrk.body = "grant_type=password&username=bench-performer&password=pass&client_id=${DEMO_CLIENT.id}&client_secret=${DEMO_CLIENT.secret}"\n`,
);
const tokens = await wrk(`http://127.0.0.1:${port}/oauth/token`, { script: lua, connections: 8, seconds: Math.max(3, SECONDS / 2) });

// take + pass + accept cycles by 16 customer/performer pairs, 16 cycles in flight.
const PAIRS = 16;
const pairs = await Promise.all(
  Array.from({ length: PAIRS }, async (_, i) => {
    await api.register(`cyc-c${i}`, "Customer");
    await api.register(`cyc-p${i}`, "Performer");
    return { c: await api.token(`cyc-c${i}`), p: await api.token(`cyc-p${i}`) };
  }),
);
const PER_PAIR = 60;
const queued = await Promise.all(
  pairs.map(async (x) => {
    const ids: number[] = [];
    for (let i = 0; i < PER_PAIR; i++) ids.push((await api.call("POST", "/orders", { token: x.c, json: { description: `cycle ${i}`, price: 5 } })).body.id);
    return ids;
  }),
);
const c0 = performance.now();
let failed = 0;
await Promise.all(
  pairs.map(async (x, i) => {
    for (const id of queued[i]) {
      for (const [step, t] of [["take", x.p], ["pass", x.p], ["accept", x.c]] as const) {
        if ((await api.call("PATCH", `/orders/${id}/${step}`, { token: t })).status !== 200) failed++;
      }
    }
  }),
);
const cycleSecs = (performance.now() - c0) / 1000;
const cyclesPerSec = (PAIRS * PER_PAIR) / cycleSecs;
await server.kill("SIGTERM");

console.log(`SQLite: POST /oauth/token (argon2id)         ${fmt(tokens.rps).padStart(9)} tokens/s  p99 ${tokens.p99}  errors: ${tokens.errors}`);
console.log(`SQLite: take+pass+accept cycles             ${cyclesPerSec.toFixed(0).padStart(9)} cycles/s (${PAIRS * PER_PAIR} cycles, ${PAIRS} in flight, ${failed} failed steps; load from this Bun process)`);
process.exit(0);
