// Graceful shutdown on the compiled binary: SIGTERM while a run is inside a slow action.http step.
// The step in flight finishes (its side effect happens once and is journaled), no further step starts,
// the process exits 0 with the run left `running`; the next start resumes it after that step.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { demoServer, type DemoServer } from "./automation-demo";
import type { Proc } from "./support";

const SLOW_MS = 1_500;

/** path → times the request arrived / the answer was sent. */
const arrived = new Map<string, number[]>();
const answered = new Map<string, number[]>();
const push = (m: Map<string, number[]>, k: string) => m.set(k, [...(m.get(k) ?? []), Date.now()]);
const sideEffects = Bun.serve({
  port: 0,
  hostname: "127.0.0.1",
  async fetch(req) {
    const path = new URL(req.url).pathname;
    push(arrived, path);
    if (path === "/charge") await Bun.sleep(SLOW_MS);
    push(answered, path);
    return Response.json({ ok: true, path });
  },
});

const workflow = `
name: checkout
steps:
  - {name: charge, type: action.http, with: {url: "http://127.0.0.1:${sideEffects.port}/charge", method: POST}}
  - {name: receipt, type: action.http, with: {url: "http://127.0.0.1:${sideEffects.port}/receipt", method: POST}}
output: {charged: "{{ steps.charge.output.body.ok }}", receipt: "{{ steps.receipt.output.body.path }}"}
`;

let demo: DemoServer;
let server: Proc | undefined;
const api = (method: string, path: string, body?: unknown) => demo.api(method, path, body);
const boot = () => demo.boot();

beforeAll(async () => {
  demo = await demoServer({ prefix: "automation-shutdown-", workers: 2, httpAllowHosts: `127.0.0.1:${sideEffects.port}` });
});

afterAll(async () => {
  await demo.close();
  sideEffects.stop(true);
});

test("SIGTERM mid-step: the step finishes once, exit 0, the restart resumes after it", async () => {
  server = await boot();
  expect((await api("POST", "/v1/automations", { yaml: workflow })).status).toBe(201);
  const id = ((await (await api("POST", "/v1/runs", { target: "workflows.checkout" })).json()) as { id: string }).id;
  for (let i = 0; i < 2000 && !arrived.has("/charge"); i++) await Bun.sleep(5);
  expect(arrived.get("/charge")).toHaveLength(1);

  const code = await server.kill("SIGTERM");
  const exitedAt = Date.now();
  expect(code).toBe(0);
  // The process waited for the step in flight: its answer went out before the exit.
  expect(answered.get("/charge")).toHaveLength(1);
  expect(answered.get("/charge")![0]).toBeLessThanOrEqual(exitedAt);
  expect(arrived.has("/receipt")).toBe(false); // stopped at the step boundary
  expect(server.output()).toContain("shutting down");

  // As the stopped process left the database: the step journaled, the run still running.
  expect(await demo.sql("SELECT status FROM runs WHERE id = ?", id)).toEqual([{ status: "running" }]);
  expect(await demo.sql("SELECT path, status FROM run_steps WHERE run_id = ? ORDER BY seq", id)).toEqual([{ path: "charge", status: "completed" }]);

  server = await boot();
  let run: { finished: boolean; execution: { status: string }; output?: unknown } = { finished: false, execution: { status: "" } };
  for (let i = 0; i < 2000 && !run.finished; i++) {
    run = (await (await api("GET", `/v1/runs/${id}`)).json()) as typeof run;
    if (!run.finished) await Bun.sleep(10);
  }
  expect(run.execution.status).toBe("completed");
  expect(run.output).toEqual({ charged: true, receipt: "/receipt" });
  expect(arrived.get("/charge")).toHaveLength(1); // not repeated after the restart
  expect(arrived.get("/receipt")).toHaveLength(1);
  const events = ((await (await api("GET", `/v1/runs/${id}/events`)).json()) as { events: { type: string }[] }).events.map((e) => e.type);
  expect(events).toContain("resumed");
  expect(events.filter((e) => e === "completed")).toHaveLength(1);

  expect(await server.kill("SIGTERM")).toBe(0);
}, 60_000);
