// "My sessions" (issue 37): a person lists their live sessions (the current one marked, with the
// client each signed in from), ends one of them, and reads the current one (the console's CSRF token and
// role after a reload). API keys have no sessions: 403 not_a_session. Runs on SQLite, and on PostgreSQL
// with AUTOMATION_TEST_DB=postgres.
import { describe, expect, test } from "bun:test";
import { json, type Json } from "../app/harness";
import { as, PASSWORD, peopleHarness, signIn } from "./support";

describe("my sessions", () => {
  test("list (current marked, user agent kept), end one of mine, another's is a 404", async () => {
    const { h, t, person } = await peopleHarness();
    const laptop = await signIn(h, (await person("developer")).email, PASSWORD, { "user-agent": "Laptop/1.0" });
    h.clock.advance(1000);
    const phone = await signIn(h, laptop.email, PASSWORD, { "user-agent": "Phone/2.0" });

    const list = await as(h, laptop, "GET", "/v1/auth/sessions");
    expect(list.status).toBe(200);
    const data = (await json(list)).data as Json[];
    // The first sign-in (by `person`) is a session of this person too.
    expect(data.length).toBe(3);
    expect(data.filter((s) => s.current).length).toBe(1);
    const mine = data.find((s) => s.current)!;
    expect(mine).toMatchObject({ userAgent: "Laptop/1.0" });
    expect(data[0]).toMatchObject({ userAgent: "Phone/2.0", current: false });
    for (const s of data) {
      expect(s.id).toStartWith("ses_");
      expect(Object.keys(s).sort()).toEqual(["address", "createdAt", "current", "expiresAt", "id", "lastSeenAt", "userAgent"]);
    }
    // Nothing secret in the list.
    expect(JSON.stringify(data)).not.toContain(laptop.cookie.split("=")[1]!);
    expect(JSON.stringify(data)).not.toContain(laptop.csrf);

    const phoneId = data[0]!.id;
    const ended = await as(h, laptop, "DELETE", `/v1/auth/sessions/${phoneId}`);
    expect(ended.status).toBe(204);
    expect((await as(h, phone, "GET", "/v1/auth/sessions")).status).toBe(401);
    expect((await json(await as(h, laptop, "GET", "/v1/auth/sessions"))).data.length).toBe(2);
    expect((await as(h, laptop, "DELETE", `/v1/auth/sessions/${phoneId}`)).status).toBe(404);

    // Another person's session is not mine to end (and not named in my list).
    const other = await person("viewer");
    const theirs = (await json(await as(h, other, "GET", "/v1/auth/sessions"))).data[0].id;
    const refused = await as(h, laptop, "DELETE", `/v1/auth/sessions/${theirs}`);
    expect(refused.status).toBe(404);
    expect((await as(h, other, "GET", "/v1/auth/sessions")).status).toBe(200);

    // API keys have no sessions.
    for (const [method, path] of [["GET", "/v1/auth/sessions"], ["GET", "/v1/auth/sessions/current"], ["DELETE", `/v1/auth/sessions/${theirs}`]] as const) {
      const r = await h.req(method, path, { key: (await h.tenant(`k${Math.random().toString(36).slice(2, 8)}`)).key });
      expect({ path, status: r.status }).toEqual({ path, status: 403 });
      const issue = (await json(r)).issues[0];
      expect(issue.code).toBe("not_a_session");
      expect(issue.message).toContain("sessions belong to people");
    }
    expect(t.slug).toBe("acme");
  });

  test("the current session: who, where, the role, its scopes and the CSRF token the sign-in gave", async () => {
    const { h, t, person } = await peopleHarness();
    const rita = await person("reviewer");
    const r = await as(h, rita, "GET", "/v1/auth/sessions/current");
    expect(r.status).toBe(200);
    expect(r.headers.get("cache-control")).toBe("no-store");
    const cur = await json(r);
    expect(cur).toMatchObject({
      user: { id: rita.userId, email: rita.email, name: "Person 1" },
      tenant: { id: t.id, slug: "acme", name: "acme" },
      role: "reviewer",
      csrfToken: rita.csrf,
      createdAt: h.clock.now().toISOString(),
      expiresAt: new Date(h.clock.now().getTime() + 7 * 24 * 3600_000).toISOString(),
    });
    expect(cur.scopes).toContain("reviews:write");
    const listed = (await json(await as(h, rita, "GET", "/v1/auth/sessions"))).data as Json[];
    expect(listed.find((s) => s.current)!.id).toBe(cur.id);
    // Signed out: the current session is gone.
    expect((await as(h, rita, "DELETE", "/v1/auth/sessions/current")).status).toBe(204);
    expect((await as(h, rita, "GET", "/v1/auth/sessions/current")).status).toBe(401);
  });

  test("sessions past their idle expiry are not listed", async () => {
    const { h, person } = await peopleHarness();
    const p = await person("viewer");
    h.clock.advance(11 * 3600_000);
    const fresh = await signIn(h, p.email, PASSWORD);
    h.clock.advance(2 * 3600_000);
    const data = (await json(await as(h, fresh, "GET", "/v1/auth/sessions"))).data as Json[];
    expect(data.map((s) => s.current)).toEqual([true]);
  });
});
