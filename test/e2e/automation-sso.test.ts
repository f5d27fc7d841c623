// Single sign-on (issue 43) end to end: the compiled automation-server trusts a real OpenID Provider
// (oidc-provider on loopback, test/automation/sso/provider.ts); Chromium signs in through it from the
// console's sign-in page, lands in the console with the role the person's groups give, decides a
// human-review task, and the audit trail names the person. Refusals come back to the sign-in page with
// a clear message and no session; bad SSO flags are one clear line and exit 2.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { type Browser, type Page } from "puppeteer-core";
import { DEMO_KEY } from "../../src/automation/demo/seed";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { startProvider, type TestProvider } from "../automation/sso/provider";
import { atProvider } from "../automation/sso/support";
import { type ConsoleBrowser, startConsoleBrowser } from "./console-browser";
import { automationPgUrl, ensureBuilt, start, startServer } from "./support";
import { INVOICE_REVIEW_YAML } from "./invoice-review";

let op: TestProvider;
let started: ConsoleBrowser | undefined;
let base: string;
let browser: Browser;

const person = (email: string, groups: string[], verified = true) => ({ email, email_verified: verified, name: email.split("@")[0]!, groups });

beforeAll(async () => {
  op = await startProvider({
    people: {
      rita: person("rita@example.com", ["automation-reviewers"]),
      eve: person("eve@example.com", ["automation-reviewers"], false),
      lena: person("lena@example.com", ["automation-reviewers"]),
      omar: person("omar@example.com", ["automation-admins"]),
      nia: person("nia@example.com", ["automation-reviewers"]),
      mia: person("mia@example.com", ["automation-reviewers"]),
    },
  });
  started = await startConsoleBrowser("automation-sso", [
    "--demo",
    "--workers",
    "1",
    "--oidc-issuer",
    op.issuer,
    "--oidc-client-id",
    op.clientId,
    "--oidc-client-secret",
    op.clientSecret,
    "--oidc-name",
    "Test SSO",
    "--oidc-scopes",
    "openid email profile groups",
    "--oidc-role-map",
    "automation-reviewers=reviewer@demo,automation-admins=admin@demo",
    "--oidc-allowed-domains",
    "example.com",
    "--oidc-recheck",
    "2s",
    // The tenant's own provider (added from the Members page) is on loopback: a tenant's provider reaches
    // only what --outbound-allow lets a tenant reach.
    "--outbound-allow",
    "127.0.0.1",
  ]);
  ({ base, browser } = started);
  // Registered once the server's address is known (the provider is made at its first request).
  op.redirectUris.push(`${base}/v1/auth/oidc/sso/callback`);
  op.backchannelUri = `${base}/v1/auth/oidc/sso/backchannel-logout`;
}, 180_000);

afterAll(async () => {
  await started?.close();
  await op?.close();
});

/** A providers file of one [[provider]] table with these lines, in the test's temp dir. */
function providersToml(lines: string): string {
  const file = join(started!.dir, `providers-${crypto.randomUUID()}.toml`);
  writeFileSync(file, `[[provider]]\n${lines}\n`);
  return file;
}

const asDemo = (method: string, path: string, body?: unknown) =>
  fetch(`${base}${path}`, { method, headers: { authorization: `Bearer ${DEMO_KEY}`, ...(body === undefined ? {} : { "content-type": "application/json" }) }, body: body === undefined ? undefined : JSON.stringify(body) });

async function newPage(): Promise<Page> {
  const context = await browser.createBrowserContext();
  const p = await context.newPage();
  await p.setViewport({ width: 1280, height: 900 });
  return p;
}

/** From the console's sign-in page through the provider's login form, as `login`. */
async function signInWithSso(p: Page, login: string): Promise<void> {
  await (await p.waitForSelector("#sso-sso", { timeout: 30_000 }))!.click();
  await p.waitForSelector("#login", { timeout: 30_000 });
  expect(p.url().startsWith(op.issuer)).toBe(true);
  await p.type("#login", login);
  await Promise.all([p.waitForNavigation({ timeout: 30_000 }).catch(() => {}), p.click("#submit")]);
}


