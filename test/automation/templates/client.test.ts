// The client library's templates and e-mail servers resources against the real app on a loopback port.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { AutomationClient, ConflictError, ValidationError } from "../../../src/automation/client";
import { buildDocx } from "../../../src/automation/templates/build-docx";
import { type SmtpSink, startSmtpSink } from "../../support/smtp-sink";
import { harness } from "../app/harness";

let server: ReturnType<typeof Bun.serve>;
let sink: SmtpSink;
let client: AutomationClient;

beforeAll(async () => {
  const h = await harness();
  const t = await h.tenant("docs");
  server = Bun.serve({ port: 0, hostname: "127.0.0.1", fetch: (req) => h.app.handle(req) });
  sink = await startSmtpSink();
  client = new AutomationClient({ baseUrl: `http://127.0.0.1:${server.port}`, apiKey: t.key, retryBaseMs: 1 });
});
afterAll(async () => {
  server.stop(true);
  await sink.stop();
});

describe("client ↔ real server: templates and e-mail servers", () => {
  test("create from bytes and from a file id, replace, content by revision, list, delete", async () => {
    const one = buildDocx(["Hi {name}"]);
    const t = await client.templates.create({ file: one, filename: "hi.docx" }, { name: "hi" });
    expect(t.tokens.map((k) => k.path)).toEqual(["name"]);
    const file = await client.files.upload(buildDocx(["Bye {name}, {#items}{x}{/items}"]), { filename: "bye.docx" });
    const t2 = await client.templates.replace(t.id, { fileId: file.id });
    expect(t2.currentRevision.number).toBe(2);
    expect(t2.tokens.map((k) => k.path)).toEqual(["name", "items", "items[].x"]);
    expect(await client.templates.content(t.id, t.currentRevision.id)).toEqual(one);
    expect((await client.templates.list()).total).toBe(1);
    await expect(client.templates.create({ file: buildDocx(["{broken"]), filename: "b.docx" }, { name: "b" })).rejects.toBeInstanceOf(ValidationError);
    expect(await client.templates.delete(t.id)).toEqual({ id: t.id, deleted: true });
    expect((await client.templates.list()).total).toBe(0);
  });

  test("e-mail servers: create, test over SMTP, update, conflict on a duplicate name", async () => {
    const s = await client.emailServers.create({ name: "office", transport: "smtp", host: "127.0.0.1", port: sink.port, username: sink.user, password: sink.password, caPem: sink.cert, fromEmail: "a@example.com" });
    expect(s.transport === "smtp" && s.passwordConfigured).toBe(true);
    const r = await client.emailServers.test(s.id, "b@example.com");
    expect(r.ok).toBe(true);
    expect((await client.emailServers.update(s.id, { enabled: false })).enabled).toBe(false);
    await expect(client.emailServers.create({ name: "office", transport: "resend", apiKey: "k", fromEmail: "a@example.com" })).rejects.toBeInstanceOf(ConflictError);
    expect((await client.emailServers.list()).data.map((x) => x.name)).toEqual(["office"]);
  });
});
