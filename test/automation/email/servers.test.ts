// E-mail servers API: transports and their rules, secrets never returned and never in the database
// file in clear, PATCH rules, soft delete, unique names, test sends against real loopback peers,
// and a changed secret key that makes stored secrets unusable with a clear error.
import { afterAll, describe, expect, test } from "bun:test";
import { mkdtempSync, readFileSync, rmSync, existsSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ManualClock } from "../../../src/kernel/clock";
import { silentLogger } from "../../../src/kernel/logger";
import { buildApp } from "../../../src/automation/app";
import { createBlobStore } from "../../../src/automation/blobs/fs-blobs";
import { createTenant } from "../../../src/automation/tenancy/service";
import { harness, json, testContext } from "../app/harness";
import { mailFakes } from "../../support/smtp-sink";
import { sql } from "../app/sql";

const mail = mailFakes();

async function setup() {
  const h = await harness({ resendUrl: mail.resend.url });
  const t = await h.tenant(`t${Math.random().toString(36).slice(2, 8)}`);
  const call = async (method: string, path: string, body?: unknown, key = t.key) => {
    const r = await h.req(method, path, { key, body });
    return { status: r.status, body: await json(r) };
  };
  return { h, t, call };
}

const smtpBody = () => ({ name: "smtp-main", transport: "smtp", host: "127.0.0.1", port: mail.sink.port, security: "starttls", username: mail.sink.user, password: mail.sink.password, caPem: mail.sink.cert, fromEmail: "robot@example.com", fromName: "Robot" });
const resendBody = (apiKey = "re_secret_key_123456") => ({ name: "resend-main", transport: "resend", apiKey, fromEmail: "robot@example.com", fromName: "Robot" });

