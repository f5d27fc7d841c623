// Benchmark of the web console on the compiled automation-server (run: bun test/bench/automation-console.ts).
// (1) The console bundle: every JS and CSS file the first page load fetches, raw and gzipped (budget:
//     JS ≤ 150 KB gzipped), and the chunks pages import() later, found by following the JS: the YAML
//     editor's (budget ≤ 200 KB gzipped), the diff's and uPlot's.
// (2) The runs list with 50,000 runs in the database: from the hash change to 50 rendered rows in
//     chromium (budget ≤ 300 ms), against references measured in the same run on the same server: the
//     list's own API call (GET /v1/runs?limit=50) fetched from the page, and GET /health.
import { Database } from "bun:sqlite";
import { gzipSync } from "bun";
import { copyFileSync, existsSync, mkdtempSync, rmSync } from "node:fs";
import { loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import puppeteer from "puppeteer-core";
import { ensureBuilt, startServer, type Server } from "../e2e/support";

const KEY = "eak_demo_0123456789abcdefghijklmnopqrstuv";
const RUNS = Number(process.env.BENCH_RUNS ?? 50_000);
const N = Number(process.env.BENCH_N ?? 20);
const CHROMIUM = ["/usr/bin/chromium", "/usr/bin/chromium-browser"].find(existsSync);
if (!CHROMIUM) throw new Error("chromium is not installed (apt-get install chromium)");

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const p95 = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.ceil(xs.length * 0.95) - 1)];
const kb = (n: number) => `${(n / 1024).toFixed(1)} KB`;
const ms = (n: number) => `${n.toFixed(1)} ms`;

const dir = mkdtempSync(join(tmpdir(), "automation-console-bench-"));
const profile = mkdtempSync(join(tmpdir(), "automation-console-bench-chromium-"));
const bin = join(dir, "automation-server");
copyFileSync(await ensureBuilt("automation-server"), bin);
const args = [bin, "--demo", "--host", "127.0.0.1", "--workers", "1", "--data-dir", join(dir, "data")];
const env = { AUTOMATION_DATA_DIR: undefined, AUTOMATION_CONSOLE: undefined };
let server: Server | undefined;
let browser: Awaited<ReturnType<typeof puppeteer.launch>> | undefined;

