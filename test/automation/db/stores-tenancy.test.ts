// The tenancy store's contract on both backends (same rows, same order) and its races: a slug taken
// once when creates race, a key revoked once (the first time stays) when revokes race.
// SQLite: an in-memory database; PostgreSQL: a fresh database on the test server.
import { afterAll, describe, expect, test } from "bun:test";
import type { SQL } from "bun";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { openStorage, type OpenedStorage } from "../../../src/automation/db/open";
import { KEY_CACHE_MS } from "../../../src/automation/db/pg/tenancy";
import type { ApiKeyRow } from "../../../src/automation/db/tables/foundation";
import { freshPostgresDb } from "../../support/postgres";
import { bothIn, type Backend } from "./backends";

const opened: Backend[] = [];
afterAll(async () => {
  for (const b of opened) await b.close();
});

/** Runs `body` on both backends and returns what each produced, for a cross-backend comparison. */
const onBoth = bothIn(opened);

const T0 = Date.parse("2026-11-25T10:00:00.000Z");
const at = (s: number) => new Date(T0 + s * 1000).toISOString();
const key = (id: string, tenantId: string, o: Partial<ApiKeyRow> = {}): ApiKeyRow => ({
  id,
  tenantId,
  name: null,
  hash: `hash-${id}`,
  hint: id.slice(-4),
  scopes: '["runs:read","automations:write"]',
  createdAt: at(1),
  lastUsedAt: null,
  revokedAt: null,
  createdByUser: null,
  createdByKey: null,
  expiresAt: null,
  ...o,
});

describe("tenancy store on SQLite and PostgreSQL", () => {
  test("tenants by id or slug, keys by id, the one-query key lookup (live keys only), last use, revocation", async () => {
    const out = await onBoth(async (b) => {
      const t = b.storage.tenancy;
      expect(await t.createTenant({ id: "ten_a", slug: "acme", name: "Acme", createdAt: at(0) }, key("key_a1", "ten_a", { scopes: '["*"]', name: "first key" }))).toBe("ok");
      expect(await t.createTenant({ id: "ten_b", slug: "beta", name: "Beta", createdAt: at(0) }, key("key_b1", "ten_b"))).toBe("ok");
      // A slug that is another tenant's id would make lookups ambiguous: refused like a taken slug.
      const idAsSlug = await t.createTenant({ id: "ten_c", slug: "ten_a", name: "C", createdAt: at(0) }, key("key_c1", "ten_c"));
      const { tenantId: _, ...unowned } = key("key_a0", "");
      const added = await t.addKey("acme", unowned);
      const unknown = await t.addKey("nobody", { ...unowned, id: "key_z", hash: "hash-key_z" });
      await t.touchKey("key_a1", at(60));
      const revoked = await t.revokeKey("key_a0", at(70));
      return {
        idAsSlug,
        byId: await t.findTenant("ten_a"),
        bySlug: await t.findTenant("acme"),
        none: await t.findTenant("nobody"),
        added,
        unknown,
        keys: await t.keys("ten_a"),
        live: await t.authenticate("hash-key_a1"),
        revokedLookup: await t.authenticate("hash-key_a0"),
        revoked,
        revokeUnknown: await t.revokeKey("key_nope", at(71)),
        otherTenant: (await t.keys("ten_b")).map((k) => k.id),
      };
    });
    expect(out.postgres).toEqual(out.sqlite);
    const s = out.sqlite;
    expect(s.idAsSlug).toBe("slug_taken");
    expect(s.byId).toEqual({ id: "ten_a", slug: "acme", name: "Acme", createdAt: at(0) });
    expect(s.bySlug).toEqual(s.byId);
    expect(s.none).toBeUndefined();
    expect(s.added?.tenantId).toBe("ten_a");
    expect(s.unknown).toBeUndefined();
    expect(s.keys.map((k) => k.id)).toEqual(["key_a0", "key_a1"]);
    expect(s.live?.tenant.slug).toBe("acme");
    expect(s.live?.key).toMatchObject({ id: "key_a1", scopes: '["*"]', name: "first key", lastUsedAt: at(60), revokedAt: null });
    expect(s.revokedLookup).toBeUndefined();
    expect(s.revoked?.revokedAt).toBe(at(70));
    expect(s.revokeUnknown).toBeUndefined();
    expect(s.otherTenant).toEqual(["key_b1"]);
  }, 60_000);

  test("8 creates of one slug race: one tenant, seven slug_taken, no key of a loser", async () => {
    const out = await onBoth(async (b) => {
      const t = b.storage.tenancy;
      const results = await Promise.all(
        Array.from({ length: 8 }, (_, i) => t.createTenant({ id: `ten_${i}`, slug: "same", name: `T${i}`, createdAt: at(i) }, key(`key_${i}`, `ten_${i}`))),
      );
      const winner = results.indexOf("ok");
      const lookups = await Promise.all(Array.from({ length: 8 }, (_, i) => t.authenticate(`hash-key_${i}`)));
      return {
        ok: results.filter((r) => r === "ok").length,
        taken: results.filter((r) => r === "slug_taken").length,
        winnerFound: (await t.findTenant("same"))?.id === `ten_${winner}`,
        keysAlive: lookups.filter(Boolean).length,
        winnerKey: lookups[winner]?.key.id === `key_${winner}`,
      };
    });
    expect(out.postgres).toEqual(out.sqlite);
    expect(out.sqlite).toEqual({ ok: 1, taken: 7, winnerFound: true, keysAlive: 1, winnerKey: true });
  }, 60_000);

  test("8 revokes of one key race: every answer shows the same (first) revocation time", async () => {
    const out = await onBoth(async (b) => {
      const t = b.storage.tenancy;
      await t.createTenant({ id: "ten_a", slug: "acme", name: "Acme", createdAt: at(0) }, key("key_a", "ten_a"));
      const answers = await Promise.all(Array.from({ length: 8 }, (_, i) => t.revokeKey("key_a", at(100 + i))));
      const times = new Set(answers.map((a) => a?.revokedAt));
      const final = (await t.keys("ten_a"))[0].revokedAt;
      return { distinct: times.size, agrees: times.has(final), dead: (await t.authenticate("hash-key_a")) === undefined };
    });
    expect(out.postgres).toEqual(out.sqlite);
    expect(out.sqlite).toEqual({ distinct: 1, agrees: true, dead: true });
  }, 60_000);
});

