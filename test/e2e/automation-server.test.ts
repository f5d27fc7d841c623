// The compiled automation-server copied alone into an empty directory, started with --demo.
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { copyFileSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { AutomationClient, RateLimitError } from "../../src/automation/client";
import { automationPgUrl, automationSql, ensureBuilt, startServer, type Server } from "./support";

// Spawning compiled binaries is slow on a loaded machine; timing never decides these tests.
setDefaultTimeout(60_000);

const DEMO_KEY = "eak_demo_0123456789abcdefghijklmnopqrstuv";
let dir = "";
let bin = "";
/** The running server's port: each start gets a new one from the kernel (`--port 0`). */
let port = 0;
let server: Server | undefined;
const base = () => `http://127.0.0.1:${port}`;

async function boot(): Promise<Server> {
  const p = await startServer([bin, "--demo", "--host", "127.0.0.1", "--workers", "1"], { cwd: dir, env: { AUTOMATION_DATA_DIR: undefined } });
  port = p.port;
  return p;
}

const api = (method: string, path: string, body?: unknown, key = DEMO_KEY) =>
  fetch(`${base()}${path}`, {
    method,
    headers: { authorization: `Bearer ${key}`, ...(body === undefined ? {} : { "content-type": "application/json" }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });

beforeAll(async () => {
  const built = await ensureBuilt("automation-server");
  dir = mkdtempSync(join(tmpdir(), "automation-e2e-"));
  bin = join(dir, "automation-server");
  copyFileSync(built, bin);
  Bun.spawnSync(["chmod", "+x", bin]);
  server = await boot();
});

afterAll(async () => {
  if (server && server.proc.exitCode === null) await server.kill("SIGKILL");
  rmSync(dir, { recursive: true, force: true });
});

describe("compiled automation-server --demo in an empty directory", () => {
  test("prints how to reach it and the demo key; data dir defaults to ./data/automation", async () => {
    expect(readdirSync(dir).sort()).toEqual(["automation-server", "data"]);
    // The database: the SQLite file there, or (the PostgreSQL pass) the one --db names, said on startup.
    const pg = automationPgUrl(join(dir, "data/automation"));
    expect(existsSync(join(dir, "data/automation/automation.db"))).toBe(!pg);
    // The address line comes first (the server is reachable then); the lines after it may still be on their way.
    const dbLine = pg ? "database on PostgreSQL postgres://" : `database on SQLite ${join(dir, "data/automation/automation.db")}`;
    const until = Date.now() + 5000;
    while (!(server!.output().includes(DEMO_KEY) && server!.output().includes(dbLine)) && Date.now() < until) await Bun.sleep(20);
    expect(server!.output()).toContain(dbLine);
    // The signing secret: a file of the data dir on SQLite; on PostgreSQL the database keeps it for every instance.
    const secret = join(dir, "data/automation/signing-secret");
    if (pg) {
      expect(existsSync(secret)).toBe(false);
      expect((await automationSql<{ n: number }>(join(dir, "data/automation"), "SELECT CAST(COUNT(*) AS INTEGER) AS n FROM shared_secrets WHERE name = ?", "signing-secret"))[0].n).toBe(1);
    } else expect(statSync(secret).mode & 0o777).toBe(0o600);
    expect(server!.output()).toContain(`http://127.0.0.1:${port}`);
    expect(server!.output()).toContain(DEMO_KEY);
  });

  test("demo key works; example workflows are listed", async () => {
    const check = await (await api("GET", "/v1/auth/check")).json() as Record<string, unknown>;
    expect(check).toMatchObject({ ok: true, tenantSlug: "demo", wildcardGranted: true });
    const list = await (await api("GET", "/api/v1/automations")).json() as { data: { slug: string }[]; total: number };
    expect(list.data.map((a) => a.slug).sort()).toEqual(expect.arrayContaining(["hello", "invoice-summary"]));
  });

  test("automation and versions through HTTP; error envelopes with x-request-id", async () => {
    const yaml = "name: e2e-flow\nversion: 1.0.0\nsteps:\n  - name: s\n    type: transform.set\n    with: {fields: {a: 1}}\n";
    const created = await api("POST", "/v1/automations", { yaml });
    expect(created.status).toBe(201);
    const a = await created.json() as { id: string };
    const v2 = await api("POST", `/v1/automations/${a.id}/versions`, { yaml, version: "1.1.0" });
    expect(v2.status).toBe(201);
    const dup = await api("POST", `/v1/automations/${a.id}/versions`, { yaml, version: "1.1.0" });
    expect(dup.status).toBe(409);
    const env = await dup.json() as { issues: { code: string }[]; requestId: string };
    expect(env.requestId).toBe(dup.headers.get("x-request-id")!);
    expect(env.issues[0].code).toBe("duplicate_version");
    const missing = await fetch(`${base()}/v1/nothing-here`);
    expect(missing.status).toBe(404);
    expect(((await missing.json()) as { issues: unknown[] }).issues).toHaveLength(1);
    const bad = await fetch(`${base()}/v1/automations`, { method: "POST", headers: { authorization: `Bearer ${DEMO_KEY}`, "content-type": "application/json" }, body: "{nope" });
    expect(bad.status).toBe(400);
  });

  test("a 2 MiB YAML over the wire → 413 envelope; long query values → 400 envelope", async () => {
    const r = await api("POST", "/v1/automations", { yaml: `name: big\n# ${"x".repeat(2 * 1024 * 1024)}\n` });
    expect(r.status).toBe(413);
    expect(((await r.json()) as { issues: { severity: string }[] }).issues[0].severity).toBe("error");
    const q = await api("GET", `/v1/automations?limit=${"9".repeat(8000)}`);
    expect(q.status).toBe(400);
    expect(((await q.json()) as { issues: { field: string }[] }).issues[0].field).toBe("limit");
  });

  test("without --public-url, an upload session's signed URL points at the address the client used, and works", async () => {
    const r = await api("POST", "/v1/files/uploads", { filename: "x.bin", size: 5 * 1024 * 1024 });
    const n = await r.json() as { url: string; uploadId: string; fileId: string };
    expect(new URL(n.url).origin).toBe(base());
    const bytes = new Uint8Array(5 * 1024 * 1024).map((_, i) => (i * 7) & 255);
    expect((await fetch(n.url, { method: "PUT", body: bytes })).status).toBe(200);
    expect((await api("POST", `/v1/files/uploads/${n.uploadId}/complete`)).status).toBe(200);
    const back = new Uint8Array(await (await api("GET", `/v1/files/${n.fileId}/content`)).arrayBuffer());
    expect(Bun.hash(back)).toBe(Bun.hash(bytes));
  });

  test("OpenAPI JSON of our own server", async () => {
    const r = await fetch(`${base()}/openapi/json`);
    expect(r.status).toBe(200);
    const doc = await r.json() as { openapi: string; paths: Record<string, unknown> };
    expect(doc.openapi).toMatch(/^3\./);
    for (const p of ["/v1/automations", "/api/v1/automations/{id}/versions", "/v1/auth/check", "/health"]) expect(Object.keys(doc.paths)).toContain(p);
  });

  test("SIGTERM stops gracefully; a restart keeps the data and the demo stays idempotent", async () => {
    const before = ((await (await api("GET", "/v1/automations")).json()) as { total: number }).total;
    const dataDir = join(dir, "data/automation");
    const secretFile = join(dataDir, "signing-secret");
    const readSecret = async () =>
      automationPgUrl(dataDir) ? (await automationSql<{ value: string }>(dataDir, "SELECT value FROM shared_secrets WHERE name = ?", "signing-secret"))[0].value : readFileSync(secretFile, "utf8");
    const secret = await readSecret();
    expect(secret.trim().length).toBeGreaterThanOrEqual(43);
    const code = await server!.kill("SIGTERM");
    expect(code).toBe(0);
    server = await boot();
    const list = await (await api("GET", "/v1/automations?search=e2e")).json() as { data: { slug: string; version: string }[] };
    expect(list.data.map((a) => [a.slug, a.version])).toEqual([["e2e-flow", "1.1.0"]]);
    const all = await (await api("GET", "/v1/automations")).json() as { total: number };
    expect(all.total).toBe(before);
    // The signing secret is generated once and kept across restarts.
    expect(await readSecret()).toBe(secret);
  });

  test("--rate-limit: over the budget → 429 with Retry-After, which the client library surfaces; a bad value is one line, exit 2", async () => {
    // 0.001/s: one request passes (the burst is at least 1), the next waits 1000 s, whatever the machine's speed.
    const p = await startServer([bin, "--demo", "--host", "127.0.0.1", "--workers", "1", "--data-dir", join(dir, "limited"), "--rate-limit", "0.001"], { cwd: dir });
    try {
      const client = new AutomationClient({ baseUrl: p.url, apiKey: DEMO_KEY, maxRetries: 0 });
      expect((await client.authCheck()).tenantSlug).toBe("demo");
      const err = await client.automations.list().catch((e: unknown) => e);
      expect(err).toBeInstanceOf(RateLimitError);
      expect((err as RateLimitError).status).toBe(429);
      expect((err as RateLimitError).retryAfter).toBe(1000);
      expect((err as RateLimitError).requestId).toMatch(/^req_/);
    } finally {
      await p.kill("SIGTERM");
    }
    const bad = Bun.spawnSync([bin, "--rate-limit", "-1", "--data-dir", join(dir, "limited")], { cwd: dir, stdout: "pipe", stderr: "pipe" });
    expect(bad.exitCode).toBe(2);
    expect(bad.stderr.toString()).toContain("--rate-limit must be 0-1000000 (got -1)");
  });

  test("port in use: one clear line, exit 1", async () => {
    // The port our own running server holds: known to be taken, by us.
    const p = Bun.spawnSync([bin, "--port", String(port), "--host", "127.0.0.1", "--data-dir", join(dir, "other")], { cwd: dir, stdout: "pipe", stderr: "pipe" });
    expect(p.exitCode).toBe(1);
    expect(p.stderr.toString()).toContain(`port ${port} is already in use`);
    expect(p.stderr.toString()).not.toMatch(/\n\s+at /);
  });
});
