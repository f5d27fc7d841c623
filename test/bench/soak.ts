// Soak (not in CI): both compiled servers under a bounded mixed load for a set time, reporting every
// minute each server's RSS, open file descriptors and the p99 latency of that minute, then the growth
// after warm-up and the p99 drift per server.
//   bun test/bench/soak.ts [MINUTES=10] [CONCURRENCY=4]
// Growth is the mean of the second half of the minutes after warm-up against the mean of the first
// half (one minute's sample is noisy: fds of uploads in flight, RSS between collections); the
// largest single minute is printed too.
// Load: order-server — order creation, listing, /health; automation-server — runs started, runs
// listed, file uploads, automations listed, /health. RSS from /proc/PID/status, fds from
// /proc/PID/fd; both run with --metrics, scraped each minute for the JS heap in use (and, on
// automation-server, the run queue).
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from "node:fs";
import { loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { DEMO_CLIENT } from "../../src/orders/config";
import { ensureBuilt, metricSamples, startServer, type Server } from "../e2e/support";

const minutes = Number(process.argv[2] ?? 10);
const concurrency = Number(process.argv[3] ?? 4);
/** Minutes left out of the growth and drift figures: start-up, JIT and caches filling. */
const WARMUP = Math.min(2, Math.max(0, minutes - 2));
const KEY = "eak_demo_0123456789abcdefghijklmnopqrstuv";

const rssMb = (pid: number) => Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, "utf8"))?.[1] ?? 0) / 1024;
const fds = (pid: number) => readdirSync(`/proc/${pid}/fd`).length;
const p99 = (xs: number[]) => (xs.length ? [...xs].sort((a, b) => a - b)[Math.floor(xs.length * 0.99)] : 0);
const load = () => loadavg().map((x) => x.toFixed(2)).join(" ");
/** MB of the regular files directly in `d` (the SQLite database, its WAL and shared memory). */
const dbMb = (d: string) => readdirSync(d, { withFileTypes: true }).filter((e) => e.isFile()).reduce((a, e) => a + statSync(join(d, e.name)).size, 0) / 2 ** 20;

const dir = mkdtempSync(join(tmpdir(), "soak-"));
const [ob, ab] = await Promise.all([ensureBuilt("order-server"), ensureBuilt("automation-server")]);
const servers: Server[] = await Promise.all([
  startServer([ob, "--profile", "demo", "--db", join(dir, "orders.db"), "--host", "127.0.0.1", "--metrics"]),
  startServer([ab, "--demo", "--host", "127.0.0.1", "--workers", "2", "--metrics", "--data-dir", join(dir, "automation")]),
]);
const [orders, automation] = servers;
type Which = "orders" | "automation";
/** Latencies of the current minute, per server and per operation. */
const lat: Record<Which, Map<string, number[]>> = { orders: new Map(), automation: new Map() };
const errors = { orders: 0, automation: 0 };

async function timed(which: Which, op: string, url: string, init?: RequestInit): Promise<Response | null> {
  const t0 = performance.now();
  try {
    const r = await fetch(url, init);
    await r.arrayBuffer();
    const xs = lat[which].get(op) ?? [];
    xs.push(performance.now() - t0);
    lat[which].set(op, xs);
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
    await timed("orders", "POST /orders", `${orders.url}/orders`, { method: "POST", headers: auth(customer), body: JSON.stringify({ description: "soak", price: 1 }) });
    await timed("orders", "GET /orders", `${orders.url}/orders?page=0&size=20`, { headers: auth(customer) });
    await timed("orders", "GET /health", `${orders.url}/health`);
  }
}

async function automationLoop() {
  let i = 0;
  while (!stop) {
    i++;
    const r = await timed("automation", "POST /v1/runs", `${automation.url}/v1/runs`, { method: "POST", headers: { ...akey, "content-type": "application/json" }, body: JSON.stringify({ target: "workflows.hello", input: { name: `soak ${i}` } }) });
    if (r && r.status === 201) await timed("automation", "GET /v1/runs", `${automation.url}/v1/runs?limit=5`, { headers: akey });
    const form = new FormData();
    form.set("file", new File([`soak ${i} `.repeat(100)], `soak-${i % 50}.txt`, { type: "text/plain" }));
    const up = await timed("automation", "POST /v1/files", `${automation.url}/v1/files`, { method: "POST", headers: akey, body: form });
    if (up && up.ok) await timed("automation", "GET /v1/automations", `${automation.url}/v1/automations`, { headers: akey });
    await timed("automation", "GET /health", `${automation.url}/health`);
  }
}

/** A server's /metrics as name → sum of its samples. */
async function scrape(s: Server): Promise<(name: string) => number> {
  const samples = metricSamples(await (await fetch(`${s.url}/metrics`)).text());
  return (name) => samples.filter((x) => x.name === name).reduce((a, x) => a + x.value, 0);
}

