// E-mails in the metrics: a test message through a real loopback SMTP sink counts as sent, one to a
// closed port as failed; GET /metrics answers without an API key and names no tenant.
import { describe, expect, test } from "bun:test";
import { harness, json } from "../app/harness";
import { mailFakes } from "../../support/smtp-sink";

const mail = mailFakes();

describe("e-mail metrics", () => {
  test("sent and failed test messages are counted; /metrics needs no key", async () => {
    const h = await harness({ resendUrl: mail.resend.url, ops: { metrics: { where: "api" }, logFormat: "text" } });
    const t = await h.tenant("mailmetrics");
    const smtp = { name: "smtp-main", transport: "smtp", host: "127.0.0.1", port: mail.sink.port, security: "starttls", username: mail.sink.user, password: mail.sink.password, caPem: mail.sink.cert, fromEmail: "robot@example.com" };
    const ok = await json(await h.req("POST", "/v1/email-servers", { key: t.key, body: smtp }));
    const arrived = mail.sink.next();
    expect(await json(await h.req("POST", `/v1/email-servers/${ok.id}/test`, { key: t.key, body: { to: "ops@example.com" } }))).toMatchObject({ ok: true });
    await arrived;
    const closed = await json(await h.req("POST", "/v1/email-servers", { key: t.key, body: { ...smtp, name: "closed", port: 1 } }));
    expect(await json(await h.req("POST", `/v1/email-servers/${closed.id}/test`, { key: t.key, body: { to: "ops@example.com" } }))).toMatchObject({ ok: false });

    const res = await h.req("GET", "/metrics");
    expect(res.status).toBe(200);
    const text = await res.text();
    expect(text).toContain('automation_emails_total{outcome="sent"} 1');
    expect(text).toContain('automation_emails_total{outcome="failed"} 1');
    expect(text).toContain('http_requests_total{method="POST",route="/v1/email-servers/:id/test",status="200"} 2');
    expect(text).not.toContain(t.id);
    expect(text).not.toContain(ok.id);
  });
});