test("Chromium signs in through the provider, lands in the console as a reviewer, decides a task; the audit trail names her", async () => {
  const made = (await (await asDemo("POST", "/v1/automations", { yaml: INVOICE_REVIEW_YAML })).json()) as { id: string };
  expect(made.id).toBeString();
  const run = (await (await asDemo("POST", "/v1/runs", { target: "workflows.invoice-check", input: { total: 99.5 } })).json()) as { id: string };
  let taskId: string | undefined;
  for (let i = 0; i < 500 && !taskId; i++) {
    const list = (await (await asDemo("GET", "/v1/human-reviews?limit=50")).json()) as { tasks: { id: string; executionId: string }[] };
    taskId = list.tasks.find((t) => t.executionId === run.id)?.id;
    if (!taskId) await Bun.sleep(20);
  }
  expect(taskId).toBeDefined();

  const p = await newPage();
  try {
    await p.goto(`${base}/#/human-reviews`);
    const button = await p.waitForSelector("#sso-sso", { timeout: 30_000 });
    expect(await button!.evaluate((el) => el.textContent)).toBe("Sign in with Test SSO");
    await signInWithSso(p, "rita");
    // Back in the console, on the page that was asked for, as the role her groups give.
    await p.waitForSelector('nav[aria-label="Main"]', { timeout: 30_000 });
    expect(p.url()).toBe(`${base}/#/human-reviews`);
    await p.waitForFunction('document.querySelector(".who")?.textContent?.includes("reviewer")', { timeout: 30_000 });
    expect(await p.$eval(".who", (el) => el.textContent)).toContain("rita (reviewer, Demo)");
    // The session cookie is HttpOnly: the page cannot read it.
    expect(await p.evaluate("document.cookie")).not.toContain("automation_session");

    await (await p.waitForSelector(`a[href="#/human-reviews/${taskId}"]`, { timeout: 30_000 }))!.click();
    await p.waitForSelector("#field-_total");
    await p.click("form.stack button[aria-keyshortcuts=a]");
    await p.waitForFunction('document.body.textContent.includes("Approved: the run resumes")', { timeout: 30_000 });

    const task = (await (await asDemo("GET", `/v1/human-reviews/${taskId}`)).json()) as { status: string; decision: { by: string; actor: { type: string; id: string } } };
    expect(task.status).toBe("approved");
    expect(task.decision.by).toBe("rita@example.com");
    expect(task.decision.actor.type).toBe("user");

    // Entries are written just after each answer: wait for the approval's.
    type Trail = { data: { action: string; outcome: string; actor: { type: string; id: string | null; name: string | null } }[] };
    let trail: Trail = { data: [] };
    for (let i = 0; i < 100 && !trail.data.some((e) => e.action === "human-reviews.approve"); i++) {
      trail = (await (await asDemo("GET", "/v1/audit?limit=200")).json()) as Trail;
      if (!trail.data.some((e) => e.action === "human-reviews.approve")) await Bun.sleep(50);
    }
    const signedIn = trail.data.find((e) => e.action === "auth.oidc.callback");
    expect(signedIn).toMatchObject({ outcome: "success", actor: { type: "user", id: task.decision.actor.id, name: "rita@example.com" } });
    expect(trail.data.find((e) => e.action === "human-reviews.approve")).toMatchObject({ outcome: "success", actor: { type: "user", name: "rita@example.com" } });
  } finally {
    await p.browserContext().close();
  }
}, 120_000);

