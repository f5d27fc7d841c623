// People in the web console (issue 37), in Chromium against the compiled automation-server on a fresh
// data dir: the printed setup link makes the owner through its form; the owner signs in with e-mail and
// password, invites a reviewer from the Members page; the reviewer accepts the link, signs in and sees
// no admin pages; the owner makes a key in the Keys page and a program uses it; a session ended
// mid-way returns to sign-in, and signing in again lands on the page that was open.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { join } from "node:path";
import { Secret, TOTP } from "otpauth";
import { type Browser, type Page } from "puppeteer-core";
import { type ConsoleBrowser, startConsoleBrowser } from "./console-browser";
import { root, type Server } from "./support";
import { INVOICE_REVIEW_YAML } from "./invoice-review";

const SHOTS = join(root, "docs", "automation", "console");
const OWNER = { email: "owner@example.test", name: "Olga Owner", password: "tangerine-walrus-orbit-7" };
const REVIEWER = { email: "rita@example.test", name: "Rita Reviewer", password: "lantern-pebble-quarry-9" };

let server: Server;
let base: string;
let browser: Browser;
/** What went wrong in a page since the test began; `allowed` lets a test expect an HTTP error. */
const problems: string[] = [];
let allowed: { url: RegExp; status: number }[] = [];

function watch(p: Page): void {
  const isAllowed = (url: string, status: number) => allowed.some((a) => a.status === status && a.url.test(url));
  p.on("console", (m) => {
    if (process.env.DEBUG_CONSOLE) console.log("console:", m.type(), m.text());
    if (m.type() !== "error") return;
    const url = m.location()?.url ?? "";
    const status = Number(/status of (\d{3})/.exec(m.text())?.[1] ?? 0);
    if (status && isAllowed(url, status)) return;
    problems.push(`console error: ${m.text()} ${url}`);
  });
  p.on("pageerror", (e) => problems.push(`page error: ${(e as Error).message ?? String(e)}`));
  p.on("response", (r) => {
    if (r.status() >= 400 && !isAllowed(r.url(), r.status())) problems.push(`HTTP ${r.status()}: ${r.request().method()} ${r.url()}`);
  });
}

/** A screenshot for docs/automation/console.md. */
async function shot(p: Page, name: string): Promise<void> {
  await p.evaluate("document.activeElement && document.activeElement.blur && document.activeElement.blur()");
  await p.screenshot({ path: join(SHOTS, `${name}.png`), fullPage: true });
}

async function newPage(): Promise<Page> {
  const context = await browser.createBrowserContext();
  const p = await context.newPage();
  await p.setViewport({ width: 1280, height: 900 });
  watch(p);
  p.on("dialog", (d) => void d.accept());
  return p;
}

const titled = (p: Page, heading: string) => p.waitForFunction(`document.querySelector("#page-title")?.textContent?.includes(${JSON.stringify(heading)})`, { timeout: 30_000 });
const settled = (p: Page) => p.waitForFunction('!document.querySelector("[aria-busy=true]")', { timeout: 30_000 });
const navLinks = (p: Page) => p.$$eval('nav[aria-label="Main"] a', (as) => as.map((a) => (a as { textContent: string | null }).textContent ?? ""));
const bodyHas = (p: Page, s: string) => p.waitForFunction(`document.body.textContent.includes(${JSON.stringify(s)})`, { timeout: 30_000 });

/** Fills the console's sign-in form and waits for the signed-in shell. */
async function signIn(p: Page, who: { email: string; password: string }): Promise<void> {
  await p.waitForSelector("#email");
  await p.click("#email", { count: 3 });
  await p.type("#email", who.email);
  await p.type("#password", who.password);
  await p.keyboard.press("Enter");
  await p.waitForSelector('nav[aria-label="Main"]', { timeout: 30_000 });
}

/** A cookie session made by the API, as a program (or another browser) would. */
async function apiSession(who: { email: string; password: string }): Promise<{ cookie: string; csrf: string }> {
  const r = await fetch(`${base}/v1/auth/sessions`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ email: who.email, password: who.password }) });
  expect(r.status).toBe(201);
  const cookie = (r.headers.get("set-cookie") ?? "").split(";")[0]!;
  return { cookie, csrf: ((await r.json()) as { csrfToken: string }).csrfToken };
}

