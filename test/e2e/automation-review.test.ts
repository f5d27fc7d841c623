// Human review on the compiled binary: the run parks on a task and holds no worker; an approval whose
// decision is committed but not yet resumed survives a SIGKILL and the run then continues exactly once;
// 200 runs waiting on tasks survive a restart and all resume when approved.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { demoServer, type DemoServer } from "./automation-demo";

type Json = Record<string, any>; // biome-ignore lint: test assertions index freely into response bodies

let demo: DemoServer;
const api = (method: string, path: string, body?: unknown) => demo.api(method, path, body);
const get = async (path: string): Promise<Json> => (await api("GET", path)).json() as Promise<Json>;

async function until<T>(what: string, probe: () => Promise<T | undefined>, timeoutMs = 60_000): Promise<T> {
  const end = Date.now() + timeoutMs;
  while (Date.now() < end) {
    const v = await probe();
    if (v !== undefined) return v;
    await Bun.sleep(50);
  }
  throw new Error(`timed out waiting for ${what}`);
}
const status = async (id: string, wanted: string[]) => until(`${id} ${wanted}`, async () => {
  const r = await get(`/v1/runs/${id}`);
  return wanted.includes(r.execution.status) ? r : undefined;
});

/** Every pending task, following the cursor. */
async function allTasks(): Promise<Json[]> {
  const out: Json[] = [];
  let cursor: string | null = null;
  do {
    const page: Json = await get(`/v1/human-reviews?limit=100${cursor ? `&cursor=${cursor}` : ""}`);
    out.push(...page.tasks);
    cursor = page.nextCursor;
  } while (cursor);
  return out;
}

beforeAll(async () => {
  // One worker: a long wait holds it, so an approval's resumption can be held back deterministically.
  demo = await demoServer({ prefix: "automation-review-", workers: 1 });
});

afterAll(async () => {
  await demo.close();
});

test("SIGKILL between the approval's commit and the resumption: after the restart the run continues once", async () => {
  let server = await demo.boot();
  expect((await api("POST", "/v1/automations", { yaml: "name: blocker\nsteps:\n  - {name: hold, type: control.wait, duration: 600000}\n" })).status).toBe(201);
  const run = (await (await api("POST", "/v1/runs", { target: "workflows.invoice-approval", input: { vendor: "Initech", total: 5000 } })).json()) as Json;
  await status(run.id, ["waiting"]);
  const blocker = (await (await api("POST", "/v1/runs", { target: "workflows.blocker", input: {} })).json()) as Json;
  await status(blocker.id, ["running"]);

  const [task] = (await allTasks()).filter((t) => t.executionId === run.id);
  const detail = await get(`/v1/human-reviews/${task.id}`);
  expect(detail.decisions.map((d: Json) => d.path)).toEqual(["/total"]);
  const set = await api("PUT", `/v1/human-reviews/${task.id}/fields`, { path: "/total", value: 4999, expectedVersion: 1, idempotencyKey: "fix-total" });
  expect(set.status).toBe(200);
  const approved = await api("POST", `/v1/human-reviews/${task.id}/approve`, { expectedVersion: 2 });
  expect(approved.status).toBe(200);
  await server.kill("SIGKILL");

  // The decision is committed and the run is queued again, not yet resumed (the only worker was busy).
  expect(await demo.sql("SELECT status FROM human_review_tasks WHERE id = ?", task.id)).toEqual([{ status: "approved" }]);
  expect(await demo.sql("SELECT status FROM runs WHERE id = ?", run.id)).toEqual([{ status: "pending" }]);

  server = await demo.boot();
  await api("POST", `/v1/runs/${blocker.id}/cancel`);
  const done = await status(run.id, ["completed", "failed", "rejected", "cancelled"]);
  expect(done.execution.status).toBe("completed");
  expect(done.output).toEqual({ vendor: "Initech", total: 4999, review: "completed" });
  const events = ((await get(`/v1/runs/${run.id}/events`)).events as Json[]).map((e) => e.type);
  expect(events.filter((e) => e === "waiting")).toHaveLength(1);
  expect(events.filter((e) => e === "resumed")).toHaveLength(1);
  expect(events.filter((e) => e === "completed")).toHaveLength(1);
  const started = ((await get(`/v1/runs/${run.id}/events`)).events as Json[]).filter((e) => e.type === "step_started").map((e) => e.message);
  expect(started).toEqual(["extract", "review"]);
  const again = await api("POST", `/v1/human-reviews/${task.id}/approve`, { expectedVersion: 3 });
  expect(again.status).toBe(409);
  await server.kill("SIGTERM");
});

test("200 runs waiting on tasks survive a restart and all resume when approved", async () => {
  let server = await demo.boot();
  const gate = `
name: gate
inputs: [{name: n, type: integer, required: true}]
steps:
  - name: check
    type: control.human_review
    with: {data: {n: "{{ input.n }}"}, selection: {mode: explicit}}
output: {n: "{{ steps.check.output.n }}"}
`;
  expect((await api("POST", "/v1/automations", { yaml: gate })).status).toBe(201);
  const ids: string[] = [];
  for (let batch = 0; batch < 200; batch += 50) {
    const rs = await Promise.all(Array.from({ length: 50 }, (_, i) => api("POST", "/v1/runs", { target: "workflows.gate", input: { n: batch + i } }).then((r) => r.json() as Promise<Json>)));
    ids.push(...rs.map((r) => r.id as string));
  }
  await until("200 tasks", async () => ((await allTasks()).length >= 200 ? true : undefined), 90_000);
  await server.kill("SIGKILL");

  server = await demo.boot();
  const tasks = await allTasks();
  expect(tasks).toHaveLength(200);
  expect(new Set(tasks.map((t) => t.executionId))).toEqual(new Set(ids));
  for (let i = 0; i < tasks.length; i += 50) {
    const answers = await Promise.all(tasks.slice(i, i + 50).map((t) => api("POST", `/v1/human-reviews/${t.id}/approve`, { expectedVersion: t.version })));
    expect(answers.every((a) => a.status === 200)).toBe(true);
  }
  const outputs = await until("all 200 completed", async () => {
    const page = (await get(`/v1/runs?source=workflows.gate&limit=100&status=completed`)).runs as Json[];
    const next = (await get(`/v1/runs?source=workflows.gate&limit=100&status=completed&offset=100`)).runs as Json[];
    // Two reads: a run completing between them shifts the second page (one run twice, another missed), so
    // only 200 distinct runs count as all.
    const both = [...page, ...next];
    return new Set(both.map((r) => r.id)).size === 200 ? both : undefined;
  }, 90_000);
  expect(new Set(outputs.map((r) => r.id))).toEqual(new Set(ids));
  const sample = await get(`/v1/runs/${ids[17]}`);
  expect(sample.output).toEqual({ n: 17 });
  expect((await allTasks()).length).toBe(0);
  await server.kill("SIGTERM");
});