describe("key lookups remembered on PostgreSQL, across instances", () => {
  const instances: OpenedStorage[] = [];
  afterAll(async () => {
    for (const i of instances.splice(0)) await i.close();
  });
  /** Two storages on one database, as two automation-server processes hold them (each its own pool and listener). */
  async function twoInstances(): Promise<[OpenedStorage, OpenedStorage]> {
    const url = await freshPostgresDb();
    const a = await openStorage({ dataDir: ":memory:", db: url, dbPool: 4 });
    const b = await openStorage({ dataDir: ":memory:", db: url, dbPool: 4 });
    instances.push(a, b);
    return [a, b];
  }
  /** Looks the key up on `s` until the answer is remembered: a change the database makes without notice is not seen. */
  async function remembered(s: OpenedStorage, hash: string, pg: SQL, keyId: string): Promise<number> {
    for (let i = 0; i < 100; i++) {
      expect(await s.storage.tenancy.authenticate(hash)).toBeDefined();
      await Bun.sleep(20);
      // A revocation straight in the table, without the notification the store sends: only a remembered answer survives it.
      await pg`UPDATE api_keys SET revoked_at = ${at(50)} WHERE id = ${keyId}`;
      if (await s.storage.tenancy.authenticate(hash)) return Date.now();
      await pg`UPDATE api_keys SET revoked_at = NULL WHERE id = ${keyId}`;
    }
    throw new Error("the key lookup was never remembered");
  }

  test(`a lookup is remembered at most ${KEY_CACHE_MS / 1000} s; a revocation on another instance is forgotten at once`, async () => {
    const [a, b] = await twoInstances();
    expect(await a.storage.tenancy.createTenant({ id: "ten_a", slug: "acme", name: "Acme", createdAt: at(0) }, key("key_1", "ten_a"))).toBe("ok");
    const { tenantId: _, ...second } = key("key_2", "");
    expect(await a.storage.tenancy.addKey("acme", second)).toBeDefined();

    // Revoked behind the stores' backs (no notification): B keeps answering from memory, never past KEY_CACHE_MS.
    // The remembered answer was read before `since`, so no lookup that started KEY_CACHE_MS after it
    // may still be served; when it ends, within the poll's interval, is only loosely bounded (timers
    // run late on a loaded machine).
    const since = await remembered(b, "hash-key_1", a.pg!, "key_1");
    let lastServed = since;
    for (;;) {
      const asked = Date.now();
      if (!(await b.storage.tenancy.authenticate("hash-key_1"))) break;
      lastServed = asked;
      await Bun.sleep(20);
    }
    const served = Date.now() - since;
    expect(lastServed - since).toBeLessThan(KEY_CACHE_MS);
    expect(served).toBeLessThan(KEY_CACHE_MS + 1000);

    // Revoked through A's store: B, which remembers key_2, forgets it as soon as the notification arrives.
    await remembered(b, "hash-key_2", a.pg!, "key_2");
    await a.pg!`UPDATE api_keys SET revoked_at = NULL WHERE id = 'key_2'`;
    const t0 = Date.now();
    expect((await a.storage.tenancy.revokeKey("key_2", at(60)))?.revokedAt).toBe(at(60));
    while (await b.storage.tenancy.authenticate("hash-key_2")) await Bun.sleep(5);
    const forgotten = Date.now() - t0;
    expect(forgotten).toBeLessThan(1000);
    console.log(`[tenancy] remembered ${served} ms after a silent revocation (bound ${KEY_CACHE_MS} ms); a revocation on another instance forgotten after ${forgotten} ms`);
  }, 60_000);

  test("a person's key: disabling them (or a new role) on one instance is seen by the other at once, not after the memory lapses", async () => {
    const [a, b] = await twoInstances();
    expect(await a.storage.tenancy.createTenant({ id: "ten_a", slug: "acme", name: "Acme", createdAt: at(0) }, key("key_1", "ten_a"))).toBe("ok");
    const user = { id: "usr_1", email: "a@example.com", emailKey: "a@example.com", name: "A", status: "active" as const, passwordHash: null, createdAt: at(0) };
    expect(await a.storage.people.createUser(user, { tenantId: "ten_a", role: "admin", createdAt: at(0) })).toBe("ok");
    const { tenantId: _, ...mine } = key("key_p", "", { createdByUser: "usr_1" });
    expect(await a.storage.tenancy.addKey("acme", mine)).toBeDefined();
    // B remembers the lookup: a silent change straight in the table is not seen (then the table is put
    // back to what B remembers, so the two agree again).
    const other = (r: string | null | undefined) => (r === "admin" ? "viewer" : "admin");
    let held: string | null | undefined;
    for (let i = 0; ; i++) {
      held = (await b.storage.tenancy.authenticate("hash-key_p"))?.makerRole;
      await Bun.sleep(20);
      await a.pg!`UPDATE memberships SET role = ${other(held)} WHERE user_id = 'usr_1'`;
      const seen = (await b.storage.tenancy.authenticate("hash-key_p"))?.makerRole;
      await a.pg!`UPDATE memberships SET role = ${seen} WHERE user_id = 'usr_1'`;
      if (seen === held) break;
      expect(i).toBeLessThan(100);
    }
    const t0 = Date.now();
    const next = other(held);
    await a.storage.people.setRole("usr_1", "ten_a", next as "admin" | "viewer", at(5));
    expect((await a.storage.tenancy.authenticate("hash-key_p"))?.makerRole).toBe(next);
    while ((await b.storage.tenancy.authenticate("hash-key_p"))?.makerRole !== next) await Bun.sleep(5);
    await a.storage.people.setStatus("usr_1", "disabled");
    expect(await a.storage.tenancy.authenticate("hash-key_p")).toBeUndefined();
    while (await b.storage.tenancy.authenticate("hash-key_p")) await Bun.sleep(5);
    const forgotten = Date.now() - t0;
    expect(forgotten).toBeLessThan(1000);
    // The shell's key (no person) is untouched; re-enabling brings the person's key back.
    expect(await b.storage.tenancy.authenticate("hash-key_1")).toBeDefined();
    await a.storage.people.setStatus("usr_1", "active");
    expect((await b.storage.tenancy.authenticate("hash-key_p"))?.makerRole).toBe(next);
  }, 60_000);
});

