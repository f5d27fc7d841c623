// E-mail servers may not aim into the server's own network: internal IP literals are refused when a
// server is created or changed, names that resolve there when a message would be sent, and in both
// cases no connection is attempted (a real listening socket on loopback counts them). With the
// operator's --outbound-allow the test send answers one message for every peer that does not speak
// SMTP, so it cannot map which ports of a network are open.
import { afterAll, describe, expect, test } from "bun:test";
import { lookup } from "node:dns/promises";
import { createAutomation } from "../../../src/automation/automations/service";
import { runsOf } from "../../../src/automation/runs/service";
import { harness, json } from "../app/harness";

type Mode = "count" | "reset" | "http" | "garbage";

/** A raw TCP peer on `host` that counts connections and then behaves per `mode`. */
function peer(mode: Mode, host = "127.0.0.1") {
  const state = { connections: 0 };
  const listener = Bun.listen({
    hostname: host,
    port: 0,
    socket: {
      open(s) {
        state.connections++;
        if (mode === "reset") s.terminate();
        else if (mode === "http") s.end("HTTP/1.1 400 Bad Request\r\nconnection: close\r\ncontent-length: 0\r\n\r\n");
        else if (mode === "garbage") s.end("SSH-2.0-OpenSSH_9.6\r\n");
      },
      data() {},
    },
  });
  return { port: listener.port, state, stop: () => listener.stop(true) };
}

const peers: { stop(): void }[] = [];
const track = <T extends { stop(): void }>(p: T) => (peers.push(p), p);
afterAll(() => {
  for (const p of peers) p.stop();
});

function closedPort(): number {
  const p = peer("count");
  p.stop();
  return p.port;
}

async function setup(outboundAllow: string[]) {
  const h = await harness({ workers: 1, outboundAllow });
  const t = await h.tenant(`t${Math.random().toString(36).slice(2, 8)}`);
  const call = async (method: string, path: string, body?: unknown) => {
    const r = await h.req(method, path, { key: t.key, body });
    return { status: r.status, body: await json(r) };
  };
  return { h, t, call };
}

const server = (name: string, host: string, port: number) => ({ name, transport: "smtp", host, port, security: "none", fromEmail: "robot@example.com" });

describe("e-mail servers aimed inside the network (no --outbound-allow)", () => {
  test("internal IP literals are refused at create and PATCH with an issue naming host; nothing connects", async () => {
    const { call } = await setup([]);
    const listening = track(peer("count"));
    for (const host of ["127.0.0.1", "169.254.169.254", "10.0.0.1", "192.168.0.10", "100.64.0.1", "0.0.0.0", "::1", "[::1]", "::ffff:127.0.0.1", "fd00:ec2::254", "fe80::1"]) {
      const r = await call("POST", "/v1/email-servers", server(`s-${host}`, host, listening.port));
      expect({ host, status: r.status }).toEqual({ host, status: 400 });
      expect(r.body.issues[0]).toMatchObject({ field: "host", code: "host_not_allowed" });
      expect(r.body.issues[0].message).toContain("--outbound-allow");
    }
    expect((await call("POST", "/v1/email-servers", server("meta", "169.254.169.254", 80))).body.issues[0].message).toContain("cloud metadata");
    const ok = await call("POST", "/v1/email-servers", server("public", "smtp.example.com", 587));
    expect(ok.status).toBe(201);
    const patched = await call("PATCH", `/v1/email-servers/${ok.body.id}`, { transport: "smtp", host: "10.0.0.1", port: 25, security: "none" });
    expect(patched.status).toBe(400);
    expect(patched.body.issues[0]).toMatchObject({ field: "host", code: "host_not_allowed" });
    expect((await call("GET", `/v1/email-servers/${ok.body.id}`)).body.host).toBe("smtp.example.com");
    expect(listening.state.connections).toBe(0);
  });

  test("a name resolving to loopback (localhost) is refused when sending: the test send answers 400 at once, action.email fails, nothing connects", async () => {
    const { h, t, call } = await setup([]);
    const [first] = await lookup("localhost", { all: true, verbatim: true });
    const listening = track(peer("count", first.address));
    const s = await call("POST", "/v1/email-servers", server("local", "localhost", listening.port));
    expect(s.status).toBe(201);
    const started = performance.now();
    const r = await call("POST", `/v1/email-servers/${s.body.id}/test`, { to: "a@example.com" });
    expect(performance.now() - started).toBeLessThan(2000);
    expect(r.status).toBe(400);
    expect(r.body.issues[0]).toMatchObject({ field: "host", code: "host_not_allowed" });
    expect(r.body.issues[0].message).toContain("localhost resolves to an address inside this server's network");
    expect(r.body.issues[0].message).not.toContain(first.address);

    runsOf(h.ctx).startWorkers();
    const wf = await createAutomation(h.ctx.storage.automations, h.clock, t.id, "name: mail-local\nsteps:\n  - {name: send, type: action.email, with: {server: local, to: a@example.com, subject: s, text: t}}\n");
    const done = await json(await h.req("POST", "/v1/runs?wait_for_completion=30", { key: t.key, body: { target: wf.id, input: {} } }));
    expect(done.execution.status).toBe("failed");
    expect(done.error).toContain("e-mail not sent through server local: its SMTP host localhost resolves to an address inside this server's network");
    expect(listening.state.connections).toBe(0);
  });
});

describe("with --outbound-allow 127.0.0.1", () => {
  test("the literal is accepted, and a closed port, a reset, an HTTP and an SSH peer all answer the same error", async () => {
    const { call } = await setup(["127.0.0.1"]);
    const targets = { closed: closedPort(), reset: track(peer("reset")).port, http: track(peer("http")).port, ssh: track(peer("garbage")).port };
    const errors: Record<string, unknown> = {};
    for (const [name, port] of Object.entries(targets)) {
      const s = await call("POST", "/v1/email-servers", server(name, "127.0.0.1", port));
      expect(s.status).toBe(201);
      const r = await call("POST", `/v1/email-servers/${s.body.id}/test`, { to: "a@example.com" });
      expect(r.status).toBe(200);
      errors[name] = r.body;
    }
    for (const body of Object.values(errors)) expect(body).toEqual({ ok: false, error: "test message not sent: could not deliver through the SMTP server" });
    // Only the allowed address: metadata and other private ranges stay refused.
    expect((await call("POST", "/v1/email-servers", server("meta", "169.254.169.254", 25))).status).toBe(400);
    expect((await call("POST", "/v1/email-servers", server("ten", "10.0.0.1", 25))).status).toBe(400);
  });
});
