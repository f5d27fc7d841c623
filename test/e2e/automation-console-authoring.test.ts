// The console for people who build automations (issue 40), in Debian's chromium driven by
// puppeteer-core against the compiled automation-server (--demo, --port 0), as a new user would:
// write a workflow in the YAML editor with a mistake (the server's issue shows at its line and nothing
// is stored), fix it, create it, run it from the form generated from its inputs (a PDF file input, an
// enum, run and wait) and see its output; make version 2, diff it against version 1, promote 1 back,
// restore 2 (untagged: the page says it needs a tag, and tagging it works); and a read-only key is
// offered none of it; a 50 MB file uploaded in the Files page with its progress shown; an e-mail
// server created (a refused host shown beside its field) whose test message reaches the tests' SMTP
// sink. Screenshots: docs/automation/console/editor.png, versions.png, diff.png, files.png,
// email-server-test.png.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { PDFDocument, StandardFonts } from "pdf-lib";
import { type Browser, type BrowserContext, type Page } from "puppeteer-core";
import { type ConsoleBrowser, startConsoleBrowser } from "./console-browser";
import { consoleApi } from "./console-api";
import { automationPgUrl } from "./support";
import { startSmtpSink, type SmtpSink } from "../support/smtp-sink";

type Json = Record<string, any>; // biome-ignore lint: test assertions index freely into response bodies

const KEY = "eak_demo_0123456789abcdefghijklmnopqrstuv";
const SHOTS = join(import.meta.dir, "../../docs/automation/console");
const SECRET_TOKEN = "tok-e2e-5c1d9b7a30f2";

let started: ConsoleBrowser | undefined;
let sink: SmtpSink | undefined;
let base = "";
let browser: Browser;
const problems: string[] = [];
let allowed: { url: RegExp; status: number }[] = [];
const contexts: BrowserContext[] = [];
const { api, runStatus } = consoleApi(() => base, KEY);

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
  // An aborted validate call (the person typed on) is not a failure.
  p.on("requestfailed", (r) => {
    if (r.failure()?.errorText === "net::ERR_ABORTED" && r.url().endsWith("/v1/automations/validate")) return;
    problems.push(`request failed: ${r.method()} ${r.url()} ${r.failure()?.errorText}`);
  });
  p.on("response", (r) => {
    if (r.status() >= 400 && !isAllowed(r.url(), r.status())) problems.push(`HTTP ${r.status()}: ${r.request().method()} ${r.url()}`);
  });
}

function browserTest(name: string, fn: () => Promise<void>, timeoutMs = 180_000): void {
  test(
    name,
    async () => {
      problems.length = 0;
      allowed = [];
      try {
        await fn();
        await Bun.sleep(200);
      } finally {
        for (const c of contexts.splice(0)) await c.close().catch(() => {});
      }
      expect(problems).toEqual([]);
    },
    timeoutMs,
  );
}

async function signedIn(hash: string, heading: string, key = KEY): Promise<Page> {
  const context = await browser.createBrowserContext();
  contexts.push(context);
  const p = await context.newPage();
  await p.setViewport({ width: 1280, height: 900 });
  watch(p);
  await p.goto(`${base}/#/signin?key=${key}`);
  await p.waitForSelector('nav[aria-label="Main"]');
  await p.goto(`${base}/${hash}`);
  await titled(p, heading);
  return p;
}

const titled = (p: Page, heading: string) => p.waitForFunction(`document.querySelector("#page-title")?.textContent?.includes(${JSON.stringify(heading)})`, { timeout: 30_000 });
const bodyHas = (p: Page, s: string) => p.waitForFunction(`document.body.textContent.includes(${JSON.stringify(s)})`, { timeout: 30_000 });
const textOf = (p: Page, selector: string) => p.$eval(selector, (el) => (el as { textContent: string | null }).textContent ?? "");
async function shot(p: Page, name: string): Promise<void> {
  await p.evaluate("document.activeElement && document.activeElement.blur && document.activeElement.blur()");
  await p.screenshot({ path: join(SHOTS, `${name}.png`), fullPage: true });
}

/** Form controls and buttons a screen reader could not name (as in automation-console.test.ts). */
const UNLABELLED = `[...document.querySelectorAll("input:not([type=hidden]), select, textarea, button, a[href]")]
  .filter((el) => {
    if (el.getAttribute("aria-label") || el.getAttribute("aria-labelledby")) return false;
    if (el.tagName === "BUTTON" || el.tagName === "A") return !el.textContent.trim();
    return !(el.labels && el.labels.length);
  })
  .map((el) => el.outerHTML.slice(0, 120))`;
const unlabelled = (p: Page) => p.evaluate(UNLABELLED) as Promise<string[]>;