describe("e-mail servers", () => {
  test("create both transports: public views without secrets, defaults, list envelope", async () => {
    const { call } = await setup();
    const s = await call("POST", "/v1/email-servers", smtpBody());
    expect(s.status).toBe(201);
    expect(s.body.id).toMatch(/^ems_/);
    expect(s.body).toMatchObject({ name: "smtp-main", enabled: true, transport: "smtp", host: "127.0.0.1", port: mail.sink.port, security: "starttls", username: mail.sink.user, passwordConfigured: true, caPemConfigured: true, fromEmail: "robot@example.com", fromName: "Robot" });
    expect(JSON.stringify(s.body)).not.toContain(mail.sink.password);
    expect(s.body).not.toHaveProperty("password");
    expect(s.body).not.toHaveProperty("caPem");
    const r = await call("POST", "/v1/email-servers", resendBody());
    expect(r.body).toMatchObject({ transport: "resend", apiKeyConfigured: true });
    expect(JSON.stringify(r.body)).not.toContain("re_secret_key");
    const tls = await call("POST", "/v1/email-servers", { name: "tls", transport: "smtp", host: "mail.example.com", security: "tls", fromEmail: "a@example.com" });
    expect(tls.body).toMatchObject({ port: 465, passwordConfigured: false, username: null, fromName: null });
    const plain = await call("POST", "/v1/email-servers", { name: "plain", transport: "smtp", host: "mail.example.com", security: "none", fromEmail: "a@example.com" });
    expect(plain.body.port).toBe(25);
    const dflt = await call("POST", "/v1/email-servers", { name: "dflt", transport: "smtp", host: "mail.example.com", fromEmail: "a@example.com" });
    expect(dflt.body).toMatchObject({ security: "starttls", port: 587 });
    const list = await call("GET", "/v1/email-servers?limit=2&offset=1");
    expect(list.body).toMatchObject({ total: 5, limit: 2, offset: 1 });
    expect(list.body.data).toHaveLength(2);
    expect((await call("GET", "/v1/email-servers?limit=101")).status).toBe(400);
    expect((await call("GET", `/v1/email-servers/${s.body.id}`)).body).toEqual(s.body);
  });

  test("create rules: credentials both or neither, none with security none, unique live names, unknown fields", async () => {
    const { call } = await setup();
    const base = { transport: "smtp", host: "mail.example.com", fromEmail: "a@example.com" };
    const half = await call("POST", "/v1/email-servers", { ...base, name: "a", username: "u" });
    expect(half.status).toBe(400);
    expect(half.body.issues[0].field).toBe("password");
    expect((await call("POST", "/v1/email-servers", { ...base, name: "a", password: "p" })).status).toBe(400);
    const clear = await call("POST", "/v1/email-servers", { ...base, name: "a", security: "none", username: "u", password: "p" });
    expect(clear.status).toBe(400);
    expect(clear.body.issues[0].field).toBe("security");
    expect((await call("POST", "/v1/email-servers", { ...base, name: "a", apiKey: "k" })).status).toBe(400);
    expect((await call("POST", "/v1/email-servers", { name: "r", transport: "resend", fromEmail: "a@example.com" })).status).toBe(400);
    expect((await call("POST", "/v1/email-servers", { ...base, name: "a", fromEmail: "nope" })).status).toBe(400);
    expect((await call("POST", "/v1/email-servers", { ...base, name: "a", extra: 1 })).status).toBe(400);
    expect((await call("POST", "/v1/email-servers", { ...base, name: "a", transport: "sendmail" })).status).toBe(400);
    expect((await call("POST", "/v1/email-servers", { ...base, name: "a" })).status).toBe(201);
    const dup = await call("POST", "/v1/email-servers", { ...base, name: "a" });
    expect(dup.status).toBe(409);
    expect(dup.body.issues[0].field).toBe("name");
  });

  test("PATCH: metadata only; transport fields need transport; host or username change needs the password; soft delete", async () => {
    const { call } = await setup();
    const s = (await call("POST", "/v1/email-servers", smtpBody())).body;
    const other = (await call("POST", "/v1/email-servers", resendBody())).body;
    const meta = await call("PATCH", `/v1/email-servers/${s.id}`, { name: "renamed", fromName: null, enabled: false });
    expect(meta.body).toMatchObject({ name: "renamed", fromName: null, enabled: false, passwordConfigured: true, host: "127.0.0.1" });
    expect((await call("PATCH", `/v1/email-servers/${s.id}`, { name: other.name })).status).toBe(409);
    const loose = await call("PATCH", `/v1/email-servers/${s.id}`, { port: 2525 });
    expect(loose.status).toBe(400);
    expect(loose.body.issues[0].code).toBe("transport_required");
    const moved = await call("PATCH", `/v1/email-servers/${s.id}`, { transport: "smtp", host: "other.example.com", username: mail.sink.user });
    expect(moved.status).toBe(400);
    expect(moved.body.issues[0]).toMatchObject({ field: "password" });
    const newUser = await call("PATCH", `/v1/email-servers/${s.id}`, { transport: "smtp", host: "127.0.0.1", username: "someone-else" });
    expect(newUser.status).toBe(400);
    // Same host and username: the stored password is kept; port and CA are replaced as given.
    const same = await call("PATCH", `/v1/email-servers/${s.id}`, { transport: "smtp", host: "127.0.0.1", port: 2525, username: mail.sink.user });
    expect(same.body).toMatchObject({ port: 2525, passwordConfigured: true, caPemConfigured: false, security: "starttls" });
    const toResend = await call("PATCH", `/v1/email-servers/${s.id}`, { transport: "resend" });
    expect(toResend.status).toBe(400);
    const switched = await call("PATCH", `/v1/email-servers/${s.id}`, { transport: "resend", apiKey: "re_new_key_123" });
    expect(switched.body).toMatchObject({ transport: "resend", apiKeyConfigured: true });
    expect(switched.body).not.toHaveProperty("host");
    const del = await call("DELETE", `/v1/email-servers/${s.id}`);
    expect(del.body).toEqual({ id: s.id, deleted: true });
    for (const [m, p, b] of [["GET", `/v1/email-servers/${s.id}`], ["PATCH", `/v1/email-servers/${s.id}`, { name: "x" }], ["DELETE", `/v1/email-servers/${s.id}`], ["POST", `/v1/email-servers/${s.id}/test`, { to: "a@example.com" }]] as const) {
      expect((await call(m, p, b)).status).toBe(404);
    }
    // The name is free again once the server is deleted.
    expect((await call("POST", "/v1/email-servers", { ...smtpBody(), name: "renamed" })).status).toBe(201);
  });

  test("tenancy and scopes", async () => {
    const { h, t, call } = await setup();
    const s = (await call("POST", "/v1/email-servers", smtpBody())).body;
    const other = await h.tenant(`o${Math.random().toString(36).slice(2, 8)}`);
    expect((await call("GET", `/v1/email-servers/${s.id}`, undefined, other.key)).status).toBe(404);
    expect((await call("GET", "/v1/email-servers", undefined, other.key)).body.total).toBe(0);
    const reader = await h.key(t.slug, ["email:read"]);
    expect((await call("GET", `/v1/email-servers/${s.id}`, undefined, reader)).status).toBe(200);
    expect((await call("PATCH", `/v1/email-servers/${s.id}`, { name: "x" }, reader)).status).toBe(403);
    expect((await call("POST", `/v1/email-servers/${s.id}/test`, { to: "a@example.com" }, reader)).status).toBe(403);
  });

  test("test send over SMTP with STARTTLS and AUTH; failures are generic; disabled → 409", async () => {
    const { call } = await setup();
    const s = (await call("POST", "/v1/email-servers", smtpBody())).body;
    const arrived = mail.sink.next();
    const ok = await call("POST", `/v1/email-servers/${s.id}/test`, { to: "ops@example.com" });
    expect(ok.body).toMatchObject({ ok: true, transport: "smtp" });
    const m = await arrived;
    expect(m.secure).toBe(true);
    expect(m.user).toBe(mail.sink.user);
    expect(m.envelope.to).toEqual(["ops@example.com"]);
    expect(m.mail.messageId).toBe(ok.body.messageId);
    expect(m.mail.from?.value[0]).toMatchObject({ address: "robot@example.com", name: "Robot" });
    expect(m.mail.subject).toContain("smtp-main");

    const wrong = (await call("POST", "/v1/email-servers", { ...smtpBody(), name: "wrong", password: "not-the-password" })).body;
    const bad = await call("POST", `/v1/email-servers/${wrong.id}/test`, { to: "secret-recipient@example.com" });
    expect(bad.status).toBe(200);
    expect(bad.body.ok).toBe(false);
    expect(bad.body.error).toContain("refused the credentials");
    expect(bad.body.error).not.toContain("not-the-password");
    expect(bad.body.error).not.toContain("secret-recipient");
    const noCa = (await call("POST", "/v1/email-servers", { ...smtpBody(), name: "no-ca", caPem: undefined })).body;
    expect((await call("POST", `/v1/email-servers/${noCa.id}/test`, { to: "a@example.com" })).body.error).toContain("TLS");
    const closed = (await call("POST", "/v1/email-servers", { ...smtpBody(), name: "closed", port: 1 })).body;
    expect((await call("POST", `/v1/email-servers/${closed.id}/test`, { to: "a@example.com" })).body).toEqual({ ok: false, error: "test message not sent: could not deliver through the SMTP server" });

    await call("PATCH", `/v1/email-servers/${s.id}`, { enabled: false });
    const off = await call("POST", `/v1/email-servers/${s.id}/test`, { to: "a@example.com" });
    expect(off.status).toBe(409);
    expect(off.body.issues[0].code).toBe("server_disabled");
    expect((await call("POST", `/v1/email-servers/${s.id}/test`, { to: "not-an-address" })).status).toBe(400);
  });

  test("test send over Resend: the request the fake receives", async () => {
    const { call } = await setup();
    const s = (await call("POST", "/v1/email-servers", resendBody("re_test_abc"))).body;
    const before = mail.resend.requests.length;
    const ok = await call("POST", `/v1/email-servers/${s.id}/test`, { to: "ops@example.com" });
    expect(ok.body).toEqual({ ok: true, transport: "resend", messageId: `re_${before + 1}` });
    const req = mail.resend.requests[before];
    expect(req.authorization).toBe("Bearer re_test_abc");
    expect(req.body).toMatchObject({ from: "Robot <robot@example.com>", to: ["ops@example.com"] });
    mail.resend.status = 401;
    try {
      const bad = await call("POST", `/v1/email-servers/${s.id}/test`, { to: "ops@example.com" });
      expect(bad.body).toEqual({ ok: false, error: "test message not sent: the Resend API refused the API key" });
    } finally {
      mail.resend.status = 200;
    }
  });
});

