// `automation-server --db postgres://…` on the compiled binary: the database is named on startup without
// its password, a bad or unreachable --db is one line, the demo serves from PostgreSQL, a second server
// on the same database serves the same data and queue, and docs/automation/scale-out.md's commands (an
// API-only instance and a worker) work as written.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { copyFileSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { freshPostgresDb, startPostgres } from "../support/postgres";
import { ensureBuilt, refusedPort, root, start, startServer } from "./support";

const DEMO_KEY = "eak_demo_0123456789abcdefghijklmnopqrstuv";
let dir = "";
let bin = "";

beforeAll(async () => {
  const built = await ensureBuilt("automation-server");
  dir = mkdtempSync(join(tmpdir(), "automation-pg-serve-"));
  bin = join(dir, "automation-server");
  copyFileSync(built, bin);
});

afterAll(() => {
  rmSync(dir, { recursive: true, force: true });
});

/** The URL with a password: the test server trusts every connection, so any password works. */
const withPassword = (url: string) => url.replace("postgres://postgres@", "postgres://postgres:s3cret-pw@");

describe("serve --db postgres://", () => {
  test("a --db that is not a PostgreSQL URL, or one nobody answers at, is one line", async () => {
    const bad = start([bin, "--db", "./automation.db", "--data-dir", join(dir, "bad"), "--port", "0"]);
    expect(await bad.proc.exited).toBe(2);
    expect(bad.output()).toContain('--db must be a postgres:// URL (got "./automation.db")');
    const down = start([bin, "--db", `postgres://postgres:s3cret-pw@127.0.0.1:${refusedPort()}/x`, "--data-dir", join(dir, "down"), "--port", "0"]);
    expect(await down.proc.exited).toBe(1);
    const out = down.output().trim();
    expect(out).toContain("cannot open database postgres://postgres:***@127.0.0.1:");
    expect(out).not.toContain("s3cret-pw");
  }, 60_000);

  test("the demo serves from PostgreSQL; a second server on the database serves the same data and queue", async () => {
    const url = withPassword(await freshPostgresDb());
    const args = [bin, "--demo", "--host", "127.0.0.1", "--workers", "1", "--db", url, "--data-dir", join(dir, "data")];
    const first = await startServer(args, { cwd: dir });
    const runAt = (base: string) =>
      fetch(`${base}/v1/runs?wait_for_completion=30`, {
        method: "POST",
        headers: { authorization: `Bearer ${DEMO_KEY}`, "content-type": "application/json" },
        body: JSON.stringify({ target: "workflows.hello", input: { name: "Postgres" } }),
      });
    try {
      expect(first.output()).toContain("database on PostgreSQL postgres://postgres:***@127.0.0.1:");
      expect(first.output()).not.toContain("s3cret-pw");
      const run = await runAt(first.url);
      expect(run.status).toBe(200);
      expect(((await run.json()) as { output: unknown }).output).toEqual({ greeting: "Hello, Postgres!" });

      // A second instance on the same database (the demo seeded once) serves the same runs.
      const second = await startServer(args, { cwd: dir });
      try {
        const other = await runAt(second.url);
        expect(other.status).toBe(200);
        const id = ((await other.json()) as { id: string }).id;
        const seen = await fetch(`${first.url}/v1/runs/${id}`, { headers: { authorization: `Bearer ${DEMO_KEY}` } });
        expect(((await seen.json()) as { execution: { status: string } }).execution.status).toBe("completed");
      } finally {
        expect(await second.kill("SIGTERM")).toBe(0);
      }
      expect((await fetch(`${first.url}/health`)).status).toBe(200);
      // A worker given another data dir cannot read the demo's blobs the database references: refused.
      const stray = start([bin, "worker", "--db", url, "--data-dir", join(dir, "elsewhere"), "--workers", "1"]);
      expect(await stray.proc.exited).toBe(1);
      expect(stray.output()).toContain("this process cannot read the blobs the database references");
      expect(stray.output()).toContain("every instance on one database needs the same blob store");
    } finally {
      await first.kill("SIGKILL");
    }
    const third = await startServer(args, { cwd: dir });
    try {
      const list = await fetch(`${third.url}/v1/runs?limit=5`, { headers: { authorization: `Bearer ${DEMO_KEY}` } });
      expect(((await list.json()) as { runs: unknown[] }).runs.length).toBeGreaterThanOrEqual(2);
    } finally {
      expect(await third.kill("SIGTERM")).toBe(0);
    }
  }, 120_000);

  test("docs/automation/scale-out.md: the API-only instance and the worker, as written, run a run between them", async () => {
    const doc = readFileSync(join(root, "docs/automation/scale-out.md"), "utf8");
    const block = /```sh\n([\s\S]*?)```/.exec(doc)![1];
    const command = (verb: string) => block.split("\n").find((l) => l.startsWith(`automation-server ${verb} `))!;
    const url = await freshPostgresDb();
    const shared = join(dir, "shared");
    // As written, with a test database, a temp dir and ports picked by the system.
    const args = (line: string) =>
      line.replaceAll('"$DB"', url).replaceAll("/shared/automation", shared).replace(/--port \d+/, "--port 0").split(" ").slice(1).concat("--host", "127.0.0.1");
    expect(command("serve")).toContain("--workers 0");
    const api = await startServer([bin, ...args(command("serve"))], { cwd: dir });
    const worker = await startServer([bin, ...args(command("worker"))], { cwd: dir });
    try {
      expect(worker.output()).toMatch(/^automation-server worker listening on http:\/\/127\.0\.0\.1:\d+ /);
      expect(await (await fetch(`${worker.url}/health`)).json()).toMatchObject({ ok: true });
      expect((await fetch(`${worker.url}/v1/runs`)).status).toBe(404);
      const tenant = start([bin, "tenants", "create", "--name", "Scale", "--db", url, "--data-dir", shared, "--json"]);
      expect(await tenant.proc.exited).toBe(0);
      const key = (JSON.parse(tenant.output()) as { key: string }).key;
      const headers = { authorization: `Bearer ${key}`, "content-type": "application/json" };
      const yaml = "name: hello\ninputs: [{name: who, type: string, required: true}]\nsteps:\n  - {name: greet, type: transform.set, with: {fields: {greeting: \"Hello, {{ input.who }}!\"}}}\n";
      expect((await fetch(`${api.url}/v1/automations`, { method: "POST", headers, body: JSON.stringify({ yaml }) })).status).toBe(201);
      const run = await fetch(`${api.url}/v1/runs?wait_for_completion=30`, { method: "POST", headers, body: JSON.stringify({ target: "workflows.hello", input: { who: "fleet" } }) });
      expect(run.status).toBe(200);
      const body = (await run.json()) as { output: unknown; id: string };
      expect(body.output).toEqual({ greet: { greeting: "Hello, fleet!" } });
      // Executed by the worker: the API instance executes nothing (--workers 0).
      expect(worker.output()).toContain(`run finished runId=${body.id}`);
      expect(api.output()).not.toContain("run finished");
    } finally {
      expect(await worker.kill("SIGTERM")).toBe(0);
      expect(await api.kill("SIGTERM")).toBe(0);
    }
    expect(worker.output()).toContain("stopped");
  }, 120_000);

  test("PostgreSQL stopped under a running server: 503 unavailable with Retry-After, then served again", async () => {
    const pg = await startPostgres(); // its own server: stopping it touches no other test
    const server = await startServer([bin, "--demo", "--host", "127.0.0.1", "--workers", "1", "--db", pg.url(), "--data-dir", join(dir, "paused")], { cwd: dir });
    const get = () => fetch(`${server.url}/v1/automations`, { headers: { authorization: `Bearer ${DEMO_KEY}` } });
    try {
      expect((await get()).status).toBe(200);
      await pg.pause();
      await Bun.sleep(2_500); // a safety poll of the idle pool (its slot offered) meets the database away
      const down = await get();
      expect(down.status).toBe(503);
      expect(down.headers.get("retry-after")).toBe("1");
      expect(((await down.json()) as { issues: { code: string }[] }).issues[0].code).toBe("unavailable");
      await pg.resume();
      let status = 0;
      for (let i = 0; i < 100 && status !== 200; i++) {
        status = (await get()).status;
        if (status !== 200) await Bun.sleep(100);
      }
      expect(status).toBe(200);
      // The pool works again (a run starts and finishes; its idle slot was offered across the outage), and the
      // outage left a few warnings, not a stream of them.
      const run = await fetch(`${server.url}/v1/runs?wait_for_completion=30`, {
        method: "POST",
        headers: { authorization: `Bearer ${DEMO_KEY}`, "content-type": "application/json" },
        body: JSON.stringify({ target: "workflows.hello", input: { name: "again" } }),
      });
      expect(run.status).toBe(200);
      expect(((await run.json()) as { execution: { status: string } }).execution.status).toBe("completed");
      expect(server.output().split("\n").filter((l) => / (warn|error) /.test(l)).length).toBeLessThan(20);
    } finally {
      expect(await server.kill("SIGTERM")).toBe(0);
      await pg.stop();
    }
  }, 120_000);
});
