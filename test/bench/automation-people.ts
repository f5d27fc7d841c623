// Benchmark (issue 37): what a person's session costs against an API key on the compiled server.
// `GET /v1/runs?limit=20` with the session cookie against the same request with a key of the same
// tenant (aim: ≤ 1.1×), in alternating rounds so the machine's load meets both alike; each figure is the
// best of the rounds, with the server's CPU time per request read from /proc.
//   bun test/bench/automation-people.ts [--rounds 3] [--seconds 4] [--runs 200]
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { automationPgUrl, ensureBuilt, startServer } from "../e2e/support";

const arg = (name: string, dflt: number) => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? Number(process.argv[i + 1]) : dflt;
};
const ROUNDS = arg("rounds", 3);
const SECONDS = arg("seconds", 4);
const RUNS = arg("runs", 200);
const PASSWORD = "a long enough passphrase 42";

if (Bun.spawnSync(["which", "wrk"]).exitCode !== 0) {
  console.error("wrk is not installed: apt-get install -y wrk");
  process.exit(1);
}

const bin = await ensureBuilt("automation-server");
const dir = mkdtempSync(join(tmpdir(), "people-bench-"));
const data = join(dir, "data");
const server = await startServer([bin, "--data-dir", data, "--workers", "2"]);
// In the suite's PostgreSQL pass the server got a database of its own: the admin commands use it too.
const pg = automationPgUrl(data);
const admin = (args: string[], stdin?: string) => {
  const p = Bun.spawnSync([bin, ...args, "--data-dir", data, ...(pg ? ["--db", pg] : [])], { stdin: stdin === undefined ? "ignore" : Buffer.from(stdin), stdout: "pipe", stderr: "pipe" });
  if (p.exitCode !== 0) throw new Error(`${args.join(" ")}: ${p.stderr}`);
  return p.stdout.toString();
};
process.on("exit", () => {
  server.proc.kill("SIGKILL");
  rmSync(dir, { recursive: true, force: true });
});

const tenant = JSON.parse(admin(["tenants", "create", "--name", "Bench", "--slug", "bench", "--json"])) as { key: string };
admin(["users", "create", "--email", "bench@example.com", "--name", "Bench", "--tenant", "bench", "--role", "developer", "--password-stdin", "--json"], `${PASSWORD}\n`);
const signedIn = await fetch(`${server.url}/v1/auth/sessions`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ email: "bench@example.com", password: PASSWORD }) });
if (signedIn.status !== 201) throw new Error(`sign-in: ${signedIn.status} ${await signedIn.text()}`);
const cookie = signedIn.headers.get("set-cookie")!.split(";")[0]!;

// Some runs to list: a one-step workflow, RUNS runs.
const auth = { authorization: `Bearer ${tenant.key}`, "content-type": "application/json" };
const yaml = "name: bench\nsteps:\n  - {name: s, type: transform.set, with: {fields: {x: 1}}}\n";
const made = await fetch(`${server.url}/v1/automations`, { method: "POST", headers: auth, body: JSON.stringify({ yaml }) });
if (made.status !== 201) throw new Error(`automation: ${made.status} ${await made.text()}`);
for (let i = 0; i < RUNS; i += 20) {
  await Promise.all(Array.from({ length: Math.min(20, RUNS - i) }, () => fetch(`${server.url}/v1/runs?wait=30`, { method: "POST", headers: auth, body: JSON.stringify({ target: "workflows.bench", input: {} }) }).then((r) => r.arrayBuffer())));
}

const cpuTicks = (pid: number) => {
  const f = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]!.split(" ");
  return Number(f[11]) + Number(f[12]);
};

async function wrk(header: string): Promise<{ rps: number; cpuUs: number }> {
  const before = cpuTicks(server.proc.pid);
  const p = Bun.spawn(["wrk", "-t1", "-c16", `-d${SECONDS}s`, "-H", header, `${server.url}/v1/runs?limit=20`], { stdout: "pipe", stderr: "ignore" });
  const out = await new Response(p.stdout).text();
  await p.exited;
  const used = cpuTicks(server.proc.pid) - before;
  const non2xx = /Non-2xx or 3xx responses:\s+(\d+)/.exec(out)?.[1];
  if (non2xx) throw new Error(`${non2xx} answers were not 2xx (${header.split(":")[0]})`);
  const requests = Number(/(\d+) requests in/.exec(out)?.[1] ?? 0);
  return { rps: Number(/Requests\/sec:\s+([\d.]+)/.exec(out)?.[1] ?? 0), cpuUs: requests ? (used * 10_000) / requests : Number.NaN };
}

let key = { rps: 0, cpuUs: Infinity };
let session = { rps: 0, cpuUs: Infinity };
await wrk(`Authorization: Bearer ${tenant.key}`); // warm-up
for (let round = 0; round < ROUNDS; round++) {
  const k = await wrk(`Authorization: Bearer ${tenant.key}`);
  const s = await wrk(`Cookie: ${cookie}`);
  key = { rps: Math.max(key.rps, k.rps), cpuUs: Math.min(key.cpuUs, k.cpuUs) };
  session = { rps: Math.max(session.rps, s.rps), cpuUs: Math.min(session.cpuUs, s.cpuUs) };
}

const backend = pg ? "postgres" : "sqlite";
console.log(`GET /v1/runs?limit=20 (${RUNS} runs, ${backend}, load ${loadavg()[0]!.toFixed(1)}; best of ${ROUNDS} rounds of ${SECONDS} s)`);
console.log(`  API key   ${key.rps.toFixed(0).padStart(7)} req/s  ${key.cpuUs.toFixed(0).padStart(5)} µs CPU/request`);
console.log(`  session   ${session.rps.toFixed(0).padStart(7)} req/s  ${session.cpuUs.toFixed(0).padStart(5)} µs CPU/request`);
const ratio = key.rps / session.rps;
console.log(`  session cost ${ratio.toFixed(2)}× the key's (throughput), ${(session.cpuUs / key.cpuUs).toFixed(2)}× (CPU/request); aim ≤ 1.10× — ${ratio <= 1.1 ? "met" : "NOT met"}`);
process.exit(0);
