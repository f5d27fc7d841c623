// The exact SMTP reply codes, read off a raw socket (no client library in between): a message that can
// never be accepted gets a permanent 5xx and leaves nothing stored, whatever stage refused it (MIME
// parser limits, the From:/Sender: rules); only a local, transient failure (database, disk) gets 4xx.
// Expected refusals log one line and no stack.
import { Database } from "bun:sqlite";
import { afterAll, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { AutomationConfig } from "../../../src/automation/config";
import { refusedData, transient } from "../../../src/automation/inbound/failures";
import { startSmtp, type SmtpReceiver } from "../../../src/automation/inbound/smtp";
import { createBlobStore } from "../../../src/automation/blobs/fs-blobs";
import { DomainError } from "../../../src/kernel/errors";
import type { Logger } from "../../../src/kernel/logger";
import { harness, json, type Harness } from "../app/harness";
import { count, sql } from "../app/sql";
import { codeOf, rawSend, type Replies } from "./raw-smtp";

const DOMAIN = "mail.test.example";
const receivers: SmtpReceiver[] = [];
const dirs: string[] = [];
afterAll(async () => {
  for (const r of receivers) await r.stop();
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});
const tempDir = () => {
  const d = mkdtempSync(join(tmpdir(), "inbound-replies-"));
  dirs.push(d);
  return d;
};

const WORKFLOW = `
name: intake
triggerMethods: [{type: api}, {type: email, whitelist: {domains: [partner.example], emails: [boss@corp.example]}}]
inputs:
  - {name: email, type: object}
  - {name: document, type: file, required: false}
steps:
  - {name: s, type: transform.set, with: {fields: {subject: "{{ input.email.subject }}"}}}
`;

interface Line {
  level: string;
  msg: string;
  fields?: Record<string, unknown>;
}

interface Setup {
  h: Harness;
  to: string;
  logs: Line[];
  send(from: string, data: string): Promise<Replies>;
  stored(): Promise<{ runs: number; blobs: number; files: number }>;
}

function capture(logs: Line[]): Logger {
  const at =
    (level: string) =>
    (msg: string, fields?: Record<string, unknown>): void => {
      logs.push({ level, msg, fields });
    };
  const log: Logger = { debug: at("debug"), info: at("info"), warn: at("warn"), error: at("error"), child: () => log };
  return log;
}

async function setup(over: Partial<AutomationConfig> = {}): Promise<Setup> {
  const smtpCfg = { port: 0, maxSize: 4 * 1024 * 1024, rateLimit: 0, ...over.smtp };
  const h = await harness({ mailDomain: DOMAIN, ...over, smtp: smtpCfg });
  const logs: Line[] = [];
  (h.ctx as { log: Logger }).log = capture(logs);
  const t = await h.tenant(`t${Math.random().toString(36).slice(2, 8)}`);
  expect((await h.req("POST", "/v1/automations", { key: t.key, body: { yaml: WORKFLOW } })).status).toBe(201);
  const to = (await json(await h.req("GET", "/v1/automations/workflows.intake?expand=inboundEmail", { key: t.key }))).inboundEmail.address;
  const smtp = await startSmtp(h.ctx, smtpCfg, "127.0.0.1");
  receivers.push(smtp);
  return {
    h,
    to,
    logs,
    send: (from, data) => rawSend(smtp.port, { from, to: [to], data }),
    async stored() {
      return { runs: await count(h.ctx, "runs"), blobs: await count(h.ctx, "blob_refs"), files: await count(h.ctx, "run_files") };
    },
  };
}

const headers = (to: string, extra: string) =>
  `${extra}To: ${to}\r\nSubject: hello\r\nDate: Mon, 23 Nov 2026 10:00:00 +0000\r\nMessage-ID: <${crypto.randomUUID()}@partner.example>\r\nMIME-Version: 1.0\r\n`;

/** A message whose MIME tree is `depth` multiparts deep, with a PDF at the bottom. */
function nested(to: string, depth: number): string {
  let part = "Content-Type: application/pdf\r\nContent-Disposition: attachment; filename=document.pdf\r\n\r\n%PDF-1.4\r\n";
  for (let i = depth; i >= 1; i--) part = `Content-Type: multipart/mixed; boundary="b${i}"\r\n\r\n--b${i}\r\n${part}\r\n--b${i}--\r\n`;
  return headers(to, "From: ann@partner.example\r\n") + part;
}

/** A message with one header folded over lines until it is `bytes` long. */
function foldedHeader(to: string, bytes: number): string {
  const line = ` ${"a".repeat(70)}\r\n`;
  return `${headers(to, "From: ann@partner.example\r\n")}X-Big: start\r\n${line.repeat(Math.ceil(bytes / line.length))}Content-Type: text/plain\r\n\r\nbody\r\n`;
}

/** Expected refusals: one line each, at info, no stack anywhere in it. */
function oneLineNoStack(logs: Line[]): void {
  const bad = logs.filter((l) => l.level === "error" || /\n\s+at /.test(JSON.stringify(l.fields ?? {})));
  expect(bad).toEqual([]);
  expect(logs.filter((l) => l.msg === "inbound e-mail refused")).toHaveLength(1);
}

describe("a message the MIME parser refuses is a permanent failure", () => {
  test("2,000 nested multipart parts: 554 after DATA, nothing stored, one log line", async () => {
    const s = await setup();
    const r = await s.send("ann@partner.example", nested(s.to, 2000));
    expect(r.mail).toStartWith("250");
    expect(r.rcpt[0]).toStartWith("250");
    expect(codeOf(r.end)).toBe(554);
    expect(r.end).toContain("5.6.0");
    expect(r.end).toMatch(/cannot be parsed/);
    expect(await s.stored()).toEqual({ runs: 0, blobs: 0, files: 0 });
    oneLineNoStack(s.logs);
  });

  test("a 2 MB folded header: 554, nothing stored", async () => {
    const s = await setup();
    const r = await s.send("ann@partner.example", foldedHeader(s.to, 2 * 1024 * 1024));
    expect(codeOf(r.end)).toBe(554);
    expect(await s.stored()).toEqual({ runs: 0, blobs: 0, files: 0 });
    oneLineNoStack(s.logs);
  });

  test("the same shapes within the parser's limits are accepted (the limit, not the shape, refuses)", async () => {
    const s = await setup();
    const deep = await s.send("ann@partner.example", nested(s.to, 20));
    expect(deep.end).toStartWith("250");
    const folded = await s.send("ann@partner.example", foldedHeader(s.to, 200 * 1024));
    expect(folded.end).toStartWith("250");
    expect((await s.stored()).runs).toBe(2);
  });
});

describe("From: and Sender: must name only whitelisted senders (envelope ann@partner.example, whitelisted)", () => {
  const body = "Content-Type: text/plain\r\n\r\nbody\r\n";
  const cases: [string, string, RegExp][] = [
    ["no From: header", "", /no From: header/],
    ["From: undisclosed-recipients:;", "From: undisclosed-recipients:;\r\n", /names no address/],
    ["only the first From: address allowed", "From: boss@corp.example, evil@attacker.example\r\n", /evil@attacker\.example .*not on the whitelist/],
    ["a group hiding a stranger", "From: team: boss@corp.example, evil@attacker.example;\r\n", /evil@attacker\.example/],
    ["only a Sender: header", "Sender: boss@corp.example\r\n", /no From: header/],
    ["a Sender: not on the list", "From: boss@corp.example\r\nSender: evil@attacker.example\r\n", /evil@attacker\.example .*not on the whitelist/],
    ["two From: headers", "From: boss@corp.example\r\nFrom: evil@attacker.example\r\n", /more than one From:/],
    ["a From: entry that is not an address", "From: boss@corp.example, garbage\r\n", /"garbage" is not an address/],
    ["an empty From:", "From:\r\n", /names no address/],
  ];
  for (const [name, head, reason] of cases) {
    test(`${name}: 550 after DATA, nothing stored`, async () => {
      const s = await setup();
      const r = await s.send("ann@partner.example", headers(s.to, head) + body);
      expect(r.rcpt[0]).toStartWith("250");
      expect(codeOf(r.end)).toBe(550);
      expect(r.end).toMatch(reason);
      expect(await s.stored()).toEqual({ runs: 0, blobs: 0, files: 0 });
      oneLineNoStack(s.logs);
    });
  }

  test("every From: and Sender: address on the whitelist: accepted; input.email.from is the first From:", async () => {
    const s = await setup();
    const r = await s.send("ann@partner.example", headers(s.to, "From: Boss <BOSS@corp.example>, bob@partner.example\r\nSender: ann@partner.example\r\n") + body);
    expect(r.end).toStartWith("250");
    const [row] = await sql<{ input: string }>(s.h.ctx, "SELECT CAST(input AS TEXT) AS input FROM runs");
    expect(JSON.parse(row.input).email.from).toBe("boss@corp.example");
  });
});

describe("only local, passing conditions get 4xx", () => {
  const withPdf = (to: string) =>
    headers(to, "From: ann@partner.example\r\n") +
    'Content-Type: multipart/mixed; boundary="x"\r\n\r\n--x\r\nContent-Type: text/plain\r\n\r\nsee attached\r\n' +
    `--x\r\nContent-Type: application/pdf\r\nContent-Disposition: attachment; filename=document.pdf\r\nContent-Transfer-Encoding: base64\r\n\r\n${Buffer.alloc(4096, 1).toString("base64")}\r\n--x--\r\n`;

  test("another process holding the database's write lock: 451, one warning line; the retry starts the run", async () => {
    const dir = tempDir();
    const s = await setup({ dataDir: dir, busyTimeoutMs: 100 });
    if (!s.h.ctx.db.sqlite) return; // the lock is SQLite's; PostgreSQL outages are faults-postgres.test.ts's
    const other = new Database(join(dir, "automation.db"));
    other.exec("BEGIN IMMEDIATE");
    const message = withPdf(s.to);
    try {
      const r = await s.send("ann@partner.example", message);
      expect(codeOf(r.end)).toBe(451);
      expect(r.end).toContain("4.");
    } finally {
      other.exec("COMMIT");
      other.close();
    }
    expect((await s.stored()).runs).toBe(0);
    expect(s.logs.filter((l) => l.level === "error")).toEqual([]);
    expect(s.logs.filter((l) => l.level === "warn").map((l) => l.fields?.reason)).toEqual([expect.stringContaining("SQLITE_BUSY")]);
    expect(JSON.stringify(s.logs)).not.toMatch(/\n\s+at /);
    const again = await s.send("ann@partner.example", message);
    expect(again.end).toStartWith("250");
    expect((await s.stored()).runs).toBe(1);
  });

  test("a full disk under the blob store (ENOSPC): 451, nothing stored; the retry starts the run", async () => {
    const s = await setup();
    const ctx = s.h.ctx as { blobs: typeof s.h.ctx.blobs };
    const roomy = ctx.blobs;
    ctx.blobs = createBlobStore(tempDir(), { maxBytes: 64 });
    const message = withPdf(s.to);
    const r = await s.send("ann@partner.example", message);
    expect(codeOf(r.end)).toBe(451);
    expect(await s.stored()).toEqual({ runs: 0, blobs: 0, files: 0 });
    expect(s.logs.filter((l) => l.level === "error")).toEqual([]);
    ctx.blobs = roomy;
    expect((await s.send("ann@partner.example", message)).end).toStartWith("250");
    expect((await s.stored()).runs).toBe(1);
  });

  test("a failure nobody expected (a bug): 451 so the sender retries, logged at error with its stack", async () => {
    const s = await setup();
    const ctx = s.h.ctx as { blobs: typeof s.h.ctx.blobs };
    const roomy = ctx.blobs;
    ctx.blobs = new Proxy(roomy, {
      get: (target, prop, recv) => {
        const v = Reflect.get(target, prop, recv);
        return typeof v === "function" ? () => { throw new TypeError("a bug in the blob store"); } : v;
      },
    });
    const message = withPdf(s.to);
    const r = await s.send("ann@partner.example", message);
    expect(codeOf(r.end)).toBe(451);
    expect(await s.stored()).toEqual({ runs: 0, blobs: 0, files: 0 });
    const errors = s.logs.filter((l) => l.level === "error");
    expect(errors).toHaveLength(1);
    expect(JSON.stringify(errors[0].fields)).toContain("a bug in the blob store");
    ctx.blobs = roomy;
    expect((await s.send("ann@partner.example", message)).end).toStartWith("250");
    expect((await s.stored()).runs).toBe(1);
  });

  test("what counts as transient", () => {
    const coded = (code: string, extra: Record<string, unknown> = {}) => Object.assign(new Error(code), { code, ...extra });
    for (const e of [coded("SQLITE_BUSY"), coded("SQLITE_FULL"), coded("ENOSPC"), coded("ECONNREFUSED"), coded("ERR_POSTGRES_CONNECTION_CLOSED"), Object.assign(new Error("x"), { errno: "53100" }), new DomainError("unavailable", "busy")]) {
      expect(transient(e)).toBe(true);
    }
    for (const e of [coded("EMAXLEN"), new RangeError("Maximum call stack size exceeded"), new TypeError("x is undefined"), coded("SQLITE_CONSTRAINT_UNIQUE"), coded("SQLITE_TOOBIG"), new DomainError("invalid", "no"), Object.assign(new Error("x"), { errno: "22P05" })]) {
      expect(transient(e)).toBe(false);
    }
    // Values the database refuses are the message's doing: permanent, like a parse failure.
    expect(refusedData(Object.assign(new Error("x"), { errno: "22021" }))).toBe(true);
    expect(refusedData(coded("SQLITE_TOOBIG"))).toBe(true);
    expect(refusedData(coded("SQLITE_BUSY"))).toBe(false);
  });
});