describe("key lookups remembered on SQLite, across connections", () => {
  test("a person disabled through another connection (the CLI, another server on the file) is refused at the next turn; through this one at once", async () => {
    const dir = mkdtempSync(join(tmpdir(), "tenancy-keys-"));
    const a = await openStorage({ dataDir: dir });
    const b = await openStorage({ dataDir: dir });
    try {
      expect(await a.storage.tenancy.createTenant({ id: "ten_a", slug: "acme", name: "Acme", createdAt: at(0) }, key("key_1", "ten_a"))).toBe("ok");
      const user = { id: "usr_1", email: "a@example.com", emailKey: "a@example.com", name: "A", status: "active" as const, passwordHash: null, createdAt: at(0) };
      expect(await a.storage.people.createUser(user, { tenantId: "ten_a", role: "admin", createdAt: at(0) })).toBe("ok");
      const { tenantId: _, ...mine } = key("key_p", "", { createdByUser: "usr_1" });
      expect(await a.storage.tenancy.addKey("acme", mine)).toBeDefined();
      await Bun.sleep(0);
      expect((await b.storage.tenancy.authenticate("hash-key_p"))?.makerRole).toBe("admin");
      // Through the other connection: seen once a turn has passed (the data version is read once per turn).
      await a.storage.people.setStatus("usr_1", "disabled");
      await Bun.sleep(0);
      expect(await b.storage.tenancy.authenticate("hash-key_p")).toBeUndefined();
      await a.storage.people.setStatus("usr_1", "active");
      await Bun.sleep(0);
      expect((await b.storage.tenancy.authenticate("hash-key_p"))?.makerRole).toBe("admin");
      // Through the same connection: its own writes do not move the data version; the store forgets at once.
      await b.storage.people.setRole("usr_1", "ten_a", "viewer", at(5));
      expect((await b.storage.tenancy.authenticate("hash-key_p"))?.makerRole).toBe("viewer");
      await b.storage.people.removeMembership("usr_1", "ten_a");
      expect(await b.storage.tenancy.authenticate("hash-key_p")).toBeUndefined();
      expect(await b.storage.tenancy.authenticate("hash-key_1")).toBeDefined();
    } finally {
      await a.close();
      await b.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
