// The people store's contract on both backends (same answers) and its races: an invitation redeemed
// once when redemptions race, an e-mail taken once (any case) when creates race, one first owner when
// setup links race, and sign-in failures counted in the database across two storages (two instances).
import { afterAll, describe, expect, test } from "bun:test";
import type { InvitationRow, UserRow } from "../../../src/automation/people/store";
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