test("refusals come back to the sign-in page with a clear message and no session; password sign-in is still offered", async () => {
  const p = await newPage();
  try {
    // An unverified e-mail at the provider.
    await p.goto(`${base}/#/signin`);
    await signInWithSso(p, "eve");
    await p.waitForSelector(".problem[role=alert]", { timeout: 30_000 });
    expect(p.url()).toBe(`${base}/#/signin?sso_error=email_unverified`);
    expect(await p.$eval(".problem[role=alert]", (el) => el.textContent)).toBe("Your e-mail address is not verified at the single sign-on provider. Verify it there first.");
    expect(await p.$("#password")).not.toBeNull();
    expect((await p.cookies()).map((c) => c.name)).not.toContain("automation_session");

    // A provider's answer this browser did not ask for (no sign-in in progress here).
    await p.goto(`${base}/v1/auth/oidc/sso/callback?code=stolen&state=stolen`);
    await p.waitForSelector(".problem[role=alert]", { timeout: 30_000 });
    expect(await p.$eval(".problem[role=alert]", (el) => el.textContent)).toContain("Start again");
    expect((await p.cookies()).map((c) => c.name)).not.toContain("automation_session");
  } finally {
    await p.browserContext().close();
  }
  // Neither refusal made a member or a session; the server's log says why each was refused (the audit
  // trail has them in its tenant-less chain: neither named a member of a tenant).
  const members = (await (await asDemo("GET", "/v1/members")).json()) as { data: { email: string }[] };
  expect(members.data.map((m) => m.email)).not.toContain("eve@example.com");
  const log = started!.server.output();
  expect(log).toMatch(/sso sign-in refused.*email_unverified/);
  expect(log).toMatch(/sso sign-in refused.*flow_missing/);
}, 120_000);

/** A sign-in through the provider as a program would drive it (HTTP, following redirects): our callback's answer. */
async function ssoOverHttp(login: string, at = base, provider = "sso"): Promise<{ status: number; session?: string; page: string }> {
  const startAt = await fetch(`${at}/v1/auth/oidc/${provider}/start?login_hint=${login}`, { redirect: "manual" });
  expect(startAt.status).toBe(303);
  const flow = startAt.headers.getSetCookie().find((c) => c.startsWith("automation_oidc="))!.split(";")[0]!;
  const callback = await atProvider(startAt.headers.get("location")!, `${at}/`);
  const r = await fetch(callback, { redirect: "manual", headers: { cookie: flow } });
  const session = r.headers.getSetCookie().find((c) => /^automation_session=[^;]/.test(c))?.split(";")[0];
  return { status: r.status, page: await r.text(), ...(session ? { session } : {}) };
}

/** The server's own shell command on its data (and its PostgreSQL database in the PostgreSQL pass). */
async function shell(args: string[], stdin?: string): Promise<string> {
  const dataDir = join(started!.dir, "data");
  const pg = automationPgUrl(dataDir);
  const p = Bun.spawn([join(started!.dir, "automation-server"), ...args, "--data-dir", dataDir, ...(pg ? ["--db", pg] : [])], { stdin: stdin === undefined ? "ignore" : new Blob([stdin]), stdout: "pipe", stderr: "pipe" });
  const [out, err, code] = [await new Response(p.stdout).text(), await new Response(p.stderr).text(), await p.exited];
  expect({ code, err }).toEqual({ code: 0, err: "" });
  return out;
}

