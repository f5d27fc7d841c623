// action.email through the real engine: a filled invoice sent over real SMTP (STARTTLS + AUTH) and
// through the Resend fake, attachments byte-identical, limits, no automatic retry, evaluation skip.
import { describe, expect, test } from "bun:test";
import { createAutomation } from "../../../src/automation/automations/service";
import { sendForRun } from "../../../src/automation/email/service";
import { runsOf } from "../../../src/automation/runs/service";
import { harness, json } from "../app/harness";
import { invoiceDocx } from "../templates/support";
import { mailFakes } from "../../support/smtp-sink";
import { sql } from "../app/sql";

const mail = mailFakes();

async function setup() {
  const h = await harness({ workers: 2, resendUrl: mail.resend.url });
  const t = await h.tenant(`t${Math.random().toString(36).slice(2, 8)}`);
  runsOf(h.ctx).startWorkers();
  const call = async (method: string, path: string, body?: unknown) => json(await h.req(method, path, { key: t.key, body }));
  const upload = async (bytes: Uint8Array, filename: string) => {
    const form = new FormData();
    form.append("file", new Blob([bytes]), filename);
    return json(await h.req("POST", "/v1/files", { key: t.key, body: form }));
  };
  const smtp = await call("POST", "/v1/email-servers", {
    name: "office", transport: "smtp", host: "127.0.0.1", port: mail.sink.port, security: "starttls", username: mail.sink.user, password: mail.sink.password, caPem: mail.sink.cert, fromEmail: "billing@example.com", fromName: "Billing",
  });
  const run = async (yaml: string, input: Record<string, unknown> = {}) => {
    const wf = await createAutomation(h.ctx.storage.automations, h.clock, t.id, yaml);
    return json(await h.req("POST", "/v1/runs?wait_for_completion=30", { key: t.key, body: { target: wf.id, input } }));
  };
  const artifact = async (runId: string, path: string) => new Uint8Array(await (await h.req("GET", `/v1/runs/${runId}/artifacts/${encodeURIComponent(path)}`, { key: t.key })).arrayBuffer());
  return { h, t, call, upload, smtp, run, artifact };
}

const emailStep = (withBlock: string, name = "wf") => `
name: ${name}-${Math.random().toString(36).slice(2, 8)}
inputs:
  - {name: data, type: object, required: false}
steps:
  - name: send
    type: action.email
    with:
${withBlock}
`;

