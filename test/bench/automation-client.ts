// Benchmark of the client's new namespaces (run: bun test/bench/automation-client.ts): the client's
// overhead over a bare fetch of the same route on the same in-process server, measured in the same
// run. Each figure is p50 of 300 sequential calls through the client ÷ p50 of 300 bare fetches:
// (1) humanReviews.get of a task; (2) reviews.get of a reviewed run; (3) models.list.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { systemClock } from "../../src/kernel/clock";
import { silentLogger } from "../../src/kernel/logger";
import { buildApp } from "../../src/automation/app";
import { AutomationClient } from "../../src/automation/client";
import { demoWorkflows } from "../../src/automation/demo/workflows";
import { createBlobStore } from "../../src/automation/blobs/fs-blobs";
import { modelsConfig } from "../../src/automation/models/config";
import { runsOf } from "../../src/automation/runs/service";
import { createContext } from "../../src/automation/server";
import { createTenant } from "../../src/automation/tenancy/service";
import { testConfig } from "../automation/app/config";

const N = 300;
const dir = mkdtempSync(join(tmpdir(), "bench-client-"));
const models = modelsConfig({ defaults: { text: "local/llama" }, providers: { local: { base_url: "http://127.0.0.1:1/v1", models: ["llama"] } } }, {});
const config = testConfig({ models });
const ctx = await createContext(config, { clock: systemClock, log: silentLogger, blobs: createBlobStore(join(dir, "blobs")) });
const app = buildApp(ctx);
const server = Bun.serve({ port: 0, hostname: "127.0.0.1", fetch: (req) => app.handle(req) });
const t = await createTenant(ctx.storage.tenancy, systemClock, { name: "bench", slug: "bench" });
const base = `http://127.0.0.1:${server.port}`;
const client = new AutomationClient({ baseUrl: base, apiKey: t.key });
runsOf(ctx).startWorkers();

await client.automations.create(demoWorkflows.find((w) => w.file === "invoice-approval.yaml")!.yaml);
const parked = await client.run("workflows.invoice-approval", { total: 5000 });
while ((await client.runs.get(parked.id)).execution?.status !== "waiting") await Bun.sleep(20);
const task = (await client.humanReviews.list()).tasks[0]!;
const done = await client.run("workflows.invoice-approval", { total: 10 }, { waitForCompletion: 30 });
await client.reviews.put(done.id, { verdict: "correct", note: "fine" });

async function p50(call: () => Promise<unknown>): Promise<number> {
  for (let i = 0; i < 30; i++) await call(); // warm-up
  const xs: number[] = [];
  for (let i = 0; i < N; i++) {
    const at = performance.now();
    await call();
    xs.push(performance.now() - at);
  }
  return xs.sort((a, b) => a - b)[Math.floor(N / 2)]!;
}
const bare = (path: string) => async () => {
  const r = await fetch(base + path, { headers: { authorization: `Bearer ${t.key}` } });
  if (r.status !== 200) throw new Error(`${path} answered ${r.status}`);
  return r.json();
};

const rows: [string, () => Promise<unknown>, () => Promise<unknown>][] = [
  ["humanReviews.get", () => client.humanReviews.get(task.id), bare(`/v1/human-reviews/${task.id}`)],
  ["reviews.get", () => client.reviews.get(done.id), bare(`/v1/runs/${done.id}/reviews`)],
  ["models.list", () => client.models.list(), bare("/v1/models")],
];
console.log(`client call ÷ bare fetch, p50 of ${N} sequential calls each (in-process server on loopback)`);
for (const [name, viaClient, viaFetch] of rows) {
  const ref = await p50(viaFetch);
  const got = await p50(viaClient);
  console.log(`${name.padEnd(18)} client ${got.toFixed(3)} ms  fetch ${ref.toFixed(3)} ms  ratio ${(got / ref).toFixed(2)}`);
}
await runsOf(ctx).stopWorkers(1000);
server.stop(true);
rmSync(dir, { recursive: true, force: true });
process.exit(0);
