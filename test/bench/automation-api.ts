// Throughput of the automation API's foundation (request id, auth, envelope, SQLite) against a raw
// Bun.serve answering the same JSON, measured in the same run. Run: bun test/bench/automation-api.ts
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { silentLogger } from "../../src/kernel/logger";
import { createContext, serve } from "../../src/automation/server";
import { createTenant } from "../../src/automation/tenancy/service";
import { createAutomation } from "../../src/automation/automations/service";
import { systemClock } from "../../src/kernel/clock";

const N = Number(process.env.N ?? 3000);
const CONCURRENCY = 16;

async function measure(url: string, headers: Record<string, string> = {}, expect = 200): Promise<number> {
  for (let i = 0; i < 200; i++) await (await fetch(url, { headers })).arrayBuffer(); // warm-up
  let next = 0;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (next++ < N) {
        const r = await fetch(url, { headers });
        await r.arrayBuffer();
        if (r.status !== expect) throw new Error(`${url}: ${r.status}`);
      }
    }),
  );
  return N / ((performance.now() - started) / 1000);
}

const dir = mkdtempSync(join(tmpdir(), "automation-bench-"));
const raw = Bun.serve({ port: 0, hostname: "127.0.0.1", fetch: () => Response.json({ ok: true }) });
const ctx = await createContext(
  { port: 0, hostname: "127.0.0.1", dataDir: dir, workers: 1, demo: false, httpAllowHosts: [], envAllowList: [], publicUrl: "http://localhost", signingSecret: "" },
  { log: silentLogger },
);
const t = await createTenant(ctx.storage.tenancy, systemClock, { name: "bench" });
for (let i = 0; i < 20; i++) {
  await createAutomation(ctx.storage.automations, systemClock, t.id, `name: flow-${i}\nversion: 1.0.0\ndescription: bench ${i}\nsteps:\n  - {name: a, type: transform.set, with: {fields: {a: 1}}}\n`);
}
const served = serve(ctx, { handleSignals: false });
const base = served.running.url.replace("localhost", "127.0.0.1");
const auth = { authorization: `Bearer ${t.key}` };

try {
  const reference = await measure(`http://127.0.0.1:${raw.port}/`);
  const rows: [string, number][] = [
    ["raw Bun.serve JSON (reference)", reference],
    ["GET /health", await measure(`${base}/health`)],
    ["GET /v1/auth/check (key lookup)", await measure(`${base}/v1/auth/check`, auth)],
    ["GET /v1/automations (20 rows)", await measure(`${base}/v1/automations`, auth)],
    ["GET /v1/automations/workflows.flow-7", await measure(`${base}/v1/automations/workflows.flow-7`, auth)],
    ["GET /v1/automations/wf_nope (404 envelope)", await measure(`${base}/v1/automations/wf_nope`, auth, 404)],
  ];
  console.log(`${N} requests each, ${CONCURRENCY} concurrent, loopback\n`);
  for (const [name, rps] of rows) {
    console.log(`${name.padEnd(44)} ${Math.round(rps).toString().padStart(7)} req/s   ${(rps / reference).toFixed(2)}× reference`);
  }
} finally {
  raw.stop(true);
  await served.shutdown();
  rmSync(dir, { recursive: true, force: true });
}