try {
  // One real run, then RUNS copies of its row straight into the database (the API would take minutes).
  server = await startServer(args, { cwd: dir, env });
  const seed = (await (
    await fetch(`${server.url}/v1/runs?wait_for_completion=30`, {
      method: "POST",
      headers: { authorization: `Bearer ${KEY}`, "content-type": "application/json" },
      body: JSON.stringify({ target: "workflows.hello", input: { name: "bench" } }),
    })
  ).json()) as { id: string };
  await server.kill("SIGTERM");
  const db = new Database(join(dir, "data", "automation.db"));
  const row = db.query<Record<string, unknown>, [string]>("SELECT * FROM runs WHERE id = ?").get(seed.id)!;
  const cols = Object.keys(row);
  const insert = db.prepare(`INSERT INTO runs (${cols.join(", ")}) VALUES (${cols.map(() => "?").join(", ")})`);
  const start = Date.parse(String(row.created_at)) - RUNS * 1000;
  db.transaction(() => {
    for (let i = 0; i < RUNS; i++) {
      const at = new Date(start + i * 1000).toISOString();
      const values = cols.map((c) => (c === "id" ? `exec_bench${String(i).padStart(7, "0")}` : c === "created_at" || c === "started_at" || c === "completed_at" ? at : row[c]));
      insert.run(...(values as (string | number | null)[]));
    }
  })();
  const total = db.query<{ n: number }, []>("SELECT count(*) AS n FROM runs").get()!.n;
  db.close();

  server = await startServer(args, { cwd: dir, env });
  const base = server.url;

  // (1) The bundle as the compiled binary serves it.
  const html = await (await fetch(`${base}/`)).text();
  const assets = [...html.matchAll(/(?:src|href)="\.?(\/[\w.-]+\.(js|css))"/g)].map((m) => ({ path: m[1], kind: m[2] }));
  const sizes = { js: { raw: 0, gz: 0 }, css: { raw: 0, gz: 0 } };
  const texts = new Map<string, string>();
  for (const a of assets) {
    const bytes = new Uint8Array(await (await fetch(`${base}${a.path}`)).arrayBuffer());
    const s = sizes[a.kind as "js" | "css"];
    s.raw += bytes.byteLength;
    s.gz += gzipSync(bytes, { level: 9 }).byteLength;
    if (a.kind === "js") texts.set(a.path, new TextDecoder().decode(bytes));
  }
  // The lazy chunks: every chunk a loaded one names (import() targets and their own imports), transitively.
  const lazy: { path: string; raw: number; gz: number; what: string }[] = [];
  const queue = [...texts.values()];
  while (queue.length) {
    for (const m of queue.shift()!.matchAll(/["'`]\.?(\/[\w.-]+\.js)["'`]/g)) {
      const path = m[1];
      if (texts.has(path)) continue;
      const bytes = new Uint8Array(await (await fetch(`${base}${path}`)).arrayBuffer());
      const text = new TextDecoder().decode(bytes);
      texts.set(path, text);
      queue.push(text);
      const what = text.includes("cm-content") ? "YAML editor (CodeMirror)" : text.includes("u-legend") ? "charts (uPlot)" : /diffLines|class Diff\b/.test(text) ? "diff (jsdiff)" : "other";
      lazy.push({ path, raw: bytes.byteLength, gz: gzipSync(bytes, { level: 9 }).byteLength, what });
    }
  }

  // (2) The list in a real browser.
  browser = await puppeteer.launch({
    executablePath: CHROMIUM,
    headless: true,
    userDataDir: profile,
    args: ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update", "--disable-sync", "--no-first-run"],
  });
  const page = await browser.newPage();
  await page.setViewport({ width: 1280, height: 900 });
  await page.goto(`${base}/#/signin?key=${KEY}`);
  await page.waitForSelector("table.runs tbody tr");

  // Resolves when `cond` holds, checked on every DOM change, then waits for the next frame (painted).
  const helpers = `
    window.__until = (cond) => new Promise((resolve) => {
      const check = () => { if (cond()) { obs.disconnect(); window.__met = performance.now(); requestAnimationFrame(() => resolve()); return true; } return false; };
      const obs = new MutationObserver(check);
      obs.observe(document.body, { childList: true, subtree: true, characterData: true, attributes: true });
      check();
    });`;
  await page.evaluate(helpers);
  const navigate = `(async () => {
    location.hash = "#/automations";
    await window.__until(() => document.querySelector("#page-title")?.textContent === "Automations" && !document.querySelector("[aria-busy=true]"));
    const t0 = performance.now();
    location.hash = "#/runs";
    await window.__until(() => document.querySelectorAll("table.runs tbody tr").length === 50);
    const total = performance.now() - t0;
    const req = performance.getEntriesByType("resource").filter((e) => e.name.includes("/v1/runs?")).at(-1);
    performance.clearResourceTimings();
    return [total, req ? req.startTime - t0 : -1, req ? req.responseEnd - t0 : -1, window.__met - t0];
  })()`;
  const bare = `(async () => {
    const t0 = performance.now();
    const r = await fetch("/v1/runs?limit=50", { headers: { authorization: "Bearer ${KEY}" } });
    const body = await r.json();
    if (body.runs.length !== 50) throw new Error("expected 50 runs");
    return performance.now() - t0;
  })()`;
  const list: number[] = [];
  const api: number[] = [];
  const health: number[] = [];
  for (let i = 0; i < N + 2; i++) {
    const [l, reqStart, reqEnd, inDom] = (await page.evaluate(navigate)) as number[];
    if (process.env.BENCH_DEBUG) console.log(`navigation ${ms(l)}: request sent at ${ms(reqStart)}, answered at ${ms(reqEnd)}, rows in the DOM at ${ms(inDom)}`);
    const a = (await page.evaluate(bare)) as number;
    const t0 = performance.now();
    await (await fetch(`${base}/health`)).json();
    const h = performance.now() - t0;
    if (i < 2) continue; // warm-up
    list.push(l);
    api.push(a);
    health.push(h);
  }

  console.log(`console bundle (as the compiled binary serves it): ${assets.length} files`);
  console.log(`  JavaScript  ${kb(sizes.js.raw)} raw, ${kb(sizes.js.gz)} gzipped (budget 150 KB gzipped: ${sizes.js.gz <= 150 * 1024 ? "within" : "OVER"})`);
  console.log(`  CSS         ${kb(sizes.css.raw)} raw, ${kb(sizes.css.gz)} gzipped`);
  console.log(`chunks loaded only by the pages that import() them: ${lazy.length}`);
  for (const c of lazy) {
    const budget = c.what.startsWith("YAML editor") ? ` (budget 200 KB gzipped: ${c.gz <= 200 * 1024 ? "within" : "OVER"})` : "";
    console.log(`  ${c.what.padEnd(24)} ${c.path}  ${kb(c.raw)} raw, ${kb(c.gz)} gzipped${budget}`);
  }
  if (!lazy.some((c) => c.what.startsWith("YAML editor"))) console.log("  the YAML editor is not a chunk of its own: it would load with the first page (OVER)");
  console.log(`runs list with ${total.toLocaleString("en")} runs in the database, ${N} navigations (after 2 warm-ups), load average ${loadavg()[0].toFixed(1)}:`);
  console.log(`  hash change → 50 rows rendered and painted   median ${ms(median(list))}, p95 ${ms(p95(list))} (budget 300 ms: ${p95(list) <= 300 ? "within" : "OVER"})`);
  console.log(`  reference: GET /v1/runs?limit=50 from the page median ${ms(median(api))}, p95 ${ms(p95(api))}`);
  console.log(`  reference: GET /health from the bench           median ${ms(median(health))}`);
  console.log(`  list render / bare API call: ${(median(list) / median(api)).toFixed(2)}x`);
} finally {
  await browser?.close().catch(() => {});
  if (server && server.proc.exitCode === null) await server.kill("SIGKILL");
  rmSync(profile, { recursive: true, force: true });
  rmSync(dir, { recursive: true, force: true });
}