function browserTest(name: string, fn: () => Promise<void>, timeoutMs = 120_000): void {
  test(
    name,
    async () => {
      problems.length = 0;
      allowed = [];
      await fn();
      await Bun.sleep(200);
      expect(problems).toEqual([]);
    },
    timeoutMs,
  );
}

let started: ConsoleBrowser | undefined;

beforeAll(async () => {
  started = await startConsoleBrowser("automation-console-people", ["--workers", "1"]);
  ({ server, base, browser } = started);
}, 180_000);

afterAll(async () => {
  await started?.close();
});

let owner: Page;
let inviteLink: string;

browserTest("the setup link makes the owner through its form; the owner signs in with e-mail and password", async () => {
  const m = /first owner: open \S+?(\/v1\/auth\/setup\?token=[A-Za-z0-9_-]+)/.exec(server.output());
  expect(m).not.toBeNull();
  owner = await newPage();
  await owner.goto(`${base}${m![1]}`);
  await owner.type("input[name=email]", OWNER.email);
  await owner.type("input[name=name]", OWNER.name);
  await owner.type("input[name=password]", OWNER.password);
  await owner.click("input[name=tenantName]", { count: 3 });
  await owner.type("input[name=tenantName]", "Acme");
  await Promise.all([owner.waitForNavigation(), owner.click("button")]);
  expect(await owner.$eval("h1", (h) => (h as { textContent: string | null }).textContent)).toBe("Owner created");

  // Signed out, the console asks the server who this browser is: 401, then the sign-in form.
  allowed = [{ url: /\/v1\/auth\/sessions\/current$/, status: 401 }];
  await owner.goto(`${base}/`);
  await owner.waitForSelector("#email");
  expect(await owner.$("#api-key")).toBeNull(); // the key form is the secondary choice
  allowed.push({ url: /\/v1\/auth\/sessions$/, status: 401 });
  await owner.type("#email", OWNER.email);
  await owner.type("#password", "not-the-password-at-all");
  await owner.keyboard.press("Enter");
  await owner.waitForSelector(".problem[role=alert]");
  expect(await owner.$eval(".problem[role=alert]", (el) => (el as { textContent: string | null }).textContent)).toStartWith("401 ");
  await owner.click("#password", { count: 3 });
  await signIn(owner, OWNER);
  await titled(owner, "Runs");
  const nav = await navLinks(owner);
  for (const item of ["Runs", "Automations", "Members", "Keys"]) expect(nav).toContain(item);
  expect(await owner.$eval(".who", (el) => (el as { textContent: string | null }).textContent)).toContain(OWNER.name);
  // No key anywhere in the page's storage: the session is the HttpOnly cookie.
  expect(await owner.evaluate("sessionStorage.length + localStorage.length")).toBe(0);
  expect(await owner.evaluate("document.cookie")).toBe("");
  // A reload keeps the person signed in (the cookie, asked through /v1/auth/sessions/current).
  await owner.reload();
  await owner.waitForSelector('nav[aria-label="Main"]');
});

browserTest("the owner invites a reviewer from the Members page; the link is shown once", async () => {
  await owner.goto(`${base}/#/members`);
  await titled(owner, "Members");
  await settled(owner);
  await bodyHas(owner, OWNER.email);
  await owner.type("#invite-email", REVIEWER.email);
  await owner.select("#invite-role", "reviewer");
  await owner.click("section[aria-labelledby=invite-h] button[type=submit]");
  await owner.waitForSelector("[data-testid=shown-once]");
  inviteLink = await owner.$eval("[data-testid=shown-once]", (el) => (el as unknown as { value: string }).value);
  expect(inviteLink).toContain("/v1/auth/invitations/accept?token=");
});

