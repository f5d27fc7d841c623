// Workflow engine benchmark (run: bun test/bench/automation-engine.ts). Prints absolute figures and
// ratios against references measured in the same run:
//   1. a 5-step deterministic workflow executed in-process vs the same work as plain JavaScript;
//   2. one transform.script call (sandbox in a child process) vs calling the same function natively;
//   3. parseWorkflow (validation included) vs yaml.parse of the same text.
import { parse as parseYaml } from "yaml";
import { execute } from "../../src/automation/engine/execute";
import { runSandboxed } from "../../src/automation/engine/sandbox/isolate";
import { systemClock } from "../../src/kernel/clock";
import { parseWorkflow, type Workflow } from "../../src/automation/workflow";

const YAML = `name: five
inputs: [{name: text, type: string}, {name: n, type: number}]
steps:
  - {name: a, type: transform.set, with: {fields: {n: "{{ input.n }}", t: "{{ input.text | upcase }}"}}}
  - {name: b, type: transform.split, with: {input: "{{ input.text }}", separator: " "}}
  - {name: c, type: transform.combine, with: {inputs: ["{{ steps.a.output }}", {parts: "{{ steps.b.output.count }}"}]}}
  - {name: d, type: transform.remove, with: {input: "{{ steps.c.output }}", fields: [t]}}
  - {name: e, type: transform.text-chunker, with: {text: "{{ input.text }}", chunkSize: 8}}
output: {d: "{{ steps.d.output }}", chunks: "{{ steps.e.output.count }}"}
`;

const parsed = parseWorkflow(YAML);
if (!parsed.ok) throw new Error(JSON.stringify(parsed.issues));
const workflow: Workflow = parsed.workflow;
const services = {
  clock: systemClock,
  env: {},
  httpAllowHosts: [],
  readFile: async () => new Uint8Array(),
  writeFile: async () => {
    throw new Error("no files");
  },
  invokeWorkflow: async () => null,
};
const input = { text: "order 12 and 34 shipped today", n: 21 };

async function engineRun() {
  const r = await execute({ workflow, input, journal: { completed: new Map(), stepStarted() {}, async stepFinished() {} }, services, signal: new AbortController().signal });
  if (r.status !== "completed") throw new Error(JSON.stringify(r));
}

function plainRun() {
  const a = { n: input.n, t: input.text.toUpperCase() };
  const b = input.text.split(" ");
  const c = { ...a, parts: b.length };
  const { t: _t, ...d } = c;
  const chunks: string[] = [];
  for (let i = 0; i < input.text.length; i += 8) chunks.push(input.text.slice(i, i + 8));
  if (!d || chunks.length === 0) throw new Error("unreachable");
}

async function time(label: string, n: number, f: () => unknown): Promise<number> {
  for (let i = 0; i < Math.min(50, n); i++) await f();
  const t = performance.now();
  for (let i = 0; i < n; i++) await f();
  const per = (performance.now() - t) / n;
  console.log(`${label.padEnd(44)} ${(per * 1000).toFixed(1).padStart(9)} µs/op  ${(1000 / per).toFixed(0).padStart(8)} op/s`);
  return per;
}

const SCRIPT = "function script(xs) { return xs.reduce((s, x) => s + x, 0) }";
const native = (xs: number[]) => xs.reduce((s, x) => s + x, 0);
const xs = Array.from({ length: 100 }, (_, i) => i);

console.log(`cores: ${navigator.hardwareConcurrency}, load average: ${(await Bun.file("/proc/loadavg").text()).split(" ").slice(0, 3).join(" ")}`);
const eng = await time("engine: 5-step workflow run", 2000, engineRun);
const ref = await time("reference: same work in plain JS", 2000, plainRun);
const scr = await time("transform.script sandbox call (child process)", 500, () => runSandboxed(SCRIPT, [xs], { timeoutMs: 5000, memoryBytes: 64 << 20 }));
const nat = await time("reference: native function call", 2000, () => native(xs));
const par = await time("parseWorkflow (validated)", 500, () => parseWorkflow(YAML));
const yml = await time("reference: yaml.parse", 500, () => parseYaml(YAML));
console.log(`ratios: engine/plain ${(eng / ref).toFixed(0)}x, engine overhead per step ${((eng / 5) * 1000).toFixed(0)} µs; script/native ${(scr / nat).toFixed(0)}x; parseWorkflow/yaml.parse ${(par / yml).toFixed(1)}x`);
process.exit(0);
