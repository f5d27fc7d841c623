// People through HTTP (issue 37, part 1): the setup and invitation links, password rules, sign-in
// throttles, session cookies (flags, fixation, CSRF, expiry, sign-out) and the principal they make.
// Runs on SQLite, and on PostgreSQL with AUTOMATION_TEST_DB=postgres.
import { describe, expect, test } from "bun:test";
import { json } from "../app/harness";
import { invite, setStatus, setupToken } from "../../../src/automation/people/service";
import { as, PASSWORD, peopleHarness, signIn } from "./support";

const HOUR = 3600_000;

describe("the first owner's setup link", () => {
  test("creates the owner and a tenant once; a second use, or any setup after the first user, is refused", async () => {
    const { h, deps } = await peopleHarness();
    const token = await setupToken(deps);
    expect(token).toBeString();
    const form = await h.req("GET", `/v1/auth/setup?token=${token}`);
    expect(form.status).toBe(200);
    expect(form.headers.get("content-type")).toStartWith("text/html");
    expect(await form.text()).toContain('name="password"');

    const weak = await h.req("POST", "/v1/auth/setup", { body: { token, email: "owner@example.com", name: "Olive", password: "short" } });
    expect(weak.status).toBe(400);
    expect((await json(weak)).issues[0]).toMatchObject({ field: "password", code: "password_too_short" });

    const made = await h.req("POST", "/v1/auth/setup", { body: { token, email: "Owner@Example.com", name: "Olive", password: PASSWORD, tenantName: "Olive's team" } });
    expect(made.status).toBe(201);
    const body = await json(made);
    expect(body).toMatchObject({ role: "owner", tenant: { slug: "olive-s-team" }, user: { email: "Owner@Example.com" } });

    const again = await h.req("POST", "/v1/auth/setup", { body: { token, email: "eve@example.com", name: "Eve", password: PASSWORD } });
    expect(again.status).toBe(409);
    expect((await json(again)).issues[0].code).toBe("link_used");
    expect(await setupToken(deps)).toBeUndefined();

    // The owner signs in with the e-mail in any case and may do everything.
    const owner = await signIn(h, "owner@EXAMPLE.com", PASSWORD);
    const check = await json(await as(h, owner, "GET", "/v1/auth/check"));
    expect(check).toMatchObject({ tenantSlug: "olive-s-team", userId: body.user.id, email: "Owner@Example.com", name: "Olive", scope: ["*"], wildcardGranted: true });
  });

  test("a form POST (urlencoded) works too and answers a page; unknown tokens are a clear 404", async () => {
    const { h, deps } = await peopleHarness();
    const token = (await setupToken(deps))!;
    const form = new URLSearchParams({ token, email: "o@example.com", name: "O", password: PASSWORD, tenantName: "team" });
    const r = await h.req("POST", "/v1/auth/setup", { body: form.toString(), headers: { "content-type": "application/x-www-form-urlencoded" } });
    expect(r.status).toBe(201);
    expect(r.headers.get("content-type")).toStartWith("text/html");
    const unknown = await h.req("POST", "/v1/auth/setup", { body: { token: "nope", email: "o2@example.com", name: "O", password: PASSWORD } });
    expect(unknown.status).toBe(404);
    expect((await h.req("GET", "/v1/auth/setup?token=nope")).status).toBe(404);
  });
});

describe("invitations", () => {
  test("an invitation makes a member with its role once; used twice → 409, expired → 400, nothing half-created", async () => {
    const { h, deps } = await peopleHarness();
    const inv = await invite(deps, { email: "rita@example.com", role: "reviewer", tenant: "acme" });
    const page = await h.req("GET", `/v1/auth/invitations/accept?token=${inv.token}`);
    expect(page.status).toBe(200);
    expect(await page.text()).toContain("rita@example.com");

    const common = await h.req("POST", "/v1/auth/invitations/accept", { body: { token: inv.token, name: "Rita", password: "Password1234!" } });
    expect(common.status).toBe(400);
    expect((await json(common)).issues[0].code).toBe("password_too_common");
    expect((await h.ctx.storage.people.listUsers()).length).toBe(0);

    const ok = await h.req("POST", "/v1/auth/invitations/accept", { body: { token: inv.token, name: "Rita", password: PASSWORD } });
    expect(ok.status).toBe(201);
    expect(await json(ok)).toMatchObject({ role: "reviewer", tenant: { slug: "acme" }, user: { email: "rita@example.com" } });
    const twice = await h.req("POST", "/v1/auth/invitations/accept", { body: { token: inv.token, name: "Rita", password: PASSWORD } });
    expect(twice.status).toBe(409);
    expect((await json(twice)).issues[0].code).toBe("link_used");

    const late = await invite(deps, { email: "late@example.com", role: "viewer", tenant: "acme" });
    h.clock.advance(7 * 24 * HOUR + 1);
    const expired = await h.req("POST", "/v1/auth/invitations/accept", { body: { token: late.token, name: "Late", password: PASSWORD } });
    expect(expired.status).toBe(400);
    expect((await json(expired)).issues[0].code).toBe("link_expired");
    expect((await h.ctx.storage.people.listUsers()).map((u) => u.user.email)).toEqual(["rita@example.com"]);
  });
});