browserTest("the reviewer accepts the link, signs in and sees no admin pages", async () => {
  const p = await newPage();
  try {
    await p.goto(inviteLink.replace(/^https?:\/\/[^/]+/, base));
    await p.type("input[name=name]", REVIEWER.name);
    await p.type("input[name=password]", REVIEWER.password);
    await Promise.all([p.waitForNavigation(), p.click("button")]);
    expect(await p.$eval("h1", (h) => (h as { textContent: string | null }).textContent)).toBe("Welcome");
    allowed = [{ url: /\/v1\/auth\/sessions\/current$/, status: 401 }];
    await p.goto(`${base}/`);
    await signIn(p, REVIEWER);
    await titled(p, "Runs");
    const nav = await navLinks(p);
    expect(nav).toContain("Human review");
    for (const item of ["Members", "Keys", "Audit"]) expect(nav).not.toContain(item);
    expect(await p.$eval(".who", (el) => (el as { textContent: string | null }).textContent)).toContain("reviewer");
    await p.goto(`${base}/#/human-reviews`);
    await titled(p, "Human review"); // the reviewer's queue
    await settled(p);
    // The members list of the owner now has the reviewer.
    await owner.goto(`${base}/#/runs`);
    await owner.goto(`${base}/#/members`);
    await settled(owner);
    await bodyHas(owner, REVIEWER.email);
    await shot(owner, "members");
    // A role changed in the page is the member's role in the API; and back.
    const roleOf = async () => {
      const s = await apiSession(OWNER);
      const r = await fetch(`${base}/v1/members`, { headers: { cookie: s.cookie } });
      return ((await r.json()) as { data: { email: string; role: string }[] }).data.find((m) => m.email === REVIEWER.email)?.role;
    };
    const select = `xpath///label[contains(., "Role of ${REVIEWER.email}")]/select`;
    // Once in a CI run on PostgreSQL the reviewer's row came without its role control for 30 s although
    // the e-mail was on the page (not reproduced in reruns): the page is reloaded once before the test
    // gives up, and which state it was in is printed.
    const control = await owner.waitForSelector(select, { timeout: 10_000 }).catch(async () => {
      console.error(`members page without the role control: ${String(await owner.evaluate("document.body.textContent"))}`);
      await owner.reload();
      await settled(owner);
      return owner.waitForSelector(select);
    });
    await control!.select("viewer");
    await bodyHas(owner, `${REVIEWER.email} is now viewer.`);
    expect(await roleOf()).toBe("viewer");
    await (await owner.waitForSelector(select))!.select("reviewer");
    await bodyHas(owner, `${REVIEWER.email} is now reviewer.`);
    expect(await roleOf()).toBe("reviewer");
  } finally {
    await p.browserContext().close();
  }
});