test("a local account with the same e-mail is refused until the operator links it (users link-sso); then its role follows the groups", async () => {
  const made = JSON.parse(await shell(["users", "create", "--email", "lena@example.com", "--name", "Lena Local", "--tenant", "demo", "--role", "developer", "--password-stdin", "--json"], "lantern-pebble-quarry-9\n")) as { id: string };
  const refused = await ssoOverHttp("lena");
  expect(refused.status).toBe(409);
  expect(refused.session).toBeUndefined();
  expect(refused.page).toContain("already exists here");

  expect(await shell(["users", "link-sso", "lena@example.com", "--issuer", op.issuer])).toContain(`the next sign-in of lena@example.com through ${op.issuer} becomes this user`);
  const linked = await ssoOverHttp("lena");
  expect(linked.status).toBe(303);
  const cur = (await (await fetch(`${base}/v1/auth/sessions/current`, { headers: { cookie: linked.session! } })).json()) as { user: { id: string; name: string }; role: string };
  expect(cur).toMatchObject({ user: { id: made.id, name: "Lena Local" }, role: "reviewer" });
  // The leave was used once; the identity is linked for good.
  expect((await ssoOverHttp("lena")).status).toBe(303);
  // Her password still works too (SSO-only tenants are not built yet).
  expect((await fetch(`${base}/v1/auth/sessions`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ email: "lena@example.com", password: "lantern-pebble-quarry-9" }) })).status).toBe(201);
}, 120_000);

test("an owner makes SSO the only way in from the Members page (a member's password is refused, SSO still signs in) and adds a provider of the tenant's own there", async () => {
  const link = /console\s+(http\S+\/v1\/auth\/code\?code=[A-Za-z0-9_-]+)/.exec(started!.server.output())?.[1];
  expect(link).toBeDefined();
  const p = await newPage();
  const passwordOf = () => fetch(`${base}/v1/auth/sessions`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ email: "lena@example.com", password: "lantern-pebble-quarry-9" }) });
  try {
    await p.goto(link!.replace(/^https?:\/\/[^/]+/, base));
    await p.waitForSelector('nav[aria-label="Main"]', { timeout: 30_000 });
    await p.goto(`${base}/#/members`);
    const box = await p.waitForSelector("#sso-only", { timeout: 30_000 });
    expect(await p.$eval("section[aria-labelledby=sso-h]", (el) => el.textContent)).toContain("Providers: Test SSO.");
    await box!.click();
    await p.waitForFunction('document.body.textContent.includes("Members now sign in with single sign-on only")', { timeout: 30_000 });
    const refused = await passwordOf();
    expect(refused.status).toBe(403);
    expect(((await refused.json()) as { issues: { code: string }[] }).issues[0]!.code).toBe("sso_only");
    expect((await ssoOverHttp("lena")).status).toBe(303);
    await (await p.waitForSelector("#sso-only"))!.click();
    await p.waitForFunction('document.body.textContent.includes("Members may sign in with a password again")', { timeout: 30_000 });
    expect((await passwordOf()).status).toBe(201);

    // A member's local account is linked from the page (not only from the shell): refused before, hers after.
    const mia = JSON.parse(await shell(["users", "create", "--email", "mia@example.com", "--name", "Mia Local", "--tenant", "demo", "--role", "developer", "--password-stdin", "--json"], "lantern-pebble-quarry-9\n")) as { id: string };
    expect((await ssoOverHttp("mia")).status).toBe(409);
    await p.reload();
    await (await p.waitForSelector('button[aria-label="Let mia@example.com sign in through Test SSO as this account"]', { timeout: 30_000 }))!.click();
    await p.waitForFunction('document.body.textContent.includes("The next sign-in through Test SSO with mia@example.com (verified there) becomes this account")', { timeout: 30_000 });
    const linked = await ssoOverHttp("mia");
    expect(linked.status).toBe(303);
    const cur = (await (await fetch(`${base}/v1/auth/sessions/current`, { headers: { cookie: linked.session! } })).json()) as { user: { id: string } };
    expect(cur.user.id).toBe(mia.id);

    // The owner adds a provider of the tenant's own from the same page; people reach it from the
    // sign-in page that names the tenant, and its rules give roles in this tenant.
    const corp = await startProvider({ people: { kai: person("kai@corp.example.com", ["corp-devs"]) } });
    try {
      corp.redirectUris.push(`${base}/v1/auth/oidc/demo-corp/callback`);
      await p.click("details.sso-add summary");
      const fill = async (sel: string, text: string) => {
        await p.click(sel, { count: 3 });
        await p.type(sel, text);
      };
      await fill("#sso-id", "demo-corp");
      await fill("#sso-name", "Corp SSO");
      await fill("#sso-issuer", corp.issuer);
      await fill("#sso-client-id", corp.clientId);
      await fill("#sso-client-secret", corp.clientSecret);
      await fill("#sso-rules", "corp-devs=developer");
      await p.click("details.sso-add button[type=submit]");
      await p.waitForFunction('document.body.textContent.includes("Corp SSO added. Register")', { timeout: 30_000 });
      expect(await (await p.waitForSelector("li[data-provider=demo-corp]", { timeout: 30_000 }))!.evaluate((el) => el.textContent)).toContain(`${base}/v1/auth/oidc/demo-corp/callback`);
      expect(await p.content()).not.toContain(corp.clientSecret);

      const q = await newPage();
      try {
        await q.goto(`${base}/#/signin?tenant=demo`);
        await (await q.waitForSelector("#sso-demo-corp", { timeout: 30_000 }))!.click();
        await q.waitForSelector("#login", { timeout: 30_000 });
        await q.type("#login", "kai");
        await Promise.all([q.waitForNavigation({ timeout: 30_000 }).catch(() => {}), q.click("#submit")]);
        await q.waitForFunction('document.querySelector(".who")?.textContent?.includes("developer")', { timeout: 30_000 });
        expect(await q.$eval(".who", (el) => el.textContent)).toContain("kai (developer, Demo)");
      } finally {
        await q.browserContext().close();
      }
      // Without the tenant named, the sign-in page does not list it.
      const plainList = (await (await fetch(`${base}/v1/auth/providers`)).json()) as { data: { id: string }[] };
      expect(plainList.data.map((x) => x.id)).toEqual(["sso"]);
    } finally {
      await corp.close();
    }
  } finally {
    await p.browserContext().close();
  }
}, 120_000);

