// The compiled automation-server's admin subcommands against a temp data dir.
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { existsSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ensureBuilt, startServer } from "./support";

// Spawning compiled binaries is slow on a loaded machine; timing never decides these tests.
setDefaultTimeout(60_000);

let bin = "";
let dir = "";

beforeAll(async () => {
  bin = await ensureBuilt("automation-server");
  dir = mkdtempSync(join(tmpdir(), "automation-cli-"));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function run(...args: string[]) {
  const p = Bun.spawnSync([bin, ...args, "--data-dir", join(dir, "data")], { cwd: dir, stdin: "ignore", stdout: "pipe", stderr: "pipe" });
  return { code: p.exitCode, out: p.stdout.toString(), err: p.stderr.toString() };
}

describe("automation-server admin CLI", () => {
  let tenant: { id: string; slug: string; name: string; key: string };

  test("tenants create --json prints {id, slug, name, key}", () => {
    const r = run("tenants", "create", "--name", "acme", "--json");
    expect(r.err).toBe("");
    expect(r.code).toBe(0);
    tenant = JSON.parse(r.out);
    expect(Object.keys(tenant).sort()).toEqual(["id", "key", "name", "slug"]);
    expect(tenant.id).toMatch(/^ten_/);
    expect(tenant.slug).toBe("acme");
    expect(tenant.name).toBe("acme");
    expect(tenant.key.length).toBeGreaterThanOrEqual(22);
  });

  test("a second tenant with the same slug: one line, exit 1", () => {
    const r = run("tenants", "create", "--name", "acme", "--json");
    expect(r.code).toBe(1);
    expect(r.err.trim().split("\n")).toHaveLength(1);
    expect(r.err).toContain("already exists");
  });

  test("keys create / list / revoke --json", () => {
    const c = run("keys", "create", "--tenant", "acme", "--scopes", "runs:read,runs:write", "--json");
    expect(c.code).toBe(0);
    const key = JSON.parse(c.out);
    expect(Object.keys(key).sort()).toEqual(["expiresAt", "id", "key", "scopes", "tenantId"]);
    expect(key.expiresAt).toBeNull();
    expect(key).toMatchObject({ tenantId: tenant.id, scopes: ["runs:read", "runs:write"] });
    expect(key.id).toMatch(/^key_/);

    const star = JSON.parse(run("keys", "create", "--tenant", "acme", "--json").out);
    expect(star.scopes).toEqual(["*"]);

    const l = run("keys", "list", "--tenant", "acme", "--json");
    expect(l.code).toBe(0);
    const listed = JSON.parse(l.out).keys as { id: string; scopes: string[]; revokedAt: string | null }[];
    expect(listed.map((k) => k.id)).toContain(key.id);
    expect(l.out).not.toContain(key.key);

    const rv = run("keys", "revoke", key.id, "--json");
    expect(rv.code).toBe(0);
    expect(JSON.parse(rv.out)).toMatchObject({ id: key.id, revoked: true });
    const after = JSON.parse(run("keys", "list", "--tenant", "acme", "--json").out).keys as { id: string; revokedAt: string | null }[];
    expect(after.find((k) => k.id === key.id)?.revokedAt).toMatch(/Z$/);
    expect(after.find((k) => k.id === star.id)?.revokedAt).toBeNull();
  });

  test("a key revoked by the CLI is refused at once by a running server that had it in memory", async () => {
    // The server remembers key lookups while the database's data version stands (issue 42); the
    // CLI's commit moves it, so the very next request looks the key up again.
    const made = JSON.parse(run("keys", "create", "--tenant", "acme", "--scopes", "runs:read", "--json").out) as { id: string; key: string };
    const server = await startServer([bin, "--data-dir", join(dir, "data")], { sqlite: true });
    try {
      const check = () => fetch(`${server.url}/v1/auth/check`, { headers: { authorization: `Bearer ${made.key}` } }).then((r) => r.status);
      for (let i = 0; i < 20; i++) expect(await check()).toBe(200);
      expect(run("keys", "revoke", made.id, "--json").code).toBe(0);
      expect(await check()).toBe(401);
    } finally {
      await server.kill("SIGTERM");
    }
  });

  test("bad input: one clear line and a non-zero exit, no stack trace", () => {
    const cases = [
      run("keys", "create", "--tenant", "nope", "--json"),
      run("keys", "create", "--tenant", "acme", "--scopes", "runs:delete"),
      run("keys", "revoke", "key_missing"),
      run("keys", "list"),
      run("tenants", "create"),
      run("frobnicate"),
      run("serve", "--port", "abc"),
    ];
    for (const r of cases) {
      expect(r.code).not.toBe(0);
      expect(r.err).not.toMatch(/\n\s+at /);
      expect(r.err.trim().length).toBeGreaterThan(0);
    }
    expect(cases[3].err).toContain("--tenant is required");
  });

  test("backup on PostgreSQL (--db or AUTOMATION_DB) refuses with one line pointing to pg_dump, writing nothing", () => {
    const to = join(dir, "pg-backup");
    for (const r of [
      run("backup", "--db", "postgres://u:p@127.0.0.1:1/automation", "--to", to),
      (() => {
        const p = Bun.spawnSync([bin, "backup", "--to", to, "--data-dir", join(dir, "data")], { cwd: dir, stdin: "ignore", stdout: "pipe", stderr: "pipe", env: { ...process.env, AUTOMATION_DB: "postgres://u:p@127.0.0.1:1/automation" } });
        return { code: p.exitCode, out: p.stdout.toString(), err: p.stderr.toString() };
      })(),
    ]) {
      expect(r.code).toBe(1);
      expect(r.err).toContain("pg_dump");
      expect(r.err.trim().split("\n")).toHaveLength(1);
      expect(existsSync(to)).toBe(false);
    }
  });

  test("serve refuses an unusable data dir or port with one line", () => {
    const blocker = join(dir, "a-file");
    writeFileSync(blocker, "not a directory");
    const cases: [string[], number, string][] = [
      [["--data-dir", join(blocker, "sub"), "--port", "0"], 1, "cannot create data dir"],
      [["--port", "70000"], 2, "--port must be 0-65535"],
      [["--workers", "300"], 2, "--workers must be 0-256"],
      [["--workers", "0"], 2, "--workers 0 (API only) needs --db postgres://"],
      [["--lease-seconds", "1"], 2, "--lease-seconds must be 3-3600"],
      // A worker: PostgreSQL only, worker flags only, at least one slot.
      [["worker"], 2, "a worker needs --db postgres://"],
      [["worker", "--db", "postgres://u:p@127.0.0.1:1/x", "--demo"], 2, "--demo is a serve option; a worker takes: --port, --db"],
      [["worker", "--db", "postgres://u:p@127.0.0.1:1/x", "--workers", "0"], 2, "a worker needs --workers 1-256"],
    ];
    for (const [args, code, text] of cases) {
      const p = Bun.spawnSync([bin, ...args], { cwd: dir, stdout: "pipe", stderr: "pipe", env: { ...process.env, AUTOMATION_DATA_DIR: join(dir, "x") } });
      expect(p.exitCode).toBe(code);
      const err = p.stderr.toString();
      expect(err).toContain(text);
      expect(err).not.toMatch(/\n\s+at /);
    }
  });

  test("--help everywhere", () => {
    for (const args of [["--help"], ["serve", "--help"], ["worker", "--help"], ["migrate", "--help"], ["tenants", "create", "--help"], ["keys", "create", "--help"], ["keys", "list", "--help"], ["keys", "revoke", "--help"], ["workflows", "push", "--help"]]) {
      const r = run(...args);
      expect(r.code).toBe(0);
      expect(r.out).toContain("Usage: automation-server");
    }
    expect(run("--help").out).toContain("--data-dir");
  });

  test("migrate on a fresh data dir applies the embedded migrations", () => {
    const p = Bun.spawnSync([bin, "migrate", "--data-dir", join(dir, "fresh")], { cwd: dir, stdout: "pipe", stderr: "pipe" });
    expect(p.exitCode).toBe(0);
    expect(p.stdout.toString()).toMatch(/^applied \d+ migration\(s\): 0000_foundation/);
  });

  test("migrate on an up-to-date data dir says so", () => {
    const r = run("migrate");
    expect(r.code).toBe(0);
    expect(r.out).toContain("up to date");
  });

  test("migrate --json prints one JSON object with the migrations it applied", () => {
    const p = Bun.spawnSync([bin, "migrate", "--json", "--data-dir", join(dir, "fresh-json")], { cwd: dir, stdout: "pipe", stderr: "pipe" });
    expect(p.exitCode).toBe(0);
    const first = JSON.parse(p.stdout.toString()) as { applied: string[] };
    expect(first.applied[0]).toBe("0000_foundation");
    expect(first.applied.length).toBeGreaterThan(1);
    const again = Bun.spawnSync([bin, "migrate", "--json", "--data-dir", join(dir, "fresh-json")], { cwd: dir, stdout: "pipe", stderr: "pipe" });
    expect(JSON.parse(again.stdout.toString())).toEqual({ applied: [] });
  });

  test("workflows push FILE.yaml creates a workflow", () => {
    const file = join(dir, "hello.yaml");
    writeFileSync(file, "name: hello\nversion: 1.0.0\ntriggerMethods: [{type: api}]\nsteps:\n  - name: s\n    type: transform.set\n    with: {fields: {a: 1}}\n");
    const r = run("workflows", "push", file, "--tenant", "acme", "--json");
    expect(r.err).toBe("");
    expect(r.code).toBe(0);
    const out = JSON.parse(r.out);
    expect(out).toMatchObject({ slug: "hello", version: "1.0.0", created: true });
    expect(out.id).toMatch(/^wf_/);
    // Pushing again adds a version (tag from --version, else the YAML's own) and makes it current.
    const again = run("workflows", "push", file, "--tenant", "acme", "--version", "1.1.0", "--json");
    expect(again.code).toBe(0);
    expect(JSON.parse(again.out)).toMatchObject({ id: out.id, slug: "hello", version: "1.1.0", isCurrent: true, created: false });
    const dark = run("workflows", "push", file, "--tenant", "acme", "--version", "1.2.0", "--no-activate", "--json");
    expect(JSON.parse(dark.out)).toMatchObject({ version: "1.2.0", isCurrent: false, created: false });
    const dup = run("workflows", "push", file, "--tenant", "acme");
    expect(dup.code).toBe(1);
    expect(dup.err).toContain("1.0.0 already exists");
    const bad = join(dir, "bad.yaml");
    writeFileSync(bad, "name: hello\nsteps:\n  - name: s\n    type: no.such.kind\n");
    const b = run("workflows", "push", bad, "--tenant", "acme");
    expect(b.code).toBe(1);
    expect(b.err).toContain("line 4");
    const missing = run("workflows", "push", join(dir, "missing.yaml"), "--tenant", "acme");
    expect(missing.code).toBe(1);
    expect(missing.err.trim()).toBe(`automation-server: cannot read ${join(dir, "missing.yaml")}: no such file`);
  });

  test("in a terminal, a missing --name is asked for interactively (util-linux `script` gives a PTY)", async () => {
    const cmd = `stty cols 120 rows 40; ${bin} tenants create --data-dir ${join(dir, "data")}`;
    const p = Bun.spawn(["script", "-qfec", cmd, "/dev/null"], { stdin: "pipe", stdout: "pipe", stderr: "pipe" });
    let out = "";
    const dec = new TextDecoder();
    const pump = (async () => {
      for await (const chunk of p.stdout) out += dec.decode(chunk);
    })();
    const until = Date.now() + 10_000;
    while (!out.includes("Tenant name") && Date.now() < until) await Bun.sleep(20);
    expect(out).toContain("Tenant name");
    p.stdin.write("tty-tenant\r");
    await p.stdin.flush();
    while (!out.includes("shown only once") && Date.now() < until) await Bun.sleep(20);
    // `script` relays stdin until it ends.
    await p.stdin.end();
    const code = await p.exited;
    await pump;
    expect(code).toBe(0);
    expect(out).toContain("created tenant tty-tenant");
    const listed = run("keys", "list", "--tenant", "tty-tenant", "--json");
    expect(JSON.parse(listed.out).keys).toHaveLength(1);
  }, 30_000);
});
