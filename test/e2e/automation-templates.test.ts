// Templates and e-mail against the compiled automation-server: the binary copied alone into an empty
// directory fills DOCX/XLSX templates (docxtemplater, exceljs inside the executable), mails the demo
// invoice over real SMTP (STARTTLS + AUTH) and through a loopback Resend fake, keeps no secret in
// clear in its database file, and answers a clear 409 (not a crash) after its secret key changed.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { copyFileSync, existsSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import ExcelJS from "exceljs";
import { type ResendFake, type SmtpSink, startResendFake, startSmtpSink } from "../support/smtp-sink";
import { docxParagraphs, highlighted, invoiceXlsx } from "../automation/templates/support";
import type { Json } from "../automation/app/harness";
import { automationPgUrl, automationSql, ensureBuilt, start, startServer, type Server } from "./support";

const KEY = "eak_demo_0123456789abcdefghijklmnopqrstuv";
let dir = "";
let bin = "";
/** The running server's port: each start gets a new one (`--port 0`). */
let port = 0;
let server: Server | undefined;
let sink: SmtpSink;
let resend: ResendFake;
const base = () => `http://127.0.0.1:${port}`;
const auth = { authorization: `Bearer ${KEY}` };
const dataDir = () => join(dir, "data/automation");

async function boot(extra: string[] = []): Promise<void> {
  server = await startServer([bin, "--demo", "--host", "127.0.0.1", "--workers", "2", ...extra], {
    cwd: dir,
    env: { AUTOMATION_DATA_DIR: undefined, AUTOMATION_SECRET_KEY: undefined, AUTOMATION_SECRET_KEY_FILE: undefined, AUTOMATION_RESEND_URL: resend.url, AUTOMATION_OUTBOUND_ALLOW: "127.0.0.1", LOG_LEVEL: "warn" },
  });
  port = server.port;
}

async function call(method: string, path: string, body?: unknown): Promise<{ status: number; body: Json }> {
  const r = await fetch(`${base()}${path}`, { method, headers: { ...auth, "content-type": "application/json" }, body: body === undefined ? undefined : JSON.stringify(body) });
  return { status: r.status, body: (await r.json()) as Json };
}

const bytesOf = async (path: string) => new Uint8Array(await (await fetch(`${base()}${path}`, { headers: auth })).arrayBuffer());

beforeAll(async () => {
  sink = await startSmtpSink();
  resend = startResendFake();
  const built = await ensureBuilt("automation-server");
  dir = mkdtempSync(join(tmpdir(), "automation-templates-e2e-"));
  bin = join(dir, "automation-server");
  copyFileSync(built, bin);
  Bun.spawnSync(["chmod", "+x", bin]);
  await boot();
}, 120_000);

afterAll(async () => {
  if (server && server.proc.exitCode === null) await server.kill("SIGKILL");
  await sink.stop();
  resend.stop();
  rmSync(dir, { recursive: true, force: true });
});

