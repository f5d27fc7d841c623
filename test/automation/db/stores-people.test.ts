// The people store's contract on both backends (same answers) and its races: an invitation redeemed
// once when redemptions race, an e-mail taken once (any case) when creates race, one first owner when
// setup links race, and sign-in failures counted in the database across two storages (two instances).
// On PostgreSQL, session lookups remembered in memory: every change that ends a session or changes
// what it may do, made through one instance's store, is seen by another instance at once.
import { afterAll, describe, expect, test } from "bun:test";
import { openStorage, type OpenedStorage } from "../../../src/automation/db/open";
import { SESSION_CACHE_MS } from "../../../src/automation/db/pg/people";
import type { InvitationRow, UserRow } from "../../../src/automation/people/store";
import { freshPostgresDb } from "../../support/postgres";
import { bothIn, type Backend } from "./backends";

const opened: Backend[] = [];
afterAll(async () => {
  for (const b of opened) await b.close();
});
const onBoth = bothIn(opened, async (b) => {
  await b.storage.tenancy.createTenant(
    { id: "ten_a", slug: "acme", name: "Acme", createdAt: at(0) },
    { id: "key_a", tenantId: "ten_a", name: null, hash: "h-a", hint: "a", scopes: '["*"]', createdAt: at(0), lastUsedAt: null, revokedAt: null },
  );
});

const T0 = Date.parse("2026-11-25T10:00:00.000Z");
const at = (s: number) => new Date(T0 + s * 1000).toISOString();
const user = (id: string, email: string): UserRow => ({ id, email, emailKey: email.toLowerCase(), name: id, status: "active", passwordHash: null, createdAt: at(1) });
const link = (id: string, o: Partial<InvitationRow> = {}): InvitationRow => ({
  id,
  hash: `hash-${id}`,
  kind: "invite",
  email: "rita@example.com",
  tenantId: "ten_a",
  role: "reviewer",
  createdAt: at(1),
  expiresAt: at(3600),
  usedAt: null,
  ...o,
});