browserTest("the reviewer approves a paused run's task in the console: the task, the run and the audit trail name her; versions and runs are not offered to her, and the API refuses them", async () => {
  // The owner (through the API, as a program would) makes the workflow and starts a run that pauses.
  const o = await apiSession(OWNER);
  const asOwner = (method: string, path: string, body?: unknown) =>
    fetch(`${base}${path}`, { method, headers: { cookie: o.cookie, "x-csrf-token": o.csrf, ...(body === undefined ? {} : { "content-type": "application/json" }) }, body: body === undefined ? undefined : JSON.stringify(body) });
  const made = (await (await asOwner("POST", "/v1/automations", { yaml: INVOICE_REVIEW_YAML })).json()) as { id: string };
  expect(made.id).toBeString();
  const run = (await (await asOwner("POST", "/v1/runs", { target: "workflows.invoice-check", input: { total: 99.5 } })).json()) as { id: string };
  let taskId: string | undefined;
  for (let i = 0; i < 500 && !taskId; i++) {
    const list = (await (await asOwner("GET", "/v1/human-reviews?limit=50")).json()) as { tasks: { id: string; executionId: string }[] };
    taskId = list.tasks.find((t) => t.executionId === run.id)?.id;
    if (!taskId) await Bun.sleep(20);
  }
  expect(taskId).toBeDefined();

  const p = await newPage();
  try {
    allowed = [{ url: /\/v1\/auth\/sessions\/current$/, status: 401 }];
    await p.goto(`${base}/#/human-reviews`);
    await signIn(p, REVIEWER);
    await titled(p, "Human review");
    await settled(p);
    // Her queue lists the task; she opens it from there and approves it.
    await (await p.waitForSelector(`a[href="#/human-reviews/${taskId}"]`))!.click();
    await p.waitForSelector("#field-_total");
    await p.click("form.stack button[aria-keyshortcuts=a]");
    await bodyHas(p, "Approved: the run resumes");

    // The task names her (her e-mail where the SDKs read a string; the user behind it in `actor`).
    const task = (await (await asOwner("GET", `/v1/human-reviews/${taskId}`)).json()) as { status: string; decision: { by: string; actor: { type: string; id: string } } };
    expect(task.status).toBe("approved");
    expect(task.decision.by).toBe(REVIEWER.email);
    expect(task.decision.actor.type).toBe("user");
    expect(task.decision.actor.id).toStartWith("usr_");
    // The run resumed with the reviewed data and its record of the step names her.
    let done: { execution: { status: string }; output: unknown } | undefined;
    for (let i = 0; i < 500; i++) {
      done = (await (await asOwner("GET", `/v1/runs/${run.id}`)).json()) as typeof done;
      if (done!.execution.status === "completed") break;
      await Bun.sleep(20);
    }
    expect(done!.execution.status).toBe("completed");
    expect(done!.output).toEqual({ total: 99.5 });
    // The run's history says who let it go on.
    const events = ((await (await asOwner("GET", `/v1/runs/${run.id}/events`)).json()) as { events: { type: string; message: string | null; metadata: Record<string, unknown> }[] }).events;
    expect(events.find((e) => e.type === "resumed")).toMatchObject({ message: `human review ${taskId} approved by ${REVIEWER.email}`, metadata: { taskId, by: REVIEWER.email, byId: task.decision.actor.id } });
    // The audit trail: the approval, by her, from her browser session.
    // Entries are written just after their answers (batched every 20 ms): asked until the approval's is there.
    type Entry = { action: string; actor: { type: string; name: string }; outcome: string };
    let approval: Entry | undefined;
    for (let i = 0; i < 250 && !approval; i++) {
      const audit = (await (await asOwner("GET", `/v1/audit?resource=${taskId}&limit=50`)).json()) as { data: Entry[] };
      approval = audit.data.find((e) => e.action.includes("approve"));
      if (!approval) await Bun.sleep(20);
    }
    expect(approval).toMatchObject({ actor: { type: "user", name: REVIEWER.email }, outcome: "success" });

    // On the automation's page she reads the versions but is offered neither a run nor a replay.
    await p.goto(`${base}/#/automations/${made.id}`);
    await titled(p, "invoice-check");
    await settled(p);
    await p.waitForSelector("section[aria-labelledby=versions-h]");
    const newVersion = `a[href="#/automations/${made.id}/edit"]`;
    expect(await p.$(newVersion)).toBeNull();
    expect(await p.$("section[aria-labelledby=run-h]")).toBeNull();
    expect(await p.$("section[aria-labelledby=versions-h] form")).toBeNull();
    // Nor on the versions page; and the editor's address itself shows no editor.
    await p.goto(`${base}/#/automations/${made.id}/versions`);
    await titled(p, "Versions of invoice-check");
    await settled(p);
    expect(await p.$(newVersion)).toBeNull();
    await p.goto(`${base}/#/automations/${made.id}/edit`);
    await bodyHas(p, "Your role may not add versions (it needs automations:write)."); // and no editor
    expect(await p.$("button[type=submit]")).toBeNull();
    // The owner, on the same page, is offered them (so the controls exist and are withheld from her only).
    await owner.goto(`${base}/#/automations/${made.id}`);
    await titled(owner, "invoice-check");
    await owner.waitForSelector("section[aria-labelledby=run-h]");
    await owner.waitForSelector(newVersion);

    // The server refuses her a new version (the console's choice is not the only guard).
    const r = await fetch(`${base}/v1/auth/sessions`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ email: REVIEWER.email, password: REVIEWER.password }) });
    const rs = { cookie: (r.headers.get("set-cookie") ?? "").split(";")[0]!, csrf: ((await r.json()) as { csrfToken: string }).csrfToken };
    const version = await fetch(`${base}/v1/automations/${made.id}/versions`, { method: "POST", headers: { cookie: rs.cookie, "x-csrf-token": rs.csrf, "content-type": "application/json" }, body: JSON.stringify({ yaml: INVOICE_REVIEW_YAML }) });
    expect({ status: version.status, body: await version.text() }).toMatchObject({ status: 403, body: expect.stringContaining("automations:write") });
  } finally {
    await p.browserContext().close();
  }
});

