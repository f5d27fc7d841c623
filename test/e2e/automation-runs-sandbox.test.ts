// The script sandbox of the compiled automation-server: scripts run in child processes that are the
// binary itself (hidden `__sandbox` subcommand). A script stuck in a long built-in call fails its run on
// time, and afterwards neither the server nor any of its processes keeps burning CPU.
import { afterAll, beforeAll, expect, setDefaultTimeout, test } from "bun:test";
import { copyFileSync, mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ensureBuilt, startServer, type Server } from "./support";

// Compiling and spawning the binary is slow on a loaded machine; timing never decides these tests.
setDefaultTimeout(60_000);

const DEMO_KEY = "eak_demo_0123456789abcdefghijklmnopqrstuv";
let dir = "";
let bin = "";
/** The running server's port: each (re)start gets a new one. */
let port = 0;
let server: Server | undefined;
/** A sandbox process the SIGKILL test orphans (killed in afterAll should the test fail). */
let busy: number | undefined;

async function boot(): Promise<Server> {
  const p = await startServer([bin, "--demo", "--host", "127.0.0.1", "--workers", "2"], { cwd: dir, env: { AUTOMATION_DATA_DIR: undefined } });
  port = p.port;
  return p;
}

const api = (method: string, path: string, body?: unknown) =>
  fetch(`http://127.0.0.1:${port}${path}`, {
    method,
    headers: { authorization: `Bearer ${DEMO_KEY}`, ...(body === undefined ? {} : { "content-type": "application/json" }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });

/** pid → [cpu ms, command line] of `pid` and its child processes, read from /proc. */
function tree(pid: number): Map<number, { cpuMs: number; cmd: string }> {
  const out = new Map<number, { cpuMs: number; cmd: string }>();
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, "utf8");
      const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
      if ((Number(entry) !== pid && Number(fields[1]) !== pid) || fields[0] === "Z") continue;
      // utime + stime in clock ticks (100 per second on Linux).
      out.set(Number(entry), { cpuMs: (Number(fields[11]) + Number(fields[12])) * 10, cmd: readFileSync(`/proc/${entry}/cmdline`, "utf8").split("\0").join(" ").trim() });
    } catch {
      // exited meanwhile
    }
  }
  return out;
}

/** Whether `pid` is a live (not zombie) process. */
function alive(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    return stat.slice(stat.lastIndexOf(")") + 2, stat.lastIndexOf(")") + 3) !== "Z";
  } catch {
    return false;
  }
}

beforeAll(async () => {
  const built = await ensureBuilt("automation-server");
  dir = mkdtempSync(join(tmpdir(), "automation-sandbox-e2e-"));
  bin = join(dir, "automation-server");
  copyFileSync(built, bin);
  server = await boot();
});

afterAll(async () => {
  if (server && server.proc.exitCode === null) await server.kill("SIGKILL");
  if (busy !== undefined && alive(busy)) process.kill(busy, "SIGKILL");
  rmSync(dir, { recursive: true, force: true });
});

test("a script stuck in a long built-in fails on time; afterwards no process of the server burns CPU", async () => {
  const yaml = `
name: runaway
inputs: [{name: sort, type: boolean, required: false, default: false}]
steps:
  - name: spin
    type: transform.script
    if: "{{ input.sort == false }}"
    with:
      timeoutMs: 200
      function: "function script() { const a = []; for (let i = 0; i < 200000; i++) a.push('item' + i); while (true) a.join(',') }"
  - name: sorter
    type: transform.script
    with:
      timeoutMs: 50
      memoryMb: 256
      function: "function script() { const a = Array.from(new Uint32Array(2000000).keys()); a.sort(); return 1 }"
    if: "{{ input.sort }}"
`;
  expect((await api("POST", "/v1/automations", { yaml })).status).toBe(201);
  const pid = server!.proc.pid;

  for (const [input, step] of [[{}, "spin"], [{ sort: true }, "sorter"]] as const) {
    const res = await api("POST", "/v1/runs?wait_for_completion=30", { target: "workflows.runaway", input });
    expect(res.status).toBe(200);
    const run = (await res.json()) as { id: string; execution: { status: string }; error: unknown };
    expect(run.execution.status).toBe("failed");
    expect(JSON.stringify(run.error)).toContain("time limit");
    const steps = ((await (await api("GET", `/v1/runs/${run.id}/steps`)).json()) as { steps: { name: string; status: string }[] }).steps;
    expect(steps.find((s) => s.status === "failed")?.name).toBe(step);
  }
  // A second workflow's script still runs (the pool replaced what it killed).
  const ok = await api("POST", "/v1/runs?wait_for_completion=30", { target: "workflows.invoice-summary", input: { invoice: { lines: [{ amount: 2 }, { amount: 3 }] } } });
  expect(((await ok.json()) as { output: unknown }).output).toEqual({ total: 5 });

  const before = tree(pid);
  const sandboxes = [...before.values()].filter((p) => p.cmd.includes("__sandbox"));
  expect(sandboxes.length).toBeGreaterThan(0); // the sandbox processes are the binary itself
  await Bun.sleep(2000);
  const after = tree(pid);
  let burnt = 0;
  for (const [p, t] of after) burnt += t.cpuMs - (before.get(p)?.cpuMs ?? t.cpuMs);
  // A runaway left behind would add about 2000 ms here; an idle server and idle sandboxes use a few.
  expect(burnt).toBeLessThan(1000);

  // Graceful shutdown takes the sandbox processes down with the server.
  expect(await server!.kill("SIGTERM")).toBe(0);
  const children = [...after.keys()].filter((p) => p !== pid);
  for (let i = 0; i < 200 && children.some(alive); i++) await Bun.sleep(10);
  expect(children.filter(alive)).toEqual([]);
}, 90_000);

test("SIGKILL of the server while a script runs: the orphaned sandbox process ends too", async () => {
  if (!server || server.proc.exitCode !== null) server = await boot();
  const yaml = `
name: endless-sort
steps:
  - name: sort
    type: transform.script
    with:
      timeoutMs: 60000
      memoryMb: 256
      function: "function script() { const a = Array.from(new Uint32Array(2000000).keys()); for (;;) { a.sort(); a.reverse() } }"
`;
  expect((await api("POST", "/v1/automations", { yaml })).status).toBe(201);
  expect((await api("POST", "/v1/runs", { target: "workflows.endless-sort" })).status).toBe(201);
  const pid = server.proc.pid;
  // Wait until a sandbox process of this server is busy with it.
  for (let i = 0; i < 300 && busy === undefined; i++) {
    const before = tree(pid);
    await Bun.sleep(100);
    for (const [p, t] of tree(pid)) if (p !== pid && t.cmd.includes("__sandbox") && t.cpuMs - (before.get(p)?.cpuMs ?? t.cpuMs) >= 50) busy = p;
  }
  expect(busy).toBeDefined();
  await server.kill("SIGKILL");
  // Nobody can SIGKILL it now: its watchdog sees the parent gone (within about 0.5 s) and ends it.
  for (let i = 0; i < 500 && alive(busy!); i++) await Bun.sleep(10);
  expect(alive(busy!)).toBe(false);
}, 90_000);
