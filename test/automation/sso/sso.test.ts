// Single sign-on (issue 43) through HTTP, against a real OpenID Provider (oidc-provider on loopback):
// the sign-in lands with the role the groups give, the role follows the groups at each sign-in, a local
// account is never taken silently, and every refusal (wrong state, a replayed answer, an ID token from
// another issuer or audience, expired, with a wrong nonce, an unknown key or `alg: none`, an unverified
// e-mail, a domain not allowed, a provider that is down) makes no session, says why, and is in the audit
// trail. Runs on SQLite, and on PostgreSQL with AUTOMATION_TEST_DB=postgres.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { json, type Harness } from "../app/harness";
import { auditOf } from "../../../src/automation/audit/service";
import { NO_TENANT } from "../../../src/automation/audit/store";
import { createUser } from "../../../src/automation/people/service";
import { as, PASSWORD, peopleHarness, signIn } from "../people/support";
import { startProvider, type Forgery, type TestProvider } from "./provider";
import { callbackWith, providerConfig, REDIRECT, signOutAtProvider, ssoHarness, ssoSignIn } from "./support";
import { recheckDue } from "../../../src/automation/sso/recheck";
import * as jose from "jose";

let op: TestProvider;
/** The harness the provider's back-channel posts reach (through a listener on loopback). */
let reachable: Harness | undefined;
let forwarder: ReturnType<typeof Bun.serve> | undefined;

const person = (email: string, groups: string[], verified = true) => ({ email, email_verified: verified, name: email.split("@")[0]!, groups });

beforeAll(async () => {
  forwarder = Bun.serve({ hostname: "127.0.0.1", port: 0, fetch: (r) => (reachable ? reachable.app.handle(r) : new Response(null, { status: 503 })) });
  op = await startProvider({
    redirectUris: [REDIRECT, "http://localhost/v1/auth/oidc/down/callback", "http://localhost/v1/auth/oidc/acme-corp/callback"],
    people: {
      ada: person("ada@example.com", ["automation-reviewers"]),
      bob: person("bob@example.com", ["automation-admins", "automation-reviewers"]),
      eve: person("eve@example.com", ["automation-admins"], false),
      mal: person("mal@elsewhere.org", ["automation-admins"]),
      carol: person("carol@example.com", ["staff"]),
      dora: person("dora@example.com", ["automation-reviewers"]),
      lin: person("lin@example.com", ["automation-admins"]),
      ivy: person("ivy@example.com", ["automation-reviewers"]),
      kim: person("kim@example.com", ["automation-reviewers"]),
      // As Microsoft Entra sends work accounts: no email_verified; with or without its xms_edov claim.
      tom: { email: "tom@example.com", xms_edov: true, name: "tom", groups: ["automation-reviewers"] },
      una: { email: "una@example.com", name: "una", groups: ["automation-reviewers"] },
    },
  });
  op.backchannelUri = `http://127.0.0.1:${forwarder.port}/v1/auth/oidc/sso/backchannel-logout`;
});
afterAll(async () => {
  await op.close();
  forwarder?.stop(true);
});

async function current(h: Harness, session: string) {
  const r = await h.req("GET", "/v1/auth/sessions/current", { headers: { cookie: session } });
  expect(r.status).toBe(200);
  return json(r);
}

/** The audit trail's entries of the callback, newest first, as "outcome status actor-type actor-name". */
async function callbackEntries(h: Harness): Promise<string[]> {
  await auditOf(h.ctx).drain();
  const rows = [];
  for (const tenantKey of [(await h.ctx.storage.tenancy.findTenant("acme"))!.id, NO_TENANT]) {
    rows.push(...(await h.ctx.storage.audit.list({ tenantKey }, 200)));
  }
  return rows.filter((e) => e.action === "auth.oidc.callback").map((e) => `${e.outcome} ${e.status} ${e.actorType} ${e.actorName}`);
}

/** A refusal: its status, no session cookie (the flow cookie cleared), the reason's code on the page that leads to the sign-in page. */
async function expectRefused(a: { res: Response; session?: string }, status: number, code: string) {
  expect(a.res.status).toBe(status);
  expect(a.session).toBeUndefined();
  expect(a.res.headers.getSetCookie().some((c) => c.startsWith("automation_session="))).toBe(false);
  expect(a.res.headers.getSetCookie()).toContain(a.res.headers.getSetCookie().find((c) => c.startsWith("automation_oidc=;"))!);
  const page = await a.res.text();
  expect(page).toContain(`data-code="${code}"`);
  expect(page).toContain(`url=/#/signin?sso_error=${code}`);
  return page;
}

