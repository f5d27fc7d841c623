// People on the compiled automation-server (issue 37, part 1): a fresh data dir prints a one-time setup
// link; it makes the owner; the owner's CLI invites a reviewer; the reviewer signs in with a password
// (cookie flags checked), reads runs, is refused a version; a cross-origin POST with a cookie is
// refused; disabling the reviewer (CLI, another process) makes their next request 401.
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { automationPgUrl, ensureBuilt, startServer, type Server } from "./support";
import { INVOICE_REVIEW_YAML } from "./invoice-review";

setDefaultTimeout(120_000);

let bin = "";
let dir = "";
let data = "";
let server: Server;

beforeAll(async () => {
  bin = await ensureBuilt("automation-server");
  dir = mkdtempSync(join(tmpdir(), "automation-people-"));
  data = join(dir, "data");
  server = await startServer([bin, "--data-dir", data, "--workers", "1"]);
});
afterAll(async () => {
  await server?.kill();
  rmSync(dir, { recursive: true, force: true });
});

/** An admin subcommand on the server's database (its PostgreSQL one in the suite's PostgreSQL pass). */
function cli(...args: string[]) {
  const pg = automationPgUrl(data);
  const p = Bun.spawnSync([bin, ...args, "--data-dir", data, ...(pg ? ["--db", pg] : [])], { cwd: dir, stdin: "ignore", stdout: "pipe", stderr: "pipe" });
  return { code: p.exitCode, out: p.stdout.toString(), err: p.stderr.toString() };
}

const PASSWORD = "a long enough passphrase 42";

async function signIn(email: string): Promise<{ cookie: string; set: string }> {
  const r = await fetch(`${server.url}/v1/auth/sessions`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ email, password: PASSWORD }) });
  expect(r.status).toBe(201);
  const set = r.headers.get("set-cookie")!;
  return { cookie: set.split(";")[0]!, set };
}

