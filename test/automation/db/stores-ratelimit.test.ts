// State every instance on one database shares, decided in the database (issue 24): the per-API-key
// rate limit (GCRA, one conditional upsert per request) and key material created once. Contract on both
// backends (same answers), and races on PostgreSQL between two separately opened storages — two
// "instances", each with its own pool — which must behave as one.
import { afterAll, describe, expect, test } from "bun:test";
import { SQL } from "bun";
import { migrateAutomationPg } from "../../../src/automation/db/pg-migrate";
import { pgStorage } from "../../../src/automation/db/pg/index";
import type { AutomationStorage } from "../../../src/automation/db/storage";
import type { RateDecision } from "../../../src/automation/tenancy/store";
import { freshPostgresDb } from "../../support/postgres";
import { bothIn, type Backend } from "./backends";

const opened: Backend[] = [];
const pools: SQL[] = [];
afterAll(async () => {
  for (const b of opened) await b.close();
  for (const p of pools) await p.close();
});

const onBoth = bothIn(opened);

/** Two storages over one fresh PostgreSQL database, each with its own pool, as two server processes hold. */
async function twoInstances(): Promise<[AutomationStorage, AutomationStorage]> {
  const url = await freshPostgresDb();
  await migrateAutomationPg(url);
  const a = new SQL({ url, max: 10 });
  const b = new SQL({ url, max: 10 });
  pools.push(a, b);
  return [pgStorage(a), pgStorage(b)];
}

const S = 1_000_000;
const T0 = Date.parse("2026-11-25T10:00:00.000Z") * 1000;
/** N per second with a burst of N, as src/automation/tenancy/rate-limit.ts asks the store. */
const limit = (n: number) => {
  const intervalUs = Math.round(S / n);
  return { intervalUs, burstUs: Math.round(Math.max(1, n) * intervalUs) };
};

describe("rate limits on SQLite and PostgreSQL", () => {
  test("GCRA: a burst of N, then one per 1/N s; denied requests spend nothing and learn when to retry; keys apart", async () => {
    const out = await onBoth(async (b) => {
      const r = b.storage.rateLimits;
      const two = limit(2);
      const take = (key: string, atUs: number, l = two) => r.take(key, atUs, l.intervalUs, l.burstUs);
      const seq: [number, RateDecision][] = [];
      // 2/s: two at once, the third waits half a second; denials do not move the budget.
      for (const at of [0, 0, 0, 0.1, 0.5, 0.5, 0.9, 1.0, 10, 10, 10]) seq.push([at, await take("key_a", T0 + at * S)]);
      const other = await take("key_b", T0);
      // 3/s: the interval does not divide a second evenly; three at once still pass, the fourth waits 1/3 s.
      const three = limit(3);
      const thirds = [];
      for (let i = 0; i < 4; i++) thirds.push(await take("key_c", T0, three));
      // Half a request per second: a burst of one, the next two seconds later.
      const half = limit(0.5);
      const slow = [await take("key_d", T0, half), await take("key_d", T0 + 1.5 * S, half), await take("key_d", T0 + 2 * S, half)];
      return { seq, other, thirds, slow, rows: await b.count("rate_limits") };
    });
    expect(out.postgres).toEqual(out.sqlite);
    const ok: RateDecision = { allowed: true };
    const wait = (us: number): RateDecision => ({ allowed: false, retryAfterUs: us });
    expect(out.sqlite.seq).toEqual([
      [0, ok], [0, ok], [0, wait(0.5 * S)], [0.1, wait(0.4 * S)], [0.5, ok], [0.5, wait(0.5 * S)],
      [0.9, wait(0.1 * S)], [1.0, ok], [10, ok], [10, ok], [10, wait(0.5 * S)],
    ]);
    expect(out.sqlite.other).toEqual(ok);
    expect(out.sqlite.thirds).toEqual([ok, ok, ok, wait(333_333)]);
    expect(out.sqlite.slow).toEqual([ok, wait(0.5 * S), ok]);
    expect(out.sqlite.rows).toBe(4);
  }, 60_000);
});

describe("rate limits across two instances on one PostgreSQL", () => {
  test("two storages hammering one key concurrently never allow more than the burst + rate × elapsed", async () => {
    const instances = await twoInstances();
    const n = 50;
    const { intervalUs, burstUs } = limit(n);
    let allowed = 0;
    let requests = 0;
    let first = Infinity;
    let last = 0;
    const until = Date.now() + 1500;
    // 8 callers per instance, each sending its next request as soon as the last one is answered.
    const caller = async (s: AutomationStorage) => {
      while (Date.now() < until) {
        const now = Date.now() * 1000;
        first = Math.min(first, now);
        const d = await s.rateLimits.take("key_hot", now, intervalUs, burstUs);
        requests++;
        if (d.allowed) {
          allowed++;
          last = Math.max(last, now);
        }
      }
    };
    await Promise.all(instances.flatMap((s) => Array.from({ length: 8 }, () => caller(s))));
    const bound = Math.floor(burstUs / intervalUs + (last - first) / intervalUs);
    // An instance counting alone (in memory, or read-then-write) would let through up to twice as many.
    expect(allowed).toBeLessThanOrEqual(bound);
    expect(allowed).toBeGreaterThanOrEqual(n);
    expect(requests).toBeGreaterThan(allowed * 2);
  }, 60_000);
});

describe("key material shared by instances", () => {
  test("both backends: the first claim is kept; a later one with other material gets the first back", async () => {
    const out = await onBoth(async (b) => {
      const s = b.storage.secrets;
      const first = await s.claim("signing-secret", { value: "a".repeat(43), fingerprint: "fa" }, "2026-11-25T10:00:00.000Z");
      const second = await s.claim("signing-secret", { value: "b".repeat(43), fingerprint: "fb" }, "2026-11-25T10:00:01.000Z");
      const held = await s.claim("secret-key", { value: null, fingerprint: "fk" }, "2026-11-25T10:00:02.000Z");
      const offered = await s.claim("secret-key", { value: "c".repeat(43), fingerprint: "fc" }, "2026-11-25T10:00:03.000Z");
      return { first, second, held, offered, rows: await b.count("shared_secrets") };
    });
    expect(out.postgres).toEqual(out.sqlite);
    expect(out.sqlite).toEqual({
      first: { value: "a".repeat(43), fingerprint: "fa" },
      second: { value: "a".repeat(43), fingerprint: "fa" },
      held: { value: null, fingerprint: "fk" },
      offered: { value: null, fingerprint: "fk" },
      rows: 2,
    });
  }, 60_000);

  test("PostgreSQL: 12 claims racing from two instances all get the one value stored", async () => {
    const [a, b] = await twoInstances();
    const got = await Promise.all(
      Array.from({ length: 12 }, (_, i) => (i % 2 ? a : b).secrets.claim("signing-secret", { value: `secret-${i}`.padEnd(43, "x"), fingerprint: `f${i}` }, "2026-11-25T10:00:00.000Z")),
    );
    expect(new Set(got.map((g) => g.value)).size).toBe(1);
    expect(got.every((g) => g.fingerprint === `f${got[0].value!.match(/secret-(\d+)/)![1]}`)).toBe(true);
  }, 60_000);
});