describe("single sign-on with an OpenID Connect provider", () => {
  test("the console lists the provider; a sign-in lands in the console with the role the groups give, as a new user without a password", async () => {
    const { h } = await ssoHarness(op);
    const providers = await json(await h.req("GET", "/v1/auth/providers"));
    expect(providers).toEqual({ data: [{ id: "sso", name: "Test SSO", type: "oidc", start: "/v1/auth/oidc/sso/start" }] });

    const start = await h.req("GET", "/v1/auth/oidc/sso/start");
    expect(start.status).toBe(303);
    const to = new URL(start.headers.get("location")!);
    expect(to.origin).toBe(op.issuer);
    expect(to.searchParams.get("code_challenge_method")).toBe("S256");
    expect(to.searchParams.get("redirect_uri")).toBe(REDIRECT);
    expect(to.searchParams.get("state")).toMatch(/^[A-Za-z0-9_-]{40,}$/);
    expect(to.searchParams.get("nonce")).toMatch(/^[A-Za-z0-9_-]{40,}$/);
    // The verifier never leaves the server except sealed in the HttpOnly flow cookie.
    expect(start.headers.get("set-cookie")).toMatch(/^automation_oidc=[^;]+; Path=\/v1\/auth\/oidc\/; HttpOnly; SameSite=Lax; Max-Age=600$/);

    const bob = await ssoSignIn(h, "bob");
    expect(bob.res.status).toBe(303);
    expect(bob.res.headers.get("location")).toBe("/");
    expect(bob.res.headers.getSetCookie().find((c) => c.startsWith("automation_session="))).toMatch(/^automation_session=[A-Za-z0-9_-]{43}; Path=\/; HttpOnly; SameSite=Lax; Max-Age=604800$/);
    // Admin wins over reviewer: the highest rule for the tenant.
    expect(await current(h, bob.session!)).toMatchObject({ user: { email: "bob@example.com", name: "bob" }, tenant: { slug: "acme" }, role: "admin" });
    const user = await h.ctx.storage.people.findUser("bob@example.com");
    expect(user?.passwordHash).toBeNull();
    // No password: a password sign-in for the SSO user is refused like any wrong password.
    expect((await h.req("POST", "/v1/auth/sessions", { body: { email: "bob@example.com", password: PASSWORD } })).status).toBe(401);

    const ada = await ssoSignIn(h, "ada");
    expect(await current(h, ada.session!)).toMatchObject({ user: { email: "ada@example.com" }, role: "reviewer" });
    // A reviewer decides reviews, an admin reads the audit trail, which shows the SSO identities.
    expect((await h.req("GET", "/v1/audit", { headers: { cookie: ada.session! } })).status).toBe(403);
    await auditOf(h.ctx).drain();
    const trail = await json(await h.req("GET", "/v1/audit?action=auth.oidc.callback", { headers: { cookie: bob.session! } }));
    expect(trail.data.map((e: { outcome: string; actor: { type: string; name: string } }) => `${e.outcome} ${e.actor.type} ${e.actor.name}`)).toEqual([
      "success user ada@example.com",
      "success user bob@example.com",
    ]);
  });

  test("after the sign-in the browser goes to the page it asked for, only ever a page of this server", async () => {
    const { h } = await ssoHarness(op);
    const landed = async (next: string) => (await ssoSignIn(h, "bob", { next })).res.headers.get("location");
    expect(await landed("/#/runs?status=failed")).toBe("/#/runs?status=failed");
    // Another origin, however spelled (browsers drop tabs and newlines and read a backslash as a slash).
    for (const next of ["//evil.example", "/\t/evil.example", "/\n/evil.example", "/\\evil.example", "https://evil.example/", "javascript:alert(1)", `/${"a".repeat(600)}`]) {
      expect({ next, location: await landed(next) }).toEqual({ next, location: "/" });
    }
  });

  test("the role follows the groups at every sign-in: promoted, demoted, and gone with the last group", async () => {
    const { h } = await ssoHarness(op);
    const first = await ssoSignIn(h, "dora");
    expect((await current(h, first.session!)).role).toBe("reviewer");

    op.people.get("dora")!.groups = ["automation-admins"];
    const promoted = await ssoSignIn(h, "dora");
    expect((await current(h, promoted.session!)).role).toBe("admin");
    // The earlier session reads the membership at each request: it is admin too now.
    expect((await current(h, first.session!)).role).toBe("admin");

    op.people.get("dora")!.groups = ["automation-reviewers"];
    const demoted = await ssoSignIn(h, "dora");
    expect((await current(h, demoted.session!)).role).toBe("reviewer");

    op.people.get("dora")!.groups = [];
    const gone = await ssoSignIn(h, "dora");
    await expectRefused(gone, 403, "no_role");
    // The membership is gone, and with it every session in the tenant.
    expect((await h.req("GET", "/v1/auth/sessions/current", { headers: { cookie: demoted.session! } })).status).toBe(401);
    const dora = await h.ctx.storage.people.findUser("dora@example.com");
    expect(await h.ctx.storage.people.memberships(dora!.id)).toEqual([]);
    op.people.get("dora")!.groups = ["automation-reviewers"];
  });

  test("groups in a nested claim (realm_access.roles), and a default role for people no rule matches", async () => {
    const { h } = await ssoHarness(op, { groupsClaim: ["realm_access", "roles"], roleMap: [{ group: "automation-admins", role: "admin", tenant: "acme" }], defaultRole: { role: "viewer", tenant: "acme" } });
    expect((await current(h, (await ssoSignIn(h, "lin")).session!)).role).toBe("admin");
    expect((await current(h, (await ssoSignIn(h, "carol")).session!)).role).toBe("viewer");
  });

  test("a local account with the same e-mail is not taken silently; with --oidc-trust-email it is", async () => {
    const { h, deps } = await ssoHarness(op);
    await createUser(deps, { email: "ada@example.com", name: "Ada Local", password: PASSWORD, tenant: "acme", role: "developer" });
    const refused = await ssoSignIn(h, "ada");
    expect(await expectRefused(refused, 409, "account_exists")).toContain("already exists here");
    expect(await h.ctx.storage.people.ssoIdentity(op.issuer, "ada")).toBeUndefined();
    // The local account still signs in with its password, its role untouched.
    expect((await current(h, (await signIn(h, "ada@example.com", PASSWORD)).cookie)).role).toBe("developer");

    const trusting = await ssoHarness(op, { trustEmail: true });
    const local = await createUser(trusting.deps, { email: "ada@example.com", name: "Ada Local", password: PASSWORD, tenant: "acme", role: "developer" });
    const linked = await ssoSignIn(trusting.h, "ada");
    expect(await current(trusting.h, linked.session!)).toMatchObject({ user: { id: local.id, name: "Ada Local" }, role: "reviewer" });
    expect((await trusting.h.ctx.storage.people.ssoIdentity(op.issuer, "ada"))?.userId).toBe(local.id);
  });

  test("an admin lets a member's next SSO sign-in become their account (POST /v1/members/{id}/sso-link): only a member of that tenant alone, owners only by an owner", async () => {
    const { h, deps, person } = await ssoHarness(op);
    const admin = await person("admin");
    const local = await createUser(deps, { email: "dora@example.com", name: "Dora Local", password: PASSWORD, tenant: "acme", role: "developer" });
    await expectRefused(await ssoSignIn(h, "dora"), 409, "account_exists");

    const link = (userId: string, provider = "sso") => as(h, admin, "POST", `/v1/members/${userId}/sso-link`, { body: { provider } });
    expect((await link(local.id, "nowhere")).status).toBe(404);
    const made = await link(local.id);
    expect(made.status).toBe(201);
    expect(await json(made)).toMatchObject({ userId: local.id, email: "dora@example.com", provider: "sso", issuer: op.issuer });
    const dora = await ssoSignIn(h, "dora");
    expect(await current(h, dora.session!)).toMatchObject({ user: { id: local.id, name: "Dora Local" }, role: "reviewer" });
    expect((await h.ctx.storage.people.ssoIdentity(op.issuer, "dora"))?.userId).toBe(local.id);

    // A member of another tenant too: the operator's (users link-sso), not one tenant's admin's.
    await h.tenant("other");
    const both = await createUser(deps, { email: "both@example.com", name: "Both", password: PASSWORD, tenant: "acme", role: "viewer" });
    expect(await h.ctx.storage.people.setRole(both.id, (await h.ctx.storage.tenancy.findTenant("other"))!.id, "viewer", new Date().toISOString())).toBe("ok");
    const elsewhere = await link(both.id);
    expect(elsewhere.status).toBe(403);
    expect((await json(elsewhere)).issues[0]).toMatchObject({ code: "member_elsewhere" });
    // An owner's account: only an owner links it.
    const owner = await person("owner");
    const ownerLink = await link(owner.userId);
    expect(ownerLink.status).toBe(403);
    expect((await as(h, owner, "POST", `/v1/members/${local.id}/sso-link`, { body: { provider: "sso" } })).status).toBe(201);
    // Someone of no tenant of the admin's: not found.
    expect((await as(h, admin, "POST", `/v1/members/usr_nobody/sso-link`, { body: { provider: "sso" } })).status).toBe(404);
    expect((await as(h, admin, "POST", `/v1/members/${local.id}/sso-link`, { body: { provider: 7 } })).status).toBe(400);
  });

  test("a new identity at the provider with the e-mail of an account already linked there is another person: refused even with --oidc-trust-email", async () => {
    const { h } = await ssoHarness(op, { trustEmail: true });
    const first = await ssoSignIn(h, "bob");
    expect(first.session).toBeString();
    const bob = (await h.ctx.storage.people.findUser("bob@example.com"))!;
    // The provider gives bob's old address to someone new (another subject).
    op.people.set("bob-new", person("bob@example.com", ["automation-admins"]));
    try {
      const other = await ssoSignIn(h, "bob-new");
      expect(other.res.status).toBe(409);
      expect(other.session).toBeUndefined();
      expect(await other.res.text()).toContain("already linked to another identity");
      expect(await h.ctx.storage.people.ssoIdentity(op.issuer, "bob-new")).toBeUndefined();
    } finally {
      op.people.delete("bob-new");
    }
    // Bob himself still signs in as himself.
    const again = await ssoSignIn(h, "bob");
    expect((await current(h, again.session!)).user.id).toBe(bob.id);
  });

  test("an answer for another sign-in (wrong state), or one used before (replayed), is refused", async () => {
    const { h } = await ssoHarness(op);
    const wrong = await ssoSignIn(h, "ada", { tamper: (u) => u.searchParams.set("state", "an-attacker-s-state-value-aaaaaaaaaaaaaaaaaaa") });
    expect(await expectRefused(wrong, 400, "state_mismatch")).toContain("wrong state");

    const once = await ssoSignIn(h, "ada");
    expect(once.res.status).toBe(303);
    const replayed = await callbackWith(h, once.callback, once.flow);
    await expectRefused(replayed, 400, "flow_used");

    // No flow cookie at all (another browser opening the address).
    const elsewhere = await ssoSignIn(h, "ada", { tamper: () => {} });
    await elsewhere.res.text();
    await expectRefused(await callbackWith(h, elsewhere.callback, ""), 400, "flow_missing");

    expect((await callbackEntries(h)).filter((e) => e.startsWith("failure 400 anonymous"))).toHaveLength(3);
  });

  test("a code the provider already exchanged is refused by the provider, and so by us", async () => {
    const { h } = await ssoHarness(op);
    // The same code, under a new flow of this browser: the provider refuses it at the token endpoint.
    const once = await ssoSignIn(h, "ada");
    expect(once.res.status).toBe(303);
    const code = new URL(once.callback, "http://localhost").searchParams.get("code")!;
    const other = await ssoSignIn(h, "ada", { tamper: (u) => u.searchParams.set("code", code) });
    await expectRefused(other, 401, "code_rejected");
  });

  const forgeries: [Forgery, string, string][] = [
    ["issuer", "token_issuer", "another issuer"],
    ["audience", "token_audience", "another client"],
    ["expired", "token_expired", "expired"],
    ["nonce", "token_nonce", "nonce"],
    ["unknown-key", "token_signature", "not signed by one of"],
    ["alg-none", "token_signature", "not signed by one of"],
  ];
  for (const [forgery, code, says] of forgeries) {
    test(`an ID token ${forgery === "alg-none" ? "with alg: none" : forgery === "unknown-key" ? "signed with an unknown key" : forgery === "expired" ? "that has expired" : `with a wrong ${forgery}`} is refused (${code})`, async () => {
      const { h } = await ssoHarness(op);
      op.forge = forgery;
      try {
        const a = await ssoSignIn(h, "bob");
        expect(await expectRefused(a, 401, code)).toContain(says);
      } finally {
        op.forge = undefined;
      }
      expect(await callbackEntries(h)).toEqual(["failure 401 anonymous null"]);
      expect(await h.ctx.storage.people.findUser("bob@example.com")).toBeUndefined();
    });
  }

  test("an unverified e-mail, a domain not allowed: refused, recorded with the e-mail tried", async () => {
    const { h } = await ssoHarness(op);
    expect(await expectRefused(await ssoSignIn(h, "eve"), 403, "email_unverified")).toContain("has not verified the e-mail eve@example.com");
    expect(await expectRefused(await ssoSignIn(h, "mal"), 403, "domain_not_allowed")).toContain("elsewhere.org");
    expect(await h.ctx.storage.people.findUser("eve@example.com")).toBeUndefined();
    expect(await h.ctx.storage.people.findUser("mal@elsewhere.org")).toBeUndefined();
    expect((await callbackEntries(h)).sort()).toEqual(["denied 403 anonymous eve@example.com", "denied 403 anonymous mal@elsewhere.org"]);
  });

  test("without email_verified (Microsoft Entra), the xms_edov claim vouches for the e-mail; with neither, refused", async () => {
    const { h } = await ssoHarness(op);
    expect((await current(h, (await ssoSignIn(h, "tom")).session!)).user.email).toBe("tom@example.com");
    await expectRefused(await ssoSignIn(h, "una"), 403, "email_unverified");
  });

  test("a provider that is down: the start says so, password sign-in still works", async () => {
    const closed = Bun.listen({ hostname: "127.0.0.1", port: 0, socket: { data() {} } });
    const port = closed.port;
    closed.stop(true);
    const down = { ...providerConfig(op), id: "down", name: "Down SSO", issuer: `http://127.0.0.1:${port}` };
    const { h, person } = await ssoHarness(op, {}, [down]);
    expect((await json(await h.req("GET", "/v1/auth/providers"))).data.map((p: { id: string }) => p.id)).toEqual(["sso", "down"]);
    const r = await h.req("GET", "/v1/auth/oidc/down/start");
    expect(r.status).toBe(503);
    expect(r.headers.get("location")).toBeNull();
    const page = await r.text();
    expect(page).toContain('data-code="provider_down"');
    expect(page).toContain("Down SSO cannot be reached");
    expect(page).toContain("sign in with a password");
    const someone = await person("developer");
    expect((await current(h, someone.cookie)).role).toBe("developer");
    await auditOf(h.ctx).drain();
    expect((await h.ctx.storage.audit.list({ tenantKey: NO_TENANT }, 50)).filter((e) => e.action === "auth.oidc.start").map((e) => `${e.outcome} ${e.status}`)).toEqual(["failure 503"]);
    // An unknown provider is a clear page too.
    expect((await h.req("GET", "/v1/auth/oidc/nope/start")).status).toBe(404);
  });

  test("a UserInfo outage is not 'no groups': the sign-in waits for the provider and nobody's role changes; a token endpoint answering 503 is down too", async () => {
    const { h } = await ssoHarness(op);
    const first = await ssoSignIn(h, "bob");
    expect((await current(h, first.session!)).role).toBe("admin");
    const bob = (await h.ctx.storage.people.findUser("bob@example.com"))!;
    const roles = async () => (await h.ctx.storage.people.memberships(bob.id)).map((m) => m.role);
    expect(await roles()).toEqual(["admin"]);
    for (const part of ["userinfo", "token"] as const) {
      op.down.add(part);
      try {
        const again = await ssoSignIn(h, "bob");
        expect({ part, status: again.res.status, session: again.session }).toEqual({ part, status: 503, session: undefined });
        expect(await again.res.text()).toContain("try again later");
      } finally {
        op.down.delete(part);
      }
      expect(await roles()).toEqual(["admin"]); // not demoted, not removed
      expect((await current(h, first.session!)).role).toBe("admin"); // the open session goes on
    }
  });

  test("--oidc-recheck while the provider's token endpoint answers 503 keeps the session and its role; the next re-check decides", async () => {
    const { h } = await ssoHarness(op, { recheckMs: 60_000 });
    const ivy = await ssoSignIn(h, "ivy");
    expect((await current(h, ivy.session!)).role).toBe("reviewer");
    const clients = new Map();
    op.down.add("token");
    try {
      h.clock.advance(61_000);
      expect(await recheckDue(h.ctx, clients)).toBe(1);
      expect((await current(h, ivy.session!)).role).toBe("reviewer");
    } finally {
      op.down.delete("token");
    }
    op.people.get("ivy")!.groups = ["automation-admins"];
    h.clock.advance(61_000);
    expect(await recheckDue(h.ctx, clients)).toBe(1);
    expect((await current(h, ivy.session!)).role).toBe("admin");
    op.people.get("ivy")!.groups = ["automation-reviewers"];
  });

  test("the provider's own refusal (the person cancelled) is shown, no session", async () => {
    const { h } = await ssoHarness(op);
    const a = await ssoSignIn(h, "ada", {
      tamper: (u) => {
        u.searchParams.delete("code");
        u.searchParams.set("error", "access_denied");
        u.searchParams.set("error_description", "the person cancelled");
      },
    });
    expect(await expectRefused(a, 401, "provider_refused")).toContain("the person cancelled");
  });

  test("--oidc-recheck: the role follows the groups within the session; a person removed at the provider loses the session", async () => {
    const { h } = await ssoHarness(op, { recheckMs: 60_000 });
    const ivy = await ssoSignIn(h, "ivy");
    expect((await current(h, ivy.session!)).role).toBe("reviewer");
    const clients = new Map();
    // Not due yet: nothing is asked.
    expect(await recheckDue(h.ctx, clients)).toBe(0);

    op.people.get("ivy")!.groups = ["automation-admins"];
    h.clock.advance(61_000);
    expect(await recheckDue(h.ctx, clients)).toBe(1);
    expect((await current(h, ivy.session!)).role).toBe("admin");

    // Gone at the provider: the refresh is refused there, and the session ends here.
    const gone = op.people.get("ivy")!;
    op.people.delete("ivy");
    h.clock.advance(61_000);
    expect(await recheckDue(h.ctx, clients)).toBe(1);
    expect((await h.req("GET", "/v1/auth/sessions/current", { headers: { cookie: ivy.session! } })).status).toBe(401);
    op.people.set("ivy", { ...gone, groups: ["automation-reviewers"] });
    // Each re-check is in the tenant's audit trail as the person's.
    await auditOf(h.ctx).drain();
    const acme = (await h.ctx.storage.tenancy.findTenant("acme"))!.id;
    const rechecks = (await h.ctx.storage.audit.list({ tenantKey: acme }, 50)).filter((e) => e.action === "auth.oidc.recheck");
    expect(rechecks.map((e) => `${e.outcome} ${e.status} ${e.actorType} ${e.actorName}`)).toEqual(["failure 401 user ivy@example.com", "success 200 user ivy@example.com"]);
  });

  test("back-channel logout: signing out at the provider ends the session here; a forged logout token ends nothing", async () => {
    const { h } = await ssoHarness(op);
    reachable = h;
    try {
      const jar = new Map<string, string>();
      const kim = await ssoSignIn(h, "kim", { jar });
      expect((await current(h, kim.session!)).role).toBe("reviewer");
      const other = await ssoSignIn(h, "ada");

      // Forged: signed by a key of no provider, or not signed at all.
      const key = (await jose.generateKeyPair("RS256")).privateKey;
      const claims = { iss: op.issuer, aud: op.clientId, sub: "kim", jti: "x1", events: { "http://schemas.openid.net/event/backchannel-logout": {} } };
      for (const token of [await new jose.SignJWT(claims).setProtectedHeader({ alg: "RS256", kid: "test-key-1" }).setIssuedAt().sign(key), new jose.UnsecuredJWT(claims).setIssuedAt().encode()]) {
        const r = await h.req("POST", "/v1/auth/oidc/sso/backchannel-logout", { body: new URLSearchParams({ logout_token: token }).toString(), headers: { "content-type": "application/x-www-form-urlencoded" } });
        expect(r.status).toBe(400);
        expect((await json(r)).error).toBe("invalid_request");
      }
      expect((await current(h, kim.session!)).role).toBe("reviewer");

      await signOutAtProvider(op, jar);
      expect((await h.req("GET", "/v1/auth/sessions/current", { headers: { cookie: kim.session! } })).status).toBe(401);
      // Another person's session is untouched.
      expect((await current(h, other.session!)).user.email).toBe("ada@example.com");
      await auditOf(h.ctx).drain();
      const entries = await h.ctx.storage.audit.list({ tenantKey: NO_TENANT }, 50);
      expect(entries.filter((e) => e.action === "auth.oidc.backchannel-logout").map((e) => `${e.outcome} ${e.status}`).sort()).toEqual(["failure 400", "failure 400", "success 200"]);
    } finally {
      reachable = undefined;
    }
  });

  test("an owner makes SSO the only way in: members' passwords are refused, SSO and API keys still work", async () => {
    const { h, t, person } = await ssoHarness(op);
    const owner = await person("owner");
    const admin = await person("admin");
    const dev = await person("developer");
    expect(await json(await as(h, owner, "GET", "/v1/tenant/sso"))).toEqual({ ssoOnly: false, trustEmails: false, providers: [{ id: "sso", name: "Test SSO" }] });
    expect((await as(h, admin, "PUT", "/v1/tenant/sso", { body: { ssoOnly: true } })).status).toBe(403);
    const set = await as(h, owner, "PUT", "/v1/tenant/sso", { body: { ssoOnly: true } });
    expect(set.status).toBe(200);
    expect((await json(set)).ssoOnly).toBe(true);

    const refused = await h.req("POST", "/v1/auth/sessions", { body: { email: dev.email, password: PASSWORD } });
    expect(refused.status).toBe(403);
    expect(refused.headers.get("set-cookie")).toBeNull();
    expect((await json(refused)).issues[0]).toMatchObject({ code: "sso_only" });
    // A wrong password is still just a wrong password (the setting is not told to someone without it).
    expect((await h.req("POST", "/v1/auth/sessions", { body: { email: dev.email, password: "not-the-password-at-all" } })).status).toBe(401);
    // Open sessions stay until they end; SSO signs in; keys work.
    expect((await current(h, dev.cookie)).role).toBe("developer");
    expect((await current(h, (await ssoSignIn(h, "ada")).session!)).role).toBe("reviewer");
    expect((await h.req("GET", "/v1/automations", { key: t.key })).status).toBe(200);

    expect((await as(h, owner, "PUT", "/v1/tenant/sso", { body: { ssoOnly: false } })).status).toBe(200);
    expect((await h.req("POST", "/v1/auth/sessions", { body: { email: dev.email, password: PASSWORD } })).status).toBe(201);

    // A server without a provider refuses to lock its people out.
    const plain = await peopleHarness();
    const o2 = await plain.person("owner");
    const lock = await as(plain.h, o2, "PUT", "/v1/tenant/sso", { body: { ssoOnly: true } });
    expect(lock.status).toBe(400);
    expect((await json(lock)).issues[0]).toMatchObject({ code: "no_sso_provider" });
  });

  test("a tenant's owner trusts the provider's e-mails: a local account of that tenant alone is linked; one also in a tenant that does not trust them is not", async () => {
    const { h, deps, person } = await ssoHarness(op);
    const owner = await person("owner");
    await h.tenant("other");
    const ada = await createUser(deps, { email: "ada@example.com", name: "Ada Local", password: PASSWORD, tenant: "acme", role: "developer" });
    const bob = await createUser(deps, { email: "bob@example.com", name: "Bob Local", password: PASSWORD, tenant: "acme", role: "developer" });
    await deps.people.setRole(bob.id, (await h.ctx.storage.tenancy.findTenant("other"))!.id, "viewer", h.clock.now().toISOString());

    expect((await ssoSignIn(h, "ada")).res.status).toBe(409);
    const set = await as(h, owner, "PUT", "/v1/tenant/sso", { body: { trustEmails: true } });
    expect(await json(set)).toMatchObject({ ssoOnly: false, trustEmails: true });
    expect((await as(h, owner, "PUT", "/v1/tenant/sso", { body: {} })).status).toBe(400);

    const linked = await ssoSignIn(h, "ada");
    expect(await current(h, linked.session!)).toMatchObject({ user: { id: ada.id, name: "Ada Local" }, role: "reviewer" });
    // Bob is also a member of "other", which does not trust them: linking would hand over that membership too.
    await expectRefused(await ssoSignIn(h, "bob"), 409, "account_exists");
    expect(await h.ctx.storage.people.ssoIdentity(op.issuer, "bob")).toBeUndefined();
  });

  test("a tenant's owner adds a provider of its own: secret sealed, listed when the sign-in page names the tenant, groups give roles in that tenant only", async () => {
    const { h, person } = await peopleHarness();
    const owner = await person("owner");
    const admin = await person("admin");
    const body = {
      id: "acme-corp",
      name: "Acme Corp SSO",
      issuer: op.issuer,
      clientId: op.clientId,
      clientSecret: op.clientSecret,
      scopes: ["openid", "email", "profile", "groups"],
      roleMap: [{ group: "automation-admins", role: "developer" }],
      allowedDomains: ["example.com"],
    };
    expect((await as(h, admin, "POST", "/v1/tenant/sso/providers", { body })).status).toBe(403);
    const made = await as(h, owner, "POST", "/v1/tenant/sso/providers", { body });
    expect(made.status).toBe(201);
    const shown = await json(made);
    expect(shown).toMatchObject({ id: "acme-corp", name: "Acme Corp SSO", redirectUri: "http://localhost/v1/auth/oidc/acme-corp/callback", roleMap: [{ group: "automation-admins", role: "developer" }] });
    // The secret is in no answer and is sealed at rest.
    expect(JSON.stringify(shown)).not.toContain(op.clientSecret);
    expect(JSON.stringify(await json(await as(h, admin, "GET", "/v1/tenant/sso/providers")))).not.toContain(op.clientSecret);
    const row = await h.ctx.storage.people.tenantProvider("acme-corp");
    expect(row?.clientSecret).toStartWith("v1:");
    expect(row?.clientSecret).not.toContain(op.clientSecret);
    expect((await as(h, owner, "POST", "/v1/tenant/sso/providers", { body })).status).toBe(409);

    // Listed only for a sign-in page that names the tenant.
    expect((await json(await h.req("GET", "/v1/auth/providers"))).data).toEqual([]);
    expect((await json(await h.req("GET", "/v1/auth/providers?tenant=acme"))).data).toEqual([{ id: "acme-corp", name: "Acme Corp SSO", type: "oidc", start: "/v1/auth/oidc/acme-corp/start", tenant: "acme" }]);

    const lin = await ssoSignIn(h, "lin", { provider: "acme-corp" });
    expect(await current(h, lin.session!)).toMatchObject({ user: { email: "lin@example.com" }, tenant: { slug: "acme" }, role: "developer" });
    // Its groups give no role through the tenant's provider: refused.
    await expectRefused(await ssoSignIn(h, "ada", { provider: "acme-corp" }), 403, "no_role");

    expect((await as(h, owner, "DELETE", "/v1/tenant/sso/providers/acme-corp")).status).toBe(204);
    expect((await h.req("GET", "/v1/auth/oidc/acme-corp/start")).status).toBe(404);
  });

  test("a tenant's provider cannot take the id of the server's", async () => {
    const { h, person } = await ssoHarness(op);
    const owner = await person("owner");
    const r = await as(h, owner, "POST", "/v1/tenant/sso/providers", { body: { id: "sso", name: "Mine", issuer: op.issuer, clientId: "x", clientSecret: "y", defaultRole: "viewer" } });
    expect(r.status).toBe(409);
    expect((await json(r)).issues[0]).toMatchObject({ field: "id", code: "already_exists" });
    // Nor make everyone the provider vouches for an owner or an admin.
    for (const role of ["owner", "admin"]) {
      const high = await as(h, owner, "POST", "/v1/tenant/sso/providers", { body: { id: "mine", name: "Mine", issuer: op.issuer, clientId: "x", clientSecret: "y", defaultRole: role } });
      expect(high.status).toBe(400);
      expect((await json(high)).issues[0]).toMatchObject({ field: "defaultRole", code: "default_role_too_high" });
    }
    expect((await json(await as(h, owner, "GET", "/v1/tenant/sso/providers"))).data).toEqual([]);
  });

  test("a tenant's provider reaches only what --outbound-allow lets a tenant reach: an inside address is refused when added, a name resolving inside when used", async () => {
    const { h, person } = await peopleHarness({ outboundAllow: [] });
    const owner = await person("owner");
    const port = new URL(op.issuer).port;
    const body = (id: string, issuer: string) => ({ id, name: "Inside", issuer, clientId: op.clientId, clientSecret: op.clientSecret, roleMap: [{ group: "automation-reviewers", role: "viewer" }] });
    const literal = await as(h, owner, "POST", "/v1/tenant/sso/providers", { body: body("inside", `http://127.0.0.1:${port}`) });
    expect(literal.status).toBe(400);
    expect((await json(literal)).issues[0]).toMatchObject({ field: "issuer", code: "outbound_refused" });
    // A name is checked at each connection: the discovery request is refused before it is sent.
    expect((await as(h, owner, "POST", "/v1/tenant/sso/providers", { body: body("named", `http://localhost:${port}`) })).status).toBe(201);
    const start = await h.req("GET", "/v1/auth/oidc/named/start");
    expect(start.status).toBe(503);
    expect(await start.text()).toContain("localhost resolves to an address inside this server&#39;s network");
  });

  test("a tenant's own provider with recheckMinutes: a person removed at the provider loses the session at the next re-check", async () => {
    const { h, person } = await peopleHarness();
    const owner = await person("owner");
    const made = await as(h, owner, "POST", "/v1/tenant/sso/providers", {
      body: { id: "acme-corp", name: "Acme Corp SSO", issuer: op.issuer, clientId: op.clientId, clientSecret: op.clientSecret, scopes: ["openid", "email", "profile", "groups"], roleMap: [{ group: "automation-reviewers", role: "viewer" }], recheckMinutes: 5 },
    });
    expect(made.status).toBe(201);
    expect((await json(made)).recheckMinutes).toBe(5);
    const kim = await ssoSignIn(h, "kim", { provider: "acme-corp" });
    expect((await current(h, kim.session!)).role).toBe("viewer");
    const clients = new Map();
    h.clock.advance(4 * 60_000);
    expect(await recheckDue(h.ctx, clients)).toBe(0);
    const was = op.people.get("kim")!;
    op.people.delete("kim");
    try {
      h.clock.advance(61_000);
      expect(await recheckDue(h.ctx, clients)).toBe(1);
      expect((await h.req("GET", "/v1/auth/sessions/current", { headers: { cookie: kim.session! } })).status).toBe(401);
    } finally {
      op.people.set("kim", was);
    }
  });
});

