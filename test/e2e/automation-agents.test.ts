// Agents on the compiled binary: `agents add` (JSON, git missing, not a repository), the --demo agent
// (a local bare repository with two tags), and a durable agent run against a loopback fake model:
// two workflow tools (each calls a loopback counter), SIGKILL after the first tool call while the
// model is answering the second turn, restart — the first tool is not called again.
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { copyFileSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { gitSync, manifest, testRepo } from "../automation/agents/git-repo";
import { startFakeModels, type FakeModels, type FakeRequest } from "../support/fake-models";
import { DEMO_KEY } from "./automation-demo";
import { automationPgUrl, automationSql, ensureBuilt, startServer, type Server } from "./support";

// Compiling and spawning the binary is slow on a loaded machine; timing never decides these tests.
setDefaultTimeout(60_000);

const hits = new Map<string, number>();
const counter = Bun.serve({
  port: 0,
  hostname: "127.0.0.1",
  fetch(req) {
    const key = new URL(req.url).pathname.slice(1);
    hits.set(key, (hits.get(key) ?? 0) + 1);
    return Response.json({ ok: true, key });
  },
});

const tool = (name: string) => `
name: ${name}
description: ${name === "reserve" ? "Reserves an item" : "Charges for an item"}
inputs: [{name: item, type: string, required: true}]
steps:
  - {name: call, type: action.http, with: {url: "http://127.0.0.1:${counter.port}/${name}/{{ input.item }}", method: POST}}
output: {${name}d: "{{ input.item }}"}
`;

let fake: FakeModels;
let dir: string;
let bin: string;
let server: Server | undefined;
/** The running server's address: each (re)start gets a new port. */
const base = () => {
  if (!server) throw new Error("server not started");
  return server.url;
};
const dataDir = () => join(dir, "data");

/** "crash": the second model turn hangs (so the kill lands after the first tool call); "normal": it goes on. */
let phase: "crash" | "normal" = "crash";
const toolResults = (r: FakeRequest) => ((r.body.messages as { role: string }[]) ?? []).filter((m) => m.role === "tool").length;

beforeAll(async () => {
  fake = await startFakeModels();
  fake.fallback = (req) => {
    const done = toolResults(req);
    if (done === 0) return { toolCalls: [{ name: "reserve", arguments: { item: "book" }, id: "t1" }] };
    if (done === 1) return phase === "crash" ? { hang: true } : { toolCalls: [{ name: "charge", arguments: { item: "book" }, id: "t2" }] };
    return { text: "reserved and charged the book" };
  };
  dir = mkdtempSync(join(tmpdir(), "automation-agents-"));
  bin = join(dir, "automation-server");
  copyFileSync(await ensureBuilt("automation-server"), bin);
  writeFileSync(join(dir, "models.toml"), fake.toml({ timeoutMs: 120_000, maxRetries: 0 }));
});

afterAll(async () => {
  if (server && server.proc.exitCode === null) await server.kill("SIGKILL");
  await fake.close();
  counter.stop(true);
  rmSync(dir, { recursive: true, force: true });
});

async function boot(): Promise<Server> {
  server = await startServer(
    [bin, "--demo", "--host", "127.0.0.1", "--workers", "2", "--data-dir", dataDir(), "--models", join(dir, "models.toml")],
    { cwd: dir, env: { AUTOMATION_HTTP_ALLOW_HOSTS: `127.0.0.1:${counter.port}`, AUTOMATION_DATA_DIR: undefined } },
  );
  return server;
}

const api = (method: string, path: string, body?: unknown) =>
  fetch(`${base()}${path}`, {
    method,
    headers: { authorization: `Bearer ${DEMO_KEY}`, ...(body === undefined ? {} : { "content-type": "application/json" }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });

function cli(args: string[], env: Record<string, string> = {}) {
  // Admin commands work where the server's data is: its PostgreSQL database in the PostgreSQL pass.
  const db = automationPgUrl(dataDir());
  const p = Bun.spawnSync([bin, ...args, "--data-dir", dataDir(), ...(db ? ["--db", db] : [])], { cwd: dir, env: { ...process.env, ...env }, stdout: "pipe", stderr: "pipe" });
  return { code: p.exitCode, out: p.stdout.toString(), err: p.stderr.toString() };
}

async function until<T>(what: string, probe: () => Promise<T | undefined> | T | undefined, timeoutMs = 60_000): Promise<T> {
  const end = Date.now() + timeoutMs;
  while (Date.now() < end) {
    const v = await probe();
    if (v !== undefined) return v;
    await Bun.sleep(50);
  }
  throw new Error(`timed out waiting for ${what}`);
}

describe("agents on the compiled server", () => {
  test("--demo registers the demo agent from a local bare repository with two release tags", async () => {
    await boot();
    expect(server!.output()).toContain("agents.demo-assistant");
    const list = (await (await api("GET", "/v1/automations?type=agent")).json()) as { data: { slug: string; type: string; version: string }[] };
    expect(list.data).toEqual([expect.objectContaining({ slug: "demo-assistant", type: "agent", version: "1.1.0" })]);
    const versions = (await (await api("GET", "/v1/automations/agents.demo-assistant/versions")).json()) as { data: { version: string }[] };
    expect(versions.data.map((v) => v.version)).toEqual(["1.1.0", "1.0.0"]);
    const tags = gitSync(join(dataDir(), "demo-agent.git"), "tag", "--list");
    expect(tags.split("\n")).toEqual(["v1.0.0", "v1.1.0"]);
    const synced = await api("POST", "/v1/automations/agents.demo-assistant/sync");
    expect(synced.status).toBe(200);
    expect(((await synced.json()) as { release: { tag: string } }).release.tag).toBe("v1.1.0");
  });

  test("agents add: --json, a clear error without git, refusals exit 1 without a stack trace", async () => {
    const repo = testRepo("shop-agent");
    repo.commit({ "agent.yaml": manifest({ name: "Shop agent", tools: ["workflows.reserve", "workflows.charge"], model: "fake/small" }) });
    repo.tag("v1.0.0");
    for (const name of ["reserve", "charge"]) expect((await api("POST", "/v1/automations", { yaml: tool(name) })).status).toBe(201);

    const noGit = cli(["agents", "add", "--tenant", "demo", "--repo", repo.dir], { PATH: join(dir, "empty-path") });
    expect(noGit.code).toBe(1);
    expect(noGit.err).toContain("git is not installed");
    expect(noGit.err).not.toMatch(/\n\s+at /);

    const added = cli(["agents", "add", "--tenant", "demo", "--repo", repo.dir, "--json"]);
    expect(added.err).toBe("");
    expect(added.code).toBe(0);
    const out = JSON.parse(added.out) as { id: string; slug: string; version: string; release: { tag: string }; warnings: string[] };
    expect(out).toMatchObject({ slug: "shop-agent", version: "1.0.0", release: { tag: "v1.0.0" }, warnings: [] });
    expect(out.id).toMatch(/^agt_/);

    const again = cli(["agents", "add", "--tenant", "demo", "--repo", repo.dir]);
    expect(again.code).toBe(1);
    expect(again.err).toContain("already exists");
    mkdirSync(join(dir, "plain"));
    const plain = cli(["agents", "add", "--tenant", "demo", "--repo", join(dir, "plain")]);
    expect(plain.code).toBe(1);
    expect(plain.err).toContain("not a Git repository");
    expect(cli(["agents", "add", "--help"]).code).toBe(0);
    expect(cli(["agents", "sync", "--help"]).out).toContain("agents sync AGENT");
    const synced = cli(["agents", "sync", "shop-agent", "--tenant", "demo", "--json"]);
    expect(synced.code).toBe(0);
    expect(JSON.parse(synced.out)).toMatchObject({ automation: { id: out.id, type: "agent" }, release: { version: "1.0.0", tag: "v1.0.0" } });
    const versioned = cli(["agents", "sync", "agents.shop-agent@1.0.0", "--tenant", "demo"]);
    expect(versioned.code).toBe(1);
    expect(versioned.err).toContain("without a version");

    // The running server sees what the command registered.
    const detail = (await (await api("GET", "/v1/automations/agents.shop-agent")).json()) as { id: string; name: string };
    expect(detail).toMatchObject({ id: out.id, name: "Shop agent" });
  });

  test("hand-written YAML naming agent.loop is refused: API 400 and `workflows push` exit 1, with the line", async () => {
    const yaml = "name: sneaky\nsteps:\n  - name: agent\n    type: agent.loop\n    with: {instructions: hi}\n";
    const r = await api("POST", "/v1/automations", { yaml });
    expect(r.status).toBe(400);
    const issue = ((await r.json()) as { issues: { field: string; code: string; message: string }[] }).issues[0];
    expect(issue).toMatchObject({ field: "yaml.steps.0.type", code: "internal_step_type" });
    expect(issue.message).toBe('step type "agent.loop" is internal to agents; use an agents.<slug> automation instead (line 4)');
    const file = join(dir, "sneaky.yaml");
    writeFileSync(file, yaml);
    const pushed = cli(["workflows", "push", file, "--tenant", "demo"]);
    expect(pushed.code).toBe(1);
    expect(pushed.err).toContain('step type "agent.loop" is internal to agents');
    expect(pushed.err).toContain("line 4");
    expect(pushed.err).not.toMatch(/\n\s+at /);
  });

  test("SIGKILL after the first tool call: on restart the tool is not called again, the run completes", async () => {
    const started = await api("POST", "/v1/runs", { target: "agents.shop-agent", input: { question: "buy the book" } });
    expect(started.status).toBe(201);
    const { id } = (await started.json()) as { id: string };
    // The second model turn is in flight (hanging): the first tool call has finished.
    await until("the second model turn", () => (fake.requests.some((r) => toolResults(r) === 1) ? true : undefined));
    expect(hits.get("reserve/book")).toBe(1);
    await server!.kill("SIGKILL");

    const journal = await automationSql<{ path: string; status: string }>(dataDir(), "SELECT path, status FROM run_steps WHERE run_id = ? ORDER BY seq", id);
    expect(journal).toContainEqual({ path: "agent.tool-1-1", status: "completed" });
    expect(journal.some((s) => s.path === "agent.tool-2-1")).toBe(false);

    phase = "normal";
    await boot();
    const run = await until("the resumed run to finish", async () => {
      const r = (await (await api("GET", `/v1/runs/${id}`)).json()) as { finished: boolean; execution: { status: string }; output: { answer: string; toolCalls: number } };
      return r.finished ? r : undefined;
    });
    expect(run.execution.status).toBe("completed");
    expect(run.output).toMatchObject({ answer: "reserved and charged the book", toolCalls: 2 });
    expect(hits.get("reserve/book")).toBe(1); // not repeated
    expect(hits.get("charge/book")).toBe(1);
    // Model turns: the first was journaled and not asked again; the second was asked again (it never answered).
    expect(fake.requests.filter((r) => toolResults(r) === 0 && JSON.stringify(r.body).includes("buy the book"))).toHaveLength(1);
    // Usage sums the answered model calls: turn 1 (before the kill), turns 2 and 3 (after it).
    const usage = ((await (await api("GET", `/v1/runs/${id}/usage`)).json()) as { usage: { llmCallCount: number } }).usage;
    expect(usage.llmCallCount).toBe(3);
    const steps = (await (await api("GET", `/v1/runs/${id}/steps`)).json()) as { steps: { name: string; status: string }[] };
    expect(steps.steps.map((s) => `${s.name}:${s.status}`)).toEqual([
      "agent:completed",
      "turn-1:completed",
      "tool-1-1:completed",
      "turn-2:completed",
      "tool-2-1:completed",
      "turn-3:completed",
    ]);
  });
});
