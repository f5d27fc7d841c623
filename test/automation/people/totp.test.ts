// The TOTP second factor through HTTP (issue 37): enroll, confirm, sign-in asks for a code, wrong and
// replayed codes, removal, and the tenant's requirement. Codes are computed here by RFC 6238 itself
// (HMAC-SHA1 over the 30 s step, dynamic truncation, 6 digits) with node:crypto, not with the library
// the server uses, so the test checks the server against the standard.
// Runs on SQLite, and on PostgreSQL with AUTOMATION_TEST_DB=postgres.
import { describe, expect, test } from "bun:test";
import { createHmac } from "node:crypto";
import { json, type Harness } from "../app/harness";
import { as, PASSWORD, peopleHarness, type Person } from "./support";

function base32(s: string): Buffer {
  const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567";
  let bits = "";
  for (const c of s.replace(/=+$/, "")) bits += alphabet.indexOf(c).toString(2).padStart(5, "0");
  const out: number[] = [];
  for (let i = 0; i + 8 <= bits.length; i += 8) out.push(parseInt(bits.slice(i, i + 8), 2));
  return Buffer.from(out);
}

/** RFC 6238 (SHA-1, 30 s, 6 digits) at `ms`, `offset` steps away. */
function code(secret: string, ms: number, offset = 0): string {
  const step = Math.floor(ms / 30_000) + offset;
  const msg = Buffer.alloc(8);
  msg.writeBigUInt64BE(BigInt(step));
  const mac = createHmac("sha1", base32(secret)).update(msg).digest();
  const at = mac[mac.length - 1]! & 0xf;
  return String((mac.readUInt32BE(at) & 0x7fffffff) % 1_000_000).padStart(6, "0");
}

const signInBody = (p: Person, extra: Record<string, unknown> = {}) => ({ body: { email: p.email, password: PASSWORD, ...extra } });

async function issue(r: Response) {
  return (await json(r)).issues[0];
}

/** Enrolls and confirms a second factor for `p`: its secret. */
async function enrolled(h: Harness, p: Person): Promise<string> {
  const e = await as(h, p, "POST", "/v1/auth/totp/enroll");
  expect(e.status).toBe(200);
  const { secret } = await json(e);
  const ok = await as(h, p, "POST", "/v1/auth/totp/confirm", { body: { code: code(secret, h.clock.now().getTime()) } });
  expect(ok.status).toBe(200);
  return secret;
}

