// Issue 36, part 5: idle connections. Against both compiled servers, with raw sockets (Bun.connect) so
// nothing in between keeps or closes a connection for us:
// - 1,000 keep-alive connections that had one answer and then say nothing are closed once
//   `--idle-timeout` passes (the server's own descriptors, /proc/<pid>/fd, go back down);
// - an early answer to a request whose body the app did not read (415, 401, 404) closes its
//   connection, and a small body the app did not need keeps it;
// - a flood of idle sockets from one address, against a server whose open-file limit is 512, does
//   not stop /health, and the server logs that a bound was reached.
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { mkdtempSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ensureBuilt, startServer, type Server } from "./support";

setDefaultTimeout(120_000);

const DEMO_KEY = "eak_demo_0123456789abcdefghijklmnopqrstuv";
const IDLE_S = 2;
const BODY_S = 2;
const dec = new TextDecoder();

interface Client {
  text: () => string;
  closed: () => boolean;
  /** ms from connecting until the server closed the socket. */
  closedAfter: () => number | null;
  write(s: string): void;
  end(): void;
}

async function connect(port: number): Promise<Client> {
  let text = "";
  let closedAt: number | null = null;
  const t0 = performance.now();
  const sock = await Bun.connect({
    hostname: "127.0.0.1",
    port,
    socket: {
      data: (_s, d) => void (text += dec.decode(d)),
      close: () => void (closedAt = performance.now() - t0),
      error: () => void (closedAt ??= performance.now() - t0),
    },
  });
  return {
    text: () => text,
    closed: () => closedAt !== null,
    closedAfter: () => closedAt,
    write: (s) => void sock.write(s),
    end: () => sock.end(),
  };
}

async function until(cond: () => boolean, ms: number): Promise<boolean> {
  const end = Date.now() + ms;
  while (!cond() && Date.now() < end) await Bun.sleep(50);
  return cond();
}

const fds = (pid: number) => readdirSync(`/proc/${pid}/fd`).length;
const statusOf = (raw: string) => Number(/^HTTP\/1\.1 (\d{3})/.exec(raw)?.[1] ?? 0);

/** `n` sockets, each asking GET /health once and then saying nothing; resolves once all are answered. */
async function idleFlood(port: number, n: number, answeredWithin = 30_000): Promise<Client[]> {
  const clients: Client[] = [];
  for (let i = 0; i < n; i += 100) {
    const batch = await Promise.all(Array.from({ length: Math.min(100, n - i) }, () => connect(port)));
    for (const c of batch) c.write("GET /health HTTP/1.1\r\nHost: x\r\n\r\n");
    clients.push(...batch);
  }
  await until(() => clients.every((c) => c.text().includes("\r\n\r\n") || c.closed()), answeredWithin);
  return clients;
}

let dir = "";
const servers: Server[] = [];
let ob = "";
let ab = "";

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "idle-connections-"));
  [ob, ab] = await Promise.all([ensureBuilt("order-server"), ensureBuilt("automation-server")]);
});

afterAll(async () => {
  for (const s of servers) if (s.proc.exitCode === null) await s.kill("SIGKILL");
  rmSync(dir, { recursive: true, force: true });
});

async function start(name: "orders" | "automation", extra: string[], opts: { nofile?: number } = {}): Promise<Server> {
  const args =
    name === "orders"
      ? [ob, "--profile", "demo", "--db", ":memory:", "--host", "127.0.0.1", ...extra]
      : [ab, "--demo", "--host", "127.0.0.1", "--workers", "1", "--data-dir", join(dir, `data-${servers.length}`), ...extra];
  // A small open-file limit (soft and hard, so Bun cannot raise it) makes the flood reach it.
  const cmd = opts.nofile ? ["sh", "-c", `ulimit -n ${opts.nofile} && exec "$@"`, "sh", ...args] : args;
  const s = await startServer(cmd, { sqlite: true });
  servers.push(s);
  return s;
}

