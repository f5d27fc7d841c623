// The web console in a real browser: Debian's chromium driven by puppeteer-core against the compiled
// automation-server (--demo, --port 0). Every console error, page error, failed request or HTTP error
// a test did not expect fails that test. The screenshots of docs/automation/console.md come from here.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { PDFDocument, StandardFonts } from "pdf-lib";
import puppeteer, { type Browser, type Page } from "puppeteer-core";
import { automationPgUrl, ensureBuilt, root, startServer, type Server } from "./support";
import { consoleApi } from "./console-api";

type Json = Record<string, any>; // biome-ignore lint: test assertions index freely into response bodies

const KEY = "eak_demo_0123456789abcdefghijklmnopqrstuv";
const SHOTS = join(root, "docs", "automation", "console");
const CHROMIUM = ["/usr/bin/chromium", "/usr/bin/chromium-browser"].find(existsSync);

let dir: string;
let profile: string;
let server: Server;
let base: string;
let signInLink: string;
let browser: Browser;
let page: Page;
/** What went wrong in the page since the test began; `allow` lets a test expect one HTTP error. */
const problems: string[] = [];
/** Every URL the browser requested (what a server or proxy log would see). */
const requested: string[] = [];
let allowed: { url: RegExp; status: number }[] = [];

const { api, until, runStatus } = consoleApi(() => base, KEY);

function watch(p: Page): void {
  p.on("request", (r) => requested.push(r.url()));
  const isAllowed = (url: string, status: number) => allowed.some((a) => a.status === status && a.url.test(url));
  p.on("console", (m) => {
    if (m.type() !== "error") return;
    const url = m.location()?.url ?? "";
    const status = Number(/status of (\d{3})/.exec(m.text())?.[1] ?? 0);
    if (status && isAllowed(url, status)) return;
    problems.push(`console error: ${m.text()} ${url}`);
  });
  p.on("pageerror", (e) => problems.push(`page error: ${(e as Error).message ?? String(e)}`));
  p.on("requestfailed", (r) => problems.push(`request failed: ${r.method()} ${r.url()} ${r.failure()?.errorText}`));
  p.on("response", (r) => {
    if (r.status() >= 400 && !isAllowed(r.url(), r.status())) problems.push(`HTTP ${r.status()}: ${r.request().method()} ${r.url()}`);
  });
}

/** A browser test: runs `fn`, then fails on anything the page reported that the test did not allow. */
function browserTest(name: string, fn: () => Promise<void>, timeoutMs = 120_000): void {
  test(
    name,
    async () => {
      problems.length = 0;
      allowed = [];
      await fn();
      await Bun.sleep(200); // late console messages of the last action
      expect(problems).toEqual([]);
    },
    timeoutMs,
  );
}

async function shot(name: string): Promise<void> {
  await page.evaluate("document.activeElement && document.activeElement.blur && document.activeElement.blur()");
  await page.screenshot({ path: join(SHOTS, `${name}.png`), fullPage: true });
}

/** Navigates within the console (same document: a hash change) and waits for the page heading. */
async function open(hash: string, heading?: string): Promise<void> {
  await page.goto(`${base}/${hash}`);
  await page.waitForSelector("#page-title");
  if (heading) await page.waitForFunction(`document.querySelector("#page-title")?.textContent?.includes(${JSON.stringify(heading)})`);
  await settled();
  expect(await page.evaluate(UNLABELLED)).toEqual([]);
}

/** Form controls and buttons a screen reader could not name (no label, no aria-label, no text). */
const UNLABELLED = `[...document.querySelectorAll("input:not([type=hidden]), select, textarea, button, a[href]")]
  .filter((el) => {
    if (el.getAttribute("aria-label") || el.getAttribute("aria-labelledby")) return false;
    if (el.tagName === "BUTTON" || el.tagName === "A") return !el.textContent.trim();
    return !(el.labels && el.labels.length);
  })
  .map((el) => el.outerHTML.slice(0, 120))`;

/** No placeholder left on the page (every load answered). */
const settled = () => page.waitForFunction('!document.querySelector("[aria-busy=true]")', { timeout: 30_000 });

const text = (selector: string) => page.$eval(selector, (el) => (el as { textContent: string | null }).textContent ?? "");

