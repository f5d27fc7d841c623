// Inbound e-mail in process: the SMTP receiver on a loopback port over an in-memory database, driven by
// nodemailer. Addresses in the detail, the e-mail trigger's rules at version create, runs started by
// messages (input.email, attachments → file inputs, trigger.email), exactly once per Message-ID (also
// for two concurrent deliveries), every refusal with its code and nothing stored, STARTTLS.
import { afterAll, describe, expect, test } from "bun:test";
import nodemailer, { type SendMailOptions } from "nodemailer";
import type { AutomationConfig } from "../../../src/automation/config";
import { parseSize, smtpConfig } from "../../../src/automation/config/smtp";
import { startSmtp, type SmtpReceiver } from "../../../src/automation/inbound/smtp";
import { harness, json, type Harness } from "../app/harness";
import { selfSignedCert } from "../../support/smtp-sink";
import { count, sql } from "../app/sql";

const DOMAIN = "mail.test.example";
const receivers: SmtpReceiver[] = [];
afterAll(async () => {
  for (const r of receivers) await r.stop();
});

const EMAIL_TRIGGER = "{type: email, whitelist: {domains: [partner.example], emails: [Boss@Corp.example]}}";
const intake = (name = "intake", extra = "") => `
name: ${name}
triggerMethods: [{type: api}, ${EMAIL_TRIGGER}]
inputs:
  - {name: email, type: object}
  - {name: document, type: file, required: false}
  - {name: invoice, type: file, required: false}
  - {name: note, type: string, default: none}
${extra}
steps:
  - {name: s, type: transform.set, with: {fields: {subject: "{{ input.email.subject }}"}}}
`;

interface Setup {
  h: Harness;
  key: string;
  smtp: SmtpReceiver;
  address(slug: string): Promise<string>;
  send(mail: SendMailOptions, opts?: { port?: number; tls?: { ca: string } }): Promise<{ response: string }>;
  runs(): Promise<Record<string, any>[]>;
}

async function setup(over: Partial<AutomationConfig> = {}, workflows = [intake()]): Promise<Setup> {
  const smtpCfg = { port: 0, maxSize: 64 * 1024, rateLimit: 0, ...over.smtp };
  const h = await harness({ mailDomain: DOMAIN, ...over, smtp: smtpCfg });
  const t = await h.tenant(`t${Math.random().toString(36).slice(2, 8)}`);
  for (const yaml of workflows) expect((await h.req("POST", "/v1/automations", { key: t.key, body: { yaml } })).status).toBe(201);
  const smtp = await startSmtp(h.ctx, smtpCfg, "127.0.0.1");
  receivers.push(smtp);
  return {
    h,
    key: t.key,
    smtp,
    async address(slug) {
      const d = await json(await h.req("GET", `/v1/automations/workflows.${slug}?expand=inboundEmail`, { key: t.key }));
      return d.inboundEmail.address;
    },
    send(mail, opts = {}) {
      const transport = nodemailer.createTransport({
        host: "127.0.0.1",
        port: opts.port ?? smtp.port,
        secure: false,
        ...(opts.tls ? { requireTLS: true, tls: { ca: opts.tls.ca } } : { ignoreTLS: true }),
      });
      return transport.sendMail(mail).finally(() => transport.close());
    },
    async runs() {
      return (await json(await h.req("GET", "/v1/runs?limit=100", { key: t.key }))).runs;
    },
  };
}

/** The SMTP code a refused send failed with. */
async function refused(p: Promise<unknown>): Promise<{ code: number; text: string }> {
  try {
    await p;
  } catch (err) {
    const e = err as { responseCode?: number; response?: string };
    return { code: e.responseCode ?? 0, text: e.response ?? String(err) };
  }
  throw new Error("the message was accepted");
}

const pdf = new TextEncoder().encode("%PDF-1.4 not really a pdf");