describe("sign-in", () => {
  test("the cookie is opaque, HttpOnly, SameSite=Lax, Path=/; Secure over https or with an https --public-url", async () => {
    const { h, person } = await peopleHarness();
    const p = await person("viewer");
    const r = await h.req("POST", "/v1/auth/sessions", { body: { email: p.email, password: PASSWORD } });
    const set = r.headers.get("set-cookie")!;
    expect(set).toMatch(/^automation_session=[A-Za-z0-9_-]{43}; /);
    expect(set).toContain("HttpOnly");
    expect(set).toContain("SameSite=Lax");
    expect(set).toContain("Path=/");
    expect(set).not.toContain("Secure");
    expect(r.headers.get("cache-control")).toBe("no-store");
    const proxied = await h.req("POST", "/v1/auth/sessions", { body: { email: p.email, password: PASSWORD }, headers: { "x-forwarded-proto": "https" } });
    expect(proxied.headers.get("set-cookie")).toContain("; Secure");
    const https = await peopleHarness({ publicUrl: "https://automation.example" });
    const q = await https.person("viewer");
    const r2 = await https.h.req("POST", "/v1/auth/sessions", { body: { email: q.email, password: PASSWORD } });
    expect(r2.headers.get("set-cookie")).toContain("; Secure");
    // Nothing of the cookie is stored but its hash.
    const value = set.split(";")[0]!.split("=")[1]!;
    expect(JSON.stringify(await h.ctx.storage.people.listUsers())).not.toContain(value);
  });

  test("wrong password or unknown e-mail → 401 in the envelope; 20 wrong passwords from one address → 429 with Retry-After", async () => {
    const { h, person } = await peopleHarness();
    const p = await person("viewer");
    const wrong = await h.req("POST", "/v1/auth/sessions", { body: { email: p.email, password: "wrong password here" } });
    expect(wrong.status).toBe(401);
    expect((await json(wrong)).issues[0]).toMatchObject({ code: "unauthorized", severity: "error" });
    expect((await h.req("POST", "/v1/auth/sessions", { body: { email: "nobody@example.com", password: PASSWORD } })).status).toBe(401);
    // Different accounts from one address: the address's count decides (2 failures above).
    const statuses: number[] = [];
    for (let i = 0; i < 18; i++) statuses.push((await h.req("POST", "/v1/auth/sessions", { body: { email: `x${i}@example.com`, password: "not the password" } })).status);
    expect(statuses.slice(0, 17).every((s) => s === 401)).toBe(true);
    expect(statuses[17]).toBe(429);
    const refused = await h.req("POST", "/v1/auth/sessions", { body: { email: p.email, password: PASSWORD } });
    expect(refused.status).toBe(429);
    expect(Number(refused.headers.get("retry-after"))).toBeGreaterThan(0);
    // The window passes: the right password works again.
    h.clock.advance(16 * 60_000);
    expect((await h.req("POST", "/v1/auth/sessions", { body: { email: p.email, password: PASSWORD } })).status).toBe(201);
  });

  test("10 wrong passwords for one account → 429 for that account only", async () => {
    const { h, person } = await peopleHarness();
    const a = await person("viewer");
    const b = await person("viewer");
    const statuses: number[] = [];
    for (let i = 0; i < 10; i++) statuses.push((await h.req("POST", "/v1/auth/sessions", { body: { email: a.email.toUpperCase(), password: `wrong password ${i}` } })).status);
    expect(statuses.slice(0, 9).every((s) => s === 401)).toBe(true);
    expect(statuses[9]).toBe(429);
    expect((await h.req("POST", "/v1/auth/sessions", { body: { email: a.email, password: PASSWORD } })).status).toBe(429);
    expect((await h.req("POST", "/v1/auth/sessions", { body: { email: b.email, password: PASSWORD } })).status).toBe(201);
  });

  test("a session id presented at sign-in is not kept (no fixation)", async () => {
    const { h, person } = await peopleHarness();
    const p = await person("viewer");
    const again = await signIn(h, p.email, PASSWORD, { cookie: p.cookie });
    expect(again.cookie).not.toBe(p.cookie);
    expect((await as(h, p, "GET", "/v1/auth/check")).status).toBe(401);
    expect((await as(h, again, "GET", "/v1/auth/check")).status).toBe(200);
    // A made-up id set before sign-in is never adopted either.
    const planted = `automation_session=${"A".repeat(43)}`;
    const fresh = await signIn(h, p.email, PASSWORD, { cookie: planted });
    expect(fresh.cookie).not.toBe(planted);
  });
});

