// Benchmark: what the audit trail costs `POST /v1/runs` (issue 37: ≤ 10 % of throughput on both
// backends). One app per backend over a file database (SQLite in a temp dir, then a database on a
// throwaway PostgreSQL server), requests through app.handle with 32 in flight (no workers: the request
// path and its writes only). Rounds alternate the app as built (audit on) and the same app with the
// audit wrap taken out before its first request (audit off); each figure is the best round: requests/s
// and the process's CPU time per request (user + system, pending audit writes included), which a busy
// machine disturbs less than throughput. On PostgreSQL also the database server's CPU time per request
// (all its processes, from /proc), and the median of the rounds' ratio of both sides' CPU per request.
//   bun test/bench/automation-audit.ts [--rounds 3] [--seconds 5] [--backend sqlite|postgres]
import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { buildApp } from "../../src/automation/app";
import { auditOf } from "../../src/automation/audit/service";
import { createBlobStore } from "../../src/automation/blobs/fs-blobs";
import { createContext } from "../../src/automation/server";
import { createTenant } from "../../src/automation/tenancy/service";
import { systemClock } from "../../src/kernel/clock";
import { silentLogger } from "../../src/kernel/logger";
import { testConfig } from "../automation/app/config";

const arg = (name: string, dflt: string) => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? process.argv[i + 1]! : dflt;
};
const ROUNDS = Number(arg("rounds", "3"));
const SECONDS = Number(arg("seconds", "5"));
const IN_FLIGHT = 32;
const backends = arg("backend", "sqlite,postgres").split(",");

const workflow = `
name: bench-audit
inputs: [{name: n, type: integer, required: true}]
steps:
  - {name: a, type: transform.set, with: {fields: {n: "{{ input.n }}"}}}
`;

const dir = mkdtempSync(join(tmpdir(), "audit-bench-"));
process.on("exit", () => rmSync(dir, { recursive: true, force: true }));

interface Figure {
  rps: number;
  cpuUs: number;
  /** The database server's CPU µs per request (PostgreSQL; 0 on SQLite, which runs in this process). */
  dbUs: number;
}

/** CPU µs used so far by a PostgreSQL server: its postmaster and every process it started (Linux /proc). */
function serverCpu(postmaster: number): number {
  const ticks = (stat: string) => {
    const f = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    return { ppid: Number(f[1]), cpu: Number(f[11]) + Number(f[12]) };
  };
  let sum = 0;
  for (const pid of readdirSync("/proc")) {
    if (!/^\d+$/.test(pid)) continue;
    try {
      const t = ticks(readFileSync(`/proc/${pid}/stat`, "utf8"));
      if (Number(pid) === postmaster || t.ppid === postmaster) sum += t.cpu;
    } catch {
      // gone meanwhile
    }
  }
  return (sum * 1e6) / CLOCK_TICKS;
}
const CLOCK_TICKS = Number(Bun.spawnSync(["getconf", "CLK_TCK"]).stdout.toString().trim()) || 100;

async function measure(app: ReturnType<typeof buildApp>, key: string, drain: () => Promise<void>, postmaster?: number): Promise<Figure> {
  const body = JSON.stringify({ target: "workflows.bench-audit", input: { n: 1 } });
  const headers = { authorization: `Bearer ${key}`, "content-type": "application/json" };
  const until = performance.now() + SECONDS * 1000;
  let done = 0;
  const loop = async () => {
    while (performance.now() < until) {
      const r = await app.handle(new Request("http://localhost/v1/runs", { method: "POST", headers, body }));
      if (r.status !== 201) throw new Error(`POST /v1/runs answered ${r.status}: ${await r.text()}`);
      await r.arrayBuffer();
      done++;
    }
  };
  const d0 = postmaster ? serverCpu(postmaster) : 0;
  const c0 = process.cpuUsage();
  const t0 = performance.now();
  await Promise.all(Array.from({ length: IN_FLIGHT }, loop));
  await drain();
  const cpu = process.cpuUsage(c0);
  const dbUs = postmaster ? (serverCpu(postmaster) - d0) / done : 0;
  return { rps: done / ((performance.now() - t0) / 1000), cpuUs: (cpu.user + cpu.system) / done, dbUs };
}