describe("addresses and the e-mail trigger", () => {
  test("the detail shows the address only with expand=inboundEmail; the token is stable and unguessable", async () => {
    const s = await setup({}, [intake(), intake("plain").replace(EMAIL_TRIGGER, "{type: manual}")]);
    const a = await s.address("intake");
    expect(a).toMatch(new RegExp(`^intake\\.[0-9a-z]{16}@${DOMAIN.replace(/\./g, "\\.")}$`));
    expect(await s.address("intake")).toBe(a);
    const d = await json(await s.h.req("GET", "/v1/automations/workflows.intake?expand=inboundEmail", { key: s.key }));
    expect(d.inboundEmail.whitelist).toEqual({ domains: ["partner.example"], emails: ["boss@corp.example"] });
    const plain = await json(await s.h.req("GET", "/v1/automations/workflows.intake", { key: s.key }));
    expect(plain).not.toHaveProperty("inboundEmail");
    expect(plain.triggers.email).toBe(true);
    // A workflow without an e-mail trigger has no address.
    const none = await json(await s.h.req("GET", "/v1/automations/workflows.plain?expand=inboundEmail", { key: s.key }));
    expect(none.inboundEmail).toBeNull();
    // Two servers' worth of automations never share a token.
    const other = await setup();
    expect(await other.address("intake")).not.toBe(a);
  });

  test("without --mail-domain the whitelist shows and the address is null", async () => {
    const h = await harness();
    const t = await h.tenant("nodomain");
    await h.req("POST", "/v1/automations", { key: t.key, body: { yaml: intake() } });
    const d = await json(await h.req("GET", "/v1/automations/workflows.intake?expand=inboundEmail", { key: t.key }));
    expect(d.inboundEmail).toEqual({ address: null, whitelist: { domains: ["partner.example"], emails: ["boss@corp.example"] } });
  });

  test("version create refuses e-mail triggers that could not start a run, naming the line", async () => {
    const h = await harness();
    const t = await h.tenant("rules");
    const create = async (yaml: string) => {
      const r = await h.req("POST", "/v1/automations", { key: t.key, body: { yaml } });
      return { status: r.status, issues: ((await json(r)).issues ?? []) as { field: string; message: string; code: string }[] };
    };
    const base = (triggers: string, inputs = "  - {name: email, type: object}") => `name: w${Math.random().toString(36).slice(2, 8)}\ntriggerMethods: ${triggers}\ninputs:\n${inputs}\nsteps:\n  - {name: s, type: transform.set, with: {fields: {a: 1}}}\n`;
    const noWhitelist = await create(base("[{type: email}]"));
    expect(noWhitelist.status).toBe(400);
    expect(noWhitelist.issues[0]).toMatchObject({ field: "yaml.triggerMethods.0.whitelist", code: "required" });
    expect(noWhitelist.issues[0].message).toContain("line 2");
    const empty = await create(base("[{type: email, whitelist: {domains: []}}]"));
    expect(empty.issues[0].message).toContain("at least one domain or e-mail address");
    const badDomain = await create(base("[{type: email, whitelist: {domains: ['not a domain']}}]"));
    expect(badDomain.issues[0]).toMatchObject({ field: "yaml.triggerMethods.0.whitelist.domains.0" });
    const badEmail = await create(base("[{type: email, whitelist: {emails: [nobody]}}]"));
    expect(badEmail.issues[0].message).toContain("must be an e-mail address");
    const unknownKey = await create(base("[{type: email, whitelist: {domains: [a.example]}, folder: x}]"));
    expect(unknownKey.issues[0].code).toBe("unknown_field");
    const twice = await create(base("[{type: email, whitelist: {domains: [a.example]}}, {type: email, whitelist: {domains: [b.example]}}]"));
    expect(twice.issues[0]).toMatchObject({ field: "yaml.triggerMethods.1", code: "duplicate_trigger" });
    const noInput = await create(base("[{type: email, whitelist: {domains: [a.example]}}]", "  - {name: doc, type: file}"));
    expect(noInput.issues[0]).toMatchObject({ field: "yaml.triggerMethods.0", code: "email_input_missing" });
    const unfillable = await create(base("[{type: email, whitelist: {domains: [a.example]}}]", "  - {name: email, type: object}\n  - {name: customer, type: string, required: true}"));
    expect(unfillable.issues[0]).toMatchObject({ field: "yaml.inputs.1", code: "required" });
    expect(unfillable.issues[0].message).toContain('"customer"');
    // Required file inputs are fine: a message without the attachment is refused at delivery.
    expect((await create(base("[{type: email, whitelist: {domains: [a.example]}}]", "  - {name: email, type: object}\n  - {name: doc, type: file, required: true}"))).status).toBe(201);
  });
});