browserTest("Members: a password reset link shown once; requiring a second factor waits for the owner's own", async () => {
  await owner.goto(`${base}/#/runs`);
  await owner.goto(`${base}/#/members`);
  await titled(owner, "Members");
  await settled(owner);
  await owner.click(`button[aria-label="Password reset link for ${REVIEWER.email}"]`);
  await owner.waitForSelector("[data-testid=shown-once]");
  const link = await owner.$eval("[data-testid=shown-once]", (el) => (el as unknown as { value: string }).value);
  expect(link).toContain("/v1/auth/reset?token=");
  const form = await fetch(link.replace(/^https?:\/\/[^/]+/, base));
  expect(form.status).toBe(200); // the reset form (not used here: it would end the reviewer's sessions)
  await form.body?.cancel();
  // Requiring a second factor of every member is offered once the owner has one: without, it would
  // hold the owner at enrollment too.
  await owner.waitForSelector("[data-testid=totp-own-first]");
  expect(await owner.$eval("#require-totp", (el) => (el as unknown as { disabled: boolean }).disabled)).toBe(true);
});

browserTest("the owner makes a scoped key in the Keys page; a program uses it", async () => {
  await owner.goto(`${base}/#/keys`);
  await titled(owner, "Keys");
  await settled(owner);
  await owner.type("#key-name", "nightly export");
  await owner.click('input[name=scope][value="runs:read"]');
  await owner.click("section[aria-labelledby=new-key-h] button[type=submit]");
  await owner.waitForSelector("[data-testid=shown-once]");
  const key = await owner.$eval("[data-testid=shown-once]", (el) => (el as unknown as { value: string }).value);
  expect(key).toStartWith("eak_");
  // As curl would: the key alone, no cookie.
  const check = await fetch(`${base}/v1/auth/check`, { headers: { authorization: `Bearer ${key}` } });
  expect(check.status).toBe(200);
  expect(((await check.json()) as { scope: string[] }).scope).toEqual(["runs:read"]);
  // The list's row (its Revoke button), not the shown-once panel, which names the key as soon as it is made.
  await owner.waitForSelector('button[aria-label="Revoke nightly export"]', { timeout: 30_000 });
  await shot(owner, "keys");
  // Revoked in the page (confirmed), the key stops working.
  await owner.click('button[aria-label="Revoke nightly export"]');
  await owner.waitForFunction('document.body.textContent.includes("revoked")');
  const after = await fetch(`${base}/v1/auth/check`, { headers: { authorization: `Bearer ${key}` } });
  expect(after.status).toBe(401);
});