for (const backend of backends) {
  const data = join(dir, backend);
  const db = backend === "postgres" ? await (await import("../support/postgres")).freshPostgresDb() : undefined;
  const ctx = await createContext(testConfig({ dataDir: data, ...(db ? { db } : {}) }), { clock: systemClock, log: silentLogger, blobs: createBlobStore(join(data, "blobs")) });
  // As the server runs (serve()): a SQLite file's checkpoints on their own thread.
  ctx.db.checkpointInBackground();
  const tenant = await createTenant(ctx.storage.tenancy, systemClock, { name: "bench", slug: "bench" });
  const on = buildApp(ctx);
  const off = buildApp(ctx);
  // The wraps in the order applied: audit first, observeHttp last. Taken out before the handler is compiled.
  const hocs = (off as unknown as { extender: { higherOrderFunctions: unknown[] } }).extender.higherOrderFunctions;
  if (hocs.length !== 2) throw new Error(`expected 2 wraps (audit, observe), found ${hocs.length}`);
  hocs.splice(0, 1);
  const made = await on.handle(new Request("http://localhost/v1/automations", { method: "POST", headers: { authorization: `Bearer ${tenant.key}`, "content-type": "application/json" }, body: JSON.stringify({ yaml: workflow }) }));
  if (made.status !== 201) throw new Error(`automation: ${made.status} ${await made.text()}`);
  const drain = () => auditOf(ctx).drain();
  let postmaster: number | undefined;
  if (ctx.db.pg) {
    const [{ pid }] = (await ctx.db.pg`SELECT pg_backend_pid() AS pid`) as { pid: number }[];
    postmaster = Number(readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]!.split(" ")[1]);
  }
  // Warm both (JIT, statement caches).
  await measure(on, tenant.key, drain, postmaster);
  await measure(off, tenant.key, drain, postmaster);
  const best = { on: { rps: 0, cpuUs: Infinity, dbUs: Infinity }, off: { rps: 0, cpuUs: Infinity, dbUs: Infinity } };
  const keep = (a: Figure, b: Figure): Figure => ({ rps: Math.max(a.rps, b.rps), cpuUs: Math.min(a.cpuUs, b.cpuUs), dbUs: Math.min(a.dbUs, b.dbUs) });
  // The order turns each round (off first, then on first): the tables grow with every request, so a
  // fixed order would always measure one side on the smaller tables.
  const ratios: number[] = [];
  const cpuRatios: number[] = [];
  for (let round = 0; round < ROUNDS; round++) {
    let a: Figure;
    let b: Figure;
    if (round % 2 === 0) {
      a = await measure(off, tenant.key, drain, postmaster);
      b = await measure(on, tenant.key, drain, postmaster);
    } else {
      b = await measure(on, tenant.key, drain, postmaster);
      a = await measure(off, tenant.key, drain, postmaster);
    }
    best.off = keep(best.off, a);
    best.on = keep(best.on, b);
    ratios.push(b.rps / a.rps);
    cpuRatios.push((b.cpuUs + b.dbUs) / (a.cpuUs + a.dbUs));
    const db = (f: Figure) => (postmaster ? ` + ${f.dbUs.toFixed(0)} µs PostgreSQL` : "");
    console.log(
      `${backend} round ${round + 1} (${round % 2 === 0 ? "off first" : "on first"}): audit off ${a.rps.toFixed(0)} req/s ${a.cpuUs.toFixed(0)} µs CPU/req${db(a)}; on ${b.rps.toFixed(0)} req/s ${b.cpuUs.toFixed(0)} µs CPU/req${db(b)}`,
    );
  }
  const medianOf = (xs: number[]) => [...xs].sort((x, y) => x - y)[Math.floor(xs.length / 2)]!;
  const median = medianOf(ratios);
  const entries = (await ctx.storage.audit.head(tenant.id))?.seq ?? 0;
  const pct = (x: number, y: number) => `${(((x - y) / y) * 100).toFixed(1)} %`;
  console.log(
    `${backend}: POST /v1/runs, best of ${ROUNDS}: audit off ${best.off.rps.toFixed(0)} req/s, on ${best.on.rps.toFixed(0)} req/s (${pct(best.off.rps, best.on.rps)} more without); ` +
      `CPU per request off ${best.off.cpuUs.toFixed(0)} µs, on ${best.on.cpuUs.toFixed(0)} µs (+${pct(best.on.cpuUs, best.off.cpuUs)}); ` +
      (postmaster ? `PostgreSQL's CPU per request off ${best.off.dbUs.toFixed(0)} µs, on ${best.on.dbUs.toFixed(0)} µs; ` : "") +
      `median of the rounds' on/off CPU per request${postmaster ? " (both sides)" : ""} ${medianOf(cpuRatios).toFixed(3)}; ` +
      `median of the rounds' on/off throughput ${median.toFixed(3)} (${((1 - median) * 100).toFixed(1)} % fewer with the audit; aim ≤ 10 %); ${entries} entries written`,
  );
  await ctx.db.close();
}
process.exit(0);
