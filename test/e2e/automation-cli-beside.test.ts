// Admin commands beside a busy server on the same SQLite data dir (issue 36.1): 20 `keys create` while
// 30 clients submit runs of workflows.invoice-summary. Every command succeeds, and every completed run
// has every step completed in its journal (a step record refused by a locked database was lost before,
// while its run went on to complete).
import { afterAll, beforeAll, expect, setDefaultTimeout, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { automationSql, ensureBuilt, startServer, type Server } from "./support";

setDefaultTimeout(180_000);

const KEY = "eak_demo_0123456789abcdefghijklmnopqrstuv";
let dir = "";
let bin = "";
let server: Server | undefined;

beforeAll(async () => {
  bin = await ensureBuilt("automation-server");
  dir = mkdtempSync(join(tmpdir(), "automation-cli-beside-"));
  // SQLite only: the defect is two processes sharing one SQLite file.
  server = await startServer([bin, "--demo", "--host", "127.0.0.1", "--data-dir", join(dir, "data")], { sqlite: true });
});

afterAll(async () => {
  await server?.kill();
  rmSync(dir, { recursive: true, force: true });
});

test("20 admin writes beside 30 submitting clients: every command succeeds, every completed run has its whole journal", async () => {
  const s = server!;
  const headers = { authorization: `Bearer ${KEY}`, "content-type": "application/json" };
  const ids: string[] = [];
  const refused: number[] = [];
  let stop = false;
  const client = async () => {
    // Each client waits for its run (as the SDKs' run-and-wait does), so the queue stays as deep as the clients.
    while (!stop) {
      const r = await fetch(`${s.url}/v1/runs?wait_for_completion=30`, {
        method: "POST",
        headers,
        body: JSON.stringify({ target: "workflows.invoice-summary", input: { invoice: { lines: [{ amount: 800 }, { amount: 700 }] } } }),
      });
      const body = (await r.json()) as { id?: string };
      if (r.status === 202 || r.status === 200 || r.status === 201) ids.push(body.id!);
      else refused.push(r.status);
    }
  };
  const clients = Array.from({ length: 30 }, client);
  const cli: { code: number | null; err: string }[] = [];
  for (let i = 0; i < 20; i++) {
    await Bun.sleep(150);
    const p = Bun.spawn([bin, "keys", "create", "--tenant", "demo", "--name", `beside-${i}`, "--data-dir", join(dir, "data")], { stdout: "pipe", stderr: "pipe" });
    cli.push({ code: await p.exited, err: await new Response(p.stderr).text() });
  }
  stop = true;
  await Promise.all(clients);
  expect(cli.filter((c) => c.code !== 0)).toEqual([]);
  expect(refused).toEqual([]);
  expect(ids.length).toBeGreaterThan(100);

  // Every run ends (waited for through the API), then each completed one has both top-level steps
  // completed in its journal: checked over every run in the database, and over HTTP for a sample.
  const get = async (path: string) => (await (await fetch(`${s.url}${path}`, { headers })).json()) as Record<string, any>;
  for (const id of ids.slice(-20)) await get(`/v1/runs/${id}?wait_for_completion=30`);
  const count = async (where: string) =>
    (await automationSql<{ n: number }>(join(dir, "data"), `SELECT CAST(COUNT(*) AS INTEGER) AS n FROM runs WHERE ${where}`))[0].n;
  for (let i = 0; i < 300 && (await count("status NOT IN ('completed', 'failed', 'cancelled')")) > 0; i++) await Bun.sleep(100);
  expect(await count("status = 'completed'")).toBe(ids.length);
  const broken = await automationSql(
    join(dir, "data"),
    `SELECT r.id, (SELECT group_concat(path || ':' || status) FROM run_steps s WHERE s.run_id = r.id) AS steps FROM runs r
     WHERE r.status = 'completed' AND (SELECT COUNT(*) FROM run_steps s WHERE s.run_id = r.id AND s.path IN ('total', 'big') AND s.status = 'completed') <> 2 LIMIT 5`,
  );
  expect(broken).toEqual([]);
  for (const id of ids.filter((_, i) => i % Math.ceil(ids.length / 25) === 0)) {
    const steps = (await get(`/v1/runs/${id}/steps`)).steps as { path: string; status: string }[];
    expect(Object.fromEntries(steps.filter((x) => !x.path.includes(".")).map((x) => [x.path, x.status]))).toEqual({ total: "completed", big: "completed" });
  }
  expect(s.output()).not.toContain("database is locked");
  // The keys the commands made are there.
  expect(await automationSql(join(dir, "data"), "SELECT name FROM api_keys WHERE name LIKE 'beside-%'")).toHaveLength(20);
});