for (const name of ["orders", "automation"] as const) {
  describe(`${name}: idle keep-alive connections`, () => {
    test("1,000 connections idle after their answer are closed after --idle-timeout", async () => {
      const s = await start(name, ["--idle-timeout", String(IDLE_S), "--body-timeout", String(BODY_S), "--max-connections-per-address", "5000"]);
      const pid = s.proc.pid;
      const before = fds(pid);
      const clients = await idleFlood(s.port, 1000);
      expect(clients.filter((c) => statusOf(c.text()) === 200).length).toBe(1000);
      const held = fds(pid);
      expect(held).toBeGreaterThanOrEqual(before + 900);
      // Bun closes idle sockets on 4 s ticks: 2 s means within 4 s of the answer.
      const t0 = Date.now();
      expect(await until(() => clients.every((c) => c.closed()), IDLE_S * 1000 + 8000)).toBe(true);
      const closedIn = Date.now() - t0;
      expect(await until(() => fds(pid) <= before + 10, 3000)).toBe(true);
      console.log(`${name}: ${held - before} descriptors for 1,000 idle connections, all closed ${closedIn} ms after the last answer; ${fds(pid)} open after (${before} before)`);
      // The server answers as before.
      expect((await fetch(`${s.url}/health`)).status).toBe(200);
    });

    test("an early answer to a body the app did not read closes the connection; a small unread body keeps it", async () => {
      const s = await start(name, ["--idle-timeout", "60", "--body-timeout", String(BODY_S)]);
      const early =
        name === "orders"
          ? [
              ["404", `POST /nothing HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n0123456789`],
              ["401", `POST /orders HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n0123456789`],
            ]
          : [
              ["415", `POST /v1/files HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${DEMO_KEY}\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n0123456789`],
              ["401", `POST /v1/automations HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n0123456789`],
              ["404", `POST /v1/nothing HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${DEMO_KEY}\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n0123456789`],
            ];
      const clients = await Promise.all(
        early.map(async ([status, raw]) => {
          const c = await connect(s.port);
          c.write(raw);
          return { status, c };
        }),
      );
      // Without the fix they stayed open as long as --idle-timeout (60 s here; 120 s before).
      await until(() => clients.every(({ c }) => c.closed()), BODY_S * 1000 + 6000);
      for (const { status, c } of clients) {
        expect(`${status} ${statusOf(c.text())} ${c.closed()}`).toBe(`${status} ${status} true`);
        expect(c.text().toLowerCase()).toContain("connection: close");
      }
      // The same early answer with the whole (small) body: the connection carries the next request.
      const kept = await connect(s.port);
      kept.write(`POST ${name === "orders" ? "/nothing" : "/v1/nothing"} HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 10\r\n\r\n0123456789`);
      expect(await until(() => kept.text().includes("\r\n\r\n"), 5000)).toBe(true);
      expect(statusOf(kept.text())).toBeGreaterThanOrEqual(400);
      kept.write("GET /health HTTP/1.1\r\nHost: x\r\n\r\n");
      expect(await until(() => (kept.text().match(/HTTP\/1\.1 /g) ?? []).length === 2, 5000)).toBe(true);
      expect(kept.text()).toContain("HTTP/1.1 200");
      expect(kept.closed()).toBe(false);
      kept.end();
    });

    test("a flood of idle sockets from one address does not stop /health (open-file limit 512)", async () => {
      // A long idle timeout: what keeps the server answering here is the bound, not the timeout.
      const s = await start(name, ["--idle-timeout", "120"], { nofile: 512 });
      const pid = s.proc.pid;
      const clients = await idleFlood(s.port, 1000, 20_000);
      const probes: number[] = [];
      for (let i = 0; i < 5; i++) {
        const t0 = performance.now();
        const r = await fetch(`${s.url}/health`, { signal: AbortSignal.timeout(5000) }).catch(() => undefined);
        expect(r?.status).toBe(200);
        probes.push(Math.round(performance.now() - t0));
      }
      // The bound is checked every quarter second (src/kernel/connections.ts): the last connections
      // of the flood may still be open until the next sweep.
      await until(() => clients.filter((c) => !c.closed()).length <= 256, 1000);
      const open = fds(pid);
      const stillOpen = clients.filter((c) => !c.closed()).length;
      console.log(`${name}: flood of 1,000 → ${stillOpen} kept open, server holds ${open}/512 descriptors, /health in ${probes.join(", ")} ms`);
      expect(open).toBeLessThan(512 - 32);
      expect(stillOpen).toBeLessThanOrEqual(256);
      expect(clients.filter((c) => statusOf(c.text()) === 200).length).toBe(1000);
      expect(s.output()).toContain("connection bound reached");
      for (const c of clients) if (!c.closed()) c.end();
    });
  });
}
