// AI steps against a loopback fake model with 50 ms latency, each figure against a reference measured
// in the same run:
//  - throughput: 200 runs of a 3-step ai.extract workflow submitted at once (W workers) vs. 200 × 3
//    direct HTTP calls to the same fake with the same concurrency (what the provider alone allows);
//  - overhead per AI call: sequential runs vs. 3 sequential direct calls plus the same run with 3
//    transform.set steps (queue pick-up, step journal): what is left per call is the AI step's own
//    cost (prompt, gateway, JSON check, call journal). Aim: ≤ 2 ms.
// Run: bun test/bench/automation-models.ts   (RUNS=200 WORKERS=8 SEQ=30 LATENCY=50)
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { systemClock } from "../../src/kernel/clock";
import { silentLogger } from "../../src/kernel/logger";
import { createAutomation } from "../../src/automation/automations/service";
import { runsOf } from "../../src/automation/runs/service";
import { createContext } from "../../src/automation/server";
import { createTenant } from "../../src/automation/tenancy/service";
import { startFakeModels } from "../support/fake-models";

const RUNS = Number(process.env.RUNS ?? 200);
const WORKERS = Number(process.env.WORKERS ?? 8);
const SEQ = Number(process.env.SEQ ?? 30);
const LATENCY = Number(process.env.LATENCY ?? 50);

const fake = await startFakeModels({ latencyMs: LATENCY });
fake.fallback = () => ({ json: { number: "INV-1", date: "2026-01-02", total: 10, currency: "EUR", vendor: "ACME" } });

const dir = mkdtempSync(join(tmpdir(), "models-bench-"));
const ctx = await createContext(
  { port: 0, hostname: "127.0.0.1", dataDir: dir, workers: WORKERS, demo: false, httpAllowHosts: [], envAllowList: [], publicUrl: "http://localhost", signingSecret: "", models: fake.config({ timeoutMs: 30_000 }) },
  { log: silentLogger },
);
const t = await createTenant(ctx.storage.tenancy, systemClock, { name: "bench" });
const step = (name: string, fields: string[]) => `
  - name: ${name}
    type: ai.extract
    with:
      input: "{{ input.text }}"
      schema: {type: object, properties: {${fields.map((f) => `${f}: {type: ${f === "total" ? "number" : "string"}}`).join(", ")}}, required: [${fields.join(", ")}]}`;
await createAutomation(
  ctx.storage.automations,
  systemClock,
  t.id,
  `name: extract3\ninputs: [{name: text, type: string, required: true}]\nsteps:${step("ids", ["number", "date"])}${step("money", ["total", "currency"])}${step("party", ["vendor"])}\n`,
);
// The same run without model calls: what a 3-step run costs the engine and queue whatever the steps do.
await createAutomation(
  ctx.storage.automations,
  systemClock,
  t.id,
  `name: plain3\ninputs: [{name: text, type: string, required: true}]\nsteps:\n  - {name: a, type: transform.set, with: {fields: {x: "{{ input.text }}"}}}\n  - {name: b, type: transform.set, with: {fields: {x: 1}}}\n  - {name: c, type: transform.set, with: {fields: {x: 2}}}\n`,
);
const runs = runsOf(ctx);
runs.startWorkers();
const actor = { tenantId: t.id, keyId: "bench" };
const text = "ACME Ltd\nInvoice INV-1 dated 2026-01-02\nTotal 10.00 EUR\n".repeat(20);

async function runOnce(target = "workflows.extract3"): Promise<void> {
  const row = await runs.start(actor, { target, input: { text } });
  const done = await runs.waitFor(row.id, 60);
  if (done.status !== "completed") throw new Error(`run ${done.status}: ${done.error}`);
}

/** A direct call of the size the steps send (prompt with the document and schema). */
const direct = () =>
  fetch(`${fake.url}/v1/chat/completions`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ model: "small", stream: false, temperature: 0, messages: [{ role: "system", content: "x".repeat(400) }, { role: "user", content: text }] }),
  }).then((r) => r.json());

async function pool(n: number, width: number, fn: () => Promise<unknown>): Promise<number> {
  const started = performance.now();
  let next = 0;
  await Promise.all(Array.from({ length: width }, async () => {
    while (next++ < n) await fn();
  }));
  return performance.now() - started;
}

const threeDirect = async () => {
  for (let i = 0; i < 3; i++) await direct();
};

try {
  for (let i = 0; i < 3; i++) await runOnce(); // warm-up (parser cache, prepared statements, connections)
  await threeDirect();
  const before = fake.requests.length;

  // Throughput: all runs submitted at once; the reference is the provider alone at the same width.
  const startedAll = performance.now();
  const ids = await Promise.all(Array.from({ length: RUNS }, () => runs.start(actor, { target: "workflows.extract3", input: { text } }).then((r) => r.id)));
  const results = await Promise.all(ids.map((id) => runs.waitFor(id, 300)));
  const wall = performance.now() - startedAll;
  const failed = results.filter((r) => r.status !== "completed").length;
  const calls = fake.requests.length - before;
  const refWall = await pool(RUNS, WORKERS, threeDirect);

  // Overhead per call: sequential, alternating blocks so a loaded machine's drift hits both alike.
  let seqRun = 0;
  let seqDirect = 0;
  let seqPlain = 0;
  const BLOCK = 5;
  for (let done = 0; done < SEQ; done += BLOCK) {
    seqRun += await pool(BLOCK, 1, () => runOnce());
    seqDirect += await pool(BLOCK, 1, threeDirect);
    seqPlain += await pool(BLOCK, 1, () => runOnce("workflows.plain3"));
  }
  seqRun /= SEQ;
  seqDirect /= SEQ;
  seqPlain /= SEQ;
  const reference = seqDirect + seqPlain;

  const fmt = (ms: number) => `${ms.toFixed(1).padStart(8)} ms`;
  console.log(`fake model latency ${LATENCY} ms; ${RUNS} runs × 3 ai.extract steps, ${WORKERS} workers (${calls} model calls, ${failed} failed runs)`);
  console.log(`throughput`);
  console.log(`  direct calls, 3 per "run", ${WORKERS} wide (reference) ${fmt(refWall)}   ${((RUNS / refWall) * 1000).toFixed(1)} runs/s`);
  console.log(`  workflow runs                             ${fmt(wall)}   ${((RUNS / wall) * 1000).toFixed(1)} runs/s   ${(wall / refWall).toFixed(2)}× reference`);
  console.log(`sequential, ${SEQ} runs`);
  console.log(`  3 direct calls                            ${fmt(seqDirect)}`);
  console.log(`  3-step transform.set run                  ${fmt(seqPlain)}`);
  console.log(`  sum (reference)                           ${fmt(reference)}`);
  console.log(`  3-step ai.extract run                     ${fmt(seqRun)}   ${(seqRun / reference).toFixed(3)}× reference`);
  console.log(`  overhead per AI call                      ${fmt((seqRun - reference) / 3)}   (aim ≤ 2 ms; vs. direct calls alone ${((seqRun - seqDirect) / 3).toFixed(1)} ms)`);
} finally {
  await runs.stopWorkers();
  await ctx.db.close();
  await fake.close();
  rmSync(dir, { recursive: true, force: true });
}
