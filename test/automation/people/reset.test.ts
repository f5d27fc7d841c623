// Password reset links through HTTP (issue 37): an admin makes one for a member (an owner for an
// owner), it shows a form, sets a new password under the usual rules, ends every session of the user,
// and works once (409 link_used, 400 link_expired, 404 link_unknown).
// Runs on SQLite, and on PostgreSQL with AUTOMATION_TEST_DB=postgres.
import { describe, expect, test } from "bun:test";
import { json } from "../app/harness";
import { resetLink, setRole } from "../../../src/automation/people/service";
import { as, PASSWORD, peopleHarness, signIn } from "./support";

const NEW_PASSWORD = "staple-orbit-lantern-42";

async function issue(r: Response) {
  return (await json(r)).issues[0];
}

describe("password reset links", () => {
  test("an admin's link for a member: a form, a new password, every old session ended, once", async () => {
    const { h, person } = await peopleHarness();
    const admin = await person("admin");
    const rita = await person("reviewer");
    const ritaElsewhere = await signIn(h, rita.email, PASSWORD);

    const made = await as(h, admin, "POST", `/v1/members/${rita.userId}/reset-link`);
    expect(made.status).toBe(201);
    expect(made.headers.get("cache-control")).toBe("no-store");
    const body = await json(made);
    expect(body).toMatchObject({ userId: rita.userId, email: rita.email });
    expect(Date.parse(body.expiresAt) - h.clock.now().getTime()).toBe(3600_000);
    const link = new URL(body.link);
    expect(link.pathname).toBe("/v1/auth/reset");
    const token = link.searchParams.get("token")!;
    // Only its hash is stored.
    expect(await h.ctx.storage.people.findInvitation(token, h.clock.now().toISOString())).toBeUndefined();

    const form = await h.req("GET", `/v1/auth/reset?token=${token}`);
    expect(form.status).toBe(200);
    expect(form.headers.get("content-type")).toStartWith("text/html");
    const html = await form.text();
    expect(html).toContain(rita.email);
    expect(html).toContain('name="password"');

    // The same rules as any password; a refused one writes nothing and the link still works.
    const weak = await h.req("POST", "/v1/auth/reset", { body: { token, password: "Password1234!" } });
    expect(weak.status).toBe(400);
    expect((await issue(weak)).code).toBe("password_too_common");
    expect((await as(h, rita, "GET", "/v1/auth/check")).status).toBe(200);

    const done = await h.req("POST", "/v1/auth/reset", { body: { token, password: NEW_PASSWORD } });
    expect(done.status).toBe(200);
    expect(await json(done)).toMatchObject({ user: { id: rita.userId, email: rita.email }, sessionsEnded: 2 });
    // Both of her sessions ended; the old password no longer works, the new one does.
    expect((await as(h, rita, "GET", "/v1/auth/check")).status).toBe(401);
    expect((await as(h, ritaElsewhere, "GET", "/v1/auth/check")).status).toBe(401);
    expect((await h.req("POST", "/v1/auth/sessions", { body: { email: rita.email, password: PASSWORD } })).status).toBe(401);
    await signIn(h, rita.email, NEW_PASSWORD);

    const again = await h.req("POST", "/v1/auth/reset", { body: { token, password: "another-long-passphrase-7" } });
    expect(again.status).toBe(409);
    expect((await issue(again)).code).toBe("link_used");
    expect((await h.req("GET", `/v1/auth/reset?token=${token}`)).status).toBe(404);
    const unknown = await h.req("POST", "/v1/auth/reset", { body: { token: "nope", password: NEW_PASSWORD } });
    expect(unknown.status).toBe(404);
    expect((await issue(unknown)).code).toBe("link_unknown");
  });

  test("a form POST answers a page; an expired link → 400 link_expired; a link of another kind is unknown here", async () => {
    const { h, deps, person } = await peopleHarness();
    const dev = await person("developer");
    const first = await resetLink(deps, dev.email);
    const r = await h.req("POST", "/v1/auth/reset", {
      body: new URLSearchParams({ token: first.token, password: NEW_PASSWORD }).toString(),
      headers: { "content-type": "application/x-www-form-urlencoded" },
    });
    expect(r.status).toBe(200);
    expect(r.headers.get("content-type")).toStartWith("text/html");
    expect(await r.text()).toContain("Password changed");

    const late = await resetLink(deps, dev.userId);
    h.clock.advance(3600_000 + 1);
    const expired = await h.req("POST", "/v1/auth/reset", { body: { token: late.token, password: "yet-another-passphrase-9" } });
    expect(expired.status).toBe(400);
    expect((await issue(expired)).code).toBe("link_expired");
    await signIn(h, dev.email, NEW_PASSWORD);

    // A reset token makes no member on the invitation route, and an invitation resets no password.
    const reset = await resetLink(deps, dev.email);
    const asInvite = await h.req("POST", "/v1/auth/invitations/accept", { body: { token: reset.token, name: "X", password: NEW_PASSWORD } });
    expect(asInvite.status).toBe(404);
    const inv = await as(h, await person("owner"), "POST", "/v1/members/invitations", { body: { email: "new@example.com", role: "viewer" } });
    const invToken = new URL((await json(inv)).link).searchParams.get("token")!;
    expect((await h.req("POST", "/v1/auth/reset", { body: { token: invToken, password: NEW_PASSWORD } })).status).toBe(404);
  });

  test("two redemptions racing: one sets the password, the other is told the link was used", async () => {
    const { h, deps, person } = await peopleHarness();
    const dev = await person("developer");
    const { token } = await resetLink(deps, dev.email);
    const answers = await Promise.all(["first-long-passphrase-1", "second-long-passphrase-2"].map((password) => h.req("POST", "/v1/auth/reset", { body: { token, password } })));
    expect(answers.map((r) => r.status).sort()).toEqual([200, 409]);
    const won = answers.findIndex((r) => r.status === 200) === 0 ? "first-long-passphrase-1" : "second-long-passphrase-2";
    await signIn(h, dev.email, won);
  });

  test("who may make one: members:write, an owner for an owner, only members of this tenant alone", async () => {
    const { h, deps, person } = await peopleHarness();
    const admin = await person("admin");
    const owner = await person("owner");
    const viewer = await person("viewer");
    const other = await person("developer");

    const byViewer = await as(h, viewer, "POST", `/v1/members/${other.userId}/reset-link`);
    expect(byViewer.status).toBe(403);
    expect((await issue(byViewer)).code).toBe("insufficient_scope");
    const ownerByAdmin = await as(h, admin, "POST", `/v1/members/${owner.userId}/reset-link`);
    expect(ownerByAdmin.status).toBe(403);
    expect((await as(h, owner, "POST", `/v1/members/${owner.userId}/reset-link`)).status).toBe(201);
    expect((await as(h, owner, "POST", `/v1/members/${admin.userId}/reset-link`)).status).toBe(201);
    expect((await as(h, admin, "POST", "/v1/members/usr_nobody/reset-link")).status).toBe(404);

    // A member of another tenant too: its admin here cannot reset a password that opens the other.
    await h.tenant("globex");
    await setRole(deps, other.userId, "globex", "owner");
    const elsewhere = await as(h, admin, "POST", `/v1/members/${other.userId}/reset-link`);
    expect(elsewhere.status).toBe(403);
    expect((await issue(elsewhere)).code).toBe("member_elsewhere");
    // Someone of another tenant only is not a member here.
    const stranger = await person("viewer", "globex");
    expect((await as(h, owner, "POST", `/v1/members/${stranger.userId}/reset-link`)).status).toBe(404);
    // The operator (CLI: no tenant) may.
    expect((await resetLink(deps, other.email)).token).toBeString();
  });
});