describe("secrets at rest", () => {
  const dirs: string[] = [];
  afterAll(() => {
    for (const d of dirs) rmSync(d, { recursive: true, force: true });
  });

  async function onDisk(dir: string, secretKey?: string) {
    const ctx = await testContext({ dataDir: dir, resendUrl: mail.resend.url, ...(secretKey ? { secretKey } : {}) }, { clock: new ManualClock(), log: silentLogger, blobs: createBlobStore(join(dir, "blobs")) });
    const app = buildApp(ctx);
    const call = async (key: string, method: string, path: string, body?: unknown) => {
      const r = await app.handle(new Request(`http://localhost${path}`, { method, headers: { authorization: `Bearer ${key}`, "content-type": "application/json" }, body: body === undefined ? undefined : JSON.stringify(body) }));
      return { status: r.status, body: await json(r) };
    };
    return { ctx, call };
  }

  test("the database file holds neither the SMTP password nor the API key; the generated key file is 0600", async () => {
    const dir = mkdtempSync(join(tmpdir(), "email-disk-"));
    dirs.push(dir);
    const { ctx, call } = await onDisk(dir);
    const t = await createTenant(ctx.storage.tenancy, ctx.clock, { name: "disk", slug: "disk" });
    const password = `smtp-pass-${crypto.randomUUID()}`;
    const apiKey = `re_live_${crypto.randomUUID()}`;
    expect((await call(t.key, "POST", "/v1/email-servers", { ...smtpBody(), password })).status).toBe(201);
    expect((await call(t.key, "POST", "/v1/email-servers", { ...resendBody(apiKey) })).status).toBe(201);
    // What the database holds, as bytes: the SQLite files, or every e-mail server row on PostgreSQL.
    ctx.db.sqlite?.exec("PRAGMA wal_checkpoint(FULL)");
    const stored = ctx.db.sqlite
      ? ["automation.db", "automation.db-wal"].map((f) => join(dir, f)).filter(existsSync).map((f) => readFileSync(f))
      : [Buffer.from(JSON.stringify(await sql(ctx, "SELECT * FROM email_servers")))];
    expect(stored.length).toBeGreaterThan(0);
    for (const raw of stored) {
      expect(raw.includes(password)).toBe(false);
      expect(raw.includes(apiKey)).toBe(false);
      expect(raw.includes(Buffer.from(password).toString("base64").slice(0, 16))).toBe(false);
    }
    const sealed = await sql<{ secret: string }>(ctx, "SELECT secret FROM email_servers");
    expect(sealed.every((r) => r.secret.startsWith("v1:"))).toBe(true);
    // The generated key: a file of the data dir on SQLite; on PostgreSQL the database keeps it for every instance.
    if (ctx.db.sqlite) expect(Bun.spawnSync(["stat", "-c", "%a", join(dir, "secret-key")]).stdout.toString().trim()).toBe("600");
    else {
      expect(existsSync(join(dir, "secret-key"))).toBe(false);
      expect((await sql<{ value: string }>(ctx, "SELECT value FROM shared_secrets WHERE name = 'secret-key'"))[0].value.length).toBeGreaterThanOrEqual(32);
    }
    await ctx.db.close();
  });

  test("a different secret key: stored secrets are unusable with a clear 409, the rest works, PATCH repairs", async () => {
    const dir = mkdtempSync(join(tmpdir(), "email-key-"));
    dirs.push(dir);
    const first = await onDisk(dir, "first-key-material-first-key-material-0001");
    const t = await createTenant(first.ctx.storage.tenancy, first.ctx.clock, { name: "k", slug: "k" });
    const s = (await first.call(t.key, "POST", "/v1/email-servers", smtpBody())).body;
    expect((await first.call(t.key, "POST", `/v1/email-servers/${s.id}/test`, { to: "a@example.com" })).body.ok).toBe(true);
    await first.ctx.db.close();

    const second = await onDisk(dir, "second-key-material-second-key-material-02");
    const refused = await second.call(t.key, "POST", `/v1/email-servers/${s.id}/test`, { to: "a@example.com" });
    expect(refused.status).toBe(409);
    expect(refused.body.issues[0].code).toBe("secret_unreadable");
    expect(refused.body.issues[0].message).toContain("secret key");
    expect((await second.call(t.key, "GET", `/v1/email-servers/${s.id}`)).body.passwordConfigured).toBe(true);
    // Keeping the password needs to read it: also a clear 409, not a crash.
    expect((await second.call(t.key, "PATCH", `/v1/email-servers/${s.id}`, { transport: "smtp", host: "127.0.0.1", port: mail.sink.port, username: mail.sink.user, caPem: mail.sink.cert })).status).toBe(409);
    const fixed = await second.call(t.key, "PATCH", `/v1/email-servers/${s.id}`, { transport: "smtp", host: "127.0.0.1", port: mail.sink.port, username: mail.sink.user, password: mail.sink.password, caPem: mail.sink.cert });
    expect(fixed.status).toBe(200);
    expect((await second.call(t.key, "POST", `/v1/email-servers/${s.id}/test`, { to: "a@example.com" })).body.ok).toBe(true);
    await second.ctx.db.close();
  });
});