beforeAll(async () => {
  if (!CHROMIUM) throw new Error("chromium is not installed (apt-get install chromium)");
  mkdirSync(SHOTS, { recursive: true });
  const built = await ensureBuilt("automation-server");
  dir = mkdtempSync(join(tmpdir(), "automation-console-"));
  const bin = join(dir, "automation-server");
  copyFileSync(built, bin);
  server = await startServer([bin, "--demo", "--host", "127.0.0.1", "--workers", "2", "--data-dir", join(dir, "data")], {
    cwd: dir,
    env: { AUTOMATION_DATA_DIR: undefined, AUTOMATION_CONSOLE: undefined },
  });
  base = server.url;
  // The demo banner (with the single-use sign-in link) follows the first line.
  const out = await until("the demo sign-in link", async () => (/console\s+(\S+)/.test(server.output()) ? server.output() : undefined), 30_000);
  signInLink = /console\s+(\S+)/.exec(out)![1];
  profile = mkdtempSync(join(tmpdir(), "automation-console-chromium-"));
  browser = await puppeteer.launch({
    executablePath: CHROMIUM,
    headless: true,
    userDataDir: profile,
    args: ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update", "--disable-sync", "--no-first-run"],
  });
  page = await browser.newPage();
  await page.setViewport({ width: 1280, height: 900 });
  watch(page);
}, 120_000);

afterAll(async () => {
  await browser?.close().catch(() => {});
  if (server && server.proc.exitCode === null) await server.kill("SIGKILL");
  if (profile) rmSync(profile, { recursive: true, force: true });
  if (dir) rmSync(dir, { recursive: true, force: true });
});

browserTest("the demo link signs in once with a single-use code; the key is never in an address", async () => {
  // The printed link carries a code that works once, within 10 minutes: no reusable secret.
  expect(signInLink.startsWith(`${base}/v1/auth/code?code=`)).toBe(true);
  expect(signInLink).toMatch(/\?code=[A-Za-z0-9_-]{43}$/);
  expect(signInLink).not.toContain("eak_");
  const home = await fetch(`${base}/`);
  expect(home.headers.get("content-security-policy")).toContain("script-src 'self'");
  expect(await home.text()).not.toMatch(/<script(?![^>]*\bsrc=)[^>]*>/); // no inline script

  // Opened in a browser of its own: it lands on the console with the demo owner's session cookie.
  const other = await browser.createBrowserContext();
  try {
    const p = await other.newPage();
    await p.goto(signInLink);
    expect(new URL(p.url()).pathname).toBe("/");
    const check = (await p.evaluate(`fetch("/v1/auth/check").then((r) => r.json())`)) as { email: string; tenantSlug: string; wildcardGranted: boolean };
    expect(check).toMatchObject({ email: "demo@example.com", tenantSlug: "demo", wildcardGranted: true });
    // The same address again (from the history): used, a clear page, no session.
    const again = await p.goto(signInLink);
    expect(again!.status()).toBe(409);
    expect(await p.evaluate("document.body.textContent")).toContain("already used");
  } finally {
    await other.close();
  }

  // Programs (and the rest of this file) use the demo key; it leaves the address bar and reaches no server in a URL.
  // Signed out, the console first asks whether this browser has a person's session cookie (401: no).
  allowed = [{ url: /\/v1\/auth\/sessions\/current$/, status: 401 }];
  await page.goto(`${base}/#/signin`);
  await page.waitForSelector("#email");
  await shot("signin");
  await page.goto(`${base}/#/signin?key=${KEY}`);
  await page.waitForSelector('nav[aria-label="Main"]');
  await page.waitForSelector("#page-title");
  expect(page.url()).not.toContain(KEY);
  // The browser did ask for the page, and no request it made (page, assets, API) carried the key in its URL.
  expect(requested.some((u) => u.startsWith(`${base}/`))).toBe(true);
  expect(requested.filter((u) => u.includes(KEY))).toEqual([]);
  // Every navigation entry is scoped: the demo key has "*", so all of them show.
  expect(await page.$$eval('nav[aria-label="Main"] a', (as) => as.length)).toBe(11); // with Files, Members, Keys and Audit
});

let runWithFile: string;

browserTest("a run started from the form with a file completes, live", async () => {
  await open("#/automations/workflows.invoice-summary", "invoice-summary");
  await page.waitForSelector("form.run-form");
  await page.click("#input-invoice");
  await page.keyboard.type('{"lines": [{"amount": 900}, {"amount": 600}]}');
  const file = join(dir, "note.txt");
  writeFileSync(file, "hello from the browser test <b>not bold</b>\n");
  const upload = await page.waitForSelector("#input-attachment");
  await (upload as unknown as { uploadFile(path: string): Promise<void> }).uploadFile(file);
  await shot("automation");
  await page.click("form.run-form button[type=submit]");
  await page.waitForFunction('location.hash.startsWith("#/runs/")');
  runWithFile = decodeURIComponent(await page.evaluate('location.hash.split("/")[2]') as string);
  await page.waitForFunction('document.querySelector("[data-testid=run-status]")?.textContent === "completed"', { timeout: 60_000 });
  const run = await api("GET", `/v1/runs/${runWithFile}`);
  expect(run.trigger.type).toBe("manual");
  expect(run.output.total).toBe(1500);
  await settled();
  expect(await text("section[aria-labelledby=output-h] pre")).toContain('"total": 1500');
  await shot("run");
});