browserTest("the Audit page lists who did what, filters by action (in the address) and loads more", async () => {
  await owner.goto(`${base}/#/audit`);
  await titled(owner, "Audit");
  await settled(owner);
  await bodyHas(owner, "members.invitations.create");
  await bodyHas(owner, OWNER.name);
  // The filter goes to the address (a link to share) and to the API.
  await owner.type("form.filters input[placeholder='e.g. keys.create']", "members.invitations.create");
  await owner.keyboard.press("Enter");
  await owner.waitForFunction('location.hash === "#/audit?action=members.invitations.create"');
  // The previous rows stay until the filtered ones arrive: wait for the table to hold only the action.
  await owner.waitForFunction('[...document.querySelectorAll("table.audit tbody tr td:nth-child(3)")].every((td) => td.textContent === "members.invitations.create")');
  const actions = await owner.$$eval("table.audit tbody tr td:nth-child(3)", (tds) => tds.map((td) => (td as { textContent: string | null }).textContent));
  expect(actions).toEqual(["members.invitations.create"]);
  // Pages of two (`limit` in the address): "Load more" appends the next page under the first.
  await owner.goto(`${base}/#/audit?limit=2`);
  await owner.waitForFunction('document.querySelectorAll("table.audit tbody tr").length === 2');
  // The rows may come a render before the button (the page's cursor): wait for it.
  const more = await owner.waitForSelector("xpath///button[contains(., 'Load more')]", { timeout: 30_000 });
  await more!.click();
  await owner.waitForFunction('document.querySelectorAll("table.audit tbody tr").length === 4');
  await owner.goto(`${base}/#/audit`);
  await settled(owner);
  await shot(owner, "audit");
});

browserTest("My sessions lists this browser's session", async () => {
  await owner.goto(`${base}/#/sessions`);
  await titled(owner, "My sessions");
  await settled(owner);
  await bodyHas(owner, "this browser");
});

browserTest("a person sets up a second factor in My sessions; sign-in then asks for its code", async () => {
  const p = await newPage();
  try {
    allowed = [{ url: /\/v1\/auth\/sessions(\/current)?$/, status: 401 }];
    await p.goto(`${base}/#/sessions`);
    await signIn(p, REVIEWER);
    await titled(p, "My sessions");
    await settled(p);
    await p.waitForSelector("[data-testid=totp-state]");
    const [setUp] = await p.$$("xpath///button[contains(., 'Set up a second factor')]");
    await setUp!.click();
    await p.waitForSelector("[data-testid=shown-once]");
    const secret = await p.$eval("[data-testid=shown-once]", (el) => (el as unknown as { value: string }).value);
    const totp = new TOTP({ secret: Secret.fromBase32(secret), digits: 6, period: 30 });
    await p.type("#totp-confirm", totp.generate());
    await p.keyboard.press("Enter");
    await p.waitForFunction('document.querySelector("[data-testid=totp-state]")?.textContent?.startsWith("On")');
    await shot(p, "sessions");
    // Signed out and in again: the password alone is not enough; the form asks for the code.
    await p.click(".who button");
    await p.waitForSelector("#email");
    await p.type("#email", REVIEWER.email);
    await p.type("#password", REVIEWER.password);
    await p.keyboard.press("Enter");
    await p.waitForSelector("#totp");
    expect(await p.$("[role=alert]")).toBeNull(); // asked, not refused
    await shot(p, "signin-totp");
    // A code is used once: the next period's code (the server accepts ±1 step).
    await p.type("#totp", totp.generate({ timestamp: Date.now() + 30_000 }));
    await p.keyboard.press("Enter");
    await p.waitForSelector('nav[aria-label="Main"]', { timeout: 30_000 });
  } finally {
    await p.browserContext().close();
  }
});

