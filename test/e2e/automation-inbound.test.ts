// Inbound e-mail on the compiled binary, driven by a real SMTP client (nodemailer): `--smtp-port 0`
// reported on stdout and in the ready file; a message with a PDF starts a run that reads it; the same
// Message-ID twice starts one run; refusals with their codes; and SIGKILL between the end of DATA and
// the 250: the client's retry after the restart starts exactly one run.
//
// Hitting that window honestly (no test hook in the product): the message carries a large attachment,
// so parsing and storing it takes a while; the test watches the server's log for "inbound e-mail
// received" (written once the final dot arrived, before anything is stored), freezes the process with
// SIGSTOP, reads the database to see whether the run was committed yet, then SIGKILLs it. An attempt
// where the run was already committed proves nothing about the window, so it is repeated with a new
// message until one lands inside it.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import nodemailer, { type SendMailOptions } from "nodemailer";
import { codeOf, rawSend } from "../automation/inbound/raw-smtp";
import { textPdf } from "../support/documents";
import { demoServer, type DemoServer } from "./automation-demo";
import type { Server } from "./support";

const DOMAIN = "automations.example.com";
const WORKFLOW = `
name: mail-intake
triggerMethods: [{type: email, whitelist: {domains: [partner.example], emails: [boss@corp.example]}}]
inputs:
  - {name: email, type: object}
  - {name: document, type: file, required: false}
steps:
  - name: parse
    type: ai.parse
    with: {file: "{{ input.document }}"}
output:
  subject: "{{ input.email.subject }}"
  from: "{{ input.email.from }}"
  text: "{{ steps.parse.output.text }}"
`;

let demo: DemoServer;
let server: Server;
let smtpPort = 0;
let address = "";
let pdf: Uint8Array;