describe("people store on SQLite and PostgreSQL", () => {
  test("users, memberships, sessions and their lookup answer alike", async () => {
    const out = await onBoth(async (b) => {
      const p = b.storage.people;
      expect(await p.countUsers()).toBe(0);
      expect(await p.createUser(user("usr_1", "Ann@Example.com"), { tenantId: "ten_a", role: "admin", createdAt: at(1) })).toBe("ok");
      expect(await p.createUser(user("usr_2", "ann@example.COM"))).toBe("email_taken");
      expect((await p.findUser("ANN@example.com"))?.id).toBe("usr_1");
      await p.addSession({ id: "ses_1", hash: "sh1", userId: "usr_1", tenantId: "ten_a", csrf: "c", createdAt: at(2), lastSeenAt: at(2), expiresAt: at(1000) });
      const live = await p.session("sh1", at(10), 60_000);
      const idle = await p.session("sh1", at(100), 60_000);
      const past = await p.session("sh1", at(1000), 10_000_000);
      expect(await p.setRole("usr_1", "ten_a", "viewer", at(3))).toBe("ok");
      expect(await p.setRole("usr_x", "ten_a", "viewer", at(3))).toBe("no_user");
      const role = (await p.session("sh1", at(10), 60_000))?.role;
      await p.setStatus("usr_1", "disabled");
      const afterDisable = await p.session("sh1", at(10), 60_000);
      return { live: live && { role: live.role, tenant: live.tenant.slug, email: live.user.email }, idle, past, role, afterDisable, users: (await p.listUsers("ten_a")).length };
    });
    expect(out.sqlite).toEqual(out.postgres);
    expect(out.sqlite).toMatchObject({ live: { role: "admin", tenant: "acme", email: "Ann@Example.com" }, role: "viewer", users: 1 });
    expect(out.sqlite.idle).toBeUndefined();
    expect(out.sqlite.past).toBeUndefined();
    expect(out.sqlite.afterDisable).toBeUndefined();
  });

  test("an SSO session is written with its provider record in one transaction: when the record fails, there is no session", async () => {
    const out = await onBoth(async (b) => {
      const p = b.storage.people;
      expect(await p.createUser(user("usr_s", "sso@example.com"), { tenantId: "ten_a", role: "reviewer", createdAt: at(1) })).toBe("ok");
      const session = (id: string) => ({ id, hash: `h-${id}`, userId: "usr_s", tenantId: "ten_a", csrf: "c", createdAt: at(2), lastSeenAt: at(2), expiresAt: at(1000) });
      const sso = (sessionId: string) => ({ sessionId, provider: "sso", issuer: "https://op.example", subject: "s1", sid: "sid1", refreshToken: null, idToken: null, checkedAt: at(2), createdAt: at(2) });
      await p.addSession(session("ses_ok"), sso("ses_ok"));
      // The record names a session that does not exist (its foreign key fails): the session goes too.
      const failed = await p.addSession(session("ses_bad"), sso("ses_missing")).then(() => "written", () => "refused");
      return {
        ok: (await p.session("h-ses_ok", at(10), 60_000))?.session.id,
        record: (await p.ssoSession("ses_ok"))?.sid,
        failed,
        bad: await p.session("h-ses_bad", at(10), 60_000),
      };
    });
    expect(out.sqlite).toEqual(out.postgres);
    expect(out.sqlite).toEqual({ ok: "ses_ok", record: "sid1", failed: "refused", bad: undefined });
  });

  test("racing redemptions use a link once; used, expired and unknown links say so and write nothing", async () => {
    const out = await onBoth(async (b) => {
      const p = b.storage.people;
      const peer = b.peer().people;
      await p.addInvitation(link("inv_1"));
      const outcomes = await Promise.all([p.redeem("hash-inv_1", at(2), user("usr_a", "rita@example.com")), peer.redeem("hash-inv_1", at(2), user("usr_b", "rita@example.com"))]);
      await p.addInvitation(link("inv_2", { email: "late@example.com" }));
      const expired = await p.redeem("hash-inv_2", at(4000), user("usr_c", "late@example.com"));
      const unknown = await p.redeem("nope", at(2), user("usr_d", "x@example.com"));
      return { outcomes: outcomes.map((o) => o.outcome).sort(), again: (await p.redeem("hash-inv_1", at(3), user("usr_e", "rita@example.com"))).outcome, expired: expired.outcome, unknown: unknown.outcome, users: await p.countUsers() };
    });
    expect(out.sqlite).toEqual(out.postgres);
    expect(out.sqlite).toEqual({ outcomes: ["ok", "used"], again: "used", expired: "expired", unknown: "unknown", users: 1 });
  });

  test("two setup links racing make one first owner; failures are counted across instances", async () => {
    const out = await onBoth(async (b) => {
      const p = b.storage.people;
      const peer = b.peer().people;
      await p.addInvitation(link("inv_s1", { kind: "setup", email: null, tenantId: null, role: null }));
      await peer.addInvitation(link("inv_s2", { kind: "setup", email: null, tenantId: null, role: null, hash: "hash-inv_s2" }));
      const tenant = { id: "ten_new", slug: "new", name: "New", createdAt: at(1) };
      const outcomes = await Promise.all([p.redeem("hash-inv_s1", at(2), user("usr_o1", "o1@example.com"), tenant), peer.redeem("hash-inv_s2", at(2), user("usr_o2", "o2@example.com"), { ...tenant, id: "ten_new2" })]);
      const nowMs = T0 + 10_000;
      await Promise.all([p.addFailure(["account:a", "address:1"], nowMs, 60_000), peer.addFailure(["account:a", "address:1"], nowMs, 60_000), p.addFailure(["address:1"], nowMs, 60_000)]);
      const counts = (await peer.failures(["account:a", "address:1", "address:2"], nowMs + 1000, 60_000)).map((c) => c.failures);
      const later = (await p.failures(["account:a"], nowMs + 61_000, 60_000)).map((c) => c.failures);
      return { outcomes: outcomes.map((o) => o.outcome).sort(), users: await p.countUsers(), counts, later };
    });
    expect(out.sqlite).toEqual(out.postgres);
    expect(out.sqlite.users).toBe(1);
    expect(out.sqlite.counts).toEqual([2, 3, 0]);
    expect(out.sqlite.later).toEqual([0]);
  });
});