test("signing out of a session made by SSO signs out at the provider too (RP-initiated logout) and comes back to the console", async () => {
  const p = await newPage();
  try {
    await p.goto(`${base}/#/runs`);
    await signInWithSso(p, "omar");
    await p.waitForFunction('document.querySelector(".who")?.textContent?.includes("admin")', { timeout: 30_000 });
    const [button] = await p.$$("xpath/.//header//button[contains(., 'Sign out')]");
    await Promise.all([p.waitForNavigation({ timeout: 30_000 }), button!.click()]);
    // At the provider: its own sign-out page, with the ID token as the hint.
    await p.waitForSelector("#logout-yes", { timeout: 30_000 });
    expect(p.url().startsWith(`${op.issuer}/session/end`)).toBe(true);
    await Promise.all([p.waitForNavigation({ timeout: 30_000 }), p.click("#logout-yes")]);
    // Back to the console's sign-in page, with no session here or there: signing in asks for the login again.
    await p.waitForSelector("#sso-sso", { timeout: 30_000 });
    expect(new URL(p.url()).origin).toBe(base);
    expect((await p.cookies()).map((c) => c.name)).not.toContain("automation_session");
    await (await p.waitForSelector("#sso-sso"))!.click();
    await p.waitForSelector("#login", { timeout: 30_000 });
  } finally {
    await p.browserContext().close();
  }
}, 120_000);

