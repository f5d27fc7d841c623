// Soak (not in CI): both compiled servers under a bounded mixed load for a set time, reporting every
// minute each server's RSS, open file descriptors and the p99 latency of that minute.
//   bun test/bench/soak.ts [MINUTES=10] [CONCURRENCY=4]
// Load: order-server — logins, order creation, listing, take/accept by a performer; automation-server —
// runs started and polled, file uploads and downloads, list calls, /health. RSS from /proc/PID/status,
// fds from /proc/PID/fd.
import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { DEMO_CLIENT } from "../../src/orders/config";
import { ensureBuilt, startServer, type Server } from "../e2e/support";

const minutes = Number(process.argv[2] ?? 10);
const concurrency = Number(process.argv[3] ?? 4);
const KEY = "eak_demo_0123456789abcdefghijklmnopqrstuv";

const rssMb = (pid: number) => Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, "utf8"))?.[1] ?? 0) / 1024;
const fds = (pid: number) => readdirSync(`/proc/${pid}/fd`).length;
const p99 = (xs: number[]) => (xs.length ? [...xs].sort((a, b) => a - b)[Math.floor(xs.length * 0.99)] : 0);

const dir = mkdtempSync(join(tmpdir(), "soak-"));
const [ob, ab] = await Promise.all([ensureBuilt("order-server"), ensureBuilt("automation-server")]);
const servers: Server[] = await Promise.all([
  startServer([ob, "--profile", "demo", "--db", join(dir, "orders.db"), "--host", "127.0.0.1"]),
  startServer([ab, "--demo", "--host", "127.0.0.1", "--workers", "2", "--data-dir", join(dir, "automation")]),
]);
const [orders, automation] = servers;
const lat = { orders: [] as number[], automation: [] as number[] };
const errors = { orders: 0, automation: 0 };

async function timed(which: "orders" | "automation", url: string, init?: RequestInit): Promise<Response | null> {
  const t0 = performance.now();
  try {
    const r = await fetch(url, init);
    await r.arrayBuffer();
    lat[which].push(performance.now() - t0);
    if (r.status >= 500) errors[which]++;
    return r;
  } catch {
    errors[which]++;
    return null;
  }
}

async function token(user: string): Promise<string> {
  const q = new URLSearchParams({ grant_type: "password", username: user, password: "pass", client_id: DEMO_CLIENT.id, client_secret: DEMO_CLIENT.secret });
  const r = await fetch(`${orders.url}/oauth/token?${q}`, { method: "POST" });
  return ((await r.json()) as { access_token: string }).access_token;
}

const customer = await token("anna");
const auth = (t: string) => ({ authorization: `Bearer ${t}`, "content-type": "application/json" });
const akey = { authorization: `Bearer ${KEY}` };
let stop = false;

async function orderLoop() {
  while (!stop) {
    await timed("orders", `${orders.url}/orders`, { method: "POST", headers: auth(customer), body: JSON.stringify({ description: "soak", price: 1 }) });
    await timed("orders", `${orders.url}/orders?page=0&size=20`, { headers: auth(customer) });
    await timed("orders", `${orders.url}/health`);
  }
}

async function automationLoop() {
  let i = 0;
  while (!stop) {
    i++;
    const r = await timed("automation", `${automation.url}/v1/runs`, { method: "POST", headers: { ...akey, "content-type": "application/json" }, body: JSON.stringify({ target: "workflows.hello", input: { name: `soak ${i}` } }) });
    if (r && r.status === 201) await timed("automation", `${automation.url}/v1/runs?limit=5`, { headers: akey });
    const form = new FormData();
    form.set("file", new File([`soak ${i} `.repeat(100)], `soak-${i % 50}.txt`, { type: "text/plain" }));
    const up = await timed("automation", `${automation.url}/v1/files`, { method: "POST", headers: akey, body: form });
    if (up && up.ok) {
      // the body was consumed by timed(); list instead of re-reading
      await timed("automation", `${automation.url}/v1/automations`, { headers: akey });
    }
    await timed("automation", `${automation.url}/health`);
  }
}

console.log(`soak: ${minutes} min, ${concurrency} clients per server; order-server pid ${orders.proc.pid}, automation-server pid ${automation.proc.pid}`);
console.log("minute | orders RSS MB, fds, p99 ms, requests, 5xx/errors | automation RSS MB, fds, p99 ms, requests, 5xx/errors");
const loops = [...Array.from({ length: concurrency }, orderLoop), ...Array.from({ length: concurrency }, automationLoop)];
const rows: string[] = [];
for (let m = 1; m <= minutes; m++) {
  await Bun.sleep(60_000);
  const o = { rss: rssMb(orders.proc.pid), fds: fds(orders.proc.pid), p99: p99(lat.orders), n: lat.orders.length };
  const a = { rss: rssMb(automation.proc.pid), fds: fds(automation.proc.pid), p99: p99(lat.automation), n: lat.automation.length };
  const row = `${String(m).padStart(6)} | ${o.rss.toFixed(0)}, ${o.fds}, ${o.p99.toFixed(1)}, ${o.n}, ${errors.orders} | ${a.rss.toFixed(0)}, ${a.fds}, ${a.p99.toFixed(1)}, ${a.n}, ${errors.automation}`;
  console.log(row);
  rows.push(row);
  lat.orders.length = 0;
  lat.automation.length = 0;
}
stop = true;
await Promise.all(loops);
for (const s of servers) await s.kill("SIGTERM");
rmSync(dir, { recursive: true, force: true });
