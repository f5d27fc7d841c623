// The --demo document workflows: invoice-document fills the seeded DOCX template, invoice-email mails
// it (here through the loopback SMTP sink the test points demo-mail at); seeding twice changes nothing.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { runDemo } from "../../../src/automation/demo/seed";
import { runsOf } from "../../../src/automation/runs/service";
import { type SmtpSink, startSmtpSink } from "../../support/smtp-sink";
import { harness, json } from "../app/harness";
import { docxParagraphs, highlighted } from "./support";

let sink: SmtpSink;
beforeAll(async () => {
  sink = await startSmtpSink();
});
afterAll(() => sink.stop());

const key = "eak_demo_0123456789abcdefghijklmnopqrstuv";

describe("demo invoice workflows", () => {
  test("fill the demo invoice, then e-mail it; seeding is idempotent", async () => {
    const h = await harness({ workers: 2 });
    await runDemo(h.ctx);
    await runDemo(h.ctx);
    runsOf(h.ctx).startWorkers();
    const call = async (method: string, path: string, body?: unknown) => json(await h.req(method, path, { key, body }));
    expect((await call("GET", "/v1/templates")).items.map((t: { name: string }) => t.name)).toEqual(["Demo invoice"]);
    const servers = (await call("GET", "/v1/email-servers")).data;
    expect(servers.map((s: { name: string; host: string; port: number }) => [s.name, s.host, s.port])).toEqual([["demo-mail", "127.0.0.1", 1025]]);

    const doc = await call("POST", "/v1/runs?wait_for_completion=30", { target: "workflows.invoice-document" });
    expect(doc.execution.status).toBe("completed");
    expect(doc.output).toMatchObject({ filename: "invoice-INV-1001.docx", total: 1350 });
    const bytes = new Uint8Array(await (await h.req("GET", `/v1/files/${doc.output.fileId}/content`, { key })).arrayBuffer());
    const text = docxParagraphs(bytes);
    expect(text).toContain("Bill to: Ada Lovelace, 12 Analytical Row, London");
    expect(text).toContain("Consulting: 3 × 400 = 1200 EUR");
    expect(text).toContain("Travel: 1 × 150 = 150 EUR");
    expect(text).toContain("Total: 1350 EUR");
    expect(text).toContain("Payment terms: NOT FOUND");
    expect(highlighted(bytes)).toEqual(["NOT FOUND"]);

    // Without `to` the e-mail workflow renders and skips the send.
    const dry = await call("POST", "/v1/runs?wait_for_completion=30", { target: "workflows.invoice-email" });
    expect(dry.execution.status).toBe("completed");
    expect(dry.output.sent).toBe("skipped");

    await call("PATCH", `/v1/email-servers/${servers[0].id}`, { transport: "smtp", host: "127.0.0.1", port: sink.port, security: "starttls", username: sink.user, password: sink.password, caPem: sink.cert });
    const arrived = sink.next();
    const sent = await call("POST", "/v1/runs?wait_for_completion=30", { target: "workflows.invoice-email", input: { to: "grace@example.com", number: "INV-77" } });
    expect(sent.execution.status).toBe("completed");
    const m = await arrived;
    expect(m.mail.messageId).toBe(sent.output.messageId);
    expect(m.mail.subject).toBe("Invoice INV-77");
    expect(m.mail.text?.trim()).toBe("Hello, please find attached invoice INV-77 for 500 EUR.");
    const file = new Uint8Array(await (await h.req("GET", `/v1/files/${sent.output.fileId}/content`, { key })).arrayBuffer());
    expect(m.mail.attachments[0].filename).toBe("invoice-INV-77.docx");
    expect(new Uint8Array(m.mail.attachments[0].content)).toEqual(file);
    expect(docxParagraphs(file)).toContain("Bill to: Grace Hopper, 1 Compiler Lane, Arlington");
  }, 60_000);
});