browserTest("an artifact opens in a preview", async () => {
  await open(`#/runs/${runWithFile}`, runWithFile);
  await page.waitForSelector("section[aria-labelledby=artifacts-h] button[aria-pressed]");
  await page.click("section[aria-labelledby=artifacts-h] button[aria-pressed]");
  await page.waitForSelector("[data-testid=preview-text]");
  expect(await text("[data-testid=preview-text]")).toContain("hello from the browser test <b>not bold</b>");
  await shot("artifact");
});

/** A one-page invoice PDF, for the document beside the fields of a review task. */
async function invoicePdf(): Promise<Uint8Array> {
  const doc = await PDFDocument.create();
  const page = doc.addPage([420, 300]);
  const font = await doc.embedFont(StandardFonts.Helvetica);
  page.drawText("ACME Ltd - Invoice INV-2042", { x: 30, y: 250, size: 16, font });
  page.drawText("3 x widget at 400.00 = 1,200.00", { x: 30, y: 215, size: 12, font });
  page.drawText("Total due: 1,205.00 EUR", { x: 30, y: 185, size: 14, font });
  return doc.save();
}

const invoiceCheck = `name: invoice-check
description: A person checks the extracted total against the scanned invoice
triggerMethods: [{type: api}, {type: manual}]
inputs:
  - {name: scan, type: file, required: true}
  - {name: total, type: number, required: false, default: 1250}
steps:
  - name: review
    type: control.human_review
    with:
      data: {total: "{{ input.total }}", currency: EUR}
      fieldMetadata:
        /total: {confidence: 0.4, label: Total due}
        /currency: {review: never}
      selection: {mode: confidence, threshold: 0.9}
      files: {includeRunInputs: true}
      instructions: Compare the total with the scan before the invoice is paid.
output:
  total: "{{ steps.review.output.total }}"
  currency: "{{ steps.review.output.currency }}"
`;

browserTest("a human-review task decided with the keyboard, its PDF beside the fields, resumes its run", async () => {
  await api("POST", "/v1/automations", { yaml: invoiceCheck });
  const scan = { $inline: { filename: "invoice.pdf", mimeType: "application/pdf", base64: Buffer.from(await invoicePdf()).toString("base64") } };
  const started = await api("POST", "/v1/runs", { target: "workflows.invoice-check", input: { scan } });
  await runStatus(started.id, ["waiting"]);
  const task = (await api("GET", "/v1/human-reviews?limit=100")).tasks.find((t: Json) => t.executionId === started.id);
  await open("#/human-reviews", "Human review");
  await shot("human-review-queue");
  await page.click(`a[href="#/human-reviews/${task.id}"]`);
  await page.waitForSelector("#field-_total");
  await page.waitForSelector('iframe.preview-box[src^="blob:"][data-loaded="true"]');
  await settled();
  await page.click("#field-_total", { count: 3 }); // selects the value
  await page.keyboard.type("1205");
  await page.keyboard.press("Tab"); // onto the "Confirmed" box: shortcuts work outside text fields
  await Bun.sleep(5000); // the PDF viewer draws the page a while after its frame loaded (for the screenshot)
  await shot("human-review-task");
  await page.keyboard.press("a");
  await page.waitForFunction('document.body.textContent.includes("Approved: the run resumes")');
  const done = await runStatus(started.id, ["completed", "failed", "rejected"]);
  expect(done.execution.status).toBe("completed");
  expect(done.output).toEqual({ total: 1205, currency: "EUR" });
  await page.click(`a[href="#/runs/${started.id}"]`);
  await page.waitForFunction('document.querySelector("[data-testid=run-status]")?.textContent === "completed"');
});

