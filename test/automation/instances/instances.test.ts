// Several automation-server instances on one PostgreSQL (issue 24): two (or three) contexts over one
// database, each with its own pool and its own data dir, as separate server processes would hold,
// sharing only the blob directory. Every promise checked here is decided in the database, so a request
// answered by one instance holds on the other: key material (signed links, sealed passwords), the
// per-key rate limit, idempotency keys, agent sync.
import { afterAll, describe, expect, test } from "bun:test";
import { existsSync, mkdtempSync, mkdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { DEMO_AGENT, seedDemoAgent } from "../../../src/automation/agents/demo";
import { addAgent, agentDeps } from "../../../src/automation/agents/service";
import { buildApp } from "../../../src/automation/app";
import type { AutomationContext } from "../../../src/automation/context";
import type { AutomationConfig } from "../../../src/automation/config";
import { createBlobStore } from "../../../src/automation/blobs/fs-blobs";
import { fingerprint } from "../../../src/automation/key-material";
import { createContext } from "../../../src/automation/server";
import { createAutomation } from "../../../src/automation/automations/service";
import { runsOf } from "../../../src/automation/runs/service";
import { createTenant } from "../../../src/automation/tenancy/service";
import { ManualClock } from "../../../src/kernel/clock";
import { createLogger, type Logger } from "../../../src/kernel/logger";
import { freshPostgresDb } from "../../support/postgres";
import { testConfig } from "../app/config";
import { json } from "../app/harness";
import { manifest, testRepo } from "../agents/git-repo";
import { INVOICE_CHECK } from "../human-review/support";

const opened: AutomationContext[] = [];
const dirs: string[] = [];
const working: AutomationContext[] = [];
afterAll(async () => {
  await Promise.all(working.map((c) => runsOf(c).stopWorkers()));
  await Promise.all(opened.map((c) => c.db.close().catch(() => {})));
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

interface Instance {
  ctx: AutomationContext;
  dataDir: string;
  req(method: string, path: string, opts?: { key?: string; body?: unknown }): Promise<Response>;
}

/** A deployment: one fresh database, a shared blob directory, a clock; `start` opens one more instance. */
async function deployment() {
  const url = await freshPostgresDb();
  const root = mkdtempSync(join(tmpdir(), "instances-"));
  dirs.push(root);
  const blobs = createBlobStore(join(root, "blobs"));
  const clock = new ManualClock();
  let n = 0;
  const start = async (over: Partial<AutomationConfig> = {}, log: Logger = createLogger("silent")): Promise<Instance> => {
    const dataDir = join(root, `instance-${++n}`);
    // No signing secret given: each instance would otherwise make its own.
    const ctx = await createContext(testConfig({ dataDir, db: url, dbPool: 3, dbIdleTimeout: 1, signingSecret: "", ...over }), { clock, log, blobs });
    opened.push(ctx);
    const app = buildApp(ctx);
    return {
      ctx,
      dataDir,
      req: (method, path, opts = {}) =>
        app.handle(
          new Request(`http://localhost${path}`, {
            method,
            headers: { ...(opts.key ? { authorization: `Bearer ${opts.key}` } : {}), ...(opts.body !== undefined ? { "content-type": "application/json" } : {}) },
            body: opts.body === undefined ? undefined : JSON.stringify(opts.body),
          }),
        ),
    };
  };
  return { url, root, clock, start };
}

const FLOW = "name: flow\nsteps:\n  - {name: a, type: transform.set, with: {fields: {a: 1}}}\n";

/** A logger that keeps its warnings. */
function recording(): Logger & { warnings: string[] } {
  const warnings: string[] = [];
  const base = createLogger("silent");
  return { ...base, warn: (msg: string) => void warnings.push(msg), child: () => base, warnings };
}

describe("instances on one PostgreSQL share what the database decides", () => {
  test("key material: one signing secret and one sealing key, no key file in any data dir; a ZIP link made on A downloads from B; a password sealed on A opens on B", async () => {
    const d = await deployment();
    const [a, b] = await Promise.all([d.start(), d.start()]);
    expect(a.ctx.config.signingSecret.length).toBeGreaterThanOrEqual(32);
    expect(b.ctx.config.signingSecret).toBe(a.ctx.config.signingSecret);
    expect(b.ctx.config.secretKey).toBe(a.ctx.config.secretKey!);
    for (const i of [a, b]) for (const f of ["signing-secret", "secret-key"]) expect(existsSync(join(i.dataDir, f))).toBe(false);

    const t = await createTenant(a.ctx.storage.tenancy, d.clock, { name: "acme", slug: "acme" });
    expect((await a.req("POST", "/v1/automations", { key: t.key, body: { yaml: FLOW } })).status).toBe(201);
    const run = await json(await a.req("POST", "/v1/runs", { key: t.key, body: { target: "workflows.flow", input: {} } }));
    expect(run.finished).toBe(false);
    const link = await json(await a.req("POST", `/v1/runs/${run.id}/artifacts/token`, { key: t.key, body: {} }));
    const path = `/v1/runs/${run.id}/artifacts?zip=1&token=${link.token}`;
    const onB = await b.req("GET", path);
    expect(onB.status).toBe(200);
    expect(onB.headers.get("content-type")).toContain("zip");
    // An instance holding a secret of its own refuses the same link: the sharing is what makes it pass.
    const own = await d.start({ signingSecret: "another-signing-secret-another-signing-secret" });
    expect((await own.req("GET", path)).status).toBe(401);

    const server = { name: "relay", transport: "smtp", host: "mail.example.com", security: "starttls", username: "u", password: "p4ssw0rd", fromEmail: "a@example.com" };
    const created = await json(await a.req("POST", "/v1/email-servers", { key: t.key, body: server }));
    // Keeping the stored password opens it: 409 secret_unreadable under another key.
    const patched = await b.req("PATCH", `/v1/email-servers/${created.id}`, { key: t.key, body: { transport: "smtp", host: "mail.example.com", port: 2525, security: "starttls", username: "u" } });
    expect(patched.status).toBe(200);
    expect(await json(patched)).toMatchObject({ port: 2525, passwordConfigured: true });
  }, 60_000);

  test("a deployment moved from SQLite: the first instance offers its data dir's key files, and every instance gets them", async () => {
    const d = await deployment();
    const first = join(d.root, "instance-1");
    mkdirSync(first, { recursive: true });
    writeFileSync(join(first, "signing-secret"), `${"s".repeat(43)}\n`);
    writeFileSync(join(first, "secret-key"), `${"k".repeat(43)}\n`);
    const a = await d.start();
    const b = await d.start();
    expect([a.ctx.config.signingSecret, b.ctx.config.signingSecret]).toEqual(["s".repeat(43), "s".repeat(43)]);
    expect([a.ctx.config.secretKey, b.ctx.config.secretKey]).toEqual(["k".repeat(43), "k".repeat(43)]);
  }, 60_000);

  test("an operator's key: only its fingerprint is stored; an instance given none is refused, one given another is warned about", async () => {
    const d = await deployment();
    const key = "operator-key-material-operator-key-material-1";
    const a = await d.start({ secretKey: key });
    expect(a.ctx.config.secretKey).toBe(key);
    const rows = await a.ctx.db.pg!`SELECT name, value, fingerprint FROM shared_secrets WHERE name = 'secret-key'`;
    expect(rows.map((r: Record<string, unknown>) => ({ ...r }))).toEqual([{ name: "secret-key", value: null, fingerprint: fingerprint(key) }]);
    expect(await d.start({ secretKey: key })).toBeDefined();
    await expect(d.start()).rejects.toThrow("sealed with a key the operator gives (--secret-key-file or AUTOMATION_SECRET_KEY) on its other instances");
    const log = recording();
    const other = await d.start({ secretKey: "another-operator-key-another-operator-key-22" }, log);
    expect(other.ctx.config.secretKey).toBe("another-operator-key-another-operator-key-22");
    expect(log.warnings.join("\n")).toContain("differs from the one the database's secrets were first sealed with");
  }, 60_000);

  test("rate limit: a key's budget is one across instances (2/s: A, B pass, then A and B get 429 with Retry-After)", async () => {
    const d = await deployment();
    const [a, b] = await Promise.all([d.start({ rateLimit: 2 }), d.start({ rateLimit: 2 })]);
    const t = await createTenant(a.ctx.storage.tenancy, d.clock, { name: "acme", slug: "acme" });
    const check = async (i: Instance) => {
      const r = await i.req("GET", "/v1/auth/check", { key: t.key });
      return r.status === 429 ? `429 retry ${r.headers.get("retry-after")}` : String(r.status);
    };
    expect([await check(a), await check(b), await check(a), await check(b)]).toEqual(["200", "200", "429 retry 1", "429 retry 1"]);
    d.clock.advance(500);
    expect([await check(b), await check(a)]).toEqual(["200", "429 retry 1"]);
  }, 60_000);

  test("idempotency key: the same upload created on A and B at once is one session, answered to both", async () => {
    const d = await deployment();
    const [a, b] = await Promise.all([d.start(), d.start()]);
    const t = await createTenant(a.ctx.storage.tenancy, d.clock, { name: "acme", slug: "acme" });
    const body = { filename: "a.txt", size: 5, idempotencyKey: "upload-1" };
    const answers = await Promise.all([a, b, a, b].map((i) => i.req("POST", "/v1/files/uploads", { key: t.key, body })));
    const ids = await Promise.all(answers.map(async (r) => (await json(r)).id));
    expect(answers.every((r) => r.status === 200 || r.status === 201)).toBe(true);
    expect(new Set(ids).size).toBe(1);
  }, 60_000);

  test("agent sync: syncs racing on A and B apply once (each version listed once); each instance mirrors into its own data dir", async () => {
    const d = await deployment();
    const [a, b] = await Promise.all([d.start(), d.start()]);
    const t = await createTenant(a.ctx.storage.tenancy, d.clock, { name: "acme", slug: "acme" });
    const repo = testRepo("helper");
    repo.commit({ "agent.yaml": manifest({ name: "Helper" }) });
    repo.tag("v1.0.0");
    const added = await addAgent(agentDeps(a.ctx), t.id, { repo: `file://${repo.dir}`, slug: "helper" });
    expect(existsSync(join(a.dataDir, "agents", `${added.agent.id}.git`))).toBe(true);
    repo.commit({ "agent.yaml": manifest({ name: "Helper 2" }) });
    repo.tag("v2.0.0");
    const syncs = await Promise.all([a, b, a, b].map((i) => i.req("POST", "/v1/automations/agents.helper/sync", { key: t.key })));
    expect(syncs.map((r) => r.status)).toEqual([200, 200, 200, 200]);
    for (const r of syncs) expect((await json(r)).release.tag).toBe("v2.0.0");
    const versions = (await json(await b.req("GET", "/v1/automations/agents.helper/versions", { key: t.key }))).data as { version: string; isCurrent: boolean }[];
    expect(versions.map((v) => `${v.version}${v.isCurrent ? "*" : ""}`)).toEqual(["2.0.0*", "1.0.0"]);
    expect(existsSync(join(b.dataDir, "agents", `${added.agent.id}.git`))).toBe(true);
  }, 60_000);
  test("the demo agent: instances started together with --demo register it once, and every one of them offers it (own or shared data dir)", async () => {
    for (const shared of [false, true]) {
      const d = await deployment();
      const log = recording();
      const a = await d.start({}, log);
      const b = await d.start(shared ? { dataDir: a.dataDir } : {}, log);
      const t = await createTenant(a.ctx.storage.tenancy, d.clock, { name: "demo", slug: "demo" });
      const seeded = await Promise.all([a, b].map((i) => seedDemoAgent(i.ctx, t.id)));
      expect(seeded).toEqual([{ agent: `agents.${DEMO_AGENT}` }, { agent: `agents.${DEMO_AGENT}` }]);
      expect(log.warnings).toEqual([]);
      const list = await json(await b.req("GET", "/v1/automations?type=agent", { key: t.key }));
      expect(list.data.map((x: { slug: string }) => x.slug)).toEqual([DEMO_AGENT]);
      const versions = (await json(await a.req("GET", `/v1/automations/agents.${DEMO_AGENT}/versions`, { key: t.key }))).data as { version: string }[];
      expect(versions.map((v) => v.version)).toEqual(["1.1.0", "1.0.0"]);
    }
  }, 60_000);

  test("run starts: B answers them from its memory of the automation, yet a version pushed on A is the one B's next run runs (or refuses with)", async () => {
    const d = await deployment();
    const [a, b] = await Promise.all([d.start(), d.start()]);
    runsOf(b.ctx).startWorkers();
    working.push(b.ctx);
    const t = await createTenant(a.ctx.storage.tenancy, d.clock, { name: "acme", slug: "acme" });
    const flow = (value: number, extra = "") => `name: flow\n${extra}steps:\n  - {name: a, type: transform.set, with: {fields: {a: ${value}}}}\n`;
    let pushed = 0;
    const deploy = async (yaml: string) => {
      const r = pushed++ === 0 ? await a.req("POST", "/v1/automations", { key: t.key, body: { yaml } }) : await a.req("POST", "/v1/automations/workflows.flow/versions", { key: t.key, body: { yaml, version: `1.0.${pushed}` } });
      expect(r.status).toBe(201);
    };
    const run = (input = {}) => b.req("POST", "/v1/runs?wait_for_completion=10", { key: t.key, body: { target: "workflows.flow", input } });
    await deploy(flow(1));
    const first = await json(await run());
    expect(first.output).toEqual({ a: { a: 1 } });
    // B remembers what it read: a second start there asks the database nothing before its insert.
    const again = await b.ctx.storage.automations.findWithCurrent(t.id, "workflows.flow", { mayRemember: true });
    expect(again?.remembered).toBe(true);
    // A pushes version 2: B's memory is stale, its insert finds out, reads again and runs version 2.
    await deploy(flow(2));
    const second = await json(await run());
    expect(second.output).toEqual({ a: { a: 2 } });
    expect((await json(await b.req("GET", `/v1/runs/${second.id}/events`, { key: t.key }))).events.filter((e: { type: string }) => e.type === "created")).toHaveLength(1);
    // Version 3 turns the API trigger off: B refuses as the database now says, not as it remembered.
    await deploy(flow(3, "triggerMethods: [{type: manual}]\n"));
    const refused = await run();
    expect(refused.status).toBe(403);
    expect((await json(refused)).issues[0].code).toBe("api_trigger_disabled");
    // And version 4 turns it back on: B's remembered refusal does not stick either.
    await deploy(flow(4));
    expect((await json(await run())).output).toEqual({ a: { a: 4 } });
    const ids = new Set((await json(await b.req("GET", "/v1/runs?source=workflows.flow&limit=50", { key: t.key }))).runs.map((r: { id: string }) => r.id));
    expect(ids.size).toBe(3);
  }, 60_000);

  test("human review: the same idempotency key on A and B at once is one change answered twice; racing approvals: one wins, the other 409; the run resumes once", async () => {
    const d = await deployment();
    // Only A works runs: B is an API instance (`--workers 0`).
    const [a, b] = await Promise.all([d.start(), d.start()]);
    runsOf(a.ctx).startWorkers();
    working.push(a.ctx);
    const t = await createTenant(a.ctx.storage.tenancy, d.clock, { name: "acme", slug: "acme" });
    await createAutomation(a.ctx.storage.automations, d.clock, t.id, INVOICE_CHECK);
    // Submitted on B: its runs.queued notification wakes A's workers.
    const started = await json(await b.req("POST", "/v1/runs", { key: t.key, body: { target: "workflows.invoice-check", input: { vendor: "ACME", total: 99.5 } } }));
    let status = "";
    for (let i = 0; i < 2000 && status !== "waiting"; i++, await Bun.sleep(5)) status = (await json(await b.req("GET", `/v1/runs/${started.id}`, { key: t.key }))).execution.status;
    expect(status).toBe("waiting");
    const task = (await json(await b.req("GET", "/v1/human-reviews", { key: t.key }))).tasks.find((x: { executionId: string }) => x.executionId === started.id);
    const base = `/v1/human-reviews/${task.id}`;
    const change = { path: "/total", value: 120, expectedVersion: 1, idempotencyKey: "fix-total" };
    const twice = await Promise.all([a, b].map((i) => i.req("PUT", `${base}/fields`, { key: t.key, body: change })));
    expect(twice.map((r) => r.status)).toEqual([200, 200]);
    const bodies = await Promise.all(twice.map((r) => json(r)));
    expect(bodies.map((x) => x.version)).toEqual([2, 2]);
    expect(bodies[1]).toEqual(bodies[0]);
    expect((await json(await a.req("PUT", `${base}/fields`, { key: t.key, body: { path: "/lines/0/qty", value: 3, expectedVersion: 2, idempotencyKey: "fix-qty" } }))).version).toBe(3);
    const approvals = await Promise.all([a, b].map((i) => i.req("POST", `${base}/approve`, { key: t.key, body: { expectedVersion: 3 } })));
    expect(approvals.map((r) => r.status).sort()).toEqual([200, 409]);
    // Whichever approval won, its runs.queued notification wakes A's workers.
    for (let i = 0; i < 2000 && status !== "completed"; i++, await Bun.sleep(5)) status = (await json(await b.req("GET", `/v1/runs/${started.id}`, { key: t.key }))).execution.status;
    expect(status).toBe("completed");
    const events = (await json(await b.req("GET", `/v1/runs/${started.id}/events`, { key: t.key }))).events.map((e: { type: string }) => e.type);
    expect(events.filter((e: string) => e === "resumed")).toHaveLength(1);
  }, 60_000);
});