// The editor lives in a shadow root (its styles are constructed style sheets there, which the CSP allows).
const CM = ".editor-host >>> .cm-content";

/** Replaces the editor's whole text: select all, then paste (a paste event with the text, as the clipboard gives it). */
async function paste(p: Page, text: string): Promise<void> {
  await p.click(CM);
  await p.keyboard.down("Control");
  await p.keyboard.press("a");
  await p.keyboard.up("Control");
  await p.$eval(CM, (el, t) => {
    // Runs in the page; the tests' own types have no DOM, so its classes are named through globalThis.
    const dom = globalThis as unknown as { DataTransfer: new () => { setData(type: string, value: string): void }; ClipboardEvent: new (type: string, init: object) => Event };
    const data = new dom.DataTransfer();
    data.setData("text/plain", t);
    el.dispatchEvent(new dom.ClipboardEvent("paste", { clipboardData: data, bubbles: true, cancelable: true }));
  }, text);
}

/** The 1-based line numbers of the editor's lines that carry an error mark. */
const markedLines = (p: Page) => p.$$eval(".editor-host >>> .cm-line", (lines) => lines.map((l, i) => (l.querySelector(".cm-lintRange-error") ? i + 1 : 0)).filter((n) => n > 0));

// Line 11 names a step kind that does not exist (one letter too many).
const v1 = (kind: string) => `name: greeter
version: 1.0.0
description: Greets someone about a document
triggerMethods: [{type: api}, {type: manual}]
inputs:
  - {name: who, type: string, required: true}
  - {name: tone, type: string, enum: [plain, loud], default: plain}
  - {name: doc, type: file, required: true, description: The letter}
steps:
  - name: greet
    type: ${kind}
    with:
      fields:
        greeting: "Hello {{ input.who }} ({{ input.tone }})"
        file: "{{ input.doc.filename }}"
output:
  greeting: "{{ steps.greet.output.greeting }}"
  file: "{{ steps.greet.output.file }}"
`;

async function letterPdf(): Promise<string> {
  const doc = await PDFDocument.create();
  const page = doc.addPage([420, 300]);
  page.drawText("Dear Ada, thank you for your letter.", { x: 30, y: 250, size: 14, font: await doc.embedFont(StandardFonts.Helvetica) });
  const path = join(started!.dir, "letter.pdf");
  writeFileSync(path, await doc.save());
  return path;
}

beforeAll(async () => {
  // --outbound-allow: the tests' SMTP sink listens on loopback, which the server refuses by default.
  // --env-allow: the failed-step test's workflow reads a secret from the environment.
  process.env.CONSOLE_E2E_TOKEN = SECRET_TOKEN;
  started = await startConsoleBrowser("automation-console-authoring", ["--demo", "--workers", "2", "--outbound-allow", "127.0.0.1", "--env-allow", "CONSOLE_E2E_TOKEN"]);
  sink = await startSmtpSink();
  ({ base, browser } = started);
}, 180_000);

afterAll(async () => {
  await started?.close();
  await sink?.stop();
});

let automationId = "";