browserTest("a second decision on the same task gets a clear 409 message", async () => {
  const started = await api("POST", "/v1/runs", { target: "workflows.invoice-approval", input: { vendor: "Globex", total: 7000 } });
  await runStatus(started.id, ["waiting"]);
  const task = (await api("GET", "/v1/human-reviews?limit=100")).tasks.find((t: Json) => t.executionId === started.id);
  await open(`#/human-reviews/${task.id}`, task.id);
  // Someone else rejects it while the page is open.
  await api("POST", `/v1/human-reviews/${task.id}/reject`, { reason: "duplicate invoice", expectedVersion: task.version, idempotencyKey: "other-reviewer" });
  allowed = [{ url: /\/v1\/human-reviews\//, status: 409 }];
  await page.click("body");
  await page.keyboard.press("a");
  await page.waitForSelector("[role=alert]");
  expect(await text("[role=alert]")).toContain("Someone else decided this task first: it is rejected now");
});

browserTest("two experiments side by side, the changed example first", async () => {
  const wf = await api("GET", "/v1/automations/workflows.invoice-summary");
  const examples = (await api("GET", `/v1/automations/${wf.id}/examples?limit=100`)).data as Json[];
  const first = await api("POST", `/v1/automations/${wf.id}/experiments`, {});
  const finished = (id: string) =>
    until(`experiment ${id}`, async () => {
      const e = await api("GET", `/v1/automations/${wf.id}/experiments/${id}`);
      return e.status === "completed" ? e : undefined;
    });
  await finished(first.id);
  const single = examples.find((e) => e.name === "single-line")!;
  await api("PATCH", `/v1/automations/${wf.id}/examples/${single.id}`, { expected: { total: 43 } });
  const second = await api("POST", `/v1/automations/${wf.id}/experiments`, {});
  await finished(second.id);

  await open(`#/automations/${wf.id}/experiments`, "Experiments");
  await shot("experiments");
  await page.click(`input[aria-label="Select ${first.id} for comparison"]`);
  await page.click(`input[aria-label="Select ${second.id} for comparison"]`);
  await page.click("a.button");
  await page.waitForSelector("table.compare tbody tr");
  await settled();
  const rows = await page.$$eval("table.compare tbody tr", (trs) => trs.map((tr) => ({ changed: (tr as { className: string }).className, text: (tr as { textContent: string | null }).textContent ?? "" })));
  expect(rows).toHaveLength(3);
  expect(rows[0].changed).toBe("changed");
  expect(rows[0].text).toContain("single-line");
  expect(rows.slice(1).every((r) => r.changed === "")).toBe(true);
  await shot("compare");
  await open(`#/automations/${wf.id}/experiments/${second.id}`, second.id);
  await shot("experiment");
});

// A score drawn per example and trial (seeded by input.x and eval.trial); version 2 lowers it by 0.3.
const noisy = (version: string, shift: number, salt = 0) => `
name: noisy-console
version: ${version}
inputs: [{name: x, type: integer, required: true}]
steps:
  - {name: draw, type: transform.script, with: {inputs: {x: "{{ input.x }}", trial: "{{ eval.trial }}"}, function: "function script(x, trial) { var t = (Math.imul(x + 1, 2654435761) ^ Math.imul(trial + ${salt}, 40503)) >>> 0; t = Math.imul(t ^ (t >>> 15), t | 1); t ^= t + Math.imul(t ^ (t >>> 7), t | 61); var u = ((t ^ (t >>> 14)) >>> 0) / 4294967296; return { score: Math.min(1, Math.max(0, 0.6 + ${shift} + 0.4 * (u - 0.5))) } }"}}
output: {score: "{{ steps.draw.output.score }}"}
`;

browserTest("trials as spread bars on the experiment page; the compare page leads with the verdict table", async () => {
  const wf = await api("POST", "/v1/automations", { yaml: noisy("1.0.0", 0) });
  await api("POST", `/v1/automations/${wf.id}/versions`, { yaml: noisy("2.0.0", -0.3, 7919), version: "2.0.0", activate: false });
  await api("PUT", `/v1/automations/${wf.id}/evaluators`, {
    yaml: "passThreshold: 0.5\nevaluators:\n  - {name: quality, type: custom-script, config: {passThreshold: 0.5, script: 'function scoreScript(expected, actual) { return actual.score }'}}\n",
  });
  for (let x = 0; x < 8; x++) await api("POST", `/v1/automations/${wf.id}/examples`, { name: `x-${x}`, input: { x }, expected: { score: 1 } });
  const finished = (id: string) =>
    until(`experiment ${id}`, async () => {
      const e = await api("GET", `/v1/automations/${wf.id}/experiments/${id}`);
      return e.status === "completed" ? e : undefined;
    });
  // Started from the experiments page with three trials; 21 is refused with the server's message first.
  await open(`#/automations/${wf.id}/experiments`, "Experiments");
  const runDataset = async (trials: string) => {
    await page.click("input.trials-input");
    await page.keyboard.down("Control");
    await page.keyboard.press("a");
    await page.keyboard.up("Control");
    await page.keyboard.type(trials);
    await page.evaluate(`[...document.querySelectorAll("button")].find((b) => b.textContent.includes("Run the whole dataset")).click()`);
  };
  allowed = [{ url: /\/experiments$/, status: 400 }];
  await runDataset("21");
  await page.waitForSelector("[role=alert]");
  expect(await text("[role=alert]")).toContain("trials must be between 1 and 20");
  await runDataset("3");
  await page.waitForFunction(`location.hash.includes("/experiments/exp_")`);
  const a = { id: (await page.evaluate("location.hash") as string).split("/").pop()! };
  const b = await api("POST", `/v1/automations/${wf.id}/experiments`, { trials: 3, version: "2.0.0" });
  await finished(a.id);
  await finished(b.id);

  await open(`#/automations/${wf.id}/experiments/${a.id}`, a.id);
  await page.waitForSelector("table.trials tbody tr svg.spread-bar");
  // The last scores can land after the experiment completed: the page keeps reloading until they are in.
  await page.waitForFunction(
    `[...document.querySelectorAll("table.trials tbody tr")].every((tr) => (tr.querySelector("svg.spread-bar")?.getAttribute("aria-label") ?? "").includes("over 3 trials"))`,
    { timeout: 30_000 },
  );
  await settled();
  const stats = await api("GET", `/v1/automations/${wf.id}/experiments/${a.id}/trials`);
  const bars = await page.$$eval("table.trials tbody tr", (trs) =>
    trs.map((tr) => ({
      name: (tr as { querySelector(s: string): { textContent: string | null } | null }).querySelector("td")?.textContent ?? "",
      bars: [...(tr as unknown as { querySelectorAll(s: string): Iterable<{ getAttribute(n: string): string | null }> }).querySelectorAll("svg.spread-bar")].map((s) => ({
        min: Number(s.getAttribute("data-min")),
        max: Number(s.getAttribute("data-max")),
        mean: Number(s.getAttribute("data-mean")),
        label: s.getAttribute("aria-label") ?? "",
      })),
    })),
  );
  expect(bars).toHaveLength(8);
  for (const row of bars) {
    const ex = (stats.examples as Json[]).find((e) => e.exampleName === row.name)!;
    expect(row.bars).toHaveLength(2); // overall and the quality evaluator
    expect(row.bars[0]).toMatchObject({ min: ex.overall.min, max: ex.overall.max, mean: ex.overall.mean });
    expect(row.bars[0].label).toContain("over 3 trials");
    expect(row.bars[0].max).toBeGreaterThan(row.bars[0].min); // the trials drew different scores
  }
  await shot("experiment-trials");

  await open(`#/automations/${wf.id}/compare?a=${a.id}&b=${b.id}`, "Compare experiments");
  await page.waitForSelector("table.verdicts tbody tr");
  await page.waitForSelector("table.compare tbody tr");
  await settled();
  // The verdict table comes first, above the example-by-example table.
  expect(await page.evaluate(`[...document.querySelectorAll("table")].map((t) => t.className)`)).toEqual(["verdicts", "compare"]);
  const verdicts = await page.$$eval("table.verdicts tbody tr", (trs) =>
    trs.map((tr) => [...(tr as unknown as { children: Iterable<{ textContent: string | null }> }).children].map((c) => (c.textContent ?? "").trim())),
  );
  const cmp = await api("GET", `/v1/automations/${wf.id}/experiments/compare?base=${a.id}&candidate=${b.id}`);
  expect(verdicts.map((r) => r[0])).toEqual(["quality", "Overall score", "Pass rate"]);
  expect(verdicts[0][1]).toBe(cmp.evaluators[0].baseMean.toFixed(3));
  expect(verdicts[0][2]).toBe(cmp.evaluators[0].candidateMean.toFixed(3));
  expect(verdicts[0][6]).toBe("regressed");
  expect(verdicts[1][6]).toBe("regressed");
  expect(await text("section[aria-labelledby=verdicts-h] p")).toContain("mean over its trials (A: 3, B: 3)");
  await shot("compare-verdicts");
});

browserTest("a backtest started from a version: 'replay the last N runs', then the verdict and the changed runs with both runs linked", async () => {
  // v1 gets kind "a" wrong; v2 gets "a" right and "b" wrong. One "a" run is corrected by a reviewer.
  const flow = (version: string, script: string) =>
    `name: bt-console\nversion: ${version}\ninputs: [{name: kind, type: string, required: true}, {name: n, type: integer, required: true}]\nsteps:\n  - name: calc\n    type: transform.script\n    with: {inputs: {kind: "{{ input.kind }}", n: "{{ input.n }}"}, function: "${script}"}\noutput: {total: "{{ steps.calc.output.total }}"}\n`;
  const wf = await api("POST", "/v1/automations", { yaml: flow("1.0.0", "function script(kind, n) { return { total: kind === 'a' ? Number(n) + 1 : Number(n) * 2 } }") });
  const runs: { id: string; kind: string; n: number }[] = [];
  for (let i = 0; i < 6; i++) {
    const kind = "ab"[i % 2];
    const r = await api("POST", "/v1/runs?wait_for_completion=30", { target: wf.id, input: { kind, n: i + 2 } });
    expect(r.execution.status).toBe("completed");
    runs.push({ id: r.id, kind, n: i + 2 });
  }
  await api("PUT", `/v1/runs/${runs[0].id}/reviews`, { verdict: "incorrect", correctedOutput: { total: runs[0].n * 2 } });
  await api("POST", `/v1/automations/${wf.id}/versions`, { yaml: flow("2.0.0", "function script(kind, n) { return { total: kind === 'b' ? Number(n) * 2 + 1 : Number(n) * 2 } }"), version: "2.0.0", activate: false });

  await open(`#/automations/${wf.id}`, "bt-console");
  await page.waitForSelector("form.replay input");
  await page.click("form.replay input");
  await page.keyboard.down("Control");
  await page.keyboard.press("a");
  await page.keyboard.up("Control");
  await page.keyboard.type("6");
  await page.click("form.replay button[type=submit]");
  await page.waitForFunction(`location.hash.includes("/backtests/bt_")`);
  await page.waitForSelector("section[aria-labelledby=bt-changed-h] table tbody tr", { timeout: 60_000 });
  await settled();
  const id = (await page.evaluate("location.hash") as string).split("/").pop()!;
  const report = await api("GET", `/v1/automations/${wf.id}/backtests/${id}`);
  expect(report.status).toBe("completed");
  // Broke: the two uncorrected "a" runs (their output was the truth) and the three "b" runs; fixed: the corrected one.
  expect(report.changes).toEqual({ broke: 5, fixed: 1, scoreDown: 0, scoreUp: 0 });
  const rows = await page.$$eval("section[aria-labelledby=bt-changed-h] table tbody tr", (trs) =>
    trs.map((tr) => [...(tr as unknown as { querySelectorAll(s: string): Iterable<{ textContent: string | null }> }).querySelectorAll("td")].map((c) => (c.textContent ?? "").trim())),
  );
  expect(rows.map((r) => r[0])).toEqual(["broke", "broke", "broke", "broke", "broke", "fixed"]);
  expect(rows[5][3]).toBe("correction");
  expect(rows[5][4]).toBe(runs[0].id);
  expect(rows.map((r) => r[5])).toEqual(report.changed.map((c: Json) => c.replayRunId));
  const verdicts = await page.$$eval("table.verdicts tbody tr th", (ths) => ths.map((t) => (t.textContent ?? "").trim()));
  expect(verdicts).toEqual(["exact-diff", "Overall score", "Pass rate"]);
  await shot("backtest");
});

browserTest("a workflow output holding <script> stays text", async () => {
  const name = "<script>window.__pwned = 1</script><img src=/x-pwned onerror=window.__pwned=2>";
  const run = await api("POST", "/v1/runs?wait_for_completion=30", { target: "workflows.hello", input: { name } });
  expect(run.execution.status).toBe("completed");
  await open(`#/runs/${run.id}`, run.id);
  expect(await text("section[aria-labelledby=output-h] pre")).toContain(`Hello, ${name}!`);
  expect(await page.evaluate('document.querySelectorAll("main script, main img").length')).toBe(0);
  expect(await page.evaluate("window.__pwned")).toBeUndefined();
});

browserTest("every other page renders without an error; light, dark and phone", async () => {
  const wf = await api("GET", "/v1/automations/workflows.invoice-summary");
  const runs = (await api("GET", `/v1/runs?source=${wf.id}&limit=10`)).runs as Json[];
  for (const [i, r] of runs.entries()) await api("PUT", `/v1/runs/${r.id}/reviews`, { verdict: i % 3 === 2 ? "incorrect" : "correct", note: "checked in the browser test" });
  // Layout shifts while a list and a run load (placeholders hold the space): Chrome's layout-shift score.
  await page.evaluate(`window.__shift = 0; new PerformanceObserver((l) => { for (const e of l.getEntries()) if (!e.hadRecentInput) window.__shift += e.value; }).observe({ type: "layout-shift" })`);
  await open("#/runs", "Runs");
  await open(`#/runs/${runs[0].id}`, runs[0].id);
  await open("#/runs", "Runs");
  const shift = (await page.evaluate("window.__shift")) as number;
  console.log(`layout shift while the runs list and a run loaded: ${shift.toFixed(4)}`);
  expect(shift).toBeLessThan(0.1); // "good" by Chrome's own threshold
  await shot("runs");
  await open("#/automations", "Automations");
  await shot("automations");
  await open(`#/automations/${wf.id}/dataset`, "Dataset");
  await shot("dataset");
  await open(`#/automations/${wf.id}/evaluators`, "Evaluators");
  await shot("evaluators");
  await open(`#/automations/${wf.id}/health?bucket=day`, "Review health");
  await page.waitForSelector(".chart canvas");
  await shot("review-health");
  await open(`#/runs/${runs[0].id}`, runs[0].id);
  await page.waitForSelector("section[aria-labelledby=review-h] textarea");
  await shot("run-review");
  await open("#/templates", "Templates");
  await shot("templates");
  await open("#/email-servers", "E-mail servers");
  await shot("email-servers");
  await open("#/models", "Models");
  // The admin pages a `*` key may read (their screenshots come from automation-console-people.test.ts).
  await open("#/members", "Members");
  await open("#/keys", "Keys");
  await open("#/audit", "Audit");
  await open("#/sessions", "My sessions"); // a key has no sessions: a notice
  await open("#/evaluation", "Evaluation");
  await page.emulateMediaFeatures([{ name: "prefers-color-scheme", value: "dark" }]);
  await open(`#/runs/${runWithFile}`, runWithFile);
  await shot("run-dark");
  await page.emulateMediaFeatures([{ name: "prefers-color-scheme", value: "light" }]);
  await page.setViewport({ width: 390, height: 844 }); // not isMobile: that reloads the page under the test
  await open("#/runs", "Runs");
  await shot("runs-phone");
  await page.setViewport({ width: 1280, height: 900 });
});

browserTest("a key's scopes decide what the console shows; what the API refuses is a message", async () => {
  const db = automationPgUrl(join(dir, "data")); // the server's database in the PostgreSQL pass
  const made = Bun.spawnSync([join(dir, "automation-server"), "keys", "create", "--tenant", "demo", "--scopes", "runs:read", "--json", "--data-dir", join(dir, "data"), ...(db ? ["--db", db] : [])], {
    env: { ...process.env, AUTOMATION_DATA_DIR: undefined },
  });
  expect(made.exitCode).toBe(0);
  const key = (JSON.parse(made.stdout.toString()) as Json).key as string;
  const context = await browser.createBrowserContext();
  const reader = await context.newPage();
  watch(reader);
  try {
    await reader.setViewport({ width: 1280, height: 900 });
    await reader.goto(`${base}/#/signin?key=${key}`);
    await reader.waitForSelector("table.runs tbody tr");
    expect(await reader.$$eval('nav[aria-label="Main"] a', (as) => as.map((a) => (a as { textContent: string | null }).textContent))).toEqual(["Runs", "Models"]);
    await reader.goto(`${base}/#/runs/${runWithFile}`);
    await reader.waitForFunction('document.querySelector("[data-testid=run-status]")?.textContent === "completed"');
    await reader.waitForFunction('!document.querySelector("[aria-busy=true]")');
    expect(await reader.$$eval(".page-head button", (bs) => bs.length)).toBe(0); // no cancel, no rerun
    expect(await reader.$("section[aria-labelledby=review-h]")).toBeNull();
    allowed = [{ url: /\/v1\/automations\?/, status: 403 }];
    await reader.goto(`${base}/#/automations`);
    await reader.waitForSelector(".problem");
    expect(await reader.$eval(".problem", (el) => (el as { textContent: string | null }).textContent)).toContain("403 this API key lacks the scope automations:read");
  } finally {
    await context.close();
  }
});

browserTest("a wrong key is refused with the API's message and nothing is stored", async () => {
  const context = await browser.createBrowserContext();
  const other = await context.newPage();
  watch(other);
  try {
    allowed = [{ url: /\/v1\/auth\/check$/, status: 401 }, { url: /\/v1\/auth\/sessions\/current$/, status: 401 }];
    await other.goto(`${base}/#/signin?with=key`); // the key form (the second choice beside e-mail and password)
    await other.waitForSelector("#api-key");
    await other.type("#api-key", "eak_not_a_key");
    await other.keyboard.press("Enter");
    await other.waitForSelector(".problem[role=alert]");
    expect(await other.$eval(".problem[role=alert]", (el) => (el as { textContent: string | null }).textContent)).toStartWith("401 ");
    expect(await other.evaluate("sessionStorage.length")).toBe(0);
  } finally {
    await context.close();
  }
});

browserTest("cancel a running run and rerun it from its page", async () => {
  await api("POST", "/v1/automations", { yaml: "name: slow\ntriggerMethods: [{type: api}, {type: manual}]\nsteps:\n  - {name: hold, type: control.wait, duration: 60000}\n  - {name: after, type: transform.set, with: {fields: {done: true}}}\n" });
  const started = await api("POST", "/v1/runs", { target: "workflows.slow", input: {} });
  await runStatus(started.id, ["running"]);
  await open(`#/runs/${started.id}`, started.id);
  await page.waitForSelector(".page-head button.danger");
  await page.click(".page-head button.danger");
  await page.waitForFunction('["cancelled"].includes(document.querySelector("[data-testid=run-status]")?.textContent)', { timeout: 60_000 });
  expect((await api("GET", `/v1/runs/${started.id}`)).execution.status).toBe("cancelled");
  await page.click(".page-head button:not(.danger)"); // Rerun
  await page.waitForFunction(`location.hash.startsWith("#/runs/") && !location.hash.includes(${JSON.stringify(started.id)})`);
  const rerun = decodeURIComponent((await page.evaluate('location.hash.split("/")[2]')) as string);
  const again = await api("GET", `/v1/runs/${rerun}`);
  expect(again.execution.retry.previousRunId).toBe(started.id);
  await api("POST", `/v1/runs/${rerun}/cancel`, {});
  await page.waitForFunction('document.querySelector("[data-testid=run-status]")?.textContent === "cancelled"', { timeout: 60_000 });
});

browserTest("a run's review: verdict, note and corrected output saved; the run promoted to a dataset example", async () => {
  const run = await api("POST", "/v1/runs?wait_for_completion=30", { target: "workflows.hello", input: { name: "Ada" } });
  await open(`#/runs/${run.id}`, run.id);
  await page.waitForSelector("#review-note");
  await page.click('input[name=verdict][value="incorrect"]');
  await page.type("#review-note", "the greeting should be informal");
  await page.type("#review-corrected", '{"greeting": "Hi, Ada!"}');
  await page.click("section[aria-labelledby=review-h] form.stack button[type=submit]");
  await page.waitForFunction('document.body.textContent.includes("Review saved.")');
  const { review } = await api("GET", `/v1/runs/${run.id}/reviews`);
  expect(review).toMatchObject({ verdict: "incorrect", status: "open", note: "the greeting should be informal", correctedOutput: { greeting: "Hi, Ada!" } });
  await page.type("form.promote input", "informal-greeting");
  await page.click("form.promote button[type=submit]");
  await page.waitForFunction('location.hash.includes("/dataset/ex_")');
  await page.waitForFunction('document.querySelector("#page-title")?.textContent?.includes("informal-greeting")');
  await settled();
  const wf = await api("GET", "/v1/automations/workflows.hello");
  const example = ((await api("GET", `/v1/automations/${wf.id}/examples?limit=100`)).data as Json[]).find((e) => e.name === "informal-greeting")!;
  expect(example.expected).toEqual({ greeting: "Hi, Ada!" });
  await shot("example");
});

browserTest("evaluators: invalid YAML is refused with the server's issue; the stored file stays", async () => {
  const wf = await api("GET", "/v1/automations/workflows.invoice-summary");
  const before = await api("GET", `/v1/automations/${wf.id}/evaluators`);
  await open(`#/automations/${wf.id}/evaluators`, "Evaluators");
  await page.waitForSelector("textarea.code");
  await page.click("textarea.code");
  await page.keyboard.down("Control");
  await page.keyboard.press("a");
  await page.keyboard.up("Control");
  await page.keyboard.type("evaluators:\n  - name: Not Kebab\n    type: exact-diff\n");
  allowed = [{ url: /\/evaluators$/, status: 400 }];
  await page.click("form.stack button[type=submit]");
  await page.waitForSelector(".problem[role=alert]");
  expect(await text(".problem[role=alert]")).toStartWith("400 ");
  expect((await api("GET", `/v1/automations/${wf.id}/evaluators`)).yaml).toBe(before.yaml);
});
