// Fault: the compiled automation-server's outbound peers misbehave. An SMTP server that accepts the
// connection and never says a word, one that resets the connection, one that swallows the message and
// never confirms it; a model server that hangs or cuts its answer off. Runs using them end within the
// configured timeouts with a clear error (or succeed on the documented retry), the API answers
// /health quickly meanwhile, no e-mail step is attempted twice, and no model call is counted twice.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Socket } from "bun";
import { type FakeRequest, startFakeModels } from "../support/fake-models";
import { demoServer, type DemoServer } from "./automation-demo";

type Mode = "silent" | "reset" | "swallow";

/** A raw SMTP peer that misbehaves in `mode`; counts connections and messages whose data it read. */
function badSmtp(mode: Mode) {
  const state = { connections: 0, dataEnded: 0 };
  const listener = Bun.listen<{ buf: string; inData: boolean }>({
    hostname: "127.0.0.1",
    port: 0,
    socket: {
      open(s) {
        s.data = { buf: "", inData: false };
        state.connections++;
        if (mode !== "silent") s.write("220 fake ESMTP\r\n");
      },
      data(s: Socket<{ buf: string; inData: boolean }>, chunk) {
        s.data.buf += chunk.toString();
        for (;;) {
          if (s.data.inData) {
            const end = s.data.buf.indexOf("\r\n.\r\n");
            if (end < 0) return;
            s.data.buf = s.data.buf.slice(end + 5);
            s.data.inData = false;
            state.dataEnded++;
            return; // swallow: the message is never confirmed
          }
          const nl = s.data.buf.indexOf("\r\n");
          if (nl < 0) return;
          const line = s.data.buf.slice(0, nl).toUpperCase();
          s.data.buf = s.data.buf.slice(nl + 2);
          if (mode === "reset") return void s.terminate();
          if (line.startsWith("EHLO")) s.write("250-fake\r\n250 8BITMIME\r\n");
          else if (line.startsWith("DATA")) {
            s.write("354 go ahead\r\n");
            s.data.inData = true;
          } else s.write("250 ok\r\n");
        }
      },
    },
  });
  return { port: listener.port, state, stop: () => listener.stop(true) };
}

const smtp = { silent: badSmtp("silent"), reset: badSmtp("reset"), swallow: badSmtp("swallow") };
const fake = await startFakeModels();
const configDir = mkdtempSync(join(tmpdir(), "faults-peers-"));
let demo: DemoServer;

const CLASSIFIED = { label: "invoice", confidence: 0.9, reason: "says invoice" };
// The model's answer depends on a marker in the text: hang always, or reset the first attempt only.
const resetOnce = new Set<string>();
const arrivals = new Map<string, number[]>();
fake.fallback = (r: FakeRequest) => {
  const marker = /(hang|reset)-\d+/.exec(r.prompt)?.[0];
  if (marker) arrivals.set(marker, [...(arrivals.get(marker) ?? []), Date.now()]);
  if (marker?.startsWith("hang")) return { hang: true };
  if (marker?.startsWith("reset") && !resetOnce.has(marker)) {
    resetOnce.add(marker);
    return { reset: true };
  }
  return { json: CLASSIFIED };
};

beforeAll(async () => {
  const file = join(configDir, "models.toml");
  writeFileSync(file, fake.toml({ timeoutMs: 1500, maxRetries: 2, retryBaseMs: 50 }));
  demo = await demoServer({ prefix: "faults-peers-", workers: 4, env: { AUTOMATION_MODELS: file, FAKE_ANTHROPIC_KEY: "k", AUTOMATION_OUTBOUND_ALLOW: "127.0.0.1" } });
  await demo.boot();
}, 120_000);

afterAll(async () => {
  await demo?.close();
  await fake.close();
  for (const s of Object.values(smtp)) s.stop();
  rmSync(configDir, { recursive: true, force: true });
});

async function json<T>(r: Promise<Response>): Promise<T> {
  return (await (await r).json()) as T;
}

type Run = { id: string; execution: { status: string }; error?: { message?: string } | string; output?: unknown };
const errorOf = (r: Run) => (typeof r.error === "string" ? r.error : r.error?.message) ?? "";

/** Starts runs, then polls each to its end; resolves with the runs and how long each took. */
async function runAll(target: string, inputs: unknown[], timeoutMs: number): Promise<{ run: Run; ms: number }[]> {
  const t0 = performance.now();
  const ids = await Promise.all(inputs.map((input) => json<{ id: string }>(demo.api("POST", "/v1/runs", { target, input })).then((r) => r.id)));
  const out: { run: Run; ms: number }[] = new Array(ids.length);
  const until = Date.now() + timeoutMs;
  while (out.filter(Boolean).length < ids.length && Date.now() < until) {
    for (const [i, id] of ids.entries()) {
      if (out[i]) continue;
      const run = await json<Run & { finished: boolean }>(demo.api("GET", `/v1/runs/${id}`));
      if (run.finished) out[i] = { run, ms: performance.now() - t0 };
    }
    await Bun.sleep(100);
  }
  for (const [i, id] of ids.entries()) if (!out[i]) throw new Error(`run ${id} did not finish within ${timeoutMs} ms`);
  return out;
}

/** Probes /health every 50 ms until `done` settles; the slowest answer in ms. */
async function probeWhile(done: Promise<unknown>): Promise<{ max: number; n: number }> {
  let settled = false;
  void done.finally(() => (settled = true));
  let max = 0;
  let n = 0;
  while (!settled) {
    const t = performance.now();
    const r = await fetch(`${demo.base}/health`);
    expect(r.status).toBe(200);
    max = Math.max(max, performance.now() - t);
    n++;
    await Bun.sleep(50);
  }
  return { max, n };
}