describe("the provider's signing keys (JWKS)", () => {
  /** A provider of its own per test: the key set is kept per JWKS address in the process. */
  async function fresh(headers: Record<string, string>) {
    const p = await startProvider({ redirectUris: [REDIRECT], people: { ada: person("ada@example.com", ["automation-reviewers"]), kim: person("kim@example.com", ["automation-reviewers"]) } });
    p.jwksHeaders = headers;
    const { h } = await ssoHarness(p);
    return { p, h };
  }
  const signedIn = async (h: Harness, login: string) => {
    const a = await ssoSignIn(h, login);
    expect(a.res.status).toBe(303);
    expect(a.session).toBeDefined();
    return a;
  };

  test("kept as long as Cache-Control says; a rotated key is fetched at once; made-up keys do not make the server ask again and again", async () => {
    const { p, h } = await fresh({ "cache-control": "public, max-age=600" });
    try {
      await signedIn(h, "ada");
      await signedIn(h, "kim");
      expect(p.jwksRequests.length).toBe(1);

      // The provider rotates: the next ID token names a key the set in hand does not have.
      await p.rotate();
      await signedIn(h, "ada");
      expect(p.jwksRequests.length).toBe(2);
      await signedIn(h, "kim");
      expect(p.jwksRequests.length).toBe(2);

      // A token naming a key the provider never had is refused; within 10 s of the last such fetch nothing is asked.
      p.forge = "unknown-key";
      await expectRefused(await ssoSignIn(h, "ada"), 401, "token_signature");
      await expectRefused(await ssoSignIn(h, "kim"), 401, "token_signature");
      expect(p.jwksRequests.length).toBe(2);
    } finally {
      await p.close();
    }
  });

  test("max-age honoured to the second; no-cache revalidates with the ETag (304) at each use; a provider that says nothing is kept 5 minutes", async () => {
    const { p, h } = await fresh({ "cache-control": "no-cache", etag: '"v1"' });
    try {
      await signedIn(h, "ada");
      await signedIn(h, "kim");
      expect(p.jwksRequests).toEqual([
        { status: 200, ifNoneMatch: null },
        { status: 304, ifNoneMatch: '"v1"' },
      ]);
      // Now fresh for one second: asked again only after it.
      p.jwksHeaders = { "cache-control": "max-age=1", etag: '"v1"' };
      await signedIn(h, "ada");
      expect(p.jwksRequests.length).toBe(3);
      await signedIn(h, "kim");
      expect(p.jwksRequests.length).toBe(3);
      await Bun.sleep(1100);
      await signedIn(h, "ada");
      expect(p.jwksRequests.length).toBe(4);
    } finally {
      await p.close();
    }
    const silent = await fresh({});
    try {
      await signedIn(silent.h, "ada");
      await Bun.sleep(1100);
      await signedIn(silent.h, "kim");
      expect(silent.p.jwksRequests.length).toBe(1);
    } finally {
      await silent.p.close();
    }
  });

  test("back-channel logout tokens: the same key set; a replayed token, a null event, or a provider session of someone else end nothing", async () => {
    const { p, h } = await fresh({ "cache-control": "max-age=600" });
    const server = Bun.serve({ hostname: "127.0.0.1", port: 0, fetch: (r) => h.app.handle(r) });
    try {
      const kim = await signedIn(h, "kim");
      const ada = await signedIn(h, "ada");
      const post = (token: string) =>
        h.req("POST", "/v1/auth/oidc/sso/backchannel-logout", { body: new URLSearchParams({ logout_token: token }).toString(), headers: { "content-type": "application/x-www-form-urlencoded" } });
      const base = { iss: p.issuer, aud: p.clientId, events: { "http://schemas.openid.net/event/backchannel-logout": {} } };
      const nullEvent = await post(await p.sign({ ...base, sub: "kim", jti: "j0", events: { "http://schemas.openid.net/event/backchannel-logout": null } }));
      expect(nullEvent.status).toBe(400);
      expect((await json(nullEvent)).error_description).toContain("no back-channel logout event");
      // Both sid and sub: only that person's sessions of that provider session (kim has none with this sid).
      expect((await post(await p.sign({ ...base, sub: "kim", sid: "a-sid-of-someone-else", jti: "j1" }))).status).toBe(200);
      expect((await current(h, kim.session!)).user.email).toBe("kim@example.com");

      const token = await p.sign({ ...base, sub: "kim", jti: "j2" });
      expect((await post(token)).status).toBe(200);
      expect((await h.req("GET", "/v1/auth/sessions/current", { headers: { cookie: kim.session! } })).status).toBe(401);
      const again = await post(token);
      expect(again.status).toBe(400);
      expect((await json(again)).error_description).toContain("used already");
      expect((await current(h, ada.session!)).user.email).toBe("ada@example.com");
      // Sign-ins and logout tokens read one key set.
      expect(p.jwksRequests.length).toBe(1);
    } finally {
      server.stop(true);
      await p.close();
    }
  });
});
