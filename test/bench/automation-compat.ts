// What the SDK-compatibility paths cost, in-process (app.handle, no sockets), against the plain id
// lookup measured in the same run: a typed target naming an id misses the slug lookup before the id
// lookup, and run starts by `workflows.<wf_ id>` resolve the same way. Run: bun test/bench/automation-compat.ts
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { buildApp } from "../../src/automation/app";
import { createAutomation } from "../../src/automation/automations/service";
import { createContext } from "../../src/automation/server";
import { createTenant } from "../../src/automation/tenancy/service";
import { systemClock } from "../../src/kernel/clock";
import { silentLogger } from "../../src/kernel/logger";

const N = Number(process.env.N ?? 4000);
const dir = mkdtempSync(join(tmpdir(), "automation-compat-bench-"));
const ctx = await createContext(
  { port: 0, hostname: "127.0.0.1", dataDir: dir, workers: 1, demo: false, httpAllowHosts: [], envAllowList: [], publicUrl: "http://localhost", signingSecret: "" },
  { log: silentLogger },
);
const app = buildApp(ctx);
const t = await createTenant(ctx.storage.tenancy, systemClock, { name: "bench" });
let id = "";
for (let i = 0; i < 50; i++) {
  const a = await createAutomation(ctx.storage.automations, systemClock, t.id, `name: flow-${i}\nversion: 1.0.0\nsteps:\n  - {name: a, type: transform.set, with: {fields: {a: 1}}}\n`);
  if (i === 25) id = a.id;
}
const auth = { authorization: `Bearer ${t.key}`, "content-type": "application/json" };

/** Requests per second of `n` sequential in-process requests built by `req`, after a warm-up. */
async function rate(req: () => Request, n = N): Promise<number> {
  for (let i = 0; i < 200; i++) await (await app.handle(req())).arrayBuffer();
  const started = performance.now();
  for (let i = 0; i < n; i++) {
    const r = await app.handle(req());
    await r.arrayBuffer();
    if (r.status >= 300) throw new Error(`${r.status}`);
  }
  return n / ((performance.now() - started) / 1000);
}

const get = (path: string) => () => new Request(`http://localhost${path}`, { headers: auth });
const start = (target: string) => () => new Request("http://localhost/v1/runs", { method: "POST", headers: auth, body: JSON.stringify({ target }) });

try {
  // Interleaved rounds, best of each: the machine is shared, and the first round also warms the JIT.
  const cases: [string, () => Request, number][] = [
    ["GET /v1/automations/<wf_ id> (reference)", get(`/v1/automations/${id}`), N],
    ["GET /v1/automations/workflows.<slug>", get("/v1/automations/workflows.flow-25"), N],
    ["GET /v1/automations/workflows.<wf_ id>", get(`/v1/automations/workflows.${id}`), N],
    ["POST /v1/runs target <wf_ id> (reference)", start(id), N / 4],
    ["POST /v1/runs target workflows.<wf_ id>", start(`workflows.${id}`), N / 4],
  ];
  const best = cases.map(() => 0);
  for (let round = 0; round < 3; round++) {
    for (const [i, [, req, n]] of cases.entries()) best[i] = Math.max(best[i], await rate(req, n));
  }
  console.log(`${N} reads, ${N / 4} run starts (queued), sequential, in-process, best of 3 interleaved rounds\n`);
  for (const [i, [name]] of cases.entries()) {
    const reference = best[i < 3 ? 0 : 3];
    console.log(`${name.padEnd(44)} ${Math.round(best[i]).toString().padStart(7)} req/s   ${(best[i] / reference).toFixed(2)}× reference`);
  }
} finally {
  await ctx.db.close();
  rmSync(dir, { recursive: true, force: true });
}