test("back-channel logout: signing out at the provider ends the session on both instances of the server", async () => {
  // A second instance on the same database (the same SQLite file, or the same PostgreSQL database in the PostgreSQL pass).
  const other = await startServer([join(started!.dir, "automation-server"), "--host", "127.0.0.1", "--workers", "1", "--data-dir", join(started!.dir, "data"), "--oidc-issuer", op.issuer, "--oidc-client-id", op.clientId, "--oidc-client-secret", op.clientSecret, "--oidc-default-role", "viewer@demo"], {
    cwd: started!.dir,
    env: { AUTOMATION_DATA_DIR: undefined, AUTOMATION_CONSOLE: undefined },
  });
  const p = await newPage();
  try {
    await p.goto(`${base}/#/runs`);
    await signInWithSso(p, "omar");
    await p.waitForSelector('nav[aria-label="Main"]', { timeout: 30_000 });
    const cookie = (await p.cookies()).find((c) => c.name === "automation_session")!;
    const ask = (at: string) => fetch(`${at}/v1/auth/sessions/current`, { headers: { cookie: `automation_session=${cookie.value}` } }).then((r) => r.status);
    expect([await ask(base), await ask(other.url)]).toEqual([200, 200]);

    // The person signs out at the provider (another application, or its own account page): it posts a
    // logout token to this server, which ends the session in the database.
    await p.goto(`${op.issuer}/session/end`);
    await Promise.all([p.waitForNavigation({ timeout: 30_000 }), p.click("#logout-yes")]);
    await p.waitForSelector("#signed-out", { timeout: 30_000 });
    expect(await ask(base)).toBe(401);
    // The other instance learns it from the database (PostgreSQL: a notification, milliseconds later).
    let there = 200;
    for (let i = 0; i < 50 && there !== 401; i++) {
      there = await ask(other.url);
      if (there !== 401) await Bun.sleep(50);
    }
    expect(there).toBe(401);
    expect(started!.server.output()).toMatch(/sso back-channel logout.*ended.*1/);
  } finally {
    await p.browserContext().close();
    await other.kill("SIGTERM");
  }
}, 120_000);

test("--oidc-recheck: a person removed at the provider loses their session within the re-check period", async () => {
  const nia = await ssoOverHttp("nia");
  expect(nia.status).toBe(303);
  const ask = () => fetch(`${base}/v1/auth/sessions/current`, { headers: { cookie: nia.session! } });
  expect((await (await ask()).json()) as { role: string }).toMatchObject({ role: "reviewer" });
  op.people.get("nia")!.groups = ["automation-admins"];
  let role = "";
  for (let i = 0; i < 100 && role !== "admin"; i++) {
    role = ((await (await ask()).json()) as { role: string }).role;
    if (role !== "admin") await Bun.sleep(100);
  }
  expect(role).toBe("admin");
  op.people.delete("nia");
  let status = 200;
  for (let i = 0; i < 100 && status === 200; i++) {
    status = (await ask()).status;
    if (status === 200) await Bun.sleep(100);
  }
  expect(status).toBe(401);
}, 120_000);

test("several providers at once from --oidc-providers FILE (beside the flags' one): each listed, each signs in with its own role map", async () => {
  const second = await startProvider({ people: { zoe: person("zoe@partner.example.org", ["partners"]) } });
  const dir = join(started!.dir, "second");
  const file = join(dir, "providers.toml");
  await Bun.write(
    file,
    [
      "[[provider]]",
      'id = "partner"',
      'name = "Partner SSO"',
      `issuer = "${second.issuer}"`,
      `client_id = "${second.clientId}"`,
      'client_secret_env = "PARTNER_SECRET"',
      'scopes = ["openid", "email", "profile", "groups"]',
      'role_map = ["partners=viewer@demo"]',
      'allowed_domains = ["partner.example.org"]',
      "",
    ].join("\n"),
  );
  const server = await startServer(
    [join(started!.dir, "automation-server"), "--demo", "--host", "127.0.0.1", "--workers", "1", "--data-dir", join(dir, "data"), "--oidc-providers", file, "--oidc-issuer", op.issuer, "--oidc-client-id", op.clientId, "--oidc-client-secret", op.clientSecret, "--oidc-role-map", "automation-reviewers=reviewer@demo"],
    { cwd: started!.dir, env: { AUTOMATION_DATA_DIR: undefined, AUTOMATION_CONSOLE: undefined, PARTNER_SECRET: second.clientSecret } },
  );
  try {
    second.redirectUris.push(`${server.url}/v1/auth/oidc/partner/callback`);
    const listed = (await (await fetch(`${server.url}/v1/auth/providers`)).json()) as { data: { id: string; name: string }[] };
    expect(listed.data.map((p) => `${p.id} ${p.name}`)).toEqual(["partner Partner SSO", "sso Single sign-on"]);
    const zoe = await ssoOverHttp("zoe", server.url, "partner");
    expect(zoe.status).toBe(303);
    const cur = (await (await fetch(`${server.url}/v1/auth/sessions/current`, { headers: { cookie: zoe.session! } })).json()) as { user: { email: string }; role: string };
    expect(cur).toMatchObject({ user: { email: "zoe@partner.example.org" }, role: "viewer" });
  } finally {
    await server.kill("SIGTERM");
    await second.close();
  }
}, 120_000);

