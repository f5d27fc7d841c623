// Comparing two experiments of 1,000 examples × 5 evaluators at 10,000 resamples (issue 39's budget:
// ≤ 1 s, and /health < 50 ms meanwhile). Runs compareExperiments over in-memory stores, as the route
// does (the resampling goes to a worker thread), while a loopback /health is polled every 5 ms; the
// reference is the same comparison computed on the main thread (`inline`), which stalls /health.
//   bun test/bench/experiments-compare.ts
import { compareExperiments, type CompareStores, type ExperimentRow } from "../../src/automation/experiments/comparison";
import { prng } from "../../src/automation/experiments/compare";

const N = 1000;
const EVALUATORS = ["a", "b", "c", "d", "e"];
const next = prng(1);
const u = () => next() / 4294967296;

const experiment = (id: string): ExperimentRow => ({ id, automationId: "wf", name: id, version: id, completedAt: "2026-01-01T00:00:00Z" });
const side = (shift: number) => {
  const runs = Array.from({ length: N }, (_, i) => ({ id: `run_${shift}_${i}`, status: "succeeded", exampleId: `ex_${i}`, exampleName: `e${i}`, score: 0, passed: false }));
  const results = runs.flatMap((r) => EVALUATORS.map((evaluatorName) => ({ runId: r.id, evaluatorName, score: Math.min(1, Math.max(0, u() + shift)) })));
  for (const r of runs) {
    const mine = results.filter((x) => x.runId === r.id);
    r.score = mine.reduce((s, x) => s + x.score, 0) / mine.length;
    r.passed = r.score >= 0.5;
  }
  return { runs, results };
};
const data: Record<string, ReturnType<typeof side>> = { base: side(0), candidate: side(0.01) };
const stores: CompareStores = {
  experiments: { byId: async (id) => experiment(id), get: async (_t, id) => experiment(id), runs: async (id) => data[id].runs },
  evaluators: { resultsOfExperiment: async (id) => data[id].results },
};

const server = Bun.serve({ port: 0, hostname: "127.0.0.1", fetch: () => new Response("ok") });
const health = `http://127.0.0.1:${server.port}/health`;

async function measure(inline: boolean) {
  let polling = true;
  // The worst wait a probe sent every 5 ms saw: the longest gap between answers, less the 5 ms pause
  // (a blocked event loop neither sends nor answers, so a request's own time alone would hide it).
  const lat: number[] = [];
  const poller = (async () => {
    let last = performance.now();
    while (polling) {
      await (await fetch(health)).text();
      const now = performance.now();
      lat.push(now - last - 5);
      last = now;
      await Bun.sleep(5);
    }
    // A probe due while the comparison blocked the loop never went out: the gap up to now counts too.
    lat.push(performance.now() - last - 5);
  })();
  await Bun.sleep(50);
  const t = performance.now();
  const c = await compareExperiments(stores, experiment("base"), experiment("candidate"), { seed: 42, inline });
  const ms = performance.now() - t;
  polling = false;
  await poller;
  return { ms, maxHealth: Math.max(...lat), polls: lat.length, verdict: c.evaluators.map((e) => e.verdict[0]).join("") };
}

const rounds = 5;
const off: Awaited<ReturnType<typeof measure>>[] = [];
const inl: Awaited<ReturnType<typeof measure>>[] = [];
await measure(false); // warm the worker thread
for (let i = 0; i < rounds; i++) {
  off.push(await measure(false));
  inl.push(await measure(true));
}
const med = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const cpu = process.cpuUsage();
console.log(`compare ${N} examples × ${EVALUATORS.length} evaluators × 10,000 resamples (${rounds} rounds, median; load ${(await Bun.file("/proc/loadavg").text()).split(" ")[0]})`);
console.log(`  off-thread (as the route): ${med(off.map((x) => x.ms)).toFixed(0)} ms, /health max ${med(off.map((x) => x.maxHealth)).toFixed(1)} ms over ${med(off.map((x) => x.polls))} polls`);
console.log(`  inline (reference):        ${med(inl.map((x) => x.ms)).toFixed(0)} ms, /health max ${med(inl.map((x) => x.maxHealth)).toFixed(1)} ms over ${med(inl.map((x) => x.polls))} polls`);
console.log(`  ratio /health max inline / off-thread: ${(med(inl.map((x) => x.maxHealth)) / med(off.map((x) => x.maxHealth))).toFixed(1)}×; cpu ${(cpu.user / 1000).toFixed(0)} ms user`);
server.stop(true);
process.exit(0);
