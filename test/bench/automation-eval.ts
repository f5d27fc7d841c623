// Benchmark of the evaluation loop on the compiled automation-server (run: bun test/bench/automation-eval.ts).
// (1) An experiment of 1,000 one-step examples scored by an exact-diff evaluator: wall time from the
//     POST until the experiment is completed (every run finished and scored). Reference, same run and
//     server: the same 1,000 runs without evaluation (POST /v1/runs, 100 in flight) until all finished.
// (2) NDJSON first-line latency: POST …/experiments/stream; time from the first run's completedAt to
//     the arrival of the first line (that run, scored), median over a few streams.
import { availableParallelism } from "node:os";
import { demoServer } from "../e2e/automation-demo";

const N = Number(process.env.BENCH_EXAMPLES ?? 1000);
const STREAMS = Number(process.env.BENCH_STREAMS ?? 5);
const WORKERS = availableParallelism();

const oneStep = `
name: bench-eval
inputs: [{name: n, type: integer, required: true}]
steps:
  - {name: a, type: transform.set, with: {fields: {n: "{{ input.n }}"}}}
output: {n: "{{ steps.a.output.n }}"}
`;

const demo = await demoServer({ prefix: "automation-bench-eval-", workers: WORKERS });
const call = async (method: string, path: string, body?: unknown) => {
  const r = await demo.api(method, path, body);
  if (r.status >= 400) throw new Error(`${method} ${path}: ${r.status} ${await r.text()}`);
  return r;
};
const ms = (x: number) => `${x.toFixed(1)} ms`;
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

try {
  await demo.boot();
  await call("POST", "/v1/automations", { yaml: oneStep });
  await call("PUT", "/v1/automations/workflows.bench-eval/evaluators", { yaml: "evaluators:\n  - {name: exact, type: exact-diff}\n" });
  for (let i = 0; i < N; i += 100) {
    await Promise.all(
      Array.from({ length: Math.min(100, N - i) }, (_, k) => call("POST", "/v1/automations/workflows.bench-eval/examples", { name: `n-${i + k}`, input: { n: i + k }, expected: { n: i + k } })),
    );
  }

  // (1a) reference: the same runs, no evaluation
  let t0 = performance.now();
  for (let i = 0; i < N; i += 100) {
    await Promise.all(Array.from({ length: Math.min(100, N - i) }, (_, k) => call("POST", "/v1/runs", { target: "workflows.bench-eval", input: { n: i + k } })));
  }
  for (;;) {
    const r = (await (await call("GET", "/v1/runs?source=workflows.bench-eval&status=pending,running&limit=1")).json()) as { runs: unknown[] };
    if (r.runs.length === 0) break;
    await Bun.sleep(20);
  }
  const plainMs = performance.now() - t0;

  // (1b) the experiment
  t0 = performance.now();
  const { id } = (await (await call("POST", "/v1/automations/workflows.bench-eval/experiments", {})).json()) as { id: string };
  let exp: { status: string; passedCount: number; avgScore: number | null } = { status: "queued", passedCount: 0, avgScore: null };
  while (exp.status !== "completed") {
    await Bun.sleep(20);
    exp = (await (await call("GET", `/v1/automations/workflows.bench-eval/experiments`)).json() as { data: (typeof exp & { id: string })[] }).data.find((e) => e.id === id)!;
  }
  const evalMs = performance.now() - t0;
  if (exp.passedCount !== N || exp.avgScore !== 1) throw new Error(`unexpected result ${JSON.stringify(exp)}`);

  // (1c) the same experiment bounded to the worker count: runs held as `created`, queued as others finish
  t0 = performance.now();
  const bounded = (await (await call("POST", "/v1/automations/workflows.bench-eval/experiments", { batchConcurrency: WORKERS })).json()) as { id: string };
  for (;;) {
    await Bun.sleep(20);
    const e = (await (await call("GET", `/v1/automations/workflows.bench-eval/experiments/${bounded.id}`)).json()) as { status: string; passedCount: number };
    if (e.status !== "completed") continue;
    if (e.passedCount !== N) throw new Error(`unexpected bounded result ${JSON.stringify(e)}`);
    break;
  }
  const boundedMs = performance.now() - t0;

  // (2) NDJSON first line after the first run ends
  const lat: number[] = [];
  const ids = ((await (await call("GET", "/v1/automations/workflows.bench-eval/examples?limit=20&include=metadata")).json()) as { data: { id: string }[] }).data.map((e) => e.id);
  for (let s = 0; s < STREAMS; s++) {
    const res = await call("POST", "/v1/automations/workflows.bench-eval/experiments/stream", { examples: ids });
    const reader = res.body!.getReader();
    const first = await reader.read();
    const firstAt = Date.now();
    while (!(await reader.read()).done) {}
    const line = JSON.parse(new TextDecoder().decode(first.value!).split("\n")[0]) as { type: string };
    if (line.type !== "run") throw new Error("first line is not a run line");
    const detail = (await (await call("GET", `/v1/automations/workflows.bench-eval/experiments/${res.headers.get("x-experiment-id")}`)).json()) as { runs: { completedAt: string }[] };
    const firstEnd = Math.min(...detail.runs.map((r) => Date.parse(r.completedAt)));
    lat.push(firstAt - firstEnd);
  }

  console.log(`automation-eval benchmark (${WORKERS} workers, ${availableParallelism()} CPUs, Bun ${Bun.version})`);
  console.log(`(1) ${N} one-step examples`);
  console.log(`    reference: ${N} runs without evaluation (HTTP, 100 in flight) ${ms(plainMs)} -> ${(N / (plainMs / 1000)).toFixed(0)} runs/s`);
  console.log(`    experiment with exact-diff, until completed             ${ms(evalMs)} -> ${(N / (evalMs / 1000)).toFixed(0)} runs/s`);
  console.log(`    ratio experiment / plain runs (wall time): ${(evalMs / plainMs).toFixed(2)}x`);
  console.log(`    experiment with batchConcurrency ${WORKERS}, until completed ${ms(boundedMs)} -> ${(N / (boundedMs / 1000)).toFixed(0)} runs/s (${(boundedMs / evalMs).toFixed(2)}x the unbounded one)`);
  console.log(`(2) NDJSON stream of 20 examples, ${STREAMS} streams: first line after the first run's end, median ${ms(median(lat))} (max ${ms(Math.max(...lat))})`);
} finally {
  await demo.close();
}