interface Row {
  rss: number;
  heap: number;
  fds: number;
  p99: number;
  n: number;
  errors: number;
  ops: Record<string, number>;
}
const rows: Record<Which, Row[]> = { orders: [], automation: [] };

async function sample(which: Which, s: Server): Promise<Row & { metric: (name: string) => number }> {
  const all = [...lat[which].values()].flat();
  const ops = Object.fromEntries([...lat[which]].map(([op, xs]) => [op, p99(xs)]));
  const metric = await scrape(s).catch(() => () => NaN);
  const row = { rss: rssMb(s.proc.pid), heap: metric("nodejs_heap_size_used_bytes") / 2 ** 20, fds: fds(s.proc.pid), p99: p99(all), n: all.length, errors: errors[which], ops, metric };
  lat[which].clear();
  return row;
}

const fmt = (r: Row) => `${r.rss.toFixed(0)}, ${r.heap.toFixed(0)}, ${r.fds}, ${r.p99.toFixed(1)}, ${r.n}, ${r.errors}`;
const started = new Date();
console.log(`soak: ${minutes} min, ${concurrency} clients per server, warm-up ${WARMUP} min; order-server pid ${orders.proc.pid}, automation-server pid ${automation.proc.pid}`);
console.log(`start ${started.toISOString()}, load average ${load()}`);
console.log("minute | orders RSS MB, heap MB, fds, p99 ms, requests, 5xx/errors | automation RSS MB, heap MB, fds, p99 ms, requests, 5xx/errors | runs pending, running, finished, database MB");
const loops = [...Array.from({ length: concurrency }, orderLoop), ...Array.from({ length: concurrency }, automationLoop)];
for (let m = 1; m <= minutes; m++) {
  await Bun.sleep(60_000);
  const o = await sample("orders", orders);
  const a = await sample("automation", automation);
  rows.orders.push(o);
  rows.automation.push(a);
  const queue = ["automation_queue_depth", "automation_runs_running", "automation_runs_finished_total"].map(a.metric).join(", ");
  console.log(`${String(m).padStart(6)} | ${fmt(o)} | ${fmt(a)} | ${queue}, ${dbMb(join(dir, "automation")).toFixed(0)}`);
}
stop = true;
await Promise.all(loops);
console.log(`end ${new Date().toISOString()}, load average ${load()}`);

// Growth after warm-up: the mean of the second half of the remaining minutes against the first half.
const pct = (from: number, to: number) => (from ? ((to - from) / from) * 100 : 0);
const mean = (xs: number[]) => xs.reduce((a, x) => a + x, 0) / xs.length;
let verdict = true;
for (const which of ["orders", "automation"] as const) {
  const after = rows[which].slice(WARMUP);
  if (after.length < 2) continue;
  const half = Math.floor(after.length / 2);
  const [early, late] = [after.slice(0, half), after.slice(after.length - half)];
  const growth = (f: (r: Row) => number) => {
    const [a, b] = [mean(early.map(f)), mean(late.map(f))];
    return { a, b, pct: pct(a, b), max: Math.max(...after.map(f)) };
  };
  const rss = growth((r) => r.rss);
  const heap = growth((r) => r.heap);
  const fd = growth((r) => r.fds);
  const p = growth((r) => r.p99);
  console.log(
    `${which}, minutes ${WARMUP + 1}-${WARMUP + half} vs ${minutes - half + 1}-${minutes}: RSS ${rss.a.toFixed(0)} → ${rss.b.toFixed(0)} MB (${rss.pct.toFixed(1)} %, max ${rss.max.toFixed(0)}), ` +
      `heap ${heap.a.toFixed(0)} → ${heap.b.toFixed(0)} MB (${heap.pct.toFixed(1)} %), fds ${fd.a.toFixed(1)} → ${fd.b.toFixed(1)} (${fd.pct.toFixed(1)} %, max ${fd.max}), ` +
      `p99 ${p.a.toFixed(1)} → ${p.b.toFixed(1)} ms (${p.pct.toFixed(0)} %), requests/min ${mean(early.map((r) => r.n)).toFixed(0)} → ${mean(late.map((r) => r.n)).toFixed(0)}`,
  );
  for (const op of Object.keys(after[0].ops)) console.log(`  ${op.padEnd(20)} p99 by minute ${after.map((r) => (r.ops[op] ?? 0).toFixed(0)).join(" ")}`);
  if (rss.pct >= 10 || fd.pct >= 10) verdict = false;
}
console.log(`verdict: RSS and fds ${verdict ? "flat (growth under 10 %)" : "GREW by 10 % or more"} after warm-up`);
for (const s of servers) await s.kill("SIGTERM");
rmSync(dir, { recursive: true, force: true });
