// The CI gate over many-trial experiments on the compiled binary. A workflow's sandboxed script draws
// its score from a PRNG seeded by the example and `{{ eval.trial }}` (uniform noise of ±0.3 around a
// level per example). Version 2 lowers the level by 0.15: a real regression, the gate fails (exit 1).
// Version 3 only reseeds the noise: the same distribution, the gate passes (exit 0). Every experiment
// runs each example three times; the trials answer on the binary; JUnit output parses.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { join } from "node:path";
import { DEMO_KEY, demoServer, type DemoServer } from "./automation-demo";

const EXAMPLES = 24;
const TRIALS = 3;
const A = "/v1/automations/workflows.noisy";

/** Score = level of the example + shift + uniform noise in ±0.3, clamped to [0, 1]; the noise is seeded by (x, trial, salt). */
const fn = (shift: number, salt: number) =>
  `function script(x, trial) { var t = (Math.imul(x + 1, 2654435761) ^ Math.imul(trial + ${salt}, 40503)) >>> 0; t = (t + 0x6d2b79f5) >>> 0; t = Math.imul(t ^ (t >>> 15), t | 1); t ^= t + Math.imul(t ^ (t >>> 7), t | 61); var u = ((t ^ (t >>> 14)) >>> 0) / 4294967296; var s = 0.35 + 0.1 * (x % 5) + ${shift} + 0.6 * (u - 0.5); return { score: Math.min(1, Math.max(0, s)), trial: trial } }`;
const flow = (version: string, code: string) => `
name: noisy
version: ${version}
inputs: [{name: x, type: integer, required: true}]
steps:
  - {name: draw, type: transform.script, with: {inputs: {x: "{{ input.x }}", trial: "{{ eval.trial }}"}, function: "${code}"}}
output: {score: "{{ steps.draw.output.score }}", trial: "{{ eval.trial }}"}
`;

let demo: DemoServer;
const exp: Record<string, string> = {};

async function experiment(version: string): Promise<string> {
  const r = await demo.api("POST", `${A}/experiments`, { version, name: `v${version}`, trials: TRIALS });
  expect(r.status).toBe(202);
  const { id, total } = (await r.json()) as { id: string; total: number };
  expect(total).toBe(EXAMPLES * TRIALS);
  for (let i = 0; i < 2400; i++) {
    const e = (await (await demo.api("GET", `${A}/experiments/${id}`)).json()) as { status: string };
    if (e.status === "completed") return id;
    await Bun.sleep(50);
  }
  throw new Error(`experiment ${id} did not complete`);
}

beforeAll(async () => {
  demo = await demoServer({ prefix: "automation-gate-trials-", workers: 2 });
  await demo.boot();
  expect((await demo.api("POST", "/v1/automations", { yaml: flow("1.0.0", fn(0, 0)) })).status).toBe(201);
  for (const [version, code] of [["2.0.0", fn(-0.15, 0)], ["3.0.0", fn(0, 7919)]]) {
    const r = await demo.api("POST", `${A}/versions`, { yaml: flow(version, code), version, activate: false });
    expect(r.status).toBeLessThan(300);
  }
  const yaml = "passThreshold: 0.5\nevaluators:\n  - {name: quality, type: custom-script, config: {passThreshold: 0.5, script: 'function scoreScript(expected, actual) { return actual.score }'}}\n";
  expect((await demo.api("PUT", `${A}/evaluators`, { yaml })).status).toBe(200);
  const created = await Promise.all(Array.from({ length: EXAMPLES }, (_, x) => demo.api("POST", `${A}/examples`, { name: `x-${x}`, input: { x }, expected: { score: 1 } })));
  for (const r of created) expect(r.status).toBe(201);
  for (const v of ["1.0.0", "2.0.0", "3.0.0"]) exp[v] = await experiment(v);
}, 300_000);

afterAll(async () => {
  await demo?.close();
});

function gate(args: string[]): { code: number; stdout: string; stderr: string } {
  const r = Bun.spawnSync([join(demo.dir, "automation-server"), "experiments", "gate", "--seed", "1", ...args], {
    cwd: demo.dir,
    env: { ...process.env, AUTOMATION_BASE_URL: undefined, AUTOMATION_API_KEY: undefined, AUTOMATION_DATA_DIR: undefined, AUTOMATION_DB: undefined },
    stdout: "pipe",
    stderr: "pipe",
  });
  return { code: r.exitCode ?? -1, stdout: r.stdout.toString(), stderr: r.stderr.toString() };
}