describe("a message starts a run", () => {
  test("input.email, attachments by input name then the first file input, trigger.email, by: null", async () => {
    const s = await setup();
    const to = await s.address("intake");
    const info = await s.send({
      from: '"Ann Partner" <ann@partner.example>',
      to,
      subject: "Invoice 42",
      text: "see attached",
      html: "<p>see attached</p>",
      messageId: "<m1@partner.example>",
      headers: { "X-Ticket": "T-7" },
      attachments: [
        { filename: "scan.pdf", content: Buffer.from(pdf), contentType: "application/pdf" },
        { filename: "Invoice.pdf", content: Buffer.from("invoice bytes"), contentType: "application/pdf" },
        { filename: "extra.txt", content: "third" },
      ],
    });
    expect(info.response).toMatch(/^250 .*exec_/);
    const runs = await s.runs();
    expect(runs).toHaveLength(1);
    const run = await json(await s.h.req("GET", `/v1/runs/${runs[0].id}?expand=input`, { key: s.key }));
    expect(info.response).toContain(run.id);
    expect(run.trigger).toMatchObject({
      type: "email",
      by: null,
      email: {
        from: "ann@partner.example",
        to,
        subject: "Invoice 42",
        messageId: "<m1@partner.example>",
        attachments: [
          { filename: "scan.pdf", contentType: "application/pdf", size: pdf.byteLength, input: "document" },
          { filename: "Invoice.pdf", contentType: "application/pdf", size: 13, input: "invoice" },
          { filename: "extra.txt", contentType: "text/plain", size: 5, input: null },
        ],
      },
    });
    expect(Date.parse(run.trigger.email.receivedAt)).toBeGreaterThan(0);
    const { runs: list } = await json(await s.h.req("GET", "/v1/runs?trigger=email", { key: s.key }));
    expect(list.map((r: { id: string }) => r.id)).toEqual([run.id]);
    const [row] = await sql<{ input: string }>(s.h.ctx, "SELECT CAST(input AS TEXT) AS input FROM runs WHERE id = ?", run.id);
    const input = JSON.parse(row.input);
    expect(input.email).toMatchObject({ from: "ann@partner.example", to, subject: "Invoice 42", html: "<p>see attached</p>" });
    expect(input.email.text.trim()).toBe("see attached");
    expect(input.email.headers["x-ticket"]).toBe("T-7");
    expect(input.email.headers["message-id"]).toBe("<m1@partner.example>");
    expect(input.email.headers.from).toContain("ann@partner.example");
    expect(input.note).toBe("none");
    const { artifacts } = await json(await s.h.req("GET", `/v1/runs/${run.id}/artifacts`, { key: s.key }));
    expect(artifacts.map((a: { path: string }) => a.path).sort()).toEqual(["input/document/scan.pdf", "input/invoice/Invoice.pdf"]);
    const bytes = await (await s.h.req("GET", `/v1/runs/${run.id}/artifacts/${encodeURIComponent("input/document/scan.pdf")}`, { key: s.key })).arrayBuffer();
    expect(new Uint8Array(bytes)).toEqual(pdf);
  });

  test("the same Message-ID twice (also to a mixed-case address, also concurrently) starts one run; another automation gets its own", async () => {
    const s = await setup({}, [intake(), intake("second")]);
    const to = await s.address("intake");
    const mail = { from: "ann@partner.example", to, subject: "dup", text: "x", messageId: "<same@partner.example>" };
    const first = await s.send(mail);
    const again = await s.send({ ...mail, to: to.toUpperCase() });
    expect(again.response).toMatch(/^250 /);
    expect(again.response).toContain(first.response.match(/exec_\w+/)![0]);
    expect(await s.runs()).toHaveLength(1);
    // Concurrent deliveries of one new message: the unique key lets one commit.
    const concurrent = { ...mail, messageId: "<race@partner.example>" };
    const rs = await Promise.all(Array.from({ length: 6 }, () => s.send(concurrent)));
    const ids = new Set(rs.map((r) => r.response.match(/exec_\w+/)![0]));
    expect(ids.size).toBe(1);
    expect(await s.runs()).toHaveLength(2);
    // One message to two automations: one run each, and its retry starts none.
    const both = { ...mail, to: [to, await s.address("second")], messageId: "<both@partner.example>" };
    await s.send(both);
    await s.send(both);
    const runs = await s.runs();
    expect(runs).toHaveLength(4);
    expect(runs.filter((r) => r.source.slug === "second")).toHaveLength(1);
    const blobsOwned = await count(s.h.ctx, "runs WHERE dedupe_key IS NOT NULL");
    expect(blobsOwned).toBe(4);
  });

  test("a message without a Message-ID is deduplicated by its bytes", async () => {
    const s = await setup();
    const to = await s.address("intake");
    const raw = `From: ann@partner.example\r\nTo: ${to}\r\nSubject: no id\r\nDate: Mon, 23 Nov 2026 10:00:00 +0000\r\n\r\nbody\r\n`;
    const send = () => s.send({ envelope: { from: "ann@partner.example", to: [to] }, raw });
    await send();
    await send();
    const runs = await s.runs();
    expect(runs).toHaveLength(1);
    const run = await json(await s.h.req("GET", `/v1/runs/${runs[0].id}`, { key: s.key }));
    expect(run.trigger.email.messageId).toMatch(/^<sha256:[0-9a-f]{64}@inbound>$/);
  });
});

