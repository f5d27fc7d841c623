// The console's state against the address and against other people, in Debian's chromium driven by
// puppeteer-core against the compiled automation-server (--demo, --port 0):
// - two reviewers on one human-review task in two browser contexts: the stale one is told that
//   someone else decided (or changed) the task first, and their edit is neither applied nor lost
//   silently (issue 36: the console's idempotency keys were derived from the task and its version,
//   so the stale page replayed the other reviewer's answer and said "Approved");
// - the runs filter form follows the address; a deep link survives the sign-in; a 401 mid-session
//   returns to sign-in and back; the Review column; the trigger filter; descriptions; the Not-found
//   title; a filter change marks the old rows as loading (issue 38).
import { afterAll, beforeAll, expect, test } from "bun:test";
import { join } from "node:path";
import { type Browser, type BrowserContext, type Page } from "puppeteer-core";
import { type ConsoleBrowser, startConsoleBrowser } from "./console-browser";
import { automationPgUrl, type Server } from "./support";
import { consoleApi } from "./console-api";

type Json = Record<string, any>; // biome-ignore lint: test assertions index freely into response bodies

const KEY = "eak_demo_0123456789abcdefghijklmnopqrstuv";

let dir: string;
let server: Server;
let base: string;
let browser: Browser;
const problems: string[] = [];
let allowed: { url: RegExp; status: number }[] = [];
const contexts: BrowserContext[] = [];

const { api, until, runStatus } = consoleApi(() => base, KEY);