describe("people on the compiled binary", () => {
  test("setup link → owner; CLI invite → reviewer; cookie sessions, roles, CSRF and disabling", async () => {
    // The banner names the setup link; only the token is taken from it (the host is the one we reach).
    const m = /first owner: open \S+?(\/v1\/auth\/setup\?token=([A-Za-z0-9_-]+))/.exec(server.output());
    expect(m).not.toBeNull();
    const token = m![2]!;
    const page = await fetch(`${server.url}${m![1]}`);
    expect(page.status).toBe(200);
    expect(page.headers.get("content-security-policy")).toContain("default-src 'none'");
    const setup = await fetch(`${server.url}/v1/auth/setup`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ token, email: "owner@example.com", name: "Olive", password: PASSWORD, tenantName: "acme" }),
    });
    expect(setup.status).toBe(201);
    expect(await setup.json()).toMatchObject({ role: "owner", tenant: { slug: "acme" } });
    const reuse = await fetch(`${server.url}/v1/auth/setup`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ token, email: "eve@example.com", name: "Eve", password: PASSWORD }),
    });
    expect(reuse.status).toBe(409);

    const owner = await signIn("owner@example.com");
    const yaml = "name: hello\nsteps:\n  - {name: s, type: transform.set, with: {fields: {x: 1}}}\n";
    const created = await fetch(`${server.url}/v1/automations`, {
      method: "POST",
      headers: { "content-type": "application/json", cookie: owner.cookie, origin: server.url },
      body: JSON.stringify({ yaml }),
    });
    expect(created.status).toBe(201);
    const automation = (await created.json()) as { id: string };

    // A cross-origin POST carrying the owner's cookie changes nothing.
    const evil = await fetch(`${server.url}/v1/automations`, {
      method: "POST",
      headers: { "content-type": "application/json", cookie: owner.cookie, origin: "https://evil.example" },
      body: JSON.stringify({ yaml: yaml.replace("hello", "evil") }),
    });
    expect(evil.status).toBe(403);
    expect(((await evil.json()) as { issues: { code: string }[] }).issues[0]!.code).toBe("csrf_refused");
    const list = (await (await fetch(`${server.url}/v1/automations`, { headers: { cookie: owner.cookie } })).json()) as { total: number };
    expect(list.total).toBe(1);

    const inv = cli("users", "invite", "rita@example.com", "--role", "reviewer", "--tenant", "acme", "--json");
    expect(inv.err).toBe("");
    expect(inv.code).toBe(0);
    const invitation = JSON.parse(inv.out) as { token: string; link: string; expiresAt: string };
    expect(invitation.link).toContain("/v1/auth/invitations/accept?token=");
    const accepted = await fetch(`${server.url}/v1/auth/invitations/accept`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ token: invitation.token, name: "Rita", password: PASSWORD }),
    });
    expect(accepted.status).toBe(201);

    const rita = await signIn("rita@example.com");
    expect(rita.set).toMatch(/^automation_session=[A-Za-z0-9_-]{43}; /);
    for (const flag of ["HttpOnly", "SameSite=Lax", "Path=/"]) expect(rita.set).toContain(flag);
    expect(rita.set).not.toContain("Secure");

    expect((await fetch(`${server.url}/v1/runs`, { headers: { cookie: rita.cookie } })).status).toBe(200);
    const version = await fetch(`${server.url}/v1/automations/${automation.id}/versions`, {
      method: "POST",
      headers: { "content-type": "application/json", cookie: rita.cookie, origin: server.url },
      body: JSON.stringify({ yaml, version: "2.0.0" }),
    });
    expect(version.status).toBe(403);
    expect(((await version.json()) as { issues: { code: string }[] }).issues[0]!.code).toBe("insufficient_scope");
    const check = (await (await fetch(`${server.url}/v1/auth/check`, { headers: { cookie: rita.cookie } })).json()) as Record<string, unknown>;
    expect(check).toMatchObject({ email: "rita@example.com", tenantSlug: "acme", wildcardGranted: false });

    const disabled = cli("users", "disable", "rita@example.com", "--json");
    expect(disabled.code).toBe(0);
    const after = await fetch(`${server.url}/v1/runs`, { headers: { cookie: rita.cookie } });
    expect(after.status).toBe(401);
    expect(((await after.json()) as { issues: unknown[] }).issues).toHaveLength(1);

    // Nothing secret reached the server's own output: no password, no cookie value.
    expect(server.output()).not.toContain(PASSWORD);
    expect(server.output()).not.toContain(rita.cookie.split("=")[1]!);
    expect(cli("users", "list", "--json").out).not.toContain("argon2");
  });

  test("a reviewer decides a paused run's task: the task, the run and the audit trail name her; disabling her ends her session on a second instance at its next request", async () => {
    // An owner and a reviewer in a tenant of their own (the first test made the server's first owner).
    for (const [email, role] of [["olga@example.com", "owner"], ["rhea@example.com", "reviewer"]] as const) {
      const made = Bun.spawnSync([bin, "users", "create", "--email", email, "--name", email.split("@")[0]!, "--tenant", "acme", "--role", role, "--password-stdin", "--data-dir", data, ...(automationPgUrl(data) ? ["--db", automationPgUrl(data)!] : [])], {
        stdin: Buffer.from(`${PASSWORD}\n`),
        stdout: "pipe",
        stderr: "pipe",
      });
      expect(made.stderr.toString()).toBe("");
      expect(made.exitCode).toBe(0);
    }
    const olga = await signIn("olga@example.com");
    const rhea = await signIn("rhea@example.com");
    const send = (who: { cookie: string }, method: string, path: string, body?: unknown) =>
      fetch(`${server.url}${path}`, { method, headers: { cookie: who.cookie, ...(body === undefined ? {} : { "content-type": "application/json", origin: server.url }) }, body: body === undefined ? undefined : JSON.stringify(body) });
    expect((await send(olga, "POST", "/v1/automations", { yaml: INVOICE_REVIEW_YAML })).status).toBe(201);
    const run = (await (await send(olga, "POST", "/v1/runs", { target: "workflows.invoice-check", input: { total: 99.5 } })).json()) as { id: string };
    let task: { id: string; version: number } | undefined;
    for (let i = 0; i < 500 && !task; i++) {
      const list = (await (await send(rhea, "GET", "/v1/human-reviews?limit=50")).json()) as { tasks: { id: string; executionId: string; version: number }[] };
      task = list.tasks.find((t) => t.executionId === run.id);
      if (!task) await Bun.sleep(20);
    }
    expect(task).toBeDefined();
    const set = await send(rhea, "PUT", `/v1/human-reviews/${task!.id}/fields`, { path: "/total", value: 120, expectedVersion: task!.version, idempotencyKey: "e2e-total" });
    expect(set.status).toBe(200);
    const approved = await send(rhea, "POST", `/v1/human-reviews/${task!.id}/approve`, { expectedVersion: task!.version + 1 });
    expect(approved.status).toBe(200);
    const decided = (await (await send(olga, "GET", `/v1/human-reviews/${task!.id}`)).json()) as { decision: { by: string; actor: { type: string; id: string } } };
    expect(decided.decision.by).toBe("rhea@example.com");
    expect(decided.decision.actor.type).toBe("user");
    let done: { execution: { status: string }; output: unknown; trigger: { by: { email: string } } } | undefined;
    for (let i = 0; i < 500; i++) {
      done = (await (await send(olga, "GET", `/v1/runs/${run.id}`)).json()) as typeof done;
      if (done!.execution.status === "completed") break;
      await Bun.sleep(20);
    }
    expect(done!.execution.status).toBe("completed");
    expect(done!.output).toEqual({ total: 120 });
    expect(done!.trigger.by.email).toBe("olga@example.com");
    // The run's review trail: the reviewer reviews it, named by her user id and e-mail.
    const review = (await (await send(rhea, "PUT", `/v1/runs/${run.id}/reviews`, { verdict: "correct" })).json()) as { review: { reviewedByEmail: string } };
    expect(review.review.reviewedByEmail).toBe("rhea@example.com");
    // The audit trail names her for the approval (the owner reads it; the reviewer may not).
    // Entries are written just after their answers (batched every 20 ms): asked until the approval's is there.
    type Entry = { action: string; actor: { type: string; name: string }; outcome: string };
    let approval: Entry | undefined;
    for (let i = 0; i < 250 && !approval; i++) {
      const audit = (await (await send(olga, "GET", `/v1/audit?resource=${task!.id}&limit=50`)).json()) as { data: Entry[] };
      approval = audit.data.find((e) => e.action.includes("approve"));
      if (!approval) await Bun.sleep(20);
    }
    expect(approval).toMatchObject({ actor: { type: "user", name: "rhea@example.com" }, outcome: "success" });
    expect((await send(rhea, "GET", "/v1/audit")).status).toBe(403);

    // A second instance on the same database (the data dir's SQLite file, or the same PostgreSQL).
    const second = await startServer([bin, "--data-dir", data, "--workers", automationPgUrl(data) ? "0" : "1", ...(automationPgUrl(data) ? ["--db", automationPgUrl(data)!] : [])]);
    try {
      expect((await fetch(`${second.url}/v1/runs`, { headers: { cookie: rhea.cookie } })).status).toBe(200);
      expect(cli("users", "disable", "rhea@example.com", "--json").code).toBe(0);
      for (const url of [second.url, server.url]) {
        const after = await fetch(`${url}/v1/runs`, { headers: { cookie: rhea.cookie } });
        expect(after.status).toBe(401);
      }
    } finally {
      await second.kill();
    }
  });

  test("users --help lists the subcommands", () => {
    const r = Bun.spawnSync([bin, "users", "--help"], { stdout: "pipe", stderr: "pipe" });
    expect(r.exitCode).toBe(0);
    for (const sub of ["create", "list", "disable", "set-role", "invite", "reset-link", "reset-totp"]) expect(r.stdout.toString()).toContain(`users ${sub}`);
  });
});