describe("refusals: right code, nothing stored", () => {
  const nothingStored = async (s: Setup) => {
    expect(await count(s.h.ctx, "runs")).toBe(0);
    expect(await count(s.h.ctx, "blob_refs")).toBe(0);
  };

  test("unknown address, other domain, unknown token: 550", async () => {
    const s = await setup();
    const to = await s.address("intake");
    const token = to.split("@")[0].split(".").pop()!;
    for (const rcpt of [`intake.0000000000000000@${DOMAIN}`, `nobody@${DOMAIN}`, `intake.${token}@elsewhere.example`, `intake.${token.slice(1)}@${DOMAIN}`]) {
      const r = await refused(s.send({ from: "ann@partner.example", to: rcpt, text: "x" }));
      expect(r.code).toBe(550);
    }
    // The slug part only labels the address: the token routes it.
    await s.send({ from: "ann@partner.example", to: `renamed.${token}@${DOMAIN}`, text: "x" });
    expect(await s.runs()).toHaveLength(1);
  });

  test("sender not on the whitelist (envelope or From:) : 550; subdomains are not the domain", async () => {
    const s = await setup();
    const to = await s.address("intake");
    for (const from of ["eve@evil.example", "ann@sub.partner.example", "boss2@corp.example"]) {
      const r = await refused(s.send({ from, to, text: "x" }));
      expect(r.code).toBe(550);
      expect(r.text).toContain("whitelist");
    }
    // A whitelisted envelope sender does not vouch for a From: header that is not.
    const header = await refused(s.send({ envelope: { from: "ann@partner.example", to: [to] }, from: "eve@evil.example", to, text: "x" }));
    expect(header.code).toBe(550);
    expect(header.text).toContain("From:");
    await nothingStored(s);
    // The exact address on the list is in, whatever its case.
    await s.send({ from: "BOSS@corp.example", to, text: "x" });
    expect(await s.runs()).toHaveLength(1);
  });

  test("over --smtp-max-size: 552, also when the client does not announce the size", async () => {
    const s = await setup({ smtp: { port: 0, maxSize: 16 * 1024, rateLimit: 0 } });
    const to = await s.address("intake");
    const big = { from: "ann@partner.example", to, text: "x", attachments: [{ filename: "big.bin", content: Buffer.alloc(20 * 1024, 7) }] };
    expect((await refused(s.send(big))).code).toBe(552);
    const raw = `From: ann@partner.example\r\nTo: ${to}\r\nSubject: big\r\n\r\n${"y".repeat(70).concat("\r\n").repeat(400)}`;
    expect((await refused(s.send({ envelope: { from: "ann@partner.example", to: [to] }, raw }))).code).toBe(552);
    await nothingStored(s);
  });

  test("too many messages from one sender in a minute: 451 until the next minute", async () => {
    const s = await setup({ smtp: { port: 0, maxSize: 64 * 1024, rateLimit: 2 } });
    const to = await s.address("intake");
    const mail = (n: number, from = "ann@partner.example") => ({ from, to, text: "x", messageId: `<rate${n}${from}>` });
    await s.send(mail(1));
    await s.send(mail(2));
    const r = await refused(s.send(mail(3)));
    expect(r.code).toBe(451);
    expect(r.text).toContain("too many messages");
    // Another sender has its own count.
    await s.send(mail(4, "bob@partner.example"));
    expect(await s.runs()).toHaveLength(3);
    s.h.clock.advance(60_000);
    await s.send(mail(5));
    expect(await s.runs()).toHaveLength(4);
  });

  test("a message the workflow cannot run (required attachment missing): 550 with the reason", async () => {
    const yaml = intake("needsdoc").replace("{name: document, type: file, required: false}", "{name: document, type: file, required: true}");
    const s = await setup({}, [yaml]);
    const r = await refused(s.send({ from: "ann@partner.example", to: await s.address("needsdoc"), text: "no attachment" }));
    expect(r.code).toBe(550);
    expect(r.text).toContain("input.document is required");
    await nothingStored(s);
  });

  test("a version without the e-mail trigger makes the address unknown", async () => {
    const s = await setup();
    const to = await s.address("intake");
    const next = intake().replace(EMAIL_TRIGGER, "{type: manual}");
    const created = await s.h.req("POST", "/v1/automations/workflows.intake/versions", { key: s.key, body: { yaml: next, version: "2.0.0" } });
    expect(created.status).toBe(201);
    expect((await refused(s.send({ from: "ann@partner.example", to, text: "x" }))).code).toBe(550);
  });
});

