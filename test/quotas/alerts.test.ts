// [alerts] decisions against an in-memory history: once per window instance, re-armed by a reset.
import { describe, expect, test } from "bun:test";
import { checkAlerts, levelOf } from "../../src/quotas/model/alerts";
import { openHistory } from "../../src/quotas/fetch/history";
import type { ProviderResult, QuotaWindow } from "../../src/quotas/model/types";

const w = (window: string, used: number, reset_at: string | null, unit = "percent", limit = 100): QuotaWindow =>
  ({ window, used, limit, remaining: limit - used, unit, reset_at, period_seconds: 18000 });
const r = (windows: QuotaWindow[]): ProviderResult => ({
  provider: "claude", profile: "default", name: "Claude", status: "available", plan: null, windows,
  fetched_at: "2026-11-22T09:00:00Z", cached_at: null, auth_source: null,
});
const R1 = "2026-11-22T12:00:00Z";
const R2 = "2026-11-22T17:00:00Z";

describe("alerts", () => {
  test("levelOf: the highest threshold reached", () => {
    expect([levelOf(79.9, [80, 95]), levelOf(80, [80, 95]), levelOf(96, [80, 95])]).toEqual([0, 80, 95]);
  });

  test("a reset time moving on re-arms the window even when usage never dropped below the threshold", () => {
    const store = openHistory(":memory:");
    const fire = (windows: QuotaWindow[]) => checkAlerts(store, r(windows), [80]).map((a) => `${a.window}@${a.threshold}`);
    expect(fire([w("5h", 85, R1)])).toEqual(["5h@80"]);
    expect(fire([w("5h", 88, R1)])).toEqual([]);
    // a reset time jitter of a few seconds is the same window
    expect(fire([w("5h", 89, "2026-11-22T12:00:07Z")])).toEqual([]);
    expect(fire([w("5h", 90, R2)])).toEqual(["5h@80"]);
    store.close();
  });

  test("each window has its own state; balances, windows without a limit and other statuses never alert", () => {
    const store = openHistory(":memory:");
    expect(checkAlerts(store, r([w("5h", 85, R1), w("weekly", 50, null), w("balance", 0, null, "usd", 10), w("x", 5, null, "requests", 0)]), [80]).map((a) => a.window)).toEqual(["5h"]);
    expect(checkAlerts(store, r([w("5h", 85, R1), w("weekly", 81, null)]), [80]).map((a) => a.window)).toEqual(["weekly"]);
    expect(checkAlerts(store, { ...r([w("5h", 99, R1)]), status: "network_error" }, [80])).toEqual([]);
    expect(checkAlerts(store, r([w("5h", 99, R1)]), [])).toEqual([]);
    store.close();
  });
});
