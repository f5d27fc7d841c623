// `automation-server experiments gate` on the compiled binary: three versions of a deterministic
// workflow (transform.script) run as experiments over one dataset. A version that really gets a
// field wrong fails the gate (exit 1; JUnit XML with a failure); one that only rewrites the code
// passes it (exit 0). Both through a running server (--url/--key) and the database (--data-dir/--db).
import { afterAll, beforeAll, expect, test } from "bun:test";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { DEMO_KEY, demoServer, type DemoServer } from "./automation-demo";

const EXAMPLES = 30;
const A = "/v1/automations/workflows.gated";

const flow = (version: string, fn: string) => `
name: gated
version: ${version}
inputs: [{name: x, type: integer, required: true}]
steps:
  - {name: calc, type: transform.script, with: {inputs: {x: "{{ input.x }}"}, function: "${fn}"}}
output: {parity: "{{ steps.calc.output.parity }}", tens: "{{ steps.calc.output.tens }}"}
`;
const V1 = "function script(x) { return { parity: x % 2 === 0 ? 'even' : 'odd', tens: Math.floor(x / 10) } }";
// Worse: tens is wrong for two examples in three.
const V2 = "function script(x) { return { parity: x % 2 === 0 ? 'even' : 'odd', tens: x % 3 === 0 ? Math.floor(x / 10) : -1 } }";
// The same answers, other code: no difference.
const V3 = "function script(x) { const t = Math.floor(x / 10); return { tens: t, parity: x % 2 ? 'odd' : 'even' } }";

let demo: DemoServer;
const exp: Record<string, string> = {};

async function experiment(version: string): Promise<string> {
  const r = await demo.api("POST", `${A}/experiments`, { version, name: `v${version}` });
  expect(r.status).toBe(202);
  const { id } = (await r.json()) as { id: string };
  for (let i = 0; i < 1200; i++) {
    const e = (await (await demo.api("GET", `${A}/experiments/${id}`)).json()) as { status: string };
    if (e.status === "completed") return id;
    await Bun.sleep(50);
  }
  throw new Error(`experiment ${id} did not complete`);
}

beforeAll(async () => {
  demo = await demoServer({ prefix: "automation-gate-", workers: 2 });
  await demo.boot();
  expect((await demo.api("POST", "/v1/automations", { yaml: flow("1.0.0", V1) })).status).toBe(201);
  for (const [version, fn] of [["2.0.0", V2], ["3.0.0", V3]]) {
    const r = await demo.api("POST", `${A}/versions`, { yaml: flow(version, fn), version, activate: false });
    expect(r.status).toBeLessThan(300);
  }
  const yaml = "passThreshold: 1\nevaluators:\n  - {name: parity, type: exact-diff, config: {paths: [parity]}}\n  - {name: tens, type: exact-diff, config: {paths: [tens]}}\n";
  expect((await demo.api("PUT", `${A}/evaluators`, { yaml })).status).toBe(200);
  const created = await Promise.all(
    Array.from({ length: EXAMPLES }, (_, x) => demo.api("POST", `${A}/examples`, { name: `x-${x}`, input: { x }, expected: { parity: x % 2 === 0 ? "even" : "odd", tens: Math.floor(x / 10) } })),
  );
  for (const r of created) expect(r.status).toBe(201);
  for (const v of ["1.0.0", "2.0.0", "3.0.0"]) exp[v] = await experiment(v);
}, 180_000);

afterAll(async () => {
  await demo?.close();
});

function gate(args: string[]): { code: number; stdout: string; stderr: string } {
  const r = Bun.spawnSync([join(demo.dir, "automation-server"), "experiments", "gate", ...args], {
    cwd: demo.dir,
    env: { ...process.env, AUTOMATION_BASE_URL: undefined, AUTOMATION_API_KEY: undefined, AUTOMATION_DATA_DIR: undefined, AUTOMATION_DB: undefined },
    stdout: "pipe",
    stderr: "pipe",
  });
  return { code: r.exitCode ?? -1, stdout: r.stdout.toString(), stderr: r.stderr.toString() };
}

const viaUrl = () => ["--url", demo.base, "--key", DEMO_KEY];
// The server's own database: SQLite in its data dir, or the PostgreSQL database of the PostgreSQL pass.
const viaDb = () => (demo.pgUrl ? ["--db", demo.pgUrl, "--data-dir", join(demo.dir, "data")] : ["--data-dir", join(demo.dir, "data")]);