describe("the session as a principal", () => {
  test("a reviewer reads runs, is refused creating a version, and auth/check names the person; keys answer as before", async () => {
    const { h, t, person } = await peopleHarness();
    const yaml = "name: flow\nsteps:\n  - {name: s, type: transform.set, with: {fields: {x: 1}}}\n";
    const created = await json(await h.req("POST", "/v1/automations", { key: t.key, body: { yaml } }));
    const r = await person("reviewer");
    expect((await as(h, r, "GET", "/v1/runs")).status).toBe(200);
    const refused = await as(h, r, "POST", `/v1/automations/${created.id}/versions`, { body: { yaml, version: "2.0.0" } });
    expect(refused.status).toBe(403);
    expect((await json(refused)).issues[0]).toMatchObject({ code: "insufficient_scope", message: "the role reviewer lacks the scope automations:write" });
    const check = await json(await as(h, r, "GET", "/v1/auth/check"));
    expect(Object.keys(check).sort()).toEqual(["email", "keyId", "name", "ok", "scope", "tenantId", "tenantName", "tenantSlug", "userId", "wildcardGranted"]);
    expect(check.keyId).toStartWith("ses_");
    expect(check.email).toBe(r.email);
    const byKey = await json(await h.req("GET", "/v1/auth/check", { key: t.key }));
    expect(byKey).toMatchObject({ userId: null, email: null, scope: ["*"] });
    // A Bearer key next to a cookie: the key decides (the cookie is not even read).
    const both = await h.req("POST", `/v1/automations/${created.id}/versions`, { key: t.key, body: { yaml, version: "2.0.0" }, headers: { cookie: r.cookie } });
    expect(both.status).toBe(201);
  });

  test("cookie writes need this server's Origin or the session's x-csrf-token; a cross-site form POST is refused", async () => {
    const { h, person } = await peopleHarness();
    const d = await person("developer");
    const body = { yaml: "name: csrf\nsteps:\n  - {name: s, type: transform.set, with: {fields: {x: 1}}}\n" };
    const noOrigin = await h.req("POST", "/v1/automations", { body, headers: { cookie: d.cookie } });
    expect(noOrigin.status).toBe(403);
    expect((await json(noOrigin)).issues[0].code).toBe("csrf_refused");
    const evil = await h.req("POST", "/v1/automations", {
      body: "yaml=x",
      headers: { cookie: d.cookie, origin: "https://evil.example", "content-type": "application/x-www-form-urlencoded" },
    });
    expect(evil.status).toBe(403);
    const badToken = await h.req("POST", "/v1/automations", { body, headers: { cookie: d.cookie, "x-csrf-token": "nope" } });
    expect(badToken.status).toBe(403);
    expect((await json(await h.req("GET", "/v1/automations", { headers: { cookie: d.cookie } }))).total).toBe(0);
    expect((await h.req("POST", "/v1/automations", { body, headers: { cookie: d.cookie, "x-csrf-token": d.csrf } })).status).toBe(201);
    expect((await as(h, d, "PATCH", "/v1/automations/workflows.csrf", { body: { status: "paused" } })).status).not.toBe(403);
  });

  test("unknown, malformed, huge, expired, signed-out and revoked sessions → 401/400 in the envelope, never 500", async () => {
    const { h, deps, person } = await peopleHarness();
    const cases: [Record<string, string>, number][] = [
      [{ cookie: `automation_session=${"B".repeat(43)}` }, 401],
      [{ cookie: "automation_session=../../etc/passwd" }, 401],
      [{ cookie: "automation_session=" }, 401],
      [{ cookie: `automation_session=${"C".repeat(43)}; automation_session=${"D".repeat(43)}` }, 401],
      [{ cookie: `other=${"x".repeat(9000)}` }, 400],
      [{ cookie: "unrelated=1" }, 401],
    ];
    for (const [headers, status] of cases) {
      const r = await h.req("GET", "/v1/runs", { headers });
      expect(r.status).toBe(status);
      const b = await json(r);
      expect(b.issues[0].severity).toBe("error");
      expect(b.requestId).toBeString();
    }

    const idle = await person("viewer");
    h.clock.advance(11 * HOUR);
    expect((await as(h, idle, "GET", "/v1/runs")).status).toBe(200);
    h.clock.advance(11 * HOUR);
    expect((await as(h, idle, "GET", "/v1/runs")).status).toBe(200);
    h.clock.advance(12 * HOUR + 60_000);
    expect((await as(h, idle, "GET", "/v1/runs")).status).toBe(401);

    const busy = await person("viewer");
    for (let i = 0; i < 15; i++) {
      h.clock.advance(11 * HOUR);
      expect((await as(h, busy, "GET", "/v1/runs")).status).toBe(200);
    }
    h.clock.advance(11 * HOUR);
    const absolute = await as(h, busy, "GET", "/v1/runs");
    expect(absolute.status).toBe(401);
    expect((await json(absolute)).issues[0].message).toContain("sign in again");

    const out = await person("viewer");
    expect((await as(h, out, "DELETE", "/v1/auth/sessions/current")).status).toBe(204);
    expect((await as(h, out, "GET", "/v1/runs")).status).toBe(401);

    const one = await person("viewer");
    const two = await signIn(h, one.email, PASSWORD);
    const everywhere = await as(h, one, "DELETE", "/v1/auth/sessions");
    expect(await json(everywhere)).toEqual({ ended: 2 });
    expect((await as(h, two, "GET", "/v1/runs")).status).toBe(401);

    const disabled = await person("viewer");
    await setStatus(deps, disabled.email, "disabled");
    expect((await as(h, disabled, "GET", "/v1/runs")).status).toBe(401);
    expect((await h.req("POST", "/v1/auth/sessions", { body: { email: disabled.email, password: PASSWORD } })).status).toBe(401);
  });

  test("removing a membership ends the member's session; only an owner changes owners", async () => {
    const { h, person } = await peopleHarness();
    const admin = await person("admin");
    const owner = await person("owner");
    const viewer = await person("viewer");
    const members = await json(await as(h, admin, "GET", "/v1/members"));
    expect(members.data.map((m: { role: string }) => m.role).sort()).toEqual(["admin", "owner", "viewer"]);
    expect((await as(h, admin, "PUT", `/v1/members/${viewer.userId}`, { body: { role: "developer" } })).status).toBe(200);
    expect((await json(await as(h, viewer, "GET", "/v1/auth/check"))).scope).toContain("automations:*");
    expect((await as(h, admin, "PUT", `/v1/members/${viewer.userId}`, { body: { role: "owner" } })).status).toBe(403);
    expect((await as(h, admin, "DELETE", `/v1/members/${owner.userId}`)).status).toBe(403);
    expect((await as(h, viewer, "GET", "/v1/members")).status).toBe(403);
    expect((await as(h, admin, "DELETE", `/v1/members/${viewer.userId}`)).status).toBe(204);
    expect((await as(h, viewer, "GET", "/v1/runs")).status).toBe(401);
    expect((await as(h, owner, "PUT", `/v1/members/${admin.userId}`, { body: { role: "owner" } })).status).toBe(200);
  });

  test("an admin invites through the API: a one-time link for their own tenant; owners only by owners", async () => {
    const { h, person } = await peopleHarness();
    const admin = await person("admin");
    const reviewer = await person("reviewer");
    expect((await as(h, reviewer, "POST", "/v1/members/invitations", { body: { email: "new@example.com", role: "viewer" } })).status).toBe(403);
    expect((await as(h, admin, "POST", "/v1/members/invitations", { body: { email: "boss@example.com", role: "owner" } })).status).toBe(403);
    const r = await as(h, admin, "POST", "/v1/members/invitations", { body: { email: "new@example.com", role: "developer" } });
    expect(r.status).toBe(201);
    const inv = await json(r);
    expect(inv).toMatchObject({ email: "new@example.com", role: "developer" });
    const token = new URL(inv.link).searchParams.get("token")!;
    const accepted = await h.req("POST", "/v1/auth/invitations/accept", { body: { token, name: "New", password: PASSWORD } });
    expect(await json(accepted)).toMatchObject({ role: "developer", tenant: { slug: "acme" } });
    const bad = await as(h, admin, "POST", "/v1/members/invitations", { body: { email: "not an address", role: "developer" } });
    expect(bad.status).toBe(400);
    expect((await json(bad)).issues[0].field).toBe("email");
  });
});