const viaUrl = () => ["--url", demo.base, "--key", DEMO_KEY];
const viaDb = () => (demo.pgUrl ? ["--db", demo.pgUrl, "--data-dir", join(demo.dir, "data")] : ["--data-dir", join(demo.dir, "data")]);

function junit(xmlText: string): { cases: string[]; failures: string[] } {
  const script = "import sys, json, xml.etree.ElementTree as E\nr = E.fromstring(sys.stdin.read())\nprint(json.dumps({'cases': [c.get('name') for c in r.iter('testcase')], 'failures': [c.get('name') for c in r.iter('testcase') if c.find('failure') is not None]}))";
  const r = Bun.spawnSync(["python3", "-c", script], { stdin: new TextEncoder().encode(xmlText), stdout: "pipe", stderr: "pipe" });
  if (r.exitCode !== 0) throw new Error(`the report is not XML: ${r.stderr.toString()}\n${xmlText}`);
  return JSON.parse(r.stdout.toString());
}

test("every example ran three times, each trial drew its own score; the trials route answers the spread", async () => {
  const stats = (await (await demo.api("GET", `${A}/experiments/${exp["1.0.0"]}/trials`)).json()) as {
    trials: number;
    examples: { runs: { id: string; trial: number; score: number }[]; overall: { n: number; min: number; max: number; mean: number } }[];
    overall: { n: number; withinSd: number };
  };
  expect(stats.trials).toBe(TRIALS);
  expect(stats.examples).toHaveLength(EXAMPLES);
  expect(stats.overall.n).toBe(EXAMPLES * TRIALS);
  for (const ex of stats.examples) {
    expect(ex.runs.map((r) => r.trial)).toEqual([1, 2, 3]);
    expect(ex.overall.max).toBeGreaterThan(ex.overall.min); // the trials differ: the seed has the trial in it
  }
  // The noise is uniform over 0.6: its sd is 0.6/√12 ≈ 0.17 (less where clamping cuts it).
  expect(stats.overall.withinSd).toBeGreaterThan(0.08);
  expect(stats.overall.withinSd).toBeLessThan(0.25);
  // A run's output says the trial it was told.
  const run = (await (await demo.api("GET", `/v1/runs/${stats.examples[0].runs[2].id}`)).json()) as { output: { trial: number } };
  expect(run.output.trial).toBe(3);
}, 60_000);

test("a real difference under the noise fails the gate (exit 1); JUnit XML parses with the failures", () => {
  const t = gate(["--base", exp["1.0.0"], "--candidate", exp["2.0.0"], ...viaUrl()]);
  expect(t.code).toBe(1);
  expect(t.stdout).toContain(`${EXAMPLES} shared examples`);
  expect(t.stdout).toMatch(/^quality .*regressed$/m);
  expect(t.stdout).toContain("trials per example: base 3, candidate 3");
  const j = gate(["--base", exp["1.0.0"], "--candidate", exp["2.0.0"], "--format", "junit", ...viaDb()]);
  expect(j.code).toBe(1);
  const report = junit(j.stdout);
  expect(report.cases).toEqual(["evaluator quality", "overall score", "pass rate"]);
  expect(report.failures).toContain("evaluator quality");
  expect(report.failures).toContain("overall score");
  expect(j.stdout).toContain('<property name="baseTrials" value="3"/>');
}, 60_000);

test("a difference that is only noise passes the gate (exit 0), both ways; JUnit XML parses without failures", () => {
  const t = gate(["--base", exp["1.0.0"], "--candidate", exp["3.0.0"], ...viaUrl()]);
  expect(t.code).toBe(0);
  expect(t.stdout).toContain("no significant regression");
  const j = gate(["--base", exp["3.0.0"], "--candidate", exp["1.0.0"], "--format", "junit", ...viaUrl()]);
  expect(j.code).toBe(0);
  expect(junit(j.stdout)).toEqual({ cases: ["evaluator quality", "overall score", "pass rate"], failures: [] });
  expect(gate(["--base", exp["3.0.0"], "--candidate", exp["1.0.0"], ...viaDb()]).code).toBe(0);
}, 60_000);