describe("TOTP second factor", () => {
  test("enroll gives a base32 secret and an otpauth URI; a wrong code does not confirm it, the right one does", async () => {
    const { h, person } = await peopleHarness();
    const p = await person("developer");
    const e = await as(h, p, "POST", "/v1/auth/totp/enroll");
    expect(e.status).toBe(200);
    expect(e.headers.get("cache-control")).toBe("no-store");
    const body = await json(e);
    expect(body.secret).toMatch(/^[A-Z2-7]{32}$/);
    const uri = new URL(body.uri);
    expect(uri.protocol).toBe("otpauth:");
    expect(decodeURIComponent(body.uri)).toContain(`Automation server:${p.email}`);
    expect(uri.searchParams.get("secret")).toBe(body.secret);
    expect(uri.searchParams.get("issuer")).toBe("Automation server");
    expect(await json(await as(h, p, "GET", "/v1/auth/totp"))).toEqual({ enabled: false, pending: true, required: false });

    // Stored sealed, never as the plain secret.
    const row = await h.ctx.storage.people.totp(p.userId);
    expect(row.pending).toStartWith("v1:");
    expect(row.pending).not.toContain(body.secret);

    const now = h.clock.now().getTime();
    const wrong = await as(h, p, "POST", "/v1/auth/totp/confirm", { body: { code: code(body.secret, now, 5) } });
    expect(wrong.status).toBe(400);
    expect((await issue(wrong)).code).toBe("invalid_code");
    const malformed = await as(h, p, "POST", "/v1/auth/totp/confirm", { body: { code: "12ab56" } });
    expect(malformed.status).toBe(400);
    // Until confirmed, sign-in asks for no code.
    expect((await h.req("POST", "/v1/auth/sessions", signInBody(p))).status).toBe(201);

    const ok = await as(h, p, "POST", "/v1/auth/totp/confirm", { body: { code: code(body.secret, now) } });
    expect(ok.status).toBe(200);
    expect(await json(ok)).toEqual({ enabled: true, pending: false, required: false });
    // A second enrollment while one is set is refused (replacing it would need no code).
    const again = await as(h, p, "POST", "/v1/auth/totp/enroll");
    expect(again.status).toBe(409);
    expect((await issue(again)).code).toBe("totp_enabled");
  });

  test("sign-in: no code → 401 totp_required, wrong → 401 invalid_code, ±1 step accepted once, a reused code refused", async () => {
    const { h, person } = await peopleHarness();
    const p = await person("reviewer");
    const secret = await enrolled(h, p);

    const missing = await h.req("POST", "/v1/auth/sessions", signInBody(p));
    expect(missing.status).toBe(401);
    expect(await issue(missing)).toMatchObject({ field: "totp", code: "totp_required" });
    // The code is asked only after the password: a wrong password still says so.
    const badPassword = await h.req("POST", "/v1/auth/sessions", { body: { email: p.email, password: "not the password at all", totp: "123456" } });
    expect((await issue(badPassword)).code).toBe("unauthorized");

    h.clock.advance(60_000);
    let now = h.clock.now().getTime();
    const wrong = await h.req("POST", "/v1/auth/sessions", signInBody(p, { totp: code(secret, now, 3) }));
    expect(wrong.status).toBe(401);
    expect(await issue(wrong)).toMatchObject({ field: "totp", code: "invalid_code" });

    // One step behind (a phone's clock lagging) is accepted, spaces and all.
    const behind = code(secret, now, -1);
    const ok = await h.req("POST", "/v1/auth/sessions", signInBody(p, { totp: `${behind.slice(0, 3)} ${behind.slice(3)}` }));
    expect(ok.status).toBe(201);
    expect(ok.headers.get("set-cookie")).toContain("automation_session=");
    // The same code again, within its window: refused.
    const replay = await h.req("POST", "/v1/auth/sessions", signInBody(p, { totp: behind }));
    expect(replay.status).toBe(401);
    expect((await issue(replay)).code).toBe("invalid_code");
    // A code of an earlier step than the last used one is refused too; the current one works.
    expect((await h.req("POST", "/v1/auth/sessions", signInBody(p, { totp: code(secret, now, -1) }))).status).toBe(401);
    expect((await h.req("POST", "/v1/auth/sessions", signInBody(p, { totp: code(secret, now) }))).status).toBe(201);
    // Two steps ahead is outside the window.
    h.clock.advance(30_000);
    now = h.clock.now().getTime();
    expect((await h.req("POST", "/v1/auth/sessions", signInBody(p, { totp: code(secret, now, 2) }))).status).toBe(401);
    expect((await h.req("POST", "/v1/auth/sessions", signInBody(p, { totp: code(secret, now, 1) }))).status).toBe(201);
  });

  test("two sign-ins racing with the same code: one session, the other refused", async () => {
    const { h, person } = await peopleHarness();
    const p = await person("developer");
    const secret = await enrolled(h, p);
    h.clock.advance(30_000);
    const c = code(secret, h.clock.now().getTime());
    const answers = await Promise.all([1, 2, 3].map(() => h.req("POST", "/v1/auth/sessions", signInBody(p, { totp: c }))));
    expect(answers.map((r) => r.status).sort()).toEqual([201, 401, 401]);
  });

  test("wrong codes count as failed sign-ins: 10 for one account → 429", async () => {
    const { h, person } = await peopleHarness();
    const p = await person("viewer");
    const secret = await enrolled(h, p);
    const now = h.clock.now().getTime();
    for (let i = 0; i < 10; i++) {
      const r = await h.req("POST", "/v1/auth/sessions", signInBody(p, { totp: code(secret, now, 4 + i) }));
      expect(r.status).toBe(i < 9 ? 401 : 429);
    }
    // Even the right code is refused while throttled.
    const right = await h.req("POST", "/v1/auth/sessions", signInBody(p, { totp: code(secret, now) }));
    expect(right.status).toBe(429);
    expect(Number(right.headers.get("retry-after"))).toBeGreaterThan(0);
  });

  test("removing the second factor needs a current code; after it sign-in asks for none", async () => {
    const { h, person } = await peopleHarness();
    const p = await person("admin");
    const secret = await enrolled(h, p);
    h.clock.advance(30_000);
    const now = h.clock.now().getTime();
    const wrong = await as(h, p, "DELETE", "/v1/auth/totp", { body: { code: code(secret, now, 4) } });
    expect(wrong.status).toBe(400);
    expect((await issue(wrong)).code).toBe("invalid_code");
    const none = await as(h, p, "DELETE", "/v1/auth/totp", { body: {} });
    expect(none.status).toBe(400);
    const ok = await as(h, p, "DELETE", "/v1/auth/totp", { body: { code: code(secret, now) } });
    expect(ok.status).toBe(200);
    expect(await json(ok)).toEqual({ enabled: false, pending: false, required: false });
    expect((await h.req("POST", "/v1/auth/sessions", signInBody(p))).status).toBe(201);
    const gone = await as(h, p, "DELETE", "/v1/auth/totp", { body: { code: code(secret, now) } });
    expect(gone.status).toBe(404);
    // API keys have no second factor to manage.
    const byKey = await h.req("POST", "/v1/auth/totp/enroll", { key: (await h.tenant("other")).key });
    expect(byKey.status).toBe(403);
    expect((await issue(byKey)).code).toBe("not_a_session");
  });

  test("an owner requires a second factor: members without one sign in to a session that may only enroll", async () => {
    const { h, person } = await peopleHarness();
    const owner = await person("owner");
    const admin = await person("admin");
    const dev = await person("developer");

    // Only an owner sets it; admins read it.
    expect((await as(h, admin, "PUT", "/v1/tenant/settings", { body: { requireTotp: true } })).status).toBe(403);
    expect(await json(await as(h, admin, "GET", "/v1/tenant/settings"))).toEqual({ requireTotp: false });
    const bad = await as(h, owner, "PUT", "/v1/tenant/settings", { body: { requireTotp: "yes" } });
    expect(bad.status).toBe(400);
    const set = await as(h, owner, "PUT", "/v1/tenant/settings", { body: { requireTotp: true } });
    expect(set.status).toBe(200);
    expect(await json(set)).toEqual({ requireTotp: true });

    // An open session of someone without a second factor is held at enrollment from the next request.
    const held = await as(h, dev, "GET", "/v1/automations");
    expect(held.status).toBe(403);
    expect((await issue(held)).code).toBe("totp_enrollment_required");
    // Keys are not people: unaffected.
    expect((await h.req("GET", "/v1/automations", { key: await h.key("acme", ["automations:read"]) })).status).toBe(200);

    // A fresh sign-in works (nobody is locked out) and says what is needed.
    const r = await h.req("POST", "/v1/auth/sessions", signInBody(dev));
    expect(r.status).toBe(201);
    expect((await json(r)).totpEnrollmentRequired).toBe(true);
    const fresh: Person = { ...dev, cookie: r.headers.get("set-cookie")!.split(";")[0]! };
    expect((await as(h, fresh, "GET", "/v1/runs")).status).toBe(403);
    expect((await as(h, fresh, "GET", "/v1/auth/check")).status).toBe(200);
    // The console's reload (its CSRF token and role) and My sessions work while held, under either prefix.
    expect((await as(h, fresh, "GET", "/v1/auth/sessions/current")).status).toBe(200);
    expect((await as(h, fresh, "GET", "/api/v1/auth/sessions/current")).status).toBe(200);
    expect((await as(h, fresh, "GET", "/v1/auth/sessions")).status).toBe(200);
    expect((await as(h, fresh, "GET", "/api/v1/runs")).status).toBe(403);
    expect(await json(await as(h, fresh, "GET", "/v1/auth/totp"))).toEqual({ enabled: false, pending: false, required: true });
    const secret = await enrolled(h, fresh);
    // Confirmed: the same session may now do what the role may.
    expect((await as(h, fresh, "GET", "/v1/automations")).status).toBe(200);
    const next = await h.req("POST", "/v1/auth/sessions", signInBody(dev, { totp: code(secret, h.clock.now().getTime() + 30_000) }));
    expect(next.status).toBe(201);
    expect((await json(next)).totpEnrollmentRequired).toBeUndefined();

    // The owner too was held (no second factor), and can still turn the requirement off after enrolling.
    expect((await as(h, owner, "PUT", "/v1/tenant/settings", { body: { requireTotp: false } })).status).toBe(403);
    await enrolled(h, owner);
    expect((await as(h, owner, "PUT", "/v1/tenant/settings", { body: { requireTotp: false } })).status).toBe(200);
    expect((await as(h, admin, "GET", "/v1/automations")).status).toBe(200);
  });
});