test("SMTP servers that stay silent, reset, or swallow the message: the e-mail step fails within the timeout, once, with a clear error", async () => {
  for (const [name, s] of Object.entries(smtp)) {
    const created = await demo.api("POST", "/v1/email-servers", { name: `bad-${name}`, transport: "smtp", host: "127.0.0.1", port: s.port, security: "none", fromEmail: "robot@example.com" });
    expect(created.status).toBe(201);
  }
  // The step asks for automatic retries: e-mail is never retried automatically (documented), so each
  // run talks to the server exactly once.
  const workflow = `
name: mail-fault
inputs: [{name: server, type: string, required: true}]
steps:
  - {name: mail, type: action.email, retry: {mode: automatic, maxAttempts: 3}, with: {server: "{{ input.server }}", to: "a@example.com", subject: hi, text: hello}}
`;
  expect((await demo.api("POST", "/v1/automations", { yaml: workflow })).status).toBe(201);
  const runs = runAll("workflows.mail-fault", ["silent", "reset", "swallow"].map((m) => ({ server: `bad-${m}` })), 60_000);
  const health = await probeWhile(runs);
  const done = await runs;
  const byMode = Object.fromEntries(["silent", "reset", "swallow"].map((m, i) => [m, done[i]]));
  console.log(
    `smtp faults: ${Object.entries(byMode).map(([m, d]) => `${m} → ${d.run.execution.status} in ${(d.ms / 1000).toFixed(1)} s ("${errorOf(d.run)}")`).join("; ")}; ` +
      `/health max ${health.max.toFixed(1)} ms over ${health.n} probes`,
  );
  for (const [mode, d] of Object.entries(byMode)) {
    expect({ mode, status: d.run.execution.status }).toEqual({ mode, status: "failed" });
    expect(errorOf(d.run)).toContain("e-mail not sent");
    // The transport's 20 s timeout (plus queueing), never an open-ended wait.
    expect(d.ms).toBeLessThan(45_000);
  }
  // One message whatever the peer did: the error must not tell a silent port from one that resets.
  for (const d of Object.values(byMode)) expect(errorOf(d.run)).toContain("could not deliver through the SMTP server");
  expect(new Set(Object.values(byMode).map((d) => errorOf(d.run))).size).toBe(1);
  expect(smtp.silent.state.connections).toBe(1);
  expect(smtp.reset.state.connections).toBe(1);
  expect(smtp.swallow.state.connections).toBe(1);
  expect(smtp.swallow.state.dataEnded).toBe(1);
  expect(health.max).toBeLessThan(1000);
}, 90_000);

test("model servers that hang or cut the answer off: retried per the provider's policy, failed within its timeouts, each call counted once", async () => {
  const workflow = `
name: classify-fault
inputs: [{name: text, type: string, required: true}]
steps:
  - {name: kind, type: ai.classify, with: {input: "{{ input.text }}", labels: [invoice, letter]}}
output: {label: "{{ steps.kind.output.label }}"}
`;
  expect((await demo.api("POST", "/v1/automations", { yaml: workflow })).status).toBe(201);
  const before = fake.requests.length;
  const runs = runAll("workflows.classify-fault", [{ text: "hang-1 an invoice" }, { text: "reset-1 an invoice" }, { text: "reset-2 an invoice" }], 60_000);
  const health = await probeWhile(runs);
  const [hung, reset1, reset2] = await runs;
  const sent = fake.requests.slice(before);
  const count = (marker: string) => sent.filter((r) => r.prompt.includes(marker)).length;
  const usage = async (id: string) => (await json<{ usage: { tokens: { input: number; output: number }; llmCallCount: number } }>(demo.api("GET", `/v1/runs/${id}/usage`))).usage;
  console.log(
    `model faults: hang → ${hung.run.execution.status} in ${(hung.ms / 1000).toFixed(1)} s after ${count("hang-1")} attempts ("${errorOf(hung.run)}"); ` +
      `reset → ${reset1.run.execution.status} after ${count("reset-1")} attempts; /health max ${health.max.toFixed(1)} ms over ${health.n} probes`,
  );

  // Hang: three attempts of 1.5 s (max_retries = 2), then a clear failure; well within a bound.
  expect(hung.run.execution.status).toBe("failed");
  expect(errorOf(hung.run)).toContain("no answer within 1500 ms (after 3 attempts)");
  expect(count("hang-1")).toBe(3);
  expect(hung.ms).toBeLessThan(20_000);
  const hungUsage = await usage(hung.run.id);
  expect(hungUsage.tokens).toMatchObject({ input: 0, output: 0 });
  expect(hungUsage.llmCallCount).toBeLessThanOrEqual(1);

  // Reset on the first attempt: retried once, the run completes, and the usage is one call's.
  for (const [r, marker] of [[reset1, "reset-1"], [reset2, "reset-2"]] as const) {
    expect(r.run.execution.status).toBe("completed");
    expect(r.run.output).toEqual({ label: "invoice" });
    expect(count(marker)).toBe(2);
    // The retry followed the dropped connection at once, not the 1.5 s attempt timeout.
    const [first, second] = arrivals.get(marker)!;
    expect(second - first).toBeLessThan(1000);
    const u = await usage(r.run.id);
    expect(u.llmCallCount).toBe(1);
    expect(u.tokens).toMatchObject({ input: 100, output: 20 });
  }
  expect(health.max).toBeLessThan(1000);
}, 90_000);