/** Every chunk the console's JS names (import() targets and their imports), transitively, with its text. */
async function chunks(): Promise<{ first: Map<string, string>; lazy: Map<string, string> }> {
  const html = await (await fetch(`${base}/`)).text();
  const first = new Map<string, string>();
  for (const m of html.matchAll(/(?:src|href)="\.?(\/[\w.-]+\.js)"/g)) first.set(m[1], await (await fetch(`${base}${m[1]}`)).text());
  const lazy = new Map<string, string>();
  const queue = [...first.values()];
  while (queue.length) {
    for (const m of queue.shift()!.matchAll(/["'`]\.?(\/[\w.-]+\.js)["'`]/g)) {
      if (first.has(m[1]) || lazy.has(m[1])) continue;
      const r = await fetch(`${base}${m[1]}`);
      expect(r.status).toBe(200);
      const text = await r.text();
      lazy.set(m[1], text);
      queue.push(text);
    }
  }
  return { first, lazy };
}

const gzKB = (text: string) => Bun.gzipSync(new TextEncoder().encode(text), { level: 9 }).byteLength / 1024;

test("budgets: the first load's JavaScript is within 150 KB gzipped and holds no editor; the editor's own chunk is within 200 KB gzipped", async () => {
  const { first, lazy } = await chunks();
  const firstKB = [...first.values()].reduce((n, t) => n + gzKB(t), 0);
  expect(firstKB).toBeLessThanOrEqual(150);
  expect([...first.values()].some((t) => t.includes("cm-content"))).toBe(false);
  const editor = [...lazy.entries()].filter(([, t]) => t.includes("cm-content"));
  expect(editor).toHaveLength(1);
  expect(gzKB(editor[0][1])).toBeLessThanOrEqual(200);
  // The diff comes as a chunk of its own too.
  expect([...first.values()].some((t) => t.includes("diffLines"))).toBe(false);
});

browserTest("write a workflow with a mistake (the issue at its line, nothing stored), fix it, create it, run it from its form with a PDF and see the output", async () => {
  const p = await signedIn("#/automations", "Automations");
  const { lazy } = await chunks();
  const editorChunk = [...lazy.entries()].find(([, t]) => t.includes("cm-content"))![0];
  const fetched: string[] = [];
  p.on("request", (r) => void fetched.push(new URL(r.url()).pathname));
  await p.reload();
  await titled(p, "Automations");
  expect(fetched).not.toContain(editorChunk); // not on the list page
  await p.click('a[href="#/automations/new"]');
  await titled(p, "New automation");
  await p.waitForSelector(CM);
  expect(fetched).toContain(editorChunk); // on the page that edits
  // the starter text is valid as it stands
  await bodyHas(p, "No issues");
  expect(await unlabelled(p)).toEqual([]);
  expect(await p.$eval(CM, (el) => el.getAttribute("aria-label"))).toBe("Workflow YAML");

  await paste(p, v1("transform.sett"));
  await p.waitForSelector('.editor-issues li[data-line="11"]', { timeout: 30_000 });
  expect(await textOf(p, ".editor-issues li")).toContain('unknown step type "transform.sett"');
  await p.waitForSelector(".editor-host >>> .cm-lintRange-error");
  expect(await markedLines(p)).toEqual([11]);
  expect(await p.$eval("form button[type=submit]", (b) => (b as unknown as { disabled: boolean }).disabled)).toBe(true);
  expect((await api("GET", "/v1/automations?search=greeter")).total).toBe(0);
  await shot(p, "editor");

  // The line link puts the cursor on that line; the fix is typed there.
  await p.click('.editor-issues li[data-line="11"] button');
  await p.keyboard.press("End");
  await p.keyboard.press("Backspace");
  await bodyHas(p, "No issues: the server accepts this YAML.");
  expect(await markedLines(p)).toEqual([]);
  await p.waitForFunction('!document.querySelector("form button[type=submit]").disabled');
  await p.click("form button[type=submit]");
  await titled(p, "Automation greeter");
  const made = await api("GET", "/v1/automations/workflows.greeter");
  automationId = made.id;
  expect(made.version).toBe("1.0.0");
  expect(made.inputSchema.properties.tone.enum).toEqual(["plain", "loud"]);

  // The run form, generated from the inputs: the enum is a select starting at its default.
  await p.waitForSelector("form.run-form");
  expect(await p.$eval("#input-tone", (s) => (s as unknown as { value: string }).value)).toBe("plain");
  expect(await p.$$eval("#input-tone option", (os) => os.map((o) => (o as unknown as { value: string }).value))).toEqual(["", "plain", "loud"]);
  await p.type("#input-who", "Ada");
  await p.select("#input-tone", "loud");
  const upload = await p.waitForSelector("#input-doc");
  await (upload as unknown as { uploadFile(path: string): Promise<void> }).uploadFile(await letterPdf());
  await p.click('form.run-form button[value="wait"]');
  await p.waitForFunction('location.hash.startsWith("#/runs/")', { timeout: 90_000 });
  const runId = decodeURIComponent((await p.evaluate('location.hash.split("/")[2]')) as string);
  await p.waitForFunction('document.querySelector("[data-testid=run-status]")?.textContent === "completed"', { timeout: 60_000 });
  await p.waitForFunction('document.querySelector("section[aria-labelledby=output-h] pre")?.textContent.includes("Hello Ada (loud)")', { timeout: 30_000 });
  expect(await textOf(p, "section[aria-labelledby=output-h] pre")).toContain('"file": "letter.pdf"');
  const run = await runStatus(runId, ["completed"]);
  expect(run.trigger.type).toBe("manual");
  expect(run.output).toEqual({ greeting: "Hello Ada (loud)", file: "letter.pdf" });
});

browserTest("version 2 from the editor, a diff against version 1, promote 1 back; a restore is untagged and the page says to tag it", async () => {
  const p = await signedIn(`#/automations/${automationId}`, "Automation greeter");
  await p.click(`a[href="#/automations/${automationId}/edit"]`);
  await titled(p, "New version of greeter");
  await p.waitForSelector(CM);
  await bodyHas(p, "No issues");
  // A name that is not this workflow's is the server's issue too.
  await paste(p, v1("transform.set").replace("name: greeter", "name: greeter-2"));
  await p.waitForSelector('.editor-issues li[data-line="1"]', { timeout: 30_000 });
  expect(await textOf(p, ".editor-issues li")).toContain('but this is "greeter"');
  await paste(p, v1("transform.set").replace("version: 1.0.0", "version: 2.0.0").replace("Hello {{", "Hi {{"));
  await bodyHas(p, "No issues");
  // A tag the server refuses is shown beside the tag field, and nothing is stored.
  allowed = [{ url: /\/versions$/, status: 409 }];
  await p.type("input[placeholder*=version]", "1.0.0");
  await p.type('input[placeholder="What changed and why"]', "say hi");
  await p.click("form button[type=submit]");
  await p.waitForSelector("#tag-issue");
  expect(await textOf(p, "#tag-issue")).toContain("version 1.0.0 already exists");
  expect((await api("GET", `/v1/automations/${automationId}/versions`)).total).toBe(1);
  await p.click("input[placeholder*=version]", { count: 3 });
  await p.keyboard.press("Backspace"); // empty: the YAML's own version: 2.0.0
  await p.click("form button[type=submit]");
  await titled(p, "Versions of greeter");
  await bodyHas(p, "Version 2.0.0 saved.");

  const row = (tag: string) => `tr[data-version="${tag}"]`;
  await p.waitForSelector(row("2.0.0"));
  expect(await textOf(p, row("2.0.0"))).toContain("current");
  expect(await textOf(p, row("2.0.0"))).toContain("say hi");
  expect(await textOf(p, row("1.0.0"))).not.toContain("current");
  expect(await unlabelled(p)).toEqual([]);
  await shot(p, "versions");

  // The diff: A is 1.0.0 and B the current 2.0.0 by default.
  await p.click("form button[type=submit]");
  await titled(p, "1.0.0 → 2.0.0");
  await p.waitForSelector("table.diff");
  const changed = await p.$$eval("table.diff tr.diff-changed", (rows) => rows.map((r) => Array.from(r.querySelectorAll("td.code"), (c) => (c as { textContent: string | null }).textContent)));
  expect(changed).toEqual([
    ["removed: version: 1.0.0", "added: version: 2.0.0"],
    ['removed:         greeting: "Hello {{ input.who }} ({{ input.tone }})"', 'added:         greeting: "Hi {{ input.who }} ({{ input.tone }})"'],
  ]);
  expect(await textOf(p, "[role=status]")).toContain("2 lines differ");
  await shot(p, "diff");

  // Promote 1.0.0 back.
  await p.goBack();
  await titled(p, "Versions of greeter");
  await p.waitForSelector(`${row("1.0.0")} button`);
  await p.click(`${row("1.0.0")} button`); // Promote
  await bodyHas(p, "Version 1.0.0 is current now.");
  expect((await api("GET", `/v1/automations/${automationId}`)).version).toBe("1.0.0");
  await p.waitForFunction(`document.querySelector('${row("1.0.0")}').textContent.includes("current")`);

  // Restore 2.0.0: a new untagged current version, which the page does not offer to promote.
  const restore = await p.waitForSelector(`xpath/.//tr[@data-version="2.0.0"]//button[contains(., "Restore")]`);
  await restore!.click();
  await bodyHas(p, "It can be promoted again only once it is tagged");
  await p.waitForSelector(row(""));
  expect(await textOf(p, row(""))).toContain("Untagged: it can be promoted only once tagged.");
  expect(await p.$(`xpath/.//tr[@data-version=""]//button[contains(., "Promote")]`)).toBeNull();
  const after = await api("GET", `/v1/automations/${automationId}`);
  expect(after.version).toBeNull();
  expect(after.description).toBe("Greets someone about a document");
  // Tagging it makes a tagged current copy.
  await p.type(`${row("")} input[aria-label^="Tag for"]`, "2.0.1");
  await p.click(`xpath/.//tr[@data-version=""]//button[contains(., "Tag it")]`);
  await p.waitForSelector(row("2.0.1"));
  expect((await api("GET", `/v1/automations/${automationId}`)).version).toBe("2.0.1");
});

browserTest("the editor completes step kinds after type:, and under with: the keys of that kind, from the server's list", async () => {
  const p = await signedIn("#/automations/new", "New automation");
  await p.waitForSelector(CM);
  await bodyHas(p, "No issues");
  const options = async () => {
    await p.keyboard.down("Control");
    await p.keyboard.press("End");
    await p.keyboard.press("Space");
    await p.keyboard.up("Control");
    await p.waitForSelector(".editor-host >>> .cm-tooltip-autocomplete li");
    const labels = await p.$$eval(".editor-host >>> .cm-tooltip-autocomplete li .cm-completionLabel", (els) => els.map((e) => (e as { textContent: string | null }).textContent));
    await p.keyboard.press("Escape");
    return labels;
  };
  await paste(p, "name: c\nsteps:\n  - name: call\n    type: action.ht");
  expect(await options()).toEqual(["action.http"]);
  await paste(p, "name: c\nsteps:\n  - name: call\n    type: action.http\n    with:\n      ");
  const keys = await options();
  expect(keys).toContain("url");
  expect(keys).toContain("method");
  expect(keys).not.toContain("fields"); // transform.set's, not this kind's

  // Unsaved text: a link away asks first; "Cancel" keeps the page and the text.
  const asked: string[] = [];
  p.once("dialog", (d) => void (asked.push(d.message()), d.dismiss()));
  await p.click('nav[aria-label="Main"] a[href="#/runs"]');
  await Bun.sleep(300);
  expect(asked).toEqual(["Leave this page? The YAML you typed is not saved."]);
  expect(await p.evaluate("location.hash")).toBe("#/automations/new");
  expect(await textOf(p, CM)).toContain("type: action.http");
  p.once("dialog", (d) => void d.accept());
  await p.click('nav[aria-label="Main"] a[href="#/runs"]');
  await titled(p, "Runs");
});

browserTest("an input that takes a list of files (items: file) gets a multiple file field; several files run", async () => {
  const yaml = [
    "name: bundle",
    "triggerMethods: [{type: api}, {type: manual}]",
    "inputs:",
    "  - {name: docs, type: array, items: file, required: true}",
    "steps:",
    "  - name: count",
    "    type: transform.set",
    '    with: {fields: {n: "{{ input.docs | size }}", first: "{{ input.docs[0].filename }}", second: "{{ input.docs[1].filename }}"}}',
    "output:",
    '  n: "{{ steps.count.output.n }}"',
    '  names: "{{ steps.count.output.first }} {{ steps.count.output.second }}"',
    "",
  ].join("\n");
  const made = await api("POST", "/v1/automations", { yaml });
  const a = join(started!.dir, "one.txt");
  const b = join(started!.dir, "two.txt");
  writeFileSync(a, "first");
  writeFileSync(b, "second");
  const p = await signedIn(`#/automations/${made.id}`, "Automation bundle");
  const field = await p.waitForSelector("#input-docs[multiple]");
  await (field as unknown as { uploadFile(...paths: string[]): Promise<void> }).uploadFile(a, b);
  await bodyHas(p, "one.txt, two.txt");
  expect(await unlabelled(p)).toEqual([]);
  await p.click('form.run-form button[value="wait"]');
  await p.waitForFunction('location.hash.startsWith("#/runs/")', { timeout: 90_000 });
  const runId = decodeURIComponent((await p.evaluate('location.hash.split("/")[2]')) as string);
  const run = await runStatus(runId, ["completed", "failed"]);
  expect(run.output).toEqual({ n: 2, names: "one.txt two.txt" });
  await p.waitForFunction('document.querySelector("section[aria-labelledby=output-h] pre")?.textContent.includes("one.txt two.txt")', { timeout: 30_000 });
});

browserTest("a run input the server refuses shows its issue beside that field, and no run starts", async () => {
  const p = await signedIn("#/automations/workflows.invoice-summary", "invoice-summary");
  await p.waitForSelector("form.run-form");
  const before = (await api("GET", "/v1/runs?limit=100")).runs?.length;
  await p.click("#input-invoice");
  await p.keyboard.type("[1, 2]"); // valid JSON, but not the object the input declares
  allowed = [{ url: /\/v1\/runs$/, status: 400 }];
  await p.click("form.run-form button[type=submit]");
  await p.waitForSelector("#input-invoice-issue");
  expect(await textOf(p, "#input-invoice-issue")).toBe("input.invoice must be an object");
  expect(await p.$eval("#input-invoice", (el) => el.getAttribute("aria-describedby"))).toContain("input-invoice-issue");
  expect(await p.evaluate("location.hash")).toBe("#/automations/workflows.invoice-summary");
  expect((await api("GET", "/v1/runs?limit=100")).runs?.length).toBe(before);
});

browserTest("a failed run opens at its failed step, its error shown there with the step's input and output", async () => {
  // Twelve steps before the failing one: the failed step sits below the first screen. The failing
  // step's values come from the run's input and from the environment (a secret, shown as [secret]).
  const before = Array.from({ length: 12 }, (_, i) => `  - {name: s${i}, type: transform.set, with: {fields: {n: ${i}}}}`).join("\n");
  // (billing.example.com is not on --http-allow-hosts: the call fails before any network, after rendering.)
  const stop = [
    "  - name: stop",
    "    type: action.http",
    "    with:",
    "      url: https://billing.example.com/v1/charge",
    "      method: POST",
    '      headers: {Authorization: "Bearer {{ env.CONSOLE_E2E_TOKEN }}"}',
    '      body: {total: "{{ input.total }}"}',
  ].join("\n");
  const yaml = `name: breaks\ntriggerMethods: [{type: api}, {type: manual}]\ninputs: [{name: total, type: integer}]\nsteps:\n${before}\n${stop}\n`;
  await api("POST", "/v1/automations", { yaml });
  const run = await api("POST", "/v1/runs?wait_for_completion=30", { target: "workflows.breaks", input: { total: 41 } });
  expect(run.execution.status).toBe("failed");
  const p = await signedIn(`#/runs/${run.id}`, run.id);
  await p.waitForSelector("li.step.failed");
  expect(await textOf(p, "li.step.failed")).toContain("billing.example.com");
  expect(await textOf(p, "section[aria-labelledby=steps-h] p a")).toBe("Go to the failed step: stop");
  // Scrolled to it: the failed step is on screen.
  await p.waitForFunction('(() => { const r = document.querySelector("li.step.failed").getBoundingClientRect(); return r.top >= 0 && r.bottom <= innerHeight; })()', { timeout: 10_000 });
  // Its input and output are open there, the environment's value as [secret].
  expect(await p.$eval("li.step.failed details.step-values", (d) => (d as unknown as { open: boolean }).open)).toBe(true);
  const input = JSON.parse(await textOf(p, 'li.step.failed pre[aria-label="Input of step stop"]')) as Json;
  expect(input).toMatchObject({ url: "https://billing.example.com/v1/charge", method: "POST", headers: { Authorization: "[secret]" }, body: { total: 41 } });
  expect(await p.evaluate("document.body.textContent")).not.toContain(SECRET_TOKEN);
  expect(await textOf(p, "li.step.failed details.step-values")).toContain("None: the step failed before producing one.");
  // The steps that worked keep theirs folded away.
  expect(await p.$eval("li.step.completed details.step-values", (d) => (d as unknown as { open: boolean }).open)).toBe(false);
  expect(JSON.parse(await p.$eval('li.step.completed pre[aria-label="Input of step s0"]', (e) => e.textContent ?? ""))).toEqual({ fields: { n: 0 } });
});

browserTest("a read-only key is offered no new automation, no new version, no promote or restore and no run form", async () => {
  const made = Bun.spawnSync(
    [join(started!.dir, "automation-server"), "keys", "create", "--tenant", "demo", "--scopes", "automations:read,runs:read", "--json", "--data-dir", join(started!.dir, "data"), ...dbArgs()],
    { env: { ...process.env, AUTOMATION_DATA_DIR: undefined } },
  );
  const key = (JSON.parse(made.stdout.toString()) as Json).key as string;
  const p = await signedIn("#/automations", "Automations", key);
  expect(await p.$('a[href="#/automations/new"]')).toBeNull();
  expect(await p.$('nav[aria-label="Main"] a[href="#/files"]')).toBeNull(); // no files:read
  await p.goto(`${base}/#/automations/${automationId}`);
  await titled(p, "Automation greeter");
  await p.waitForSelector(`a[href="#/automations/${automationId}/versions"]`);
  expect(await p.$(`a[href="#/automations/${automationId}/edit"]`)).toBeNull();
  expect(await p.$("form.run-form")).toBeNull();
  await p.click(`a[href="#/automations/${automationId}/versions"]`);
  await titled(p, "Versions of greeter");
  await p.waitForSelector('tr[data-version="1.0.0"]');
  expect(await p.$$eval("table button", (bs) => bs.length)).toBe(0);
  await p.goto(`${base}/#/automations/new`);
  await titled(p, "New automation");
  await bodyHas(p, "Your role may not create automations");
  expect(await p.$(CM)).toBeNull();
});

browserTest("reading files, templates and e-mail servers without writing them offers no upload, delete, edit or test send", async () => {
  const made = Bun.spawnSync(
    [join(started!.dir, "automation-server"), "keys", "create", "--tenant", "demo", "--scopes", "files:read,templates:read,email:read", "--json", "--data-dir", join(started!.dir, "data"), ...dbArgs()],
    { env: { ...process.env, AUTOMATION_DATA_DIR: undefined } },
  );
  const key = (JSON.parse(made.stdout.toString()) as Json).key as string;
  const form = new FormData();
  form.append("file", new Blob(["kept"]), "kept.txt");
  expect((await fetch(`${base}/v1/files`, { method: "POST", headers: { authorization: `Bearer ${KEY}` }, body: form })).status).toBe(200);
  const p = await signedIn("#/files", "Files", key);
  await p.waitForSelector('tr[data-file="kept.txt"]');
  expect(await textOf(p, 'tr[data-file="kept.txt"]')).toContain("Download");
  expect(await p.$("#upload-file")).toBeNull();
  expect(await p.$("xpath/.//button[contains(., 'Delete')]")).toBeNull();
  await p.goto(`${base}/#/templates`);
  await titled(p, "Templates");
  await p.waitForSelector('tr[data-template="Demo invoice"]');
  expect(await p.$("#new-template-h")).toBeNull();
  await p.click(`xpath/.//tr[@data-template="Demo invoice"]//button[contains(., "Revisions")]`);
  await p.waitForSelector('tr[data-revision="1"]');
  expect(await p.$('[aria-label="Revisions of Demo invoice"] input[type=file]')).toBeNull();
  await p.goto(`${base}/#/email-servers`);
  await titled(p, "E-mail servers");
  await p.waitForSelector('tr[data-server="demo-mail"]');
  expect(await p.$("xpath/.//button[contains(., 'New e-mail server')]")).toBeNull();
  expect(await p.$("xpath/.//button[contains(., 'Send a test')]")).toBeNull();
  expect(await p.$("xpath/.//button[contains(., 'Edit')]")).toBeNull();
});

browserTest("Files: a 50 MB upload through an upload session shows its progress, lands in the list, and is deleted after a confirmation", async () => {
  const big = join(started!.dir, "big.bin");
  const data = new Uint8Array(50 * 1024 * 1024);
  for (let i = 0; i < data.length; i += 4096) data[i] = i & 0xff;
  writeFileSync(big, data);
  const p = await signedIn("#/runs", "Runs");
  await p.click('nav[aria-label="Main"] a[href="#/files"]');
  await titled(p, "Files");
  // Throttled to ~25 MB/s so the progress is seen on its way.
  await p.emulateNetworkConditions({ download: -1, upload: 25 * 1024 * 1024, latency: 0 });
  const input = await p.waitForSelector("#upload-file");
  await (input as unknown as { uploadFile(path: string): Promise<void> }).uploadFile(big);
  await p.waitForFunction('(() => { const b = document.querySelector("#upload-progress"); return b && b.value > 0 && b.value < b.max; })()', { timeout: 30_000 });
  expect(await textOf(p, "label[for=upload-progress]")).toMatch(/^Uploading big\.bin: [\d.]+ (KiB|MiB) of 50\.0 MiB \(\d+ %\)$/);
  await bodyHas(p, "Uploaded big.bin (50.0 MiB)");
  await p.emulateNetworkConditions(null);
  const listed = (await api("GET", "/v1/files")).data.find((f: Json) => f.filename === "big.bin");
  expect(listed.size).toBe(50 * 1024 * 1024);
  const bytes = new Uint8Array(await (await fetch(`${base}/v1/files/${listed.id}/content`, { headers: { authorization: `Bearer ${KEY}` } })).arrayBuffer());
  expect(bytes.length).toBe(data.length);
  expect(bytes[4096]).toBe(data[4096]);
  await p.waitForSelector('tr[data-file="big.bin"]');
  expect(await unlabelled(p)).toEqual([]);
  await shot(p, "files");

  p.once("dialog", (d) => void d.accept());
  await p.click(`xpath/.//tr[@data-file="big.bin"]//button[contains(., "Delete")]`);
  await bodyHas(p, "Deleted big.bin.");
  expect((await api("GET", "/v1/files")).data.some((f: Json) => f.id === listed.id)).toBe(false);
});

browserTest("E-mail servers: a refused host is shown beside its field and nothing is saved; created with a write-only password, its test message reaches the SMTP sink; an edit keeps the password", async () => {
  const p = await signedIn("#/email-servers", "E-mail servers");
  const before = (await api("GET", "/v1/email-servers")).total;
  await p.click("xpath/.//button[contains(., 'New e-mail server')]");
  await p.waitForSelector("#server-form-h");
  const input = (label: string) => `xpath/.//section[@aria-labelledby="server-form-h"]//label[contains(., "${label}")]//input`;
  await p.type(input("Name"), "sink");
  await p.type(input("From address"), "robot@example.com");
  await p.type(input("From name"), "Robot");
  await p.type(input("Host"), "169.254.169.254");
  await p.type(input("Port"), String(sink!.port));
  await p.type(input("Username"), sink!.user);
  await p.type(input("Password"), sink!.password);
  await p.$eval('section[aria-labelledby="server-form-h"] textarea', (el, pem) => {
    const t = el as unknown as { value: string; dispatchEvent(e: Event): boolean };
    t.value = pem;
    t.dispatchEvent(new Event("input", { bubbles: true }));
  }, sink!.cert);
  allowed = [{ url: /\/v1\/email-servers$/, status: 400 }];
  await p.click("xpath/.//section[@aria-labelledby='server-form-h']//button[contains(., 'Create')]");
  await p.waitForSelector("#host-issue");
  expect(await unlabelled(p)).toEqual([]);
  expect(await textOf(p, "#host-issue")).toContain("169.254.169.254");
  expect((await api("GET", "/v1/email-servers")).total).toBe(before);

  await p.click(input("Host"), { count: 3 });
  await p.keyboard.type("127.0.0.1");
  await p.click("xpath/.//section[@aria-labelledby='server-form-h']//button[contains(., 'Create')]");
  await bodyHas(p, "Created sink.");
  await p.waitForSelector('tr[data-server="sink"]');
  expect(await textOf(p, 'tr[data-server="sink"]')).toContain(`password of ${sink!.user} (set; never shown)`);
  expect(await p.content()).not.toContain(sink!.password);
  const made = (await api("GET", "/v1/email-servers")).data.find((s: Json) => s.name === "sink");
  expect(made).toMatchObject({ transport: "smtp", host: "127.0.0.1", port: sink!.port, passwordConfigured: true, caPemConfigured: true });

  await p.click(`xpath/.//tr[@data-server="sink"]//button[contains(., "Send a test")]`);
  await p.waitForSelector("#test-h");
  await p.type('section[aria-labelledby="test-h"] input[type=email]', "ada@example.com");
  const received = sink!.next();
  await p.click("xpath/.//section[@aria-labelledby='test-h']//button[contains(., 'Send test message')]");
  await bodyHas(p, "Sent a test message to ada@example.com through sink");
  const mail = await received;
  expect(mail.envelope.to).toEqual(["ada@example.com"]);
  expect(mail.user).toBe(sink!.user);
  expect(mail.secure).toBe(true);
  await shot(p, "email-server-test");

  // An edit of the sender only keeps the connection and its secrets.
  await p.click(`xpath/.//tr[@data-server="sink"]//button[contains(., "Edit")]`);
  await p.waitForSelector("#server-form-h");
  expect(await p.$eval(input("Password"), (el) => (el as unknown as { value: string }).value)).toBe("");
  await p.click(input("From name"), { count: 3 });
  await p.keyboard.type("Robot Two");
  await p.click("xpath/.//section[@aria-labelledby='server-form-h']//button[contains(., 'Save')]");
  await bodyHas(p, "Saved sink.");
  const edited = await api("GET", `/v1/email-servers/${made.id}`);
  expect(edited).toMatchObject({ fromName: "Robot Two", passwordConfigured: true, caPemConfigured: true, host: "127.0.0.1" });
});

browserTest("Templates: upload a DOCX as a new template, then a new revision of it; the revisions list marks the current one", async () => {
  // The demo's invoice template is a real DOCX: its bytes serve as the file a person picks.
  const demo = (await api("GET", "/v1/templates")).items.find((t: Json) => t.name === "Demo invoice");
  const docx = new Uint8Array(await (await fetch(`${base}/v1/templates/${demo.id}/content`, { headers: { authorization: `Bearer ${KEY}` } })).arrayBuffer());
  const path = join(started!.dir, "letter.docx");
  writeFileSync(path, docx);
  const p = await signedIn("#/templates", "Templates");
  await p.type("xpath/.//section[@aria-labelledby='new-template-h']//label[contains(., 'Name')]//input", "Letter");
  const file = await p.waitForSelector("section[aria-labelledby=new-template-h] input[type=file]");
  await (file as unknown as { uploadFile(path: string): Promise<void> }).uploadFile(path);
  await p.click("xpath/.//section[@aria-labelledby='new-template-h']//button[contains(., 'Upload template')]");
  await bodyHas(p, "Uploaded Letter (revision 1");
  await p.waitForSelector('tr[data-template="Letter"]');

  await p.click(`xpath/.//tr[@data-template="Letter"]//button[contains(., "Revisions")]`);
  await p.waitForSelector('tr[data-revision="1"]');
  expect(await unlabelled(p)).toEqual([]);
  const again = await p.waitForSelector('[aria-label="Revisions of Letter"] input[type=file]');
  await (again as unknown as { uploadFile(path: string): Promise<void> }).uploadFile(path);
  await bodyHas(p, "Revision 2 of Letter is current now.");
  await p.waitForSelector('tr[data-revision="2"]');
  expect(await textOf(p, 'tr[data-revision="2"]')).toContain("current");
  expect(await textOf(p, 'tr[data-revision="1"]')).not.toContain("current");
  const made = (await api("GET", "/v1/templates")).items.find((t: Json) => t.name === "Letter");
  expect(made.currentRevision.number).toBe(2);
});

function dbArgs(): string[] {
  const db = automationPgUrl(join(started!.dir, "data"));
  return db ? ["--db", db] : [];
}
