// The projection against hand-computed cases, and the history database's size and retention bound.
import { afterEach, describe, expect, test } from "bun:test";
import { statSync } from "node:fs";
import { join } from "node:path";
import { openHistory, RETENTION_DAYS } from "../../src/quotas/fetch/history";
import { currentWindow, pace, type Sample } from "../../src/quotas/model/pace";
import { tempHome, type TempHome } from "./helpers";

const T = Date.parse("2026-11-22T12:00:00Z");
const MIN = 60_000;
const H = 3_600_000;
const iso = (ms: number) => new Date(ms).toISOString();
const FIVE_H = 18_000;

/** Samples every 5 minutes from `from` to T (inclusive) with used = f(t). */
function every5(from: number, f: (t: number) => number, reset: number | null, limit = 100): Sample[] {
  const out: Sample[] = [];
  for (let t = from; t <= T; t += 5 * MIN) out.push({ t, used: f(t), limit, reset });
  return out;
}

describe("pace", () => {
  test("steady: 12 %/h over the last hour, 40 % used, reset in 3 h → 76 % at the reset, no exhaustion before it", () => {
    const s = every5(T - 2 * H, (t) => 40 - (12 * (T - t)) / H, T + 3 * H);
    // the rate is measured from T-1h (28 %) to T (40 %): 12 per hour; 60 left → 5 h
    expect(pace(s, FIVE_H)).toEqual({
      rate_per_hour: 12,
      exhausts_at: iso(T + 5 * H),
      before_reset: false,
      projected_used: 76,
      since: iso(T - H),
    });
  });

  test("accelerating: the last hour's rate (36/h), not the window's average (24/h), drives the projection", () => {
    const s = every5(T - 2 * H, (t) => 2 + 48 * ((t - (T - 2 * H)) / (2 * H)) ** 2, T + 3 * H);
    // used 14 at T-1h, 50 at T: 36 per hour; 50 left → 50/36 h = 5000 s, before the reset in 3 h
    expect(pace(s, FIVE_H)).toEqual({
      rate_per_hour: 36,
      exhausts_at: iso(T + 5000_000),
      before_reset: true,
      projected_used: 158, // 50 + 36 × 3
      since: iso(T - H),
    });
  });

  test("reset crossing: samples of the previous window are left out (usage dropped, or the reset moved on)", () => {
    const oldReset = T - 10 * MIN;
    const newReset = T + 290 * MIN;
    const s: Sample[] = [
      { t: T - 30 * MIN, used: 85, limit: 100, reset: oldReset },
      { t: T - 20 * MIN, used: 92, limit: 100, reset: oldReset },
      { t: T - 5 * MIN, used: 3, limit: 100, reset: newReset },
      { t: T, used: 6, limit: 100, reset: newReset },
    ];
    expect(currentWindow(s, FIVE_H).map((x) => x.used)).toEqual([3, 6]);
    // 3 per 5 min = 36/h; 94 left → 9400 s; the reset is 17400 s away; 6 + 36 × 4.8333 = 180
    expect(pace(s, FIVE_H)).toEqual({ rate_per_hour: 36, exhausts_at: iso(T + 9400_000), before_reset: true, projected_used: 180, since: iso(T - 5 * MIN) });
    // no drop in usage, but the reset time moved by 5 h: a new window all the same
    const moved: Sample[] = [
      { t: T - 20 * MIN, used: 2, limit: 100, reset: oldReset },
      { t: T - 10 * MIN, used: 4, limit: 100, reset: newReset },
      { t: T, used: 5, limit: 100, reset: newReset },
    ];
    expect(pace(moved, FIVE_H)!.since).toBe(iso(T - 10 * MIN));
    expect(pace(moved, FIVE_H)!.rate_per_hour).toBe(6);
    // samples from before the window's start (reset - period) never count either
    const start: Sample[] = [
      { t: T - 300 * MIN, used: 0, limit: 100, reset: null },
      { t: T - 20 * MIN, used: 10, limit: 100, reset: T + 280 * MIN },
      { t: T, used: 20, limit: 100, reset: T + 280 * MIN },
    ];
    expect(pace(start, FIVE_H)!.rate_per_hour).toBe(30);
  });

  test("no data: no sample, one sample, or less than a minute of history → null", () => {
    expect(pace([], FIVE_H)).toBeNull();
    expect(pace([{ t: T, used: 10, limit: 100, reset: T + H }], FIVE_H)).toBeNull();
    expect(pace([{ t: T - 30_000, used: 9, limit: 100, reset: T + H }, { t: T, used: 10, limit: 100, reset: T + H }], FIVE_H)).toBeNull();
  });

  test("no reset time: exhaustion time only; idle: never exhausts; already at the limit: now", () => {
    const noReset = every5(T - H, (t) => 50 - (10 * (T - t)) / H, null);
    expect(pace(noReset, null)).toEqual({ rate_per_hour: 10, exhausts_at: iso(T + 5 * H), before_reset: null, projected_used: null, since: iso(T - H) });
    const idle = every5(T - H, () => 30, T + 2 * H);
    expect(pace(idle, FIVE_H)).toEqual({ rate_per_hour: 0, exhausts_at: null, before_reset: false, projected_used: 30, since: iso(T - H) });
    const full = every5(T - 10 * MIN, (t) => (t === T ? 100 : 95), T + H);
    expect(pace(full, FIVE_H)!.exhausts_at).toBe(iso(T));
  });

  test("a weekly window looks back 24 h, so a night without use does not read as idle", () => {
    const week = 604_800;
    // +24 during the day 24 h ago..16 h ago, nothing for the last 16 h
    const s = every5(T - 30 * H, (t) => (t < T - 24 * H ? 10 : t < T - 16 * H ? 10 + (24 * (t - (T - 24 * H))) / (8 * H) : 34), T + 3 * 24 * H);
    expect(pace(s, week)!.rate_per_hour).toBe(1); // 24 over the last 24 h
  });
});

