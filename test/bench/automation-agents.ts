// Agents, each figure against a reference measured in the same run:
//  - sync of an unchanged repository (20 release tags) vs. one `git for-each-ref` spawn (the floor of
//    any sync that asks git at all);
//  - an agent run (3 model turns against a loopback fake model, 2 tool calls = 2 child workflow runs)
//    vs. the same two child runs invoked by a plain workflow (action.invoke-workflow) plus 3 direct
//    HTTP calls to the same fake model: what is left is the loop's own cost (journal, prompts, tools).
// Run: bun test/bench/automation-agents.ts
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { systemClock } from "../../src/kernel/clock";
import { silentLogger } from "../../src/kernel/logger";
import { addAgent, agentDeps, syncAgent } from "../../src/automation/agents/service";
import { git } from "../../src/automation/agents/git";
import { createAutomation } from "../../src/automation/automations/service";
import { runsOf } from "../../src/automation/runs/service";
import { createContext } from "../../src/automation/server";
import { createTenant } from "../../src/automation/tenancy/service";
import { manifest, testRepo } from "../automation/agents/git-repo";
import { startFakeModels, type FakeRequest } from "../support/fake-models";

const SYNCS = Number(process.env.SYNCS ?? 30);
const RUNS = Number(process.env.RUNS ?? 60);

const fake = await startFakeModels();
const toolResults = (r: FakeRequest) => ((r.body.messages as { role: string }[]) ?? []).filter((m) => m.role === "tool").length;
fake.fallback = (req) => {
  const done = toolResults(req);
  if (done === 0) return { toolCalls: [{ name: "first", arguments: { n: 1 }, id: "a" }] };
  if (done === 1) return { toolCalls: [{ name: "second", arguments: { n: 2 }, id: "b" }] };
  return { text: "done" };
};

const dir = mkdtempSync(join(tmpdir(), "agents-bench-"));
const ctx = await createContext(
  { port: 0, hostname: "127.0.0.1", dataDir: dir, workers: 4, demo: false, httpAllowHosts: [], envAllowList: [], publicUrl: "http://localhost", signingSecret: "", models: fake.config() },
  { log: silentLogger },
);
const t = await createTenant(ctx.storage.tenancy, systemClock, { name: "bench" });
const tool = (name: string) => `name: ${name}\ndescription: ${name} tool\ninputs: [{name: n, type: integer, required: true}]\nsteps:\n  - {name: s, type: transform.set, with: {fields: {n: "{{ input.n }}"}}}\noutput: "{{ steps.s.output }}"\n`;
for (const name of ["first", "second"]) await createAutomation(ctx.storage.automations, systemClock, t.id, tool(name));
await createAutomation(
  ctx.storage.automations,
  systemClock,
  t.id,
  `name: plain\ninputs: [{name: question, type: string}]\nsteps:\n  - {name: a, type: action.invoke-workflow, with: {workflow: workflows.first, input: {n: 1}}}\n  - {name: b, type: action.invoke-workflow, with: {workflow: workflows.second, input: {n: 2}}}\n  - {name: c, type: transform.set, with: {fields: {answer: done}}}\n`,
);
const repo = testRepo("bench-agent");
for (let i = 0; i < 20; i++) {
  repo.commit({ "agent.yaml": manifest({ name: `Bench ${i}`, tools: ["workflows.first", "workflows.second"], model: "fake/small", maxSteps: 5 }) });
  repo.tag(`v1.${i}.0`);
}
await addAgent(agentDeps(ctx), t.id, { repo: repo.dir });
const runs = runsOf(ctx);
runs.startWorkers();
const actor = { tenantId: t.id, keyId: "bench" };

async function timeEach(n: number, fn: () => Promise<unknown>): Promise<number> {
  for (let i = 0; i < 3; i++) await fn(); // warm-up
  const started = performance.now();
  for (let i = 0; i < n; i++) await fn();
  return (performance.now() - started) / n;
}

async function runOnce(target: string): Promise<void> {
  const row = await runs.start(actor, { target, input: { question: "go" } });
  const done = await runs.waitFor(row.id, 30);
  if (done.status !== "completed") throw new Error(`${target}: ${done.status} ${done.error}`);
}

const chat = () =>
  fetch(`${fake.url}/v1/chat/completions`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ model: "small", messages: [{ role: "user", content: "hi" }] }),
  }).then((r) => r.json());

try {
  const forEachRef = await timeEach(SYNCS, () => git(["-C", repo.dir, "for-each-ref", "refs/tags"]));
  const sync = await timeEach(SYNCS, () => syncAgent(agentDeps(ctx), t.id, "agents.bench-agent"));
  // Alternating blocks, so drift of a loaded machine hits both sides alike.
  let plain = 0;
  let modelCalls = 0;
  let agent = 0;
  const BLOCK = 10;
  for (let done = 0; done < RUNS; done += BLOCK) {
    plain += (await timeEach(BLOCK, () => runOnce("workflows.plain"))) / (RUNS / BLOCK);
    modelCalls += (await timeEach(BLOCK, async () => {
      for (let i = 0; i < 3; i++) await chat();
    })) / (RUNS / BLOCK);
    agent += (await timeEach(BLOCK, () => runOnce("agents.bench-agent"))) / (RUNS / BLOCK);
  }
  const reference = plain + modelCalls;
  const fmt = (ms: number) => `${ms.toFixed(2).padStart(8)} ms`;
  console.log(`sync: ${SYNCS} syncs of an unchanged repository with 20 release tags`);
  console.log(`  git for-each-ref spawn (reference)     ${fmt(forEachRef)}`);
  console.log(`  POST sync (service)                    ${fmt(sync)}   ${(sync / forEachRef).toFixed(2)}× reference`);
  console.log(`agent runs: ${RUNS} sequential runs, 3 model turns + 2 tool calls each`);
  console.log(`  workflow invoking the 2 tools          ${fmt(plain)}`);
  console.log(`  3 direct fake-model HTTP calls         ${fmt(modelCalls)}`);
  console.log(`  sum (reference)                        ${fmt(reference)}`);
  console.log(`  agent run                              ${fmt(agent)}   ${(agent / reference).toFixed(2)}× reference, loop overhead ${((agent - reference) / 3).toFixed(2)} ms per turn`);
} finally {
  await runs.stopWorkers();
  await ctx.db.close();
  await fake.close();
  rmSync(dir, { recursive: true, force: true });
}