describe("action.email", () => {
  test("fills an invoice and mails it over SMTP: headers, body, bcc only in the envelope, attachments byte-identical", async () => {
    const { call, upload, smtp, run, artifact } = await setup();
    const tmplFile = await upload(invoiceDocx(), "invoice.docx");
    const tmpl = await call("POST", "/v1/templates", { fileId: tmplFile.id, name: "invoice" });
    const terms = new Uint8Array(Array.from({ length: 3000 }, (_, i) => (i * 7) % 256));
    const termsFile = await upload(terms, "terms.bin");
    const arrived = mail.sink.next();
    const r = await run(
      `
name: mail-invoice
inputs:
  - {name: data, type: object, required: true}
steps:
  - name: fill
    type: transform.template
    with: {templateId: ${tmpl.id}, data: "{{ input.data }}", outputFilename: "invoice-{{ input.data.number }}"}
  - name: send
    type: action.email
    with:
      server: office
      to: "{{ input.data.customer.email }}"
      cc: [accounts@example.com]
      bcc: archive@example.com
      replyTo: help@example.com
      subject: "Invoice {{ input.data.number }}"
      text: "Dear {{ input.data.customer.name }}, please find attached invoice {{ input.data.number }}."
      attachments:
        - "{{ steps.fill.output.file }}"
        - {fileId: ${termsFile.id}, filename: terms-and-conditions.bin}
`,
      { data: { number: "A-17", customer: { name: "Ada", email: "ada@example.com" }, items: [{ description: "Work", amount: 10 }], total: 10 } },
    );
    expect(r.execution.status).toBe("completed");
    const out = r.output.send;
    expect(out).toMatchObject({ serverId: smtp.id, provider: "smtp", to: ["ada@example.com"], cc: ["accounts@example.com"], bcc: ["archive@example.com"], attachmentCount: 2 });
    const docx = await artifact(r.id, "invoice-A-17.docx");
    expect(out.totalBytes).toBe(docx.byteLength + terms.byteLength);
    const m = await arrived;
    expect(m.secure).toBe(true);
    expect(m.user).toBe(mail.sink.user);
    expect(m.mail.messageId).toBe(out.messageId);
    expect(m.mail.subject).toBe("Invoice A-17");
    expect(m.mail.from?.value[0]).toEqual({ address: "billing@example.com", name: "Billing" });
    expect(m.mail.to && !Array.isArray(m.mail.to) ? m.mail.to.value.map((a) => a.address) : []).toEqual(["ada@example.com"]);
    expect(m.mail.cc && !Array.isArray(m.mail.cc) ? m.mail.cc.value.map((a) => a.address) : []).toEqual(["accounts@example.com"]);
    expect(m.mail.replyTo?.value[0].address).toBe("help@example.com");
    expect(m.mail.headers.has("bcc")).toBe(false);
    expect(m.envelope.to.sort()).toEqual(["accounts@example.com", "ada@example.com", "archive@example.com"]);
    expect(m.mail.text?.trim()).toBe("Dear Ada, please find attached invoice A-17.");
    const [a1, a2] = m.mail.attachments;
    expect(a1.filename).toBe("invoice-A-17.docx");
    expect(a1.contentType).toBe("application/vnd.openxmlformats-officedocument.wordprocessingml.document");
    expect(new Uint8Array(a1.content)).toEqual(docx);
    expect(a2.filename).toBe("terms-and-conditions.bin");
    expect(new Uint8Array(a2.content)).toEqual(terms);
  });

  test("through Resend: the fake receives the message with base64 attachments", async () => {
    const { call, upload, run } = await setup();
    const srv = await call("POST", "/v1/email-servers", { name: "resend", transport: "resend", apiKey: "re_action_key", fromEmail: "a@example.com" });
    const bytes = new Uint8Array([0, 1, 2, 250, 251, 252]);
    const f = await upload(bytes, "data.bin");
    const before = mail.resend.requests.length;
    const r = await run(emailStep(`      server: ${srv.id}\n      to: [x@example.com, y@example.com]\n      subject: Hello\n      text: Body text\n      attachments: [${f.id}]`));
    expect(r.execution.status).toBe("completed");
    expect(r.output.send).toMatchObject({ serverId: srv.id, provider: "resend", messageId: `re_${before + 1}`, to: ["x@example.com", "y@example.com"], attachmentCount: 1, totalBytes: 6 });
    const req = mail.resend.requests[before];
    expect(req.authorization).toBe("Bearer re_action_key");
    expect(req.body).toMatchObject({ from: "a@example.com", to: ["x@example.com", "y@example.com"], subject: "Hello", text: "Body text" });
    const att = (req.body.attachments as { filename: string; content: string }[])[0];
    expect(att.filename).toBe("data.bin");
    expect(new Uint8Array(Buffer.from(att.content, "base64"))).toEqual(bytes);
  });

  test("limits: recipients, text size, attachment count; unknown or disabled server", async () => {
    const { call, run, smtp } = await setup();
    const many = Array.from({ length: 11 }, (_, i) => `r${i}@example.com`);
    const tooMany = await run(emailStep(`      server: office\n      to: ${JSON.stringify(many)}\n      subject: s\n      text: t`));
    expect(tooMany.execution.status).toBe("failed");
    expect(tooMany.error).toContain("at most 10 recipients");
    const big = await run(emailStep(`      server: office\n      to: a@example.com\n      subject: s\n      text: "{{ input.data.text }}"`), { data: { text: "x".repeat(50 * 1024 + 1) } });
    expect(big.error).toContain("text is larger than");
    // A literal list is refused when the workflow is pushed.
    await expect(run(emailStep(`      server: office\n      to: a@example.com\n      subject: s\n      text: t\n      attachments: ${JSON.stringify(Array.from({ length: 11 }, () => "file_nope"))}`))).rejects.toThrow("at most 10 attachments");
    const unknown = await run(emailStep(`      server: nowhere\n      to: a@example.com\n      subject: s\n      text: t`));
    expect(unknown.error).toContain("e-mail server nowhere not found");
    await call("PATCH", `/v1/email-servers/${smtp.id}`, { enabled: false });
    const off = await run(emailStep(`      server: office\n      to: a@example.com\n      subject: s\n      text: t`));
    expect(off.error).toContain("disabled");
  });

  test("never retried automatically, even with workflow retries configured", async () => {
    const { call, run, h, t } = await setup();
    await call("POST", "/v1/email-servers", { name: "dead", transport: "smtp", host: "127.0.0.1", port: 1, security: "none", fromEmail: "a@example.com" });
    const r = await run(`${emailStep(`      server: dead\n      to: a@example.com\n      subject: s\n      text: t`)}\nsettings: {retries: 3}\n`);
    expect(r.execution.status).toBe("failed");
    expect(r.error).toContain("could not deliver through the SMTP server");
    const steps = await json(await h.req("GET", `/v1/runs/${r.id}/steps`, { key: t.key }));
    expect(steps.steps.map((s: { name: string; attempt: number; status: string }) => [s.name, s.attempt, s.status])).toEqual([["send", 1, "failed"]]);
  });

  test("evaluation runs skip the send and record the skip", async () => {
    const { h, t, run } = await setup();
    const yaml = emailStep(`      server: office\n      to: a@example.com\n      subject: s\n      text: t`, "eval");
    const wf = await createAutomation(h.ctx.storage.automations, h.clock, t.id, yaml);
    const before = mail.sink.messages.length;
    const started = await runsOf(h.ctx).start({ tenantId: t.id, keyId: "test" }, { target: wf.id, input: {}, evaluation: true });
    let r: Record<string, unknown> & { finished?: boolean } = {};
    for (let i = 0; i < 400 && !r.finished; i++) {
      await Bun.sleep(25);
      r = await json(await h.req("GET", `/v1/runs/${started.id}`, { key: t.key }));
    }
    expect((r as { execution: { status: string } }).execution.status).toBe("completed");
    const steps = await json(await h.req("GET", `/v1/runs/${started.id}/steps`, { key: t.key }));
    expect(steps.steps[0].output).toEqual({ skipped: true, reason: "side effects are skipped on evaluation runs" });
    expect(mail.sink.messages.length).toBe(before);
    void run;
  });

  test("one send per step execution: a repeat returns the recorded result, an interrupted one is not resent", async () => {
    const { h, t } = await setup();
    const msg = { server: "office", to: ["once@example.com"], cc: [], bcc: [], subject: "once", text: "t", attachments: [] };
    const before = mail.sink.messages.length;
    const first = await sendForRun(h.ctx, t.id, "exec_test", "send", msg);
    const again = await sendForRun(h.ctx, t.id, "exec_test", "send", msg);
    expect(again).toEqual(first);
    await Bun.sleep(100);
    expect(mail.sink.messages.length - before).toBe(1);
    await sql(h.ctx, "INSERT INTO email_deliveries (run_id, step_path, tenant_id, server_id, state, created_at) VALUES ('exec_crashed', 'send', ?, 'x', 'sending', '2026-01-01T00:00:00Z')", t.id);
    await expect(sendForRun(h.ctx, t.id, "exec_crashed", "send", msg)).rejects.toThrow("not sent again automatically");
  });
});