describe("history.db", () => {
  let h: TempHome | undefined;
  afterEach(() => h?.cleanup());

  test("30 days of 5-minute samples for 12 providers (two windows each) stay under 5 MB; older ones are dropped", () => {
    h = tempHome();
    const path = join(h.home, "history.db");
    const store = openHistory(path);
    const start = T - (RETENTION_DAYS + 2) * 24 * H; // two days more than kept
    let n = 0;
    for (let t = start; t <= T; t += 5 * MIN) {
      const fiveH = Math.floor((t - start) / (5 * H));
      const reset5 = start + (fiveH + 1) * 5 * H;
      const resetW = start + (Math.floor((t - start) / (168 * H)) + 1) * 168 * H;
      for (let p = 0; p < 12; p++) {
        const used = ((t - start) / (5 * H) - fiveH) * 100;
        store.append(`provider${p}:default`, [
          { window: "5h", sample: { t, used: Math.round(used * 10) / 10, limit: 100, reset: reset5 } },
          { window: "weekly", sample: { t, used: Math.round(((t - start) % (168 * H)) / (168 * H) * 1000) / 10, limit: 100, reset: resetW } },
        ], t);
      }
      n++;
    }
    const kept = store.samples("provider7:default", "5h", 0);
    store.close();
    const size = statSync(path).size;
    console.log(`history.db: ${n} refreshes × 12 providers × 2 windows → ${(size / 1e6).toFixed(2)} MB, ${kept.length} samples kept per window`);
    expect(size).toBeLessThan(5_000_000);
    expect(kept[0].t).toBeGreaterThanOrEqual(T - RETENTION_DAYS * 24 * H);
    expect(kept.length).toBe(RETENTION_DAYS * 288 + 1);
  }, 120_000);

  test("a series no longer appended to is pruned too (once a day, by any append)", () => {
    const store = openHistory(":memory:");
    const day = 24 * H;
    store.append("gone:default", [{ window: "5h", sample: { t: T, used: 1, limit: 100, reset: null } }], T);
    store.append("kept:default", [{ window: "5h", sample: { t: T + day, used: 2, limit: 100, reset: null } }], T + day);
    expect(store.samples("gone:default", "5h", 0)).toHaveLength(1);
    store.append("kept:default", [{ window: "5h", sample: { t: T + (RETENTION_DAYS + 1) * day, used: 3, limit: 100, reset: null } }], T + (RETENTION_DAYS + 1) * day);
    expect(store.samples("gone:default", "5h", 0)).toEqual([]);
    expect(store.samples("kept:default", "5h", 0).map((s) => s.used)).toEqual([2, 3]);
    store.close();
  });

  test("one sample per window per minute: a second refresh within the minute replaces the first", () => {
    const store = openHistory(":memory:");
    store.append("claude:default", [{ window: "5h", sample: { t: T, used: 10, limit: 100, reset: null } }], T);
    store.append("claude:default", [{ window: "5h", sample: { t: T + 20_000, used: 11, limit: 100, reset: null } }], T + 20_000);
    expect(store.samples("claude:default", "5h", 0)).toEqual([{ t: T, used: 11, limit: 100, reset: null }]);
    store.close();
  });
});
