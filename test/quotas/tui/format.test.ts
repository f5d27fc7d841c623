import { describe, expect, test } from "bun:test";
import { elapsedFraction, formatDuration, formatNumber, levelOf, paceAhead, resetText, usageText } from "../../../src/quotas/tui/format.ts";
import { NOW, iso, win } from "./fixtures.ts";

const H = 3_600_000;

describe("format", () => {
  test("durations", () => {
    expect(formatDuration(30_000)).toBe("<1m");
    expect(formatDuration(45 * 60_000)).toBe("45m");
    expect(formatDuration(3 * H + 12 * 60_000)).toBe("3h 12m");
    expect(formatDuration(2 * H)).toBe("2h");
    expect(formatDuration(52 * H)).toBe("2d 4h");
    expect(formatDuration(48 * H)).toBe("2d");
  });

  test("reset countdown", () => {
    expect(resetText(win("5h", 1, 100, { reset_at: iso(3 * H + 12 * 60_000) }), NOW)).toBe("resets in 3h 12m");
    expect(resetText(win("5h", 1, 100, { reset_at: iso(-1000) }), NOW)).toBe("resets now");
    expect(resetText(win("5h", 1, 100), NOW)).toBe("");
  });

  test("usage in each unit; money as decimals; balances without a limit show what is left", () => {
    expect(usageText(win("5h", 42, 100))).toBe("42/100%");
    expect(usageText({ ...win("monthly", 12.5, 100), unit: "usd" })).toBe("12.50/100.00 USD");
    expect(usageText({ ...win("premium", 120, 300), unit: "requests" })).toBe("120/300 req");
    expect(usageText({ ...win("5h", 1_250_000, 5_000_000), unit: "tokens" })).toBe("1.3M/5M tok");
    expect(usageText({ window: "balance", used: 0, limit: 0, remaining: 37.2, unit: "cny", reset_at: null, period_seconds: null })).toBe("37.20 CNY");
    expect(usageText({ window: "balance", used: 0, limit: 37.2, remaining: 37.2, unit: "cny", reset_at: null, period_seconds: null })).toBe("37.20 CNY");
    expect(formatNumber(12_345, "credits")).toBe("12.3k");
  });

  test("pace: usage against the elapsed part of the window", () => {
    const w = win("5h", 50, 100, { reset_at: iso(2.5 * H), period_seconds: 5 * 3600 }); // half elapsed
    expect(elapsedFraction(w, NOW)).toBe(0.5);
    expect(paceAhead(w, NOW)).toBe(0);
    expect(paceAhead({ ...w, used: 60, remaining: 40 }, NOW)).toBe(10);
  });

  test("levels: crit ≥ 90 %, warn ≥ 70 % or ahead of pace, ok otherwise", () => {
    const half = { reset_at: iso(2.5 * H), period_seconds: 5 * 3600 };
    expect(levelOf(win("5h", 95, 100, half), NOW)).toBe("crit");
    expect(levelOf(win("5h", 75, 100), NOW)).toBe("warn");
    expect(levelOf(win("5h", 55, 100, half), NOW)).toBe("warn");
    expect(levelOf(win("5h", 45, 100, half), NOW)).toBe("ok");
    expect(levelOf(win("5h", 45, 100), NOW)).toBe("ok");
    expect(levelOf({ ...win("balance", 0, 0), remaining: 5 }, NOW)).toBe("none");
  });
});