/** testcases and failure elements of a JUnit report, read by Python's XML parser (a real parse). */
function junit(xmlText: string): { cases: string[]; failures: string[] } {
  const script = "import sys, json, xml.etree.ElementTree as E\nr = E.fromstring(sys.stdin.read())\nprint(json.dumps({'cases': [c.get('name') for c in r.iter('testcase')], 'failures': [c.get('name') for c in r.iter('testcase') if c.find('failure') is not None]}))";
  const r = Bun.spawnSync(["python3", "-c", script], { stdin: new TextEncoder().encode(xmlText), stdout: "pipe", stderr: "pipe" });
  if (r.exitCode !== 0) throw new Error(`the report is not XML: ${r.stderr.toString()}\n${xmlText}`);
  return JSON.parse(r.stdout.toString());
}

test("experiments --help lists gate", () => {
  const r = Bun.spawnSync([join(demo.dir, "automation-server"), "experiments", "--help"], { stdout: "pipe" });
  expect(r.exitCode).toBe(0);
  expect(r.stdout.toString()).toContain("gate");
});

test("a real regression fails the gate (exit 1): table, and JUnit XML with a failure per regression", () => {
  const t = gate(["--base", exp["1.0.0"], "--candidate", exp["2.0.0"], ...viaUrl()]);
  expect(t.code).toBe(1);
  expect(t.stdout).toContain(`${EXAMPLES} shared examples`);
  expect(t.stdout).toMatch(/^tens .*regressed$/m);
  expect(t.stdout).toMatch(/^parity .*no_detectable_change$/m);
  expect(t.stdout).toContain("REGRESSED: evaluator tens, overall score, pass rate");

  const j = gate(["--base", exp["1.0.0"], "--candidate", exp["2.0.0"], "--format", "junit", "--seed", "1", ...viaUrl()]);
  expect(j.code).toBe(1);
  const report = junit(j.stdout);
  expect(report.cases).toEqual(["evaluator parity", "evaluator tens", "overall score", "pass rate"]);
  expect(report.failures).toEqual(["evaluator tens", "overall score", "pass rate"]);
  expect(j.stderr).toContain("REGRESSED"); // the table still reaches the log
  expect(j.stdout).toContain('<property name="seed" value="1"/>');

  // Straight from the database, the report written to a file.
  const out = join(demo.dir, "reports-gate.xml");
  const f = gate(["--base", exp["1.0.0"], "--candidate", exp["2.0.0"], "--format", "junit", "--output", out, ...viaDb()]);
  expect(f.code).toBe(1);
  expect(junit(readFileSync(out, "utf8")).failures).toContain("evaluator tens");
  expect(f.stdout).toContain("REGRESSED");
  // --fail-on never reports without failing.
  expect(gate(["--base", exp["1.0.0"], "--candidate", exp["2.0.0"], "--fail-on", "never", ...viaUrl()]).code).toBe(0);
}, 60_000);

test("no difference passes the gate (exit 0), both ways and from the database", () => {
  const t = gate(["--base", exp["1.0.0"], "--candidate", exp["3.0.0"], ...viaUrl()]);
  expect(t.code).toBe(0);
  expect(t.stdout).toContain("no significant regression");
  const j = gate(["--base", exp["3.0.0"], "--candidate", exp["1.0.0"], "--format", "junit", ...viaDb()]);
  expect(j.code).toBe(0);
  expect(junit(j.stdout)).toEqual({ cases: ["evaluator parity", "evaluator tens", "overall score", "pass rate"], failures: [] });
  // An improvement passes too.
  expect(gate(["--base", exp["2.0.0"], "--candidate", exp["1.0.0"], ...viaUrl()]).code).toBe(0);
}, 60_000);

test("what cannot be compared is one line and exit 1; bad usage exit 2", () => {
  const unknown = gate(["--base", exp["1.0.0"], "--candidate", "exp_nope", ...viaUrl()]);
  expect(unknown.code).toBe(1);
  expect(unknown.stderr.trim().split("\n")).toHaveLength(1);
  expect(unknown.stderr).toContain("exp_nope");
  const fromDb = gate(["--base", "exp_nope", "--candidate", exp["1.0.0"], ...viaDb()]);
  expect(fromDb.code).toBe(1);
  expect(fromDb.stderr).toContain("experiment exp_nope not found");
  expect(gate(["--base", exp["1.0.0"], ...viaUrl()]).code).toBe(2);
  const badFormat = gate(["--base", exp["1.0.0"], "--candidate", exp["2.0.0"], "--format", "xml", "--output", join(demo.dir, "never.xml"), ...viaUrl()]);
  expect(badFormat.code).toBe(2);
  expect(existsSync(join(demo.dir, "never.xml"))).toBe(false);
}, 60_000);
