// The demo's single-use sign-in link (issue 37): `--demo` makes a demo owner and each start prints
// `/v1/auth/code?code=…`, which signs in once (the same cookie a password sign-in sets) and redirects to
// the console; used again, expired or unknown it is a clear page and signs nobody in. The code is stored
// hashed, as every one-time link is.
// Runs on SQLite, and on PostgreSQL with AUTOMATION_TEST_DB=postgres.
import { describe, expect, test } from "bun:test";
import { json } from "../app/harness";
import { auditOf } from "../../../src/automation/audit/service";
import { NO_TENANT } from "../../../src/automation/audit/store";
import { DEMO_EMAIL, runDemo } from "../../../src/automation/demo/seed";
import { invite, resetLink, setStatus, signInCode } from "../../../src/automation/people/service";
import { as, peopleHarness, signIn, PASSWORD } from "./support";

const pathOf = (link: string) => {
  const u = new URL(link);
  return u.pathname + u.search;
};

describe("the demo's single-use sign-in link", () => {
  test("--demo makes a demo owner; the link signs in once, sets the session cookie and redirects to the console", async () => {
    const { h } = await peopleHarness();
    const demo = await runDemo(h.ctx);
    const { link, expiresAt } = await demo.signInLink("http://localhost/");
    expect(link).toMatch(/^http:\/\/localhost\/v1\/auth\/code\?code=[A-Za-z0-9_-]{43}$/);
    expect(Date.parse(expiresAt) - h.clock.now().getTime()).toBe(10 * 60_000);
    // No API key in the link; the code is stored only as its hash.
    expect(link).not.toContain("eak_");
    const code = new URL(link).searchParams.get("code")!;
    expect(await h.ctx.storage.people.findInvitation(code, h.clock.now().toISOString())).toBeUndefined();

    const r = await h.req("GET", pathOf(link));
    expect(r.status).toBe(303);
    expect(r.headers.get("location")).toBe("/");
    expect(r.headers.get("cache-control")).toBe("no-store");
    const cookie = r.headers.get("set-cookie")!;
    expect(cookie).toMatch(/^automation_session=[A-Za-z0-9_-]{43}; Path=\/; HttpOnly; SameSite=Lax; Max-Age=604800$/);
    const check = await json(await h.req("GET", "/v1/auth/check", { headers: { cookie: cookie.split(";")[0]! } }));
    expect(check).toMatchObject({ tenantSlug: "demo", email: DEMO_EMAIL, scope: ["*"], wildcardGranted: true });

    const again = await h.req("GET", pathOf(link));
    expect(again.status).toBe(409);
    expect(again.headers.get("set-cookie")).toBeNull();
    expect(again.headers.get("content-type")).toStartWith("text/html");
    expect(await again.text()).toContain("already used");

    // A restart over the same data keeps one demo owner and prints a new link that works.
    const restarted = await runDemo(h.ctx);
    expect((await h.ctx.storage.people.listUsers()).filter((u) => u.user.email === DEMO_EMAIL)).toHaveLength(1);
    const second = await h.req("GET", pathOf((await restarted.signInLink("http://localhost")).link));
    expect(second.status).toBe(303);
  }, 60_000);

  test("the same code opened twice at once signs in once", async () => {
    const { h, deps, person } = await peopleHarness();
    const owner = await person("owner");
    const { code } = await signInCode(deps, { email: owner.email, tenant: "acme" });
    const answers = await Promise.all([1, 2, 3].map(() => h.req("GET", `/v1/auth/code?code=${code}`)));
    expect(answers.map((r) => r.status).sort()).toEqual([303, 409, 409]);
    expect(answers.filter((r) => r.headers.get("set-cookie") !== null)).toHaveLength(1);
    // Each attempt is in the audit trail as a sign-in is: the one that worked names the person, the
    // refused ones are anonymous; the code itself is nowhere in it.
    await auditOf(h.ctx).drain();
    const key = await h.key("acme", ["audit:read"]);
    const trail = await json(await h.req("GET", "/v1/audit?action=auth.code&limit=50", { key }));
    expect(trail.data.map((e: { outcome: string; actor: { type: string; id: string | null } }) => `${e.outcome} ${e.actor.type} ${e.actor.id}`)).toEqual([`success user ${owner.userId}`]);
    expect(JSON.stringify(trail)).not.toContain(code);
    const anonymous = await h.ctx.storage.audit.list({ tenantKey: NO_TENANT }, 50);
    expect(anonymous.filter((e) => e.action === "auth.code" && e.outcome === "failure")).toHaveLength(2);
  });

  test("an expired, unknown or malformed code is a clear page that signs nobody in", async () => {
    const { h, deps, person } = await peopleHarness();
    const owner = await person("owner");
    const { code } = await signInCode(deps, { email: owner.email, tenant: "acme" });
    h.clock.advance(10 * 60_000 + 1);
    const late = await h.req("GET", `/v1/auth/code?code=${code}`);
    expect(late.status).toBe(400);
    expect(late.headers.get("set-cookie")).toBeNull();
    expect(await late.text()).toContain("expired");
    const unknown = await h.req("GET", "/v1/auth/code?code=abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQ");
    expect(unknown.status).toBe(404);
    expect(await unknown.text()).toContain("unknown");
    expect((await h.req("GET", "/v1/auth/code?code=%3Cscript%3E")).status).toBe(400);
    expect((await h.req("GET", "/v1/auth/code")).status).toBe(400);
  });

  test("a code is for sign-in only, ends a session the browser brought, and not for a disabled user", async () => {
    const { h, deps, person } = await peopleHarness();
    const owner = await person("owner");
    // Other one-time links are not sign-in codes, and a sign-in code is no invitation or reset link.
    const inv = await invite(deps, { email: "x@example.com", role: "viewer", tenant: "acme" });
    expect((await h.req("GET", `/v1/auth/code?code=${inv.token}`)).status).toBe(404);
    const reset = await resetLink(deps, owner.email);
    expect((await h.req("GET", `/v1/auth/code?code=${reset.token}`)).status).toBe(404);
    const { code } = await signInCode(deps, { email: owner.email, tenant: "acme" });
    expect((await h.req("POST", "/v1/auth/reset", { body: { token: code, password: "a-fine-long-passphrase-1" } })).status).toBe(404);

    // No fixation: the session the browser had is ended, a new one is made.
    const before = await signIn(h, owner.email, PASSWORD);
    const r = await h.req("GET", `/v1/auth/code?code=${code}`, { headers: { cookie: before.cookie } });
    expect(r.status).toBe(303);
    expect(r.headers.get("set-cookie")!.split(";")[0]).not.toBe(before.cookie);
    expect((await as(h, before, "GET", "/v1/auth/check")).status).toBe(401);

    const next = await signInCode(deps, { email: owner.email, tenant: "acme" });
    await setStatus(deps, owner.email, "disabled");
    const disabled = await h.req("GET", `/v1/auth/code?code=${next.code}`);
    expect(disabled.status).toBe(401);
    expect(disabled.headers.get("set-cookie")).toBeNull();
  });
});