browserTest("a session ended mid-way returns to sign-in; signing in again lands on the page that was open", async () => {
  await owner.goto(`${base}/#/members`);
  await titled(owner, "Members");
  await settled(owner);
  // Signed out everywhere from elsewhere (the API, with another session of the same person).
  const s = await apiSession(OWNER);
  const out = await fetch(`${base}/v1/auth/sessions`, { method: "DELETE", headers: { cookie: s.cookie, "x-csrf-token": s.csrf } });
  expect(out.status).toBe(200);
  allowed = [{ url: /\/v1\//, status: 401 }];
  await owner.goto(`${base}/#/runs?status=failed`); // its next call answers 401
  await owner.waitForSelector("#email", { timeout: 30_000 });
  expect(await owner.$('nav[aria-label="Main"]')).toBeNull();
  expect(await owner.$eval("[role=alert]", (el) => (el as { textContent: string | null }).textContent)).toContain("Signed out: 401");
  await signIn(owner, OWNER);
  await titled(owner, "Runs");
  expect(await owner.evaluate("location.hash")).toBe("#/runs?status=failed");
});

browserTest("sign out ends the session on the server", async () => {
  await owner.goto(`${base}/#/runs`);
  await titled(owner, "Runs");
  await owner.click(".who button");
  await owner.waitForSelector("#email");
  allowed = [{ url: /\/v1\/auth\/sessions\/current$/, status: 401 }];
  await owner.reload();
  await owner.waitForSelector("#email"); // the cookie no longer signs in
});

browserTest("the owner removes the reviewer (after a confirmation); they are no longer listed", async () => {
  allowed = [{ url: /\/v1\/auth\/sessions\/current$/, status: 401 }];
  await owner.goto(`${base}/#/members`);
  await signIn(owner, OWNER);
  await titled(owner, "Members");
  await settled(owner);
  await bodyHas(owner, REVIEWER.email);
  await owner.click(`button[aria-label="Remove ${REVIEWER.email}"]`); // the dialog is accepted
  await owner.waitForFunction(`!document.body.textContent.includes(${JSON.stringify(REVIEWER.email)})`);
  const r = await fetch(`${base}/v1/auth/sessions`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ email: REVIEWER.email, password: REVIEWER.password }) });
  expect(r.status).not.toBe(201); // no tenant left to sign in to
});

browserTest("a tenant that requires a second factor holds a member without one at its setup, then opens", async () => {
  const VIEWER = { email: "vic@example.test", name: "Vic Viewer", password: "marble-harbor-sketch-4" };
  // The owner sets up their own factor (through the API here) and invites a viewer.
  const s = await apiSession(OWNER);
  const headers = { cookie: s.cookie, "x-csrf-token": s.csrf, "content-type": "application/json" };
  const enrolled = (await (await fetch(`${base}/v1/auth/totp/enroll`, { method: "POST", headers, body: "{}" })).json()) as { secret: string };
  const ownerTotp = new TOTP({ secret: Secret.fromBase32(enrolled.secret), digits: 6, period: 30 });
  expect((await fetch(`${base}/v1/auth/totp/confirm`, { method: "POST", headers, body: JSON.stringify({ code: ownerTotp.generate() }) })).status).toBe(200);
  const inv = (await (await fetch(`${base}/v1/members/invitations`, { method: "POST", headers, body: JSON.stringify({ email: VIEWER.email, role: "viewer" }) })).json()) as { link: string };
  const token = new URL(inv.link).searchParams.get("token");
  expect((await fetch(`${base}/v1/auth/invitations/accept`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ token, name: VIEWER.name, password: VIEWER.password }) })).status).toBe(201);
  // With their own factor on, the owner may now require one of everybody.
  await owner.goto(`${base}/#/runs`);
  await owner.goto(`${base}/#/members`);
  await titled(owner, "Members");
  await owner.waitForSelector("#require-totp:not([disabled])");
  await owner.click("#require-totp");
  await bodyHas(owner, "Every member now needs a second factor");

  const p = await newPage();
  try {
    allowed = [{ url: /\/v1\/auth\/sessions\/current$/, status: 401 }];
    await p.goto(`${base}/#/runs`);
    await signIn(p, VIEWER);
    await titled(p, "Set up a second factor");
    expect(await navLinks(p)).toEqual([]); // nothing else is offered: the server answers nothing else
    await p.reload(); // a reload finds the session held still
    await titled(p, "Set up a second factor");
    expect(await navLinks(p)).toEqual([]);
    const [setUp] = await p.$$("xpath///button[contains(., 'Set up a second factor')]");
    await setUp!.click();
    await p.waitForSelector("[data-testid=shown-once]");
    const secret = await p.$eval("[data-testid=shown-once]", (el) => (el as unknown as { value: string }).value);
    await p.type("#totp-confirm", new TOTP({ secret: Secret.fromBase32(secret), digits: 6, period: 30 }).generate());
    await p.keyboard.press("Enter");
    // Confirmed: the console opens as usual, on the page the address names.
    await titled(p, "Runs");
    expect(await navLinks(p)).toContain("Runs");
  } finally {
    await p.browserContext().close();
  }
});
