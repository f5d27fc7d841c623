// The compiled automation-server does not connect into its own network for a tenant: e-mail servers
// aimed at 127.0.0.1, 169.254.169.254 or 10.0.0.1 are refused, a name resolving to loopback
// (localhost) is refused at send time, and a real listening socket on loopback sees no connection.
// With --outbound-allow 127.0.0.1 the test send answers the same for a closed, a silent and a
// resetting port, so it no longer maps which ports are open.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { lookup } from "node:dns/promises";
import { demoServer, type DemoServer } from "./automation-demo";
import { refusedPort, start } from "./support";

type Mode = "count" | "silent" | "reset";

function peer(mode: Mode, host = "127.0.0.1") {
  const state = { connections: 0 };
  const listener = Bun.listen({
    hostname: host,
    port: 0,
    socket: {
      open(s) {
        state.connections++;
        if (mode === "reset") s.terminate();
      },
      data() {},
    },
  });
  return { port: listener.port, state, stop: () => listener.stop(true) };
}

let refusing: DemoServer;
let allowing: DemoServer;
const peers: { stop(): void }[] = [];

beforeAll(async () => {
  refusing = await demoServer({ prefix: "automation-outbound-refuse-", workers: 1, env: { AUTOMATION_OUTBOUND_ALLOW: undefined } });
  allowing = await demoServer({ prefix: "automation-outbound-allow-", workers: 1, args: ["--outbound-allow", "127.0.0.1"] });
  await Promise.all([refusing.boot(), allowing.boot()]);
}, 120_000);

afterAll(async () => {
  for (const p of peers) p.stop();
  await refusing?.close();
  await allowing?.close();
});

const smtp = (name: string, host: string, port: number) => ({ name, transport: "smtp", host, port, security: "none", fromEmail: "robot@example.com" });
const body = async (r: Response) => ({ status: r.status, json: (await r.json()) as Record<string, any> });

test("without --outbound-allow: internal targets are refused at once and nothing connects to a listening loopback port", async () => {
  const listening = peer("count");
  const [first] = await lookup("localhost", { all: true, verbatim: true });
  const local = peer("count", first.address);
  peers.push(listening, local);
  for (const host of ["127.0.0.1", "169.254.169.254", "10.0.0.1", "[::1]"]) {
    const r = await body(await refusing.api("POST", "/v1/email-servers", smtp(`s-${host}`, host, listening.port)));
    expect({ host, status: r.status, field: r.json.issues?.[0]?.field, code: r.json.issues?.[0]?.code }).toEqual({ host, status: 400, field: "host", code: "host_not_allowed" });
  }
  const named = await body(await refusing.api("POST", "/v1/email-servers", smtp("by-name", "localhost", local.port)));
  expect(named.status).toBe(201);
  const t0 = performance.now();
  const test = await body(await refusing.api("POST", `/v1/email-servers/${named.json.id}/test`, { to: "a@example.com" }));
  expect(performance.now() - t0).toBeLessThan(2000);
  expect(test.status).toBe(400);
  expect(test.json.issues[0]).toMatchObject({ field: "host", code: "host_not_allowed" });
  // The demo's own server (127.0.0.1:1025, seeded by the operator's --demo) is refused when it sends too.
  const servers = (await body(await refusing.api("GET", "/v1/email-servers"))).json.data as { id: string; name: string }[];
  const demo = servers.find((s) => s.name === "demo-mail")!;
  expect((await body(await refusing.api("POST", `/v1/email-servers/${demo.id}/test`, { to: "a@example.com" }))).json.issues[0].code).toBe("host_not_allowed");
  expect(listening.state.connections).toBe(0);
  expect(local.state.connections).toBe(0);
});

test("with --outbound-allow 127.0.0.1: a closed, a silent and a resetting port give the same test-send answer", async () => {
  const silent = peer("silent");
  const reset = peer("reset");
  peers.push(silent, reset);
  const ports = { closed: refusedPort(), silent: silent.port, reset: reset.port };
  const ids: Record<string, string> = {};
  for (const [name, port] of Object.entries(ports)) {
    const r = await body(await allowing.api("POST", "/v1/email-servers", smtp(name, "127.0.0.1", port)));
    expect(r.status).toBe(201);
    ids[name] = r.json.id;
  }
  const answers = await Promise.all(Object.values(ids).map(async (id) => body(await allowing.api("POST", `/v1/email-servers/${id}/test`, { to: "a@example.com" }))));
  for (const a of answers) expect(a).toEqual({ status: 200, json: { ok: false, error: "test message not sent: could not deliver through the SMTP server" } });
  expect(silent.state.connections).toBe(1);
  // The flag lifts only what it lists.
  expect((await body(await allowing.api("POST", "/v1/email-servers", smtp("meta", "169.254.169.254", 25)))).status).toBe(400);
}, 60_000);

test("--outbound-allow with something that is not an address or range: one clear line, exit non-zero", async () => {
  const p = start([allowing.dir + "/automation-server", "--outbound-allow", "intranet", "--port", "0", "--data-dir", allowing.dir + "/bad"], { env: { PORT: undefined } });
  expect(await p.proc.exited).not.toBe(0);
  expect(p.output()).toContain('--outbound-allow takes IP addresses and CIDR ranges such as 127.0.0.1 or 10.0.0.0/8 (got "intranet")');
  expect(p.output()).not.toContain("    at ");
});