describe("templates and e-mail (compiled server)", () => {
  test("multipart XLSX template filled by a pushed workflow: rows expand, formulas follow", async () => {
    const form = new FormData();
    form.append("name", "sheet");
    form.append("file", new Blob([await invoiceXlsx()]), "invoice.xlsx");
    const created = await fetch(`${base()}/v1/templates`, { method: "POST", headers: auth, body: form });
    expect(created.status).toBe(201);
    const t = (await created.json()) as { id: string; format: string };
    expect(t.format).toBe("xlsx");
    const yaml = `name: e2e-sheet\nsteps:\n  - name: fill\n    type: transform.template\n    with: {templateId: ${t.id}, data: {number: 9, customer: {name: Zed}, items: [{name: a, qty: 1, price: 2}, {name: b, qty: 3, price: 4}]}}\n`;
    expect((await call("POST", "/v1/automations", { yaml })).status).toBe(201);
    const run = await call("POST", "/v1/runs?wait_for_completion=60", { target: "workflows.e2e-sheet", input: {} });
    expect(run.body.execution.status).toBe("completed");
    const wb = new ExcelJS.Workbook();
    await wb.xlsx.load((await bytesOf(`/v1/files/${run.body.output.fill.fileId}/content`)) as unknown as ArrayBuffer);
    const ws = wb.getWorksheet("Invoice")!;
    expect([ws.getCell("A5").value, ws.getCell("A6").value, ws.getCell("B6").value]).toEqual(["a", "b", 3]);
    expect((ws.getCell("D7").value as { formula: string }).formula).toBe("SUM(D5:D6)");
  }, 120_000);

  test("the demo invoice is filled and mailed over SMTP with STARTTLS and AUTH; the attachment is byte-identical", async () => {
    const doc = await call("POST", "/v1/runs?wait_for_completion=60", { target: "workflows.invoice-document" });
    expect(doc.body.execution.status).toBe("completed");
    const docx = await bytesOf(`/v1/files/${doc.body.output.fileId}/content`);
    expect(docxParagraphs(docx)).toContain("Total: 1350 EUR");
    expect(highlighted(docx)).toEqual(["NOT FOUND"]);

    const servers = (await call("GET", "/v1/email-servers")).body.data as { id: string; name: string }[];
    const demoMail = servers.find((s) => s.name === "demo-mail")!;
    const patched = await call("PATCH", `/v1/email-servers/${demoMail.id}`, { transport: "smtp", host: "127.0.0.1", port: sink.port, security: "starttls", username: sink.user, password: sink.password, caPem: sink.cert });
    expect(patched.body.passwordConfigured).toBe(true);
    const arrived = sink.next();
    const run = await call("POST", "/v1/runs?wait_for_completion=60", { target: "workflows.invoice-email", input: { to: "grace@example.com", number: "INV-9" } });
    expect(run.body.execution.status).toBe("completed");
    const m = await arrived;
    expect(m.secure).toBe(true);
    expect(m.user).toBe(sink.user);
    expect(m.mail.subject).toBe("Invoice INV-9");
    expect(m.mail.from?.value[0]).toEqual({ address: "demo@example.com", name: "Automation demo" });
    expect(new Uint8Array(m.mail.attachments[0].content)).toEqual(await bytesOf(`/v1/files/${run.body.output.fileId}/content`));
  }, 120_000);

  test("Resend through AUTOMATION_RESEND_URL; no secret in clear in the database file; key file 0600", async () => {
    const apiKey = `re_e2e_${crypto.randomUUID()}`;
    const s = await call("POST", "/v1/email-servers", { name: "resend", transport: "resend", apiKey, fromEmail: "a@example.com" });
    const before = resend.requests.length;
    expect((await call("POST", `/v1/email-servers/${s.body.id}/test`, { to: "ops@example.com" })).body.ok).toBe(true);
    expect(resend.requests[before].authorization).toBe(`Bearer ${apiKey}`);
    // What the database holds, as bytes: the SQLite files, or every e-mail server row on PostgreSQL.
    const stored = automationPgUrl(dataDir())
      ? [Buffer.from(JSON.stringify(await automationSql(dataDir(), "SELECT * FROM email_servers")))]
      : ["automation.db", "automation.db-wal"].map((n) => join(dataDir(), n)).filter(existsSync).map((f) => readFileSync(f));
    expect(stored.length).toBeGreaterThan(0);
    for (const raw of stored) {
      expect(raw.includes(apiKey)).toBe(false);
      expect(raw.includes(sink.password)).toBe(false);
    }
    // The generated key: a file of the data dir on SQLite; on PostgreSQL the database keeps it for every instance.
    if (automationPgUrl(dataDir())) expect((await automationSql<{ value: string }>(dataDir(), "SELECT value FROM shared_secrets WHERE name = ?", "secret-key"))[0].value.length).toBeGreaterThanOrEqual(32);
    else expect(statSync(join(dataDir(), "secret-key")).mode & 0o777).toBe(0o600);
  }, 60_000);

  test("a changed secret key: clear 409 for stored secrets, the server keeps serving; a missing key file is one clear line", async () => {
    await server!.kill("SIGTERM");
    const missing = start([bin, "--port", "0", "--secret-key-file", join(dir, "nope.key")], { cwd: dir, env: { LOG_LEVEL: "warn" } });
    expect(await missing.proc.exited).not.toBe(0);
    expect(missing.output()).toContain("cannot read --secret-key-file");
    expect(missing.output()).not.toContain("    at ");

    writeFileSync(join(dir, "other.key"), "another-key-material-another-key-material-1234\n", { mode: 0o600 });
    await boot(["--secret-key-file", join(dir, "other.key")]);
    const servers = (await call("GET", "/v1/email-servers")).body.data as { id: string; name: string }[];
    const demoMail = servers.find((s) => s.name === "demo-mail")!;
    const r = await call("POST", `/v1/email-servers/${demoMail.id}/test`, { to: "a@example.com" });
    expect(r.status).toBe(409);
    expect(r.body.issues[0].code).toBe("secret_unreadable");
    expect(r.body.issues[0].message).toContain("secret key");
    const run = await call("POST", "/v1/runs?wait_for_completion=60", { target: "workflows.invoice-email", input: { to: "grace@example.com" } });
    expect(run.body.execution.status).toBe("failed");
    expect(run.body.error).toContain("cannot be decrypted");
    expect((await fetch(`${base()}/health`)).ok).toBe(true);
  }, 120_000);
});
