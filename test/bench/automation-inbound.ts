// Benchmark: inbound e-mail through the compiled automation-server (`--smtp-port 0`): N messages
// (default 1,000), each with its own 100 KiB attachment, sent by nodemailer over 4 SMTP connections
// (closed loop) to an e-mail-triggered workflow; messages/s until the last 250, and the time from a
// message's send to its run's start (p50/p95). The reference, measured in the same run with the same
// client and messages: an SMTP sink that only writes each message to a file (test/support/smtp-sink.ts),
// whose "start" is its 250.
//
//   bun test/bench/automation-inbound.ts [messages=1000]
import { Database } from "bun:sqlite";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import nodemailer, { type SendMailOptions } from "nodemailer";
import { startStoreSink } from "../support/smtp-sink";
import { demoServer } from "../e2e/automation-demo";

const N = Number(process.argv[2] ?? 1000);
const CONNECTIONS = 4;
const KiB = 1024;
const DOMAIN = "bench.example";
const WORKFLOW = `
name: inbound-bench
triggerMethods: [{type: email, whitelist: {domains: [sender.example]}}]
inputs:
  - {name: email, type: object}
  - {name: document, type: file, required: false}
steps:
  - {name: note, type: transform.set, with: {fields: {subject: "{{ input.email.subject }}"}}}
`;

const messages = (to: string, tag: string): SendMailOptions[] =>
  Array.from({ length: N }, (_, i) => {
    const content = new Uint8Array(100 * KiB);
    for (let o = 0; o < content.byteLength; o += 65536) crypto.getRandomValues(content.subarray(o, o + 65536));
    return {
      from: `client${i % 20}@sender.example`,
      to,
      subject: `message ${i}`,
      text: `message ${i} of the benchmark`,
      messageId: `<${tag}-${i}@sender.example>`,
      attachments: [{ filename: `document-${i}.pdf`, content: Buffer.from(content), contentType: "application/pdf" }],
    };
  });

/** Sends every message over a pool; resolves with the wall time and each message's send start and 250 (ms, epoch). */
async function blast(port: number, mails: SendMailOptions[]): Promise<{ seconds: number; sent: number[]; answered: number[] }> {
  const t = nodemailer.createTransport({ host: "127.0.0.1", port, secure: false, ignoreTLS: true, pool: true, maxConnections: CONNECTIONS, maxMessages: Infinity });
  const sent: number[] = [];
  const answered: number[] = [];
  const t0 = performance.now();
  // Closed loop: CONNECTIONS senders, each starting its next message when the last one was answered,
  // so a message's send time is when its SMTP transaction began (not time spent queued in the client).
  let next = 0;
  await Promise.all(
    Array.from({ length: CONNECTIONS }, async () => {
      for (let i = next++; i < mails.length; i = next++) {
        sent[i] = Date.now();
        const r = await t.sendMail(mails[i]);
        if (!/^250 /.test(r.response)) throw new Error(`message ${i}: ${r.response}`);
        answered[i] = Date.now();
      }
    }),
  );
  const seconds = (performance.now() - t0) / 1000;
  t.close();
  return { seconds, sent, answered };
}

const pct = (xs: number[], p: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))];
};

const dir = mkdtempSync(join(tmpdir(), "bench-inbound-"));
const demo = await demoServer({ prefix: "bench-inbound-server-", workers: 2, args: ["--smtp-port", "0", "--mail-domain", DOMAIN, "--smtp-rate-limit", "0"], env: { LOG_LEVEL: "warn" } });
try {
  const server = await demo.boot();
  for (let i = 0; i < 200 && !/smtp on smtp:/.test(server.output()); i++) await Bun.sleep(10);
  const smtpPort = Number(/smtp on smtp:\/\/[^:\s]+:(\d+)/.exec(server.output())![1]);
  if ((await demo.api("POST", "/v1/automations", { yaml: WORKFLOW })).status !== 201) throw new Error("workflow not created");
  const detail = (await (await demo.api("GET", "/v1/automations/workflows.inbound-bench?expand=inboundEmail")).json()) as { inboundEmail: { address: string } };
  const address = detail.inboundEmail.address;

  const sink = await startStoreSink(dir);
  // Warm both up (JIT, first connections, SQLite pages), then measure.
  await blast(sink.port, messages(`someone@${DOMAIN}`, "warm-sink").slice(0, 20));
  await blast(smtpPort, messages(address, "warm").slice(0, 20));

  const sinkRun = await blast(sink.port, messages(`someone@${DOMAIN}`, "sink"));
  const serverRun = await blast(smtpPort, messages(address, "bench"));

  // Each run's start, read from the database once every run has started.
  const db = new Database(demo.dbPath, { readonly: true });
  const started = () =>
    db
      .query<{ mid: string; started: string | null }, []>(
        "SELECT json_extract(trigger_detail, '$.email.messageId') AS mid, started_at AS started FROM runs WHERE trigger_type = 'email' AND json_extract(trigger_detail, '$.email.messageId') LIKE '<bench-%'",
      )
      .all();
  let rows = started();
  for (let i = 0; i < 1200 && (rows.length < N || rows.some((r) => !r.started)); i++) {
    await Bun.sleep(100);
    rows = started();
  }
  db.close();
  if (rows.length !== N) throw new Error(`${rows.length} runs for ${N} messages`);
  const toStart = rows.map((r) => Date.parse(r.started!) - serverRun.sent[Number(/<bench-(\d+)@/.exec(r.mid)![1])]);
  const to250 = serverRun.answered.map((a, i) => a - serverRun.sent[i]);
  const sinkTo250 = sinkRun.answered.map((a, i) => a - sinkRun.sent[i]);
  await sink.stop();

  const rate = N / serverRun.seconds;
  const sinkRate = N / sinkRun.seconds;
  console.log(`inbound e-mail: ${N} messages × 100 KiB attachment, ${CONNECTIONS} pooled connections, ${process.env.HOSTNAME ?? "this machine"}, load ${(await Bun.file("/proc/loadavg").text()).split(" ")[0]}`);
  console.log(`  automation-server: ${rate.toFixed(0)} messages/s; send → 250 p50 ${pct(to250, 50)} ms p95 ${pct(to250, 95)} ms; send → run started p50 ${pct(toStart, 50)} ms p95 ${pct(toStart, 95)} ms`);
  console.log(`  store-only sink:   ${sinkRate.toFixed(0)} messages/s; send → 250 p50 ${pct(sinkTo250, 50)} ms p95 ${pct(sinkTo250, 95)} ms`);
  console.log(`  ratio: ${(rate / sinkRate).toFixed(2)}× the sink's messages/s; run start p50 ${(pct(toStart, 50) / Math.max(1, pct(sinkTo250, 50))).toFixed(1)}× the sink's 250 p50`);
} finally {
  await demo.close();
  rmSync(dir, { recursive: true, force: true });
}