function watch(p: Page): void {
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

/** A browser test: runs `fn`, then fails on anything a page reported that the test did not allow. */
function browserTest(name: string, fn: () => Promise<void>, timeoutMs = 120_000): void {
  test(
    name,
    async () => {
      problems.length = 0;
      allowed = [];
      try {
        await fn();
        await Bun.sleep(200); // late console messages of the last action
      } finally {
        for (const c of contexts.splice(0)) await c.close().catch(() => {});
      }
      expect(problems).toEqual([]);
    },
    timeoutMs,
  );
}

/** A fresh incognito context (its own sessionStorage: another person), with one watched page. */
async function person(): Promise<Page> {
  const context = await browser.createBrowserContext();
  contexts.push(context);
  const p = await context.newPage();
  await p.setViewport({ width: 1280, height: 900 });
  watch(p);
  return p;
}

/** A person signed in with `key` (the demo link), then on `hash` with its heading shown. */
async function signedIn(hash: string, heading: string, key = KEY): Promise<Page> {
  const p = await person();
  await p.goto(`${base}/#/signin?key=${key}`);
  await p.waitForSelector('nav[aria-label="Main"]');
  await p.goto(`${base}/${hash}`);
  await titled(p, heading);
  return p;
}

const titled = (p: Page, heading: string) => p.waitForFunction(`document.querySelector("#page-title")?.textContent?.includes(${JSON.stringify(heading)})`, { timeout: 30_000 });
const settled = (p: Page) => p.waitForFunction('!document.querySelector("[aria-busy=true]")', { timeout: 30_000 });
const textOf = (p: Page, selector: string) => p.$eval(selector, (el) => (el as { textContent: string | null }).textContent ?? "");
const valueOf = (p: Page, selector: string) => p.$eval(selector, (el) => (el as unknown as { value: string }).value);
const bodyHas = (p: Page, s: string) => p.waitForFunction(`document.body.textContent.includes(${JSON.stringify(s)})`, { timeout: 30_000 });

/** Replaces a text field's value as a person would (select all, type). */
async function retype(p: Page, selector: string, value: string): Promise<void> {
  await p.click(selector, { count: 3 });
  await p.keyboard.type(value);
}

function cli(...args: string[]): Json {
  const db = automationPgUrl(join(dir, "data")); // the server's database in the PostgreSQL pass
  const r = Bun.spawnSync([join(dir, "automation-server"), ...args, "--json", "--data-dir", join(dir, "data"), ...(db ? ["--db", db] : [])], {
    env: { ...process.env, AUTOMATION_DATA_DIR: undefined },
  });
  if (r.exitCode !== 0) throw new Error(`${args.join(" ")}: ${r.stderr.toString()}`);
  return JSON.parse(r.stdout.toString()) as Json;
}

/** A paused `workflows.invoice-approval` run (its total needs a review) and its task. */
async function pausedInvoice(total: number): Promise<{ run: string; task: Json }> {
  const started = await api("POST", "/v1/runs", { target: "workflows.invoice-approval", input: { vendor: "Initech", total } });
  await runStatus(started.id, ["waiting"]);
  const task = (await api("GET", "/v1/human-reviews?limit=100")).tasks.find((t: Json) => t.executionId === started.id);
  return { run: started.id, task };
}

let started: ConsoleBrowser | undefined;

beforeAll(async () => {
  started = await startConsoleBrowser("automation-console-state", ["--demo", "--workers", "2"]);
  ({ dir, server, base, browser } = started);
}, 180_000);

afterAll(async () => {
  await started?.close();
});

// ---- issue 36: two reviewers, one task ----

browserTest("A approves; B, on a stale page, edits the total and approves: B is told A decided first and the run has A's data", async () => {
  const { run, task } = await pausedInvoice(3000);
  const a = await signedIn(`#/human-reviews/${task.id}`, task.id);
  const b = await signedIn(`#/human-reviews/${task.id}`, task.id);
  await a.waitForSelector("#field-_total");
  await b.waitForSelector("#field-_total");

  await a.click("form.stack button[aria-keyshortcuts=a]");
  await bodyHas(a, "Approved: the run resumes");

  allowed = [{ url: /\/v1\/human-reviews\//, status: 409 }];
  await retype(b, "#field-_total", "2999");
  await b.click("form.stack button[aria-keyshortcuts=a]");
  await b.waitForSelector("[role=alert]");
  const alert = await textOf(b, "[role=alert]");
  expect(alert).toContain("Someone else decided this task first: it is approved now.");
  expect(alert).toContain("Your approval was not applied.");
  expect(alert).toContain("2999"); // the edit that was dropped is named, not lost silently
  expect(await b.evaluate('document.body.textContent.includes("Approved: the run resumes")')).toBe(false);
  expect(await valueOf(b, "#field-_total")).toBe("2999"); // the field keeps what B typed

  const done = await runStatus(run, ["completed", "failed", "rejected"]);
  expect(done.execution.status).toBe("completed");
  expect(done.output.total).toBe(3000);
  // "Reload the task" shows the decided task.
  await b.click("[role=alert] button");
  await b.waitForFunction('!document.querySelector("[role=alert]")');
  await settled(b);
  expect(await valueOf(b, "#field-_total")).toBe("3000");
});

browserTest("A saves corrections; B, stale, saves other corrections: B gets the conflict, the task keeps A's value", async () => {
  const { run, task } = await pausedInvoice(4000);
  const a = await signedIn(`#/human-reviews/${task.id}`, task.id);
  const b = await signedIn(`#/human-reviews/${task.id}`, task.id);
  await a.waitForSelector("#field-_total");
  await b.waitForSelector("#field-_total");

  await retype(a, "#field-_total", "4100");
  await a.click("form.stack button[type=submit]");
  await bodyHas(a, "Corrections saved.");

  allowed = [{ url: /\/v1\/human-reviews\//, status: 409 }];
  await retype(b, "#field-_total", "2999");
  await b.click("form.stack button[type=submit]");
  await b.waitForSelector("[role=alert]");
  const alert = await textOf(b, "[role=alert]");
  expect(alert).toContain("Someone else changed this task while you were on it");
  expect(alert).toContain("Your corrections were not saved.");
  expect(alert).toContain("2999");
  expect(await b.evaluate('document.body.textContent.includes("Corrections saved.")')).toBe(false);
  expect(await valueOf(b, "#field-_total")).toBe("2999");

  const now = await api("GET", `/v1/human-reviews/${task.id}`);
  expect(now.data.total).toBe(4100);
  // B reloads, sees A's value, and can still decide.
  await b.click("[role=alert] button");
  await b.waitForFunction('document.querySelector("#field-_total")?.value === "4100"');
  await b.click("form.stack button[aria-keyshortcuts=a]");
  await bodyHas(b, "Approved: the run resumes");
  expect((await runStatus(run, ["completed", "failed", "rejected"])).output.total).toBe(4100);
});

browserTest("the same reviewer deciding twice in a row on one page sends two different keys (one per action)", async () => {
  const { task } = await pausedInvoice(5000);
  const p = await signedIn(`#/human-reviews/${task.id}`, task.id);
  await p.waitForSelector("#field-_total");
  const keys: string[] = [];
  p.on("request", (r) => {
    if (r.method() !== "GET" && r.url().includes("/v1/human-reviews/")) keys.push((JSON.parse(r.postData() ?? "{}") as Json).idempotencyKey);
  });
  await retype(p, "#field-_total", "5001");
  await p.click("form.stack button[type=submit]");
  await bodyHas(p, "Corrections saved.");
  await retype(p, "#field-_total", "5002");
  await p.click("form.stack button[type=submit]");
  await p.waitForFunction('document.querySelector("#field-_total")?.value === "5002" && document.body.textContent.includes("Corrections saved.")');
  await until("two writes", async () => (keys.length >= 2 ? true : undefined), 10_000);
  expect(keys).toHaveLength(2);
  expect(new Set(keys).size).toBe(2);
  for (const k of keys) expect(k).not.toContain(task.id); // nothing derived from the task
  expect((await api("GET", `/v1/human-reviews/${task.id}`)).data.total).toBe(5002);
});

// ---- issue 38: state that follows the address ----

browserTest("the runs filter form follows the address: after Runs or Clear it shows no filter and Apply sends none", async () => {
  await api("POST", "/v1/runs?wait_for_completion=30", { target: "workflows.hello", input: { name: "filters" } });
  const p = await signedIn("#/runs", "Runs");
  await settled(p);
  const status = 'form.filters label:first-of-type select';
  await p.select(status, "failed");
  await p.click("form.filters button[type=submit]");
  await p.waitForFunction('location.hash === "#/runs?status=failed"');
  await settled(p);
  // "Runs" in the navigation.
  await p.click('nav[aria-label="Main"] a[href="#/runs"]');
  await p.waitForFunction('location.hash === "#/runs"');
  // The hash changes before the page renders the new address: wait for that render (a form that never
  // resets fails here, after the wait's timeout), not only for the hash.
  await p.waitForFunction(`document.querySelector(${JSON.stringify(status)}).value === ""`);
  await settled(p);
  expect(await valueOf(p, status)).toBe("");
  await p.click("form.filters button[type=submit]");
  await settled(p);
  expect(await p.evaluate("location.hash")).toBe("#/runs");
  await p.waitForSelector("table.runs tbody tr");
  // "Clear".
  await p.select(status, "failed");
  await p.click("form.filters button[type=submit]");
  await p.waitForFunction('location.hash === "#/runs?status=failed"');
  await settled(p);
  await p.click("form.filters a.button");
  await p.waitForFunction('location.hash === "#/runs"');
  await p.waitForFunction(`document.querySelector(${JSON.stringify(status)}).value === ""`);
  await settled(p);
  expect(await valueOf(p, status)).toBe("");
  // Back to the filtered address: the form shows its filter again.
  await p.goBack();
  await p.waitForFunction('location.hash === "#/runs?status=failed"');
  await p.waitForFunction(`document.querySelector(${JSON.stringify(status)}).value === "failed"`);
});

browserTest("a shared deep link survives the sign-in", async () => {
  const run = await api("POST", "/v1/runs?wait_for_completion=30", { target: "workflows.hello", input: { name: "link" } });
  const p = await person();
  allowed = [{ url: /\/v1\/auth\/sessions\/current$/, status: 401 }]; // signed out: no session cookie
  await p.goto(`${base}/#/runs/${run.id}`);
  await (await p.waitForSelector("#use-key"))!.click(); // the key form is the second choice, beside e-mail and password
  await p.waitForSelector("#api-key");
  await p.type("#api-key", KEY);
  await p.keyboard.press("Enter");
  await titled(p, run.id);
  expect(await p.evaluate("location.hash")).toBe(`#/runs/${run.id}`);
  expect(await p.evaluate("location.href")).not.toContain(KEY);
});

browserTest("a key revoked mid-session returns to sign-in, and signing in comes back to the page", async () => {
  const run = await api("POST", "/v1/runs?wait_for_completion=30", { target: "workflows.hello", input: { name: "revoked" } });
  const made = cli("keys", "create", "--tenant", "demo", "--scopes", "runs:read");
  const p = await signedIn("#/runs", "Runs", made.key as string);
  await settled(p);
  cli("keys", "revoke", made.id as string);
  allowed = [{ url: /\/v1\//, status: 401 }];
  await p.goto(`${base}/#/runs/${run.id}`);
  await p.waitForSelector("#api-key", { timeout: 30_000 });
  expect(await p.$('nav[aria-label="Main"]')).toBeNull(); // not the signed-in shell any more
  expect(await textOf(p, "[role=alert]")).toContain("Signed out: 401");
  expect(await p.evaluate("sessionStorage.length")).toBe(0);
  await p.type("#api-key", KEY);
  await p.keyboard.press("Enter");
  await titled(p, run.id);
  expect(await p.evaluate("location.hash")).toBe(`#/runs/${run.id}`);
});

browserTest("the runs list shows each run's review verdict", async () => {
  const run = await api("POST", "/v1/runs?wait_for_completion=30", { target: "workflows.hello", input: { name: "reviewed" } });
  await api("PUT", `/v1/runs/${run.id}/reviews`, { verdict: "incorrect", note: "column" });
  const p = await signedIn("#/runs?has_review=true", "Runs");
  await settled(p);
  const row = await p.waitForSelector(`xpath///tr[td/a[@href="#/runs/${run.id}"]]`);
  const cells = await row!.$$eval("td", (tds) => tds.map((td) => (td as { textContent: string | null }).textContent ?? ""));
  expect(cells.at(-1)).toBe("incorrect");
});

browserTest("the trigger filter offers every trigger type", async () => {
  const p = await signedIn("#/runs", "Runs");
  const options = await p.$$eval("form.filters label:nth-of-type(3) select option", (os) => os.map((o) => (o as unknown as { value: string }).value));
  expect(options).toEqual(["", "api", "cli", "manual", "cron", "email", "eval", "rerun", "workflow"]);
});

browserTest("a review field's description and a template's description are shown", async () => {
  await api("POST", "/v1/automations", {
    yaml: `name: described-review
triggerMethods: [{type: api}]
steps:
  - name: review
    type: control.human_review
    with:
      data: {iban: "DE00 0000"}
      fieldMetadata:
        /iban: {confidence: 0.1, label: IBAN, description: The account the invoice is paid into; compare it with the letterhead}
`,
  });
  const started = await api("POST", "/v1/runs", { target: "workflows.described-review", input: {} });
  await runStatus(started.id, ["waiting"]);
  const task = (await api("GET", "/v1/human-reviews?limit=100")).tasks.find((t: Json) => t.executionId === started.id);
  const p = await signedIn(`#/human-reviews/${task.id}`, task.id);
  await p.waitForSelector("#field-_iban");
  expect(await textOf(p, ".field")).toContain("The account the invoice is paid into; compare it with the letterhead");
  // The screen reader reads it with the field.
  const described = await p.$eval("#field-_iban", (el) => el.getAttribute("aria-describedby"));
  expect(await textOf(p, `#${described}`)).toContain("The account the invoice is paid into");

  await p.goto(`${base}/#/templates`);
  await titled(p, "Templates");
  await settled(p);
  expect(await textOf(p, "table")).toContain("Invoice with line items");
});

browserTest("the Not-found page has its own title", async () => {
  const p = await signedIn("#/runs", "Runs");
  expect(await p.title()).toStartWith("Runs");
  await p.goto(`${base}/#/no-such-page`);
  await titled(p, "Not found");
  expect(await p.title()).toStartWith("Not found");
});

browserTest("after a filter change the old rows are marked as loading until the new ones arrive", async () => {
  await api("POST", "/v1/runs?wait_for_completion=30", { target: "workflows.hello", input: { name: "slow list" } });
  const p = await signedIn("#/runs", "Runs");
  await settled(p);
  await p.waitForSelector("table.runs tbody tr");
  // Hold the filtered list's answer for a while, as a slow server would.
  let release: () => void = () => {};
  const held = new Promise<void>((r) => (release = r));
  await p.setRequestInterception(true);
  p.on("request", (r) => {
    if (r.url().includes("/v1/runs?") && r.url().includes("status=completed")) void held.then(() => r.continue());
    else void r.continue();
  });
  await p.select("form.filters label:first-of-type select", "completed");
  await p.click("form.filters button[type=submit]");
  await p.waitForFunction('location.hash === "#/runs?status=completed"');
  await p.waitForSelector("[aria-busy=true] table.runs", { timeout: 5000 });
  expect(await textOf(p, "form.filters [role=status]")).toContain("Loading");
  release();
  await settled(p);
  expect(await p.$("[aria-busy=true]")).toBeNull();
  expect(await p.$("form.filters [role=status]")).toBeNull();
  await p.setRequestInterception(false);
});

browserTest("a field that needs no review can still be corrected; the run resumes with it", async () => {
  const { run, task } = await pausedInvoice(6000);
  expect(task.requiredCount).toBe(1); // only the total: the vendor's confidence is high, the currency is never reviewed
  const p = await signedIn(`#/human-reviews/${task.id}`, task.id);
  await p.waitForSelector("#field-_vendor");
  expect(await p.$eval("#field-_vendor", (el) => (el as unknown as { disabled: boolean }).disabled)).toBe(false);
  expect(await valueOf(p, "#field-_vendor")).toBe("Initech");
  await retype(p, "#field-_vendor", "Initech Corp.");
  await p.click("form.stack button[aria-keyshortcuts=a]");
  await bodyHas(p, "Approved: the run resumes");
  const done = await runStatus(run, ["completed", "failed", "rejected"]);
  expect(done.output).toMatchObject({ vendor: "Initech Corp.", total: 6000 });
});