test("SSO flags are checked at start: one clear line, exit 2", async () => {
  const bin = await ensureBuilt("automation-server");
  const cases: [string[], RegExp][] = [
    [["--oidc-issuer", "http://login.example.com", "--oidc-client-id", "x", "--oidc-client-secret", "y", "--oidc-default-role", "viewer@demo"], /--oidc-issuer must be https \(http only for a provider on loopback\)/],
    [["--oidc-issuer", "https://login.example.com", "--oidc-client-id", "x"], /--oidc-issuer needs --oidc-client-secret/],
    [["--oidc-issuer", "https://login.example.com", "--oidc-client-id", "x", "--oidc-client-secret", "y", "--oidc-role-map", "admins=boss@demo"], /--oidc-role-map must name a role: owner, admin, developer, reviewer, viewer/],
    [["--oidc-issuer", "https://login.example.com", "--oidc-client-id", "x", "--oidc-client-secret", "y"], /needs --oidc-role-map GROUP=ROLE@TENANT,… or --oidc-default-role ROLE@TENANT/],
    [["--oidc-issuer", "https://login.example.com", "--oidc-client-id", "x", "--oidc-client-secret", "y", "--oidc-default-role", "viewer"], /--oidc-default-role must be ROLE@TENANT/],
    [["--oidc-issuer", "https://login.example.com", "--oidc-client-id", "x", "--oidc-client-secret", "y", "--oidc-default-role", "admin@demo"], /--oidc-default-role may be developer, reviewer or viewer: owners and admins are given by a group rule \(--oidc-role-map\)/],
    [["--oidc-providers", "/nonexistent/providers.toml"], /--oidc-providers: cannot read \/nonexistent\/providers.toml: ENOENT/],
    [["--oidc-providers", providersToml('id = "a"\nissuer = "https://a.example.com"\nclient_id = "x"\nclient_secret_env = "NOT_SET_ANYWHERE"\ndefault_role = "viewer@demo"')], /provider 1 \(a\): client_secret_env names NOT_SET_ANYWHERE, which is not set/],
    [["--oidc-providers", providersToml('id = "a"\nissuer = "https://a.example.com"\nclient_id = "x"\nclient_secret = "s"\nrole_map = ["g=boss@demo"]')], /provider 1 \(a\): role_map must name a role/],
    [["--oidc-providers", providersToml('id = "a"\nissuer = "https://a.example.com"\nclient_id = "x"\nclient_secret = "s"\ndefault_role = "viewer@demo"\ncolour = "red"')], /provider 1 \(a\): unknown field colour/],
  ];
  for (const [args, says] of cases) {
    const p = start([bin, "serve", "--port", "0", "--data-dir", ":memory:", ...args]);
    const code = await p.proc.exited;
    expect(code).toBe(2);
    const out = p.output().trim();
    // One line naming the flag, then the usual pointer to --help; never a stack trace.
    expect(out.split("\n")[0]).toMatch(says);
    expect(out.split("\n").slice(1)).toEqual(["Run 'automation-server --help' for usage."]);
  }
}, 120_000);
