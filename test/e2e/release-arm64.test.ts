// The linux-arm64 release, run: `bun run release --targets linux-arm64` cross-compiles all three, the
// server archives are unpacked with tar, and each executable runs under QEMU user emulation (Debian's
// qemu-user-static, with the arm64 C library of libc6-arm64-cross as its sysroot): each server starts
// with its demo data on a port the OS picks and answers /health and a real request; quotas --json
// reads fixture credentials and asks a fake provider on loopback.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { version } from "../../package.json";
import { DEMO_CLIENT } from "../../src/orders/config";
import { release } from "../../src/kernel/release";
import { parseTargets } from "../../src/kernel/targets";
import { fakeProvider, homeWithCredentials, runEnv, secrets } from "../quotas/fakes";
import { type Server, startServer } from "./support";

const QEMU = ["qemu-aarch64-static", "-L", "/usr/aarch64-linux-gnu"];
const DEMO_KEY = "eak_demo_0123456789abcdefghijklmnopqrstuv";
const versionLine = (name: string) => new RegExp(`^${name} ${version.replaceAll(".", "\\.")} \\(commit [0-9a-f]{12}(-dirty)?, built [0-9TZ:-]+\\)\n$`);

let dir: string;
const exe: Record<string, string> = {};
const servers: Server[] = [];

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "release-arm64-"));
  await release({ targets: parseTargets("linux-arm64"), products: ["order-server", "automation-server", "quotas"], version, out: join(dir, "release"), log: () => {} });
  for (const name of ["order-server", "automation-server"]) {
    const top = `${name}-${version}-linux-arm64`;
    const x = join(dir, name);
    mkdirSync(x);
    const tar = Bun.spawnSync(["tar", "-xzf", join(dir, "release", `${top}.tar.gz`), "-C", x], { stderr: "pipe" });
    if (tar.exitCode !== 0) throw new Error(tar.stderr.toString());
    exe[name] = join(x, top, name);
  }
  exe.quotas = join(dir, "release/bin/linux-arm64/quotas");
}, 600_000);

afterAll(async () => {
  for (const s of servers) if (s.proc.exitCode === null) await s.kill("SIGKILL");
  rmSync(dir, { recursive: true, force: true });
});

async function run(cmd: string[], env: Record<string, string> = { PATH: process.env.PATH ?? "/usr/bin:/bin" }) {
  const p = Bun.spawn(cmd, { env, stdin: "ignore", stdout: "pipe", stderr: "pipe" });
  const [stdout, stderr, code] = await Promise.all([new Response(p.stdout).text(), new Response(p.stderr).text(), p.exited]);
  return { stdout, stderr, code };
}

test("the executables are arm64 ELF and print their version under emulation", async () => {
  for (const name of ["order-server", "automation-server", "quotas"]) {
    const b = await Bun.file(exe[name]).bytes();
    expect([...b.subarray(0, 4)]).toEqual([0x7f, 0x45, 0x4c, 0x46]);
    expect(new DataView(b.buffer).getUint16(18, true)).toBe(183); // e_machine EM_AARCH64
    const v = await run([...QEMU, exe[name], "--version"]);
    expect(v).toMatchObject({ code: 0, stderr: "" });
    expect(v.stdout).toMatch(versionLine(name));
  }
}, 120_000);

test("order-server (arm64) with demo data answers /health and a customer's orders", async () => {
  const cwd = join(dir, "orders-data");
  mkdirSync(cwd);
  const s = await startServer([...QEMU, exe["order-server"], "--profile", "demo", "--host", "127.0.0.1"], { cwd, timeoutMs: 120_000, env: { ORDER_DB: undefined, ORDER_PROFILE: undefined } });
  servers.push(s);
  expect(await (await fetch(`${s.url}/health`)).json()).toEqual({ status: "ok" });
  const q = new URLSearchParams({ grant_type: "password", username: "anna", password: "pass", client_id: DEMO_CLIENT.id, client_secret: DEMO_CLIENT.secret });
  const login = await fetch(`${s.url}/oauth/token?${q}`, { method: "POST" });
  expect(login.status).toBe(200);
  const { access_token } = (await login.json()) as { access_token: string };
  const orders = await fetch(`${s.url}/users/1/orders?size=5`, { headers: { authorization: `Bearer ${access_token}` } });
  expect(orders.status).toBe(200);
  expect(((await orders.json()) as unknown[]).length).toBe(5);
  expect(Number(orders.headers.get("x-total-count"))).toBeGreaterThan(5);
  await s.kill();
}, 180_000);

test("automation-server (arm64) --demo answers /health and lists the demo workflows", async () => {
  const cwd = join(dir, "automation-data");
  mkdirSync(cwd);
  const s = await startServer([...QEMU, exe["automation-server"], "--demo", "--host", "127.0.0.1", "--workers", "1"], { cwd, timeoutMs: 120_000, env: { AUTOMATION_DATA_DIR: undefined } });
  servers.push(s);
  expect((await fetch(`${s.url}/health`)).status).toBe(200);
  const list = await fetch(`${s.url}/api/v1/automations`, { headers: { authorization: `Bearer ${DEMO_KEY}` } });
  expect(list.status).toBe(200);
  const { data } = (await list.json()) as { data: { slug: string }[] };
  expect(data.map((a) => a.slug)).toEqual(expect.arrayContaining(["hello", "invoice-summary"]));
  await s.kill();
}, 180_000);

test("quotas (arm64) --json reads fixture credentials and the provider's answer", async () => {
  const h = homeWithCredentials();
  const fakes = [fakeProvider("deepseek"), fakeProvider("claude")];
  try {
    const r = await run([...QEMU, exe.quotas, "--json", "--no-update-check", "--provider=deepseek,claude"], runEnv(h, fakes));
    expect(r.code).toBe(0);
    const { providers } = JSON.parse(r.stdout) as { providers: { provider: string; status: string; windows: { window: string }[] }[] };
    expect(providers.map((p) => [p.provider, p.status])).toEqual([["claude", "available"], ["deepseek", "available"]]);
    expect(providers[1].windows.map((w) => w.window)).toContain("balance");
    expect(r.stdout).not.toContain(secrets.deepseek);
  } finally {
    for (const f of fakes) f.stop();
    h.cleanup();
  }
}, 120_000);
