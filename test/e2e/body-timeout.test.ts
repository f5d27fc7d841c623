// Issue 27: a request whose headers promise a body that never arrives. Both compiled servers answer
// 408 with their error envelope and close the connection once `--body-timeout` passes, instead of
// holding the socket open forever. Driven with a raw TCP client (Bun.connect) so nothing in between
// (fetch, a proxy) finishes or aborts the request for us.
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ensureBuilt, startServer, type Server } from "./support";

setDefaultTimeout(90_000);

const DEMO_KEY = "eak_demo_0123456789abcdefghijklmnopqrstuv";
const TIMEOUT_S = 2;

interface Stalled {
  /** Everything the server sent. */
  text: string;
  /** Milliseconds from sending the headers to the server closing the socket, or null if it never did. */
  closedAfter: number | null;
}

/** Sends `head` (request line + headers, announcing a body) and then nothing; waits up to `waitMs`. */
async function stall(port: number, head: string, waitMs: number): Promise<Stalled> {
  const dec = new TextDecoder();
  let text = "";
  const t0 = performance.now();
  let closedAfter: number | null = null;
  let done: () => void = () => {};
  const closed = new Promise<void>((r) => (done = r));
  const sock = await Bun.connect({
    hostname: "127.0.0.1",
    port,
    socket: {
      data: (_s, d) => {
        text += dec.decode(d);
      },
      close: () => {
        closedAfter = performance.now() - t0;
        done();
      },
      error: () => done(),
    },
  });
  sock.write(head);
  await Promise.race([closed, Bun.sleep(waitMs)]);
  if (closedAfter === null) sock.end();
  return { text, closedAfter };
}

const statusOf = (raw: string) => Number(/^HTTP\/1\.1 (\d{3})/.exec(raw)?.[1] ?? 0);
const bodyOf = (raw: string) => raw.slice(raw.indexOf("\r\n\r\n") + 4);

let dir = "";
let orders: Server | undefined;
let automation: Server | undefined;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "body-timeout-"));
  const [ob, ab] = await Promise.all([ensureBuilt("order-server"), ensureBuilt("automation-server")]);
  [orders, automation] = await Promise.all([
    startServer([ob, "--profile", "demo", "--db", ":memory:", "--host", "127.0.0.1", "--body-timeout", String(TIMEOUT_S)]),
    startServer([ab, "--demo", "--host", "127.0.0.1", "--workers", "1", "--data-dir", join(dir, "data"), "--body-timeout", String(TIMEOUT_S)]),
  ]);
});

afterAll(async () => {
  for (const s of [orders, automation]) if (s && s.proc.exitCode === null) await s.kill("SIGKILL");
  rmSync(dir, { recursive: true, force: true });
});

describe("a body that never arrives", () => {
  test("order-server: 408 in the Spring-style envelope, then the connection is closed", async () => {
    const r = await stall(orders!.port, "POST /users HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n", TIMEOUT_S * 1000 + 8000);
    expect(statusOf(r.text)).toBe(408);
    expect(r.text.toLowerCase()).toContain("connection: close");
    const body = JSON.parse(bodyOf(r.text)) as { status: number; error: string; message: string };
    expect(body.status).toBe(408);
    expect(body.message).toContain("stopped arriving");
    expect(r.closedAfter).not.toBeNull();
    expect(r.closedAfter!).toBeGreaterThanOrEqual(TIMEOUT_S * 1000 - 100);
    expect(r.closedAfter!).toBeLessThan(TIMEOUT_S * 1000 + 5000);
    // The server still answers others.
    expect((await fetch(`${orders!.url}/users`, { method: "POST", headers: { "content-type": "application/json" }, body: "{}" })).status).toBe(400);
  });

  test("automation-server: 408 in the issues envelope on a JSON route and on a streamed upload", async () => {
    for (const [path, type] of [
      ["/v1/automations", "application/json"],
      ["/v1/files", "multipart/form-data; boundary=xyz"],
    ]) {
      const r = await stall(
        automation!.port,
        `POST ${path} HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${DEMO_KEY}\r\nContent-Type: ${type}\r\nContent-Length: 100\r\n\r\n`,
        TIMEOUT_S * 1000 + 8000,
      );
      expect(statusOf(r.text)).toBe(408);
      expect(r.text.toLowerCase()).toContain("connection: close");
      const body = JSON.parse(bodyOf(r.text)) as { issues: { code: string; message: string }[]; requestId: string };
      expect(body.issues[0].code).toBe("body_timeout");
      expect(body.requestId).toBeString();
      expect(r.closedAfter).not.toBeNull();
      expect(r.closedAfter!).toBeLessThan(TIMEOUT_S * 1000 + 5000);
    }
    expect((await fetch(`${automation!.url}/health`)).status).toBe(200);
  });

  test("a body that arrives slowly but steadily is not cut off", async () => {
    const payload = JSON.stringify({ username: "slowpoke", password: "secret-password-1", userType: "Customer" });
    const dec = new TextDecoder();
    let text = "";
    const sock = await Bun.connect({
      hostname: "127.0.0.1",
      port: orders!.port,
      socket: { data: (_s, d) => void (text += dec.decode(d)) },
    });
    sock.write(`POST /users HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(payload)}\r\n\r\n`);
    // Three pieces, each gap shorter than the timeout, together longer than it.
    const third = Math.ceil(payload.length / 3);
    for (let i = 0; i < 3; i++) {
      await Bun.sleep(TIMEOUT_S * 500);
      sock.write(payload.slice(i * third, (i + 1) * third));
    }
    const until = Date.now() + 5000;
    while (!text.includes("\r\n\r\n") && Date.now() < until) await Bun.sleep(20);
    sock.end();
    expect(statusOf(text)).not.toBe(408);
    expect(statusOf(text)).toBeLessThan(500);
  });
});

describe("a broken chunked body", () => {
  test("automation-server: Bun's parser answers 400 and closes; the app logs no 'unhandled error' for it", async () => {
    const before = automation!.output();
    const r = await stall(
      automation!.port,
      `POST /v1/files HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${DEMO_KEY}\r\nContent-Type: multipart/form-data; boundary=xyz\r\nTransfer-Encoding: chunked\r\n\r\n5\r\n--xyz\r\nZZ-not-a-size\r\nabc\r\n`,
      5000,
    );
    expect(statusOf(r.text)).toBe(400);
    expect(r.closedAfter).not.toBeNull();
    await Bun.sleep(300);
    expect(automation!.output().slice(before.length)).not.toContain("unhandled error");
    expect((await fetch(`${automation!.url}/health`)).status).toBe(200);
  });
});