async function boot(): Promise<void> {
  server = await demo.boot();
  for (let i = 0; i < 200 && !/smtp on smtp:\/\//.test(server.output()); i++) await Bun.sleep(10);
  const m = /smtp on smtp:\/\/[^:\s]+:(\d+)/.exec(server.output());
  if (!m) throw new Error(`no smtp line:\n${server.output()}`);
  smtpPort = Number(m[1]);
}

function send(mail: SendMailOptions): Promise<{ response: string }> {
  const t = nodemailer.createTransport({ host: "127.0.0.1", port: smtpPort, secure: false, ignoreTLS: true, socketTimeout: 60_000 });
  return t.sendMail(mail).finally(() => t.close());
}

async function refusal(mail: SendMailOptions): Promise<number> {
  try {
    await send(mail);
  } catch (err) {
    return (err as { responseCode?: number }).responseCode ?? -1;
  }
  return 250;
}

const runsOfMessage = async (messageId: string): Promise<number> =>
  (await demo.sql<{ n: number }>("SELECT CAST(COUNT(*) AS INTEGER) AS n FROM runs WHERE trigger_type = 'email' AND trigger_detail -> 'email' ->> 'messageId' = ?", messageId))[0].n;

async function finished(id: string): Promise<Record<string, any>> {
  for (let i = 0; i < 600; i++) {
    const run = (await (await demo.api("GET", `/v1/runs/${id}`)).json()) as Record<string, any>;
    if (run.finished) return run;
    await Bun.sleep(50);
  }
  throw new Error(`run ${id} did not finish`);
}

const runIds = async (): Promise<string[]> => ((await (await demo.api("GET", "/v1/runs?trigger=email&limit=100")).json()) as { runs: { id: string }[] }).runs.map((r) => r.id);

beforeAll(async () => {
  demo = await demoServer({ prefix: "automation-inbound-", workers: 2, args: ["--smtp-port", "0", "--mail-domain", DOMAIN, "--smtp-max-size", "16MiB"] });
  pdf = await textPdf([["Invoice INV-7 from Partner Ltd", "Total due: 99.00 EUR"]]);
  await boot();
  expect((await demo.api("POST", "/v1/automations", { yaml: WORKFLOW })).status).toBe(201);
  const detail = (await (await demo.api("GET", "/v1/automations/workflows.mail-intake?expand=inboundEmail")).json()) as { inboundEmail: { address: string } };
  address = detail.inboundEmail.address;
  expect(address).toMatch(/^mail-intake\.[0-9a-z]{16}@automations\.example\.com$/);
}, 180_000);

afterAll(async () => {
  await demo?.close();
});

test("--smtp-port 0: the port picked is on stdout after the listening line and in the ready file; SIGTERM exits 0", async () => {
  const again = await demoServer({ prefix: "automation-inbound-ready-", workers: 1, args: ["--smtp-port", "0", "--mail-domain", DOMAIN, "--ready-file", "ready"] });
  const ready = join(again.dir, "ready"); // the server runs in its dir
  try {
    const s = await again.boot();
    for (let i = 0; i < 200 && !/smtp on/.test(s.output()); i++) await Bun.sleep(10);
    const lines = s.output().split("\n");
    expect(lines[0]).toMatch(/^automation-server listening on http:\/\//);
    const port = Number(/smtp on smtp:\/\/127\.0\.0\.1:(\d+)/.exec(s.output())![1]);
    expect(port).toBeGreaterThan(0);
    for (let i = 0; i < 200; i++) {
      try {
        if (readFileSync(ready, "utf8").includes("smtp://")) break;
      } catch {}
      await Bun.sleep(10);
    }
    expect(readFileSync(ready, "utf8")).toBe(`${s.url}\nsmtp://127.0.0.1:${port}\n`);
    // SIGTERM stops the receiver with the rest, cleanly.
    expect(await s.kill("SIGTERM")).toBe(0);
  } finally {
    await again.close();
  }
}, 120_000);

test("a message with a PDF attachment starts a run that reads the PDF", async () => {
  const info = await send({
    from: "Ann <ann@partner.example>",
    to: address,
    subject: "Invoice INV-7",
    text: "Please process the attached invoice.",
    messageId: "<pdf-1@partner.example>",
    attachments: [{ filename: "invoice.pdf", content: Buffer.from(pdf), contentType: "application/pdf" }],
  });
  expect(info.response).toMatch(/^250 /);
  const id = /exec_\w+/.exec(info.response)![0];
  const run = await finished(id);
  expect(run.execution.status).toBe("completed");
  expect(run.trigger).toMatchObject({ type: "email", by: null, email: { from: "ann@partner.example", to: address, subject: "Invoice INV-7", messageId: "<pdf-1@partner.example>" } });
  expect(run.trigger.email.attachments).toEqual([{ filename: "invoice.pdf", contentType: "application/pdf", size: pdf.byteLength, input: "document" }]);
  expect(run.output.subject).toBe("Invoice INV-7");
  expect(run.output.from).toBe("ann@partner.example");
  expect(run.output.text).toContain("Invoice INV-7 from Partner Ltd");
  expect(run.output.text).toContain("Total due: 99.00 EUR");
}, 60_000);

test("the same Message-ID twice starts one run", async () => {
  const mail = { from: "boss@corp.example", to: address, subject: "twice", text: "x", messageId: "<twice@corp.example>", attachments: [{ filename: "a.pdf", content: Buffer.from(pdf) }] };
  const before = (await runIds()).length;
  const a = await send(mail);
  const b = await send(mail);
  expect(b.response).toMatch(/^250 /);
  expect(/exec_\w+/.exec(b.response)![0]).toBe(/exec_\w+/.exec(a.response)![0]);
  expect((await runIds()).length).toBe(before + 1);
  expect(await runsOfMessage("<twice@corp.example>")).toBe(1);
}, 60_000);

test("refused with their codes, nothing stored: sender not whitelisted 550, unknown address 550, oversized 552", async () => {
  const before = (await runIds()).length;
  expect(await refusal({ from: "eve@evil.example", to: address, text: "x", messageId: "<r1@evil.example>" })).toBe(550);
  expect(await refusal({ from: "ann@partner.example", to: `mail-intake.0000000000000000@${DOMAIN}`, text: "x", messageId: "<r2@partner.example>" })).toBe(550);
  expect(await refusal({ from: "ann@partner.example", to: `someone@${DOMAIN}`, text: "x", messageId: "<r3@partner.example>" })).toBe(550);
  const big = new Uint8Array(17 * 1024 * 1024).fill(65);
  expect(await refusal({ from: "ann@partner.example", to: address, text: "x", messageId: "<r4@partner.example>", attachments: [{ filename: "big.bin", content: Buffer.from(big) }] })).toBe(552);
  expect((await runIds()).length).toBe(before);
  for (const id of ["<r1@evil.example>", "<r2@partner.example>", "<r3@partner.example>", "<r4@partner.example>"]) expect(await runsOfMessage(id)).toBe(0);
}, 60_000);

test("read off a raw socket: 2,000 nested multiparts 554, a second From: address or no From: 550; nothing stored", async () => {
  const head = (messageId: string, from: string) =>
    `${from}To: ${address}\r\nSubject: raw\r\nMessage-ID: ${messageId}\r\nMIME-Version: 1.0\r\n`;
  let nested = "Content-Type: text/plain\r\n\r\nleaf\r\n";
  for (let i = 2000; i >= 1; i--) nested = `Content-Type: multipart/mixed; boundary="b${i}"\r\n\r\n--b${i}\r\n${nested}\r\n--b${i}--\r\n`;
  const plain = "Content-Type: text/plain\r\n\r\nbody\r\n";
  const cases: [string, string, number][] = [
    ["<raw-nested@partner.example>", head("<raw-nested@partner.example>", "From: ann@partner.example\r\n") + nested, 554],
    ["<raw-two@partner.example>", head("<raw-two@partner.example>", "From: boss@corp.example, evil@attacker.example\r\n") + plain, 550],
    ["<raw-none@partner.example>", head("<raw-none@partner.example>", "Sender: boss@corp.example\r\n") + plain, 550],
  ];
  const before = (await runIds()).length;
  for (const [messageId, data, code] of cases) {
    const r = await rawSend(smtpPort, { from: "ann@partner.example", to: [address], data });
    expect(r.rcpt[0]).toStartWith("250");
    expect(codeOf(r.end)).toBe(code);
    expect(await runsOfMessage(messageId)).toBe(0);
  }
  expect((await runIds()).length).toBe(before);
  // Expected refusals: no stack in the server's log.
  expect(server.output()).not.toMatch(/inbound e-mail failed|(\n|\\n)\s+at /);
}, 60_000);

test("SIGKILL between DATA and 250: the client's retry after the restart starts exactly one run", async () => {
  // ~9 MiB of padding beside the PDF: parsing and storing the message takes long enough to stop the server inside.
  const padding = new Uint8Array(9 * 1024 * 1024).map((_, i) => (i * 7919) % 251);
  let hit = 0;
  for (let attempt = 1; attempt <= 5 && hit === 0; attempt++) {
    const sender = `crash${attempt}@partner.example`;
    const messageId = `<crash-${attempt}@partner.example>`;
    const mail = {
      from: sender,
      to: address,
      subject: `crash ${attempt}`,
      text: "x",
      messageId,
      attachments: [
        { filename: "document.pdf", content: Buffer.from(pdf), contentType: "application/pdf" },
        { filename: "padding.bin", content: Buffer.from(padding) },
      ],
    };
    const outcome = send(mail).then(
      (r) => `answered ${r.response}`,
      (e: Error) => `failed ${e.message}`,
    );
    const logged = new RegExp(`inbound e-mail received.*${sender.replace(/\./g, "\\.")}`);
    for (let i = 0; i < 6000 && !logged.test(server.output()); i++) await Bun.sleep(2);
    expect(server.output()).toMatch(logged);
    server.proc.kill("SIGSTOP");
    const committed = await runsOfMessage(messageId);
    await server.kill("SIGKILL");
    const answer = await outcome;
    if (committed === 0) {
      // Inside the window: nothing committed, and the client got no 250.
      hit++;
      expect(answer).toStartWith("failed");
    }
    await boot();
    // The sending server retries (for a message that did get its 250 this is a duplicate delivery).
    const retry = await send(mail);
    expect(retry.response).toMatch(/^250 /);
    expect(await runsOfMessage(messageId)).toBe(1);
    const run = await finished(/exec_\w+/.exec(retry.response)![0]);
    expect(run.execution.status).toBe("completed");
    expect(run.output.text).toContain("Invoice INV-7 from Partner Ltd");
    expect(run.trigger.email.attachments.map((a: { size: number }) => a.size)).toEqual([pdf.byteLength, padding.byteLength]);
    // A further retry changes nothing.
    await send(mail);
    expect(await runsOfMessage(messageId)).toBe(1);
  }
  expect(hit).toBe(1);
}, 300_000);
