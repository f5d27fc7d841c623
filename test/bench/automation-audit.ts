// Benchmark: what the audit trail costs `POST /v1/runs` (issue 37: ≤ 10 % of throughput on both
// backends). One app per backend over a file database (SQLite in a temp dir, then a database on a
// throwaway PostgreSQL server), requests through app.handle with 32 in flight (no workers: the request
// path and its writes only). Rounds alternate the app as built (audit on) and the same app with the
// audit wrap taken out before its first request (audit off); each figure is the best round: requests/s
// and the process's CPU time per request (user + system, pending audit writes included), which a busy
// machine disturbs less than throughput.
//   bun test/bench/automation-audit.ts [--rounds 3] [--seconds 5] [--backend sqlite|postgres]
import { mkdtempSync, rmSync } from "node:fs";
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
}

async function measure(app: ReturnType<typeof buildApp>, key: string, drain: () => Promise<void>): Promise<Figure> {
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
  const c0 = process.cpuUsage();
  const t0 = performance.now();
  await Promise.all(Array.from({ length: IN_FLIGHT }, loop));
  await drain();
  const cpu = process.cpuUsage(c0);
  return { rps: done / ((performance.now() - t0) / 1000), cpuUs: (cpu.user + cpu.system) / done };
}

for (const backend of backends) {
  const data = join(dir, backend);
  const db = backend === "postgres" ? await (await import("../support/postgres")).freshPostgresDb() : undefined;
  const ctx = await createContext(testConfig({ dataDir: data, ...(db ? { db } : {}) }), { clock: systemClock, log: silentLogger, blobs: createBlobStore(join(data, "blobs")) });
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
  // Warm both (JIT, statement caches).
  await measure(on, tenant.key, drain);
  await measure(off, tenant.key, drain);
  const best = { on: { rps: 0, cpuUs: Infinity }, off: { rps: 0, cpuUs: Infinity } };
  const keep = (a: Figure, b: Figure): Figure => ({ rps: Math.max(a.rps, b.rps), cpuUs: Math.min(a.cpuUs, b.cpuUs) });
  // The order turns each round (off first, then on first): the tables grow with every request, so a
  // fixed order would always measure one side on the smaller tables.
  const ratios: number[] = [];
  for (let round = 0; round < ROUNDS; round++) {
    let a: Figure;
    let b: Figure;
    if (round % 2 === 0) {
      a = await measure(off, tenant.key, drain);
      b = await measure(on, tenant.key, drain);
    } else {
      b = await measure(on, tenant.key, drain);
      a = await measure(off, tenant.key, drain);
    }
    best.off = keep(best.off, a);
    best.on = keep(best.on, b);
    ratios.push(b.rps / a.rps);
    console.log(`${backend} round ${round + 1} (${round % 2 === 0 ? "off first" : "on first"}): audit off ${a.rps.toFixed(0)} req/s ${a.cpuUs.toFixed(0)} µs CPU/req; on ${b.rps.toFixed(0)} req/s ${b.cpuUs.toFixed(0)} µs CPU/req`);
  }
  const median = [...ratios].sort((x, y) => x - y)[Math.floor(ratios.length / 2)]!;
  const entries = (await ctx.storage.audit.head(tenant.id))?.seq ?? 0;
  const pct = (x: number, y: number) => `${(((x - y) / y) * 100).toFixed(1)} %`;
  console.log(
    `${backend}: POST /v1/runs, best of ${ROUNDS}: audit off ${best.off.rps.toFixed(0)} req/s, on ${best.on.rps.toFixed(0)} req/s (${pct(best.off.rps, best.on.rps)} more without); ` +
      `CPU per request off ${best.off.cpuUs.toFixed(0)} µs, on ${best.on.cpuUs.toFixed(0)} µs (+${pct(best.on.cpuUs, best.off.cpuUs)}); ` +
      `median of the rounds' on/off throughput ${median.toFixed(3)} (${((1 - median) * 100).toFixed(1)} % fewer with the audit; aim ≤ 10 %); ${entries} entries written`,
  );
  await ctx.db.close();
}
process.exit(0);