describe("session lookups remembered on PostgreSQL, across instances", () => {
  const instances: OpenedStorage[] = [];
  afterAll(async () => {
    for (const i of instances.splice(0)) await i.close();
  });
  const NOW = at(10);
  const IDLE = 12 * 3600_000;

  test(`each change on instance A is seen by instance B at its next lookup after the notification; a silent change is remembered at most ${SESSION_CACHE_MS / 1000} s`, async () => {
    const url = await freshPostgresDb();
    const a = await openStorage({ dataDir: ":memory:", db: url, dbPool: 4 });
    const b = await openStorage({ dataDir: ":memory:", db: url, dbPool: 4 });
    instances.push(a, b);
    const pa = a.storage.people;
    const pb = b.storage.people;
    await a.storage.tenancy.createTenant(
      { id: "ten_a", slug: "acme", name: "Acme", createdAt: at(0) },
      { id: "key_a", tenantId: "ten_a", name: null, hash: "h-a", hint: "a", scopes: '["*"]', createdAt: at(0), lastUsedAt: null, revokedAt: null },
    );
    for (const u of ["usr_1", "usr_2", "usr_3"]) expect(await pa.createUser(user(u, `${u}@example.com`), { tenantId: "ten_a", role: "developer", createdAt: at(1) })).toBe("ok");
    let n = 0;
    const session = async (userId: string) => {
      const id = `ses_${++n}`;
      await pa.addSession({ id, hash: `sh-${id}`, userId, tenantId: "ten_a", csrf: "c", createdAt: at(2), lastSeenAt: at(2), expiresAt: at(100_000) });
      return { id, hash: `sh-${id}` };
    };
    // B looks the session up until its answer is remembered: a change straight in the table (no
    // notification) is then not seen; the table is put back after each try.
    const remembered = async (hash: string) => {
      for (let i = 0; i < 200; i++) {
        expect(await pb.session(hash, NOW, IDLE)).toBeDefined();
        await a.pg!`UPDATE sessions SET expires_at = ${at(5)} WHERE hash = ${hash}`;
        const held = await pb.session(hash, NOW, IDLE);
        await a.pg!`UPDATE sessions SET expires_at = ${at(100_000)} WHERE hash = ${hash}`;
        if (held) return;
        await Bun.sleep(20);
      }
      throw new Error("the session lookup was never remembered");
    };
    /** How long B took to see `seen` after A's change (it must not take the memory's whole life). */
    const seenAfter = async (change: () => Promise<unknown>, seen: () => Promise<boolean>) => {
      const t0 = Date.now();
      await change();
      while (!(await seen())) {
        expect(Date.now() - t0).toBeLessThan(1000);
        await Bun.sleep(5);
      }
      return Date.now() - t0;
    };
    const took: Record<string, number> = {};

    // A silent change (no notification): B answers from memory, never past SESSION_CACHE_MS.
    const quiet = await session("usr_3");
    await remembered(quiet.hash);
    await a.pg!`UPDATE sessions SET expires_at = ${at(5)} WHERE hash = ${quiet.hash}`;
    // The remembered answer was read before `since`: no lookup that started SESSION_CACHE_MS after it
    // may still be served (when it ends, within the poll's interval, is only loosely bounded).
    const since = Date.now();
    let lastServed = since;
    for (;;) {
      const asked = Date.now();
      if (!(await pb.session(quiet.hash, NOW, IDLE))) break;
      lastServed = asked;
      await Bun.sleep(20);
    }
    const served = Date.now() - since;
    expect(lastServed - since).toBeLessThan(SESSION_CACHE_MS);
    expect(served).toBeLessThan(SESSION_CACHE_MS + 1000);
    // An expiry is checked on every answer from memory.
    const s0 = await session("usr_1");
    await remembered(s0.hash);
    expect(await pb.session(s0.hash, at(100_001), IDLE)).toBeUndefined();
    expect(await pb.session(s0.hash, new Date(Date.parse(at(2)) + IDLE + 1000).toISOString(), IDLE)).toBeUndefined();

    // A new role.
    await remembered(s0.hash);
    took.role = await seenAfter(
      () => pa.setRole("usr_1", "ten_a", "viewer", at(3)),
      async () => (await pb.session(s0.hash, NOW, IDLE))?.role === "viewer",
    );
    // The tenant's second-factor rule, then a factor confirmed and cleared.
    await remembered(s0.hash);
    took.tenantRule = await seenAfter(
      () => pa.setTenantSettings("ten_a", { requireTotp: true }, at(4)),
      async () => (await pb.session(s0.hash, NOW, IDLE))?.enrollTotp === true,
    );
    await pa.setTotpPending("usr_1", "sealed");
    await remembered(s0.hash);
    took.totpConfirmed = await seenAfter(
      () => pa.confirmTotp("usr_1", "sealed", 1),
      async () => (await pb.session(s0.hash, NOW, IDLE))?.enrollTotp === false,
    );
    await remembered(s0.hash);
    took.totpCleared = await seenAfter(
      () => pa.clearTotp("usr_1"),
      async () => (await pb.session(s0.hash, NOW, IDLE))?.enrollTotp === true,
    );
    await pa.setTenantSettings("ten_a", { requireTotp: false }, at(5));
    // Sessions ended: one by its owner, one signed out, all of a person, by a password reset.
    const ends: [string, string, (s: { id: string }) => Promise<unknown>][] = [
      ["endSession", "usr_1", (s) => pa.endSession("usr_1", s.id)],
      ["signOut", "usr_1", (s) => pa.deleteSession(s.id)],
      ["everywhere", "usr_1", () => pa.deleteSessions("usr_1")],
      [
        "passwordReset",
        "usr_2",
        async () => {
          await pa.addInvitation({ ...link("inv_reset"), kind: "reset", email: "usr_2@example.com", role: null });
          expect((await pa.resetPassword("hash-inv_reset", at(20), "new-hash")).outcome).toBe("ok");
        },
      ],
      ["membershipRemoved", "usr_2", () => pa.removeMembership("usr_2", "ten_a")],
      ["disabled", "usr_3", () => pa.setStatus("usr_3", "disabled")],
    ];
    for (const [name, userId, end] of ends) {
      if (name === "membershipRemoved") await pa.setRole("usr_2", "ten_a", "developer", at(21));
      const s = await session(userId);
      await remembered(s.hash);
      took[name] = await seenAfter(
        () => end(s),
        async () => (await pb.session(s.hash, NOW, IDLE)) === undefined,
      );
    }
    console.log(`[people] a silent change remembered ${served} ms (bound ${SESSION_CACHE_MS} ms); changes on A seen by B after (ms): ${JSON.stringify(took)}`);
  }, 120_000);
});
