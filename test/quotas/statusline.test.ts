// The statusline line: tightest window per available provider, placeholders, icons, update notice.
import { describe, expect, test } from "bun:test";
import { fmtNum, statusline, tightest, untilReset } from "../../src/quotas/output/statusline";
import type { ProviderResult, QuotaWindow } from "../../src/quotas/model/types";

const now = new Date("2026-11-22T09:00:00Z");
const w = (window: string, used: number, limit: number, reset_at: string | null = null, unit = "percent"): QuotaWindow => ({
  window, used, limit, remaining: limit - used, unit, reset_at, period_seconds: null,
});
const r = (provider: string, name: string, windows: QuotaWindow[], status: ProviderResult["status"] = "available"): ProviderResult => ({
  provider, profile: "default", name, status, plan: null, windows, fetched_at: now.toISOString(), cached_at: null, auth_source: null,
});
const opts = { format: "%provider %remaining/%limit", icons: false, now, hidden: () => [] as string[] };

describe("statusline", () => {
  test("picks the window with the least remaining relative to its limit", () => {
    expect(tightest([w("5h", 42, 100), w("weekly", 80, 100), w("premium", 100, 1500, null, "requests")])?.window).toBe("weekly");
    expect(tightest([w("5h", 42, 100), w("weekly", 80, 100)], ["weekly"])?.window).toBe("5h");
  });
  test("default template; only available providers; joined with |", () => {
    const line = statusline(
      [r("claude", "Claude", [w("5h", 42, 100), w("weekly", 10, 100)]), r("codex", "Codex", [w("5h", 88, 100)]), r("zai", "Z.ai", [], "auth_required")],
      opts,
    );
    expect(line).toBe("Claude 58/100 | Codex 12/100");
  });
  test("every placeholder", () => {
    const line = statusline([r("copilot", "GitHub Copilot", [w("premium", 321, 1500, "2026-11-22T12:12:00Z", "requests")])], {
      ...opts,
      format: "%provider|%remaining|%limit|%window|%used|%percent|%reset",
    });
    expect(line).toBe("GitHub Copilot|1179|1500|premium|321|21%|3h12m");
  });
  test("icons before the name unless --no-icons; an update notice at the end", () => {
    const line = statusline([r("claude", "Claude", [w("5h", 42, 100)])], { ...opts, icons: true, update: "1.2.3" });
    expect(line).toMatch(/^\S+ Claude 58\/100 \| update 1\.2\.3$/);
    expect(line.startsWith("Claude")).toBe(false);
  });
  test("numbers: two decimals at most; token counts from 100000 on are compact", () => {
    const line = statusline([r("zai", "Z.ai", [w("5h", 200_000_000, 800_000_000, null, "tokens")]), r("openrouter", "OpenRouter", [w("credits", 7.345, 25, null, "usd")])], opts);
    expect(line).toBe("Z.ai 600M/800M | OpenRouter 17.66/25");
    expect([fmtNum(99_999), fmtNum(150_000), fmtNum(1_250_000), fmtNum(2_500_000_000), fmtNum(12.5)]).toEqual(["99999", "150k", "1.3M", "2.5B", "12.5"]);
  });
  test("reset durations", () => {
    expect(untilReset("2026-11-24T13:30:00Z", now)).toBe("2d4h");
    expect(untilReset("2026-11-22T09:45:00Z", now)).toBe("45m");
    expect(untilReset("2026-11-22T08:00:00Z", now)).toBe("");
    expect(untilReset(null, now)).toBe("");
  });
});