test("a disabled automation takes no mail (550) until it is enabled again", async () => {
  const s = await setup();
  const to = await s.address("intake");
  expect((await s.h.req("PATCH", "/v1/automations/workflows.intake", { key: s.key, body: { status: "disabled" } })).status).toBe(200);
  const r = await refused(s.send({ from: "ann@partner.example", to, text: "x", messageId: "<off@partner.example>" }));
  expect(r.code).toBe(550);
  expect(r.text).toContain("disabled");
  expect(await s.runs()).toHaveLength(0);
  expect((await s.h.req("PATCH", "/v1/automations/workflows.intake", { key: s.key, body: { status: "active" } })).status).toBe(200);
  await s.send({ from: "ann@partner.example", to, text: "x", messageId: "<off@partner.example>" });
  expect(await s.runs()).toHaveLength(1);
});

describe("STARTTLS", () => {
  test("with a certificate the receiver offers STARTTLS and takes mail over it", async () => {
    const pem = selfSignedCert();
    const s = await setup({ smtp: { port: 0, maxSize: 64 * 1024, rateLimit: 0, tls: pem } });
    const to = await s.address("intake");
    const info = await s.send({ from: "ann@partner.example", to, text: "secret" }, { tls: { ca: pem.cert } });
    expect(info.response).toMatch(/^250 /);
    expect(await s.runs()).toHaveLength(1);
  });

  test("without one it is not offered: a client requiring TLS gives up", async () => {
    const s = await setup();
    const to = await s.address("intake");
    const err = await s.send({ from: "ann@partner.example", to, text: "x" }, { tls: { ca: "" } }).then(
      () => undefined,
      (e: Error) => e.message,
    );
    expect(err).toContain("STARTTLS");
    expect(await s.runs()).toHaveLength(0);
  });
});

describe("flags", () => {
  test("a busy SMTP port is one clear error", async () => {
    const s = await setup();
    await expect(startSmtp(s.h.ctx, { port: s.smtp.port, maxSize: 64 * 1024, rateLimit: 0 }, "127.0.0.1")).rejects.toThrow(`smtp port ${s.smtp.port} is already in use`);
  });

  const base = { "smtp-max-size": "25MiB", "smtp-rate-limit": 60 };
  test("--smtp-port needs --mail-domain; cert and key go together; sizes and domains are checked", () => {
    expect(smtpConfig({ ...base })).toEqual({});
    expect(smtpConfig({ ...base, "mail-domain": "Automations.Example.COM." })).toEqual({ mailDomain: "automations.example.com" });
    expect(() => smtpConfig({ ...base, "smtp-port": 2525 })).toThrow("--smtp-port needs --mail-domain");
    expect(() => smtpConfig({ ...base, "smtp-port": 2525, "mail-domain": "not a domain" })).toThrow("--mail-domain must be a domain");
    expect(() => smtpConfig({ ...base, "smtp-port": 70000, "mail-domain": "a.example" })).toThrow("--smtp-port must be 0-65535");
    expect(() => smtpConfig({ ...base, "smtp-port": 0, "mail-domain": "a.example", "smtp-tls-cert": "/x.pem" })).toThrow("go together");
    expect(() => smtpConfig({ ...base, "smtp-port": 0, "mail-domain": "a.example", "smtp-tls-cert": "/nope.pem", "smtp-tls-key": "/nope.key" })).toThrow("cannot read --smtp-tls-cert /nope.pem: ENOENT");
    expect(() => smtpConfig({ ...base, "smtp-port": 0, "mail-domain": "a.example", "smtp-max-size": "lots" })).toThrow("--smtp-max-size must be a size");
    expect(() => smtpConfig({ ...base, "smtp-port": 0, "mail-domain": "a.example", "smtp-max-size": "1GiB" })).toThrow("1KiB-100MiB");
    expect(smtpConfig({ ...base, "smtp-port": 0, "mail-domain": "a.example", "smtp-max-size": "512KiB", "smtp-rate-limit": 0 })).toEqual({ mailDomain: "a.example", smtp: { port: 0, maxSize: 512 * 1024, rateLimit: 0 } });
    expect(parseSize("1048576", "x")).toBe(1048576);
    expect(parseSize("2.5 MB", "x")).toBe(2.5 * 1024 * 1024);
  });
});
