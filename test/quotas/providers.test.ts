// Parser tests per provider: recorded responses (shared fixtures and ours) → the numbers a user sees.
import { describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import * as antigravity from "../../src/quotas/providers/antigravity";
import * as claude from "../../src/quotas/providers/claude";
import * as codex from "../../src/quotas/providers/codex";
import * as copilot from "../../src/quotas/providers/copilot";
import * as cursor from "../../src/quotas/providers/cursor";
import * as deepseek from "../../src/quotas/providers/deepseek";
import * as grok from "../../src/quotas/providers/grok";
import * as kimi from "../../src/quotas/providers/kimi";
import * as minimax from "../../src/quotas/providers/minimax";
import * as openrouter from "../../src/quotas/providers/openrouter";
import type { Outcome } from "../../src/quotas/providers/provider";
import * as siliconflow from "../../src/quotas/providers/siliconflow";
import * as zai from "../../src/quotas/providers/zai";
import { providerNames, providers } from "../../src/quotas/providers";
import type { QuotaWindow } from "../../src/quotas/model/types";

const shared = (p: string) => JSON.parse(readFileSync(join(import.meta.dir, "fixtures/recorded", p), "utf8"));
const own = (p: string) => JSON.parse(readFileSync(join(import.meta.dir, "fixtures", p), "utf8"));

function windows(o: Outcome): Record<string, QuotaWindow> {
  if (o.status !== "available") throw new Error(`expected available, got ${o.status}: ${JSON.stringify(o)}`);
  return Object.fromEntries(o.windows.map((w) => [w.window, w]));
}
const plan = (o: Outcome) => (o.status === "available" ? o.plan : undefined);

test("the registry lists the twelve providers of the spec", () => {
  expect(providerNames).toEqual(["claude", "codex", "antigravity", "copilot", "cursor", "zai", "kimi", "minimax", "deepseek", "siliconflow", "openrouter", "grok"]);
  expect(providers.map((p) => p.id)).toEqual(providerNames);
});

describe("claude", () => {
  test("five_hour → 5h, seven_day → weekly, seven_day_<m> → weekly_<m>, extra usage in dollars", () => {
    const o = claude.parse(own("claude/oauth_usage.json"), { plan: "max" });
    const w = windows(o);
    expect(plan(o)).toBe("max");
    expect(w["5h"]).toEqual({ window: "5h", used: 42, limit: 100, remaining: 58, unit: "percent", reset_at: "2026-11-22T14:00:00.412Z", period_seconds: 18000 });
    expect(w.weekly).toMatchObject({ used: 12.5, remaining: 87.5, reset_at: "2026-11-27T09:00:00Z", period_seconds: 604800 });
    expect(w.weekly_opus).toMatchObject({ used: 61, remaining: 39 });
    expect(w.weekly_sonnet).toMatchObject({ used: 3, reset_at: null });
    expect(w.weekly_oauth_apps).toBeUndefined();
    expect(w.extra_credits).toMatchObject({ used: 12.34, limit: 50, remaining: 37.66, unit: "usd" });
  });
  test("an unknown shape is unavailable, not a crash", () => {
    expect(claude.parse({ five_hour: "lots" }).status).toBe("unavailable");
  });
});

describe("codex", () => {
  test("live capture: a weekly-only primary window and a model-specific weekly window", () => {
    const o = codex.parse(shared("codex/wham_usage_live.json"));
    const w = windows(o);
    expect(plan(o)).toBe("pro");
    expect(Object.keys(w).sort()).toEqual(["weekly", "weekly_gpt-5.3-codex-spark"]);
    expect(w.weekly).toEqual({ window: "weekly", used: 76, limit: 100, remaining: 24, unit: "percent", reset_at: "2026-07-19T18:58:38Z", period_seconds: 604800 });
    expect(w["weekly_gpt-5.3-codex-spark"]).toMatchObject({ used: 0, remaining: 100, reset_at: "2026-07-20T08:38:47Z" });
  });
  test("plus: 5h and weekly chosen by window length, credits balance", () => {
    const w = windows(codex.parse(own("codex/wham_usage_plus.json")));
    expect(w["5h"]).toMatchObject({ used: 33, remaining: 67, reset_at: "2026-11-22T11:00:00Z", period_seconds: 18000 });
    expect(w.weekly).toMatchObject({ used: 71, remaining: 29, reset_at: "2026-11-26T13:33:20Z" });
    expect(w.credits).toMatchObject({ remaining: 125.5, limit: 125.5, unit: "credits" });
  });
});

describe("antigravity", () => {
  test("quota summary: the first group's 5h/weekly plain, the next group's suffixed", () => {
    const w = windows(antigravity.parse(shared("antigravity/retrieve_user_quota_summary_live.json")));
    expect(w.weekly).toMatchObject({ used: 18.13, remaining: 81.87, unit: "percent", reset_at: "2026-07-19T17:07:49Z", period_seconds: 604800 });
    expect(w["5h"]).toMatchObject({ used: 2.01, remaining: 97.99, reset_at: "2026-07-13T18:32:16Z", period_seconds: 18000 });
    expect(w["weekly_claude-and-gpt"]).toMatchObject({ used: 0, remaining: 100, reset_at: "2026-07-20T14:17:19Z" });
    expect(w["claude-and-gpt_5h"]).toMatchObject({ used: 0, reset_at: "2026-07-13T19:17:19Z" });
  });
  test("the older per-model shape: one window per model", () => {
    const o = antigravity.parse(shared("antigravity/retrieve_user_quota_live.json"));
    const w = windows(o);
    expect(Object.keys(w)).toHaveLength(20);
    expect(w["gemini-2.5-pro"]).toMatchObject({ used: 2.01, reset_at: "2026-07-13T18:32:16Z" });
    expect(w["chat-20706"]).toMatchObject({ used: 0, reset_at: null });
  });
});

describe("copilot", () => {
  test("paid: premium interactions as requests; unlimited chat/completions left out", () => {
    const o = copilot.parse(own("copilot/user_paid.json"));
    const w = windows(o);
    expect(plan(o)).toBe("individual_pro");
    expect(Object.keys(w)).toEqual(["premium"]);
    expect(w.premium).toEqual({ window: "premium", used: 321, limit: 1500, remaining: 1179, unit: "requests", reset_at: "2026-12-01T00:00:00Z", period_seconds: 30 * 86400 });
  });
  test("free tier: limited_user_quotas are REMAINING counts, monthly_quotas the limits", () => {
    const o = copilot.parse(own("copilot/user_free.json"));
    const w = windows(o);
    expect(plan(o)).toBe("free");
    expect(w.chat).toMatchObject({ used: 90, limit: 500, remaining: 410, reset_at: "2026-12-05T00:00:00Z" });
    expect(w.completions).toMatchObject({ used: 345, limit: 4000, remaining: 3655 });
  });
});

describe("cursor", () => {
  test("recorded plan and usage: total, auto and api percent over the billing cycle", () => {
    const o = cursor.parse(shared("cursor/plan_default.json"), shared("cursor/usage_default.json"));
    const w = windows(o);
    expect(plan(o)).toBe("Pro");
    expect(w.monthly).toMatchObject({ used: 16.93, remaining: 83.07, reset_at: "2026-08-05T19:20:59Z", period_seconds: 2678400 });
    expect(w.auto).toMatchObject({ used: 22.01 });
    expect(w.api).toMatchObject({ used: 0, remaining: 100 });
    expect(w.on_demand).toBeUndefined();
  });
  test("on-demand spend limit in dollars (cents in the response)", () => {
    const w = windows(cursor.parse(shared("cursor/plan_default.json"), own("cursor/usage_on_demand.json")));
    expect(w.monthly).toMatchObject({ used: 100, remaining: 0 });
    expect(w.on_demand).toMatchObject({ used: 5, limit: 50, remaining: 45, unit: "usd", reset_at: "2026-12-18T11:06:40Z" });
  });
  test("the session cookie carries the JWT's user id", () => {
    const payload = Buffer.from(JSON.stringify({ sub: "auth0|user_01ABC", exp: 4102444800 })).toString("base64url");
    const jwt = `x.${payload}.sig`;
    expect(cursor.sessionCookie(jwt)).toBe(`WorkosCursorSessionToken=user_01ABC%3A%3A${jwt}`);
  });
});

describe("zai", () => {
  test("usage is the LIMIT and currentValue the used amount; TIME_LIMIT → monthly_mcp", () => {
    const o = zai.parse(own("zai/quota_limit.json"));
    const w = windows(o);
    expect(plan(o)).toBe("pro");
    expect(w["5h"]).toEqual({ window: "5h", used: 200000000, limit: 800000000, remaining: 600000000, unit: "tokens", reset_at: "2026-11-22T14:00:00Z", period_seconds: 18000 });
    expect(w.weekly).toMatchObject({ used: 8, limit: 100, remaining: 92, unit: "percent", reset_at: "2026-11-28T14:00:00Z" });
    expect(w.monthly_mcp).toMatchObject({ used: 37, limit: 1000, remaining: 963, unit: "requests", reset_at: "2026-12-11T00:00:00Z" });
  });
  test("code other than 200 is unavailable with the server's message", () => {
    const o = zai.parse(own("zai/error_plan.json"));
    expect(o).toMatchObject({ status: "unavailable" });
    expect((o as { message: string }).message).toContain("active coding plan");
  });
});

describe("kimi", () => {
  test("older shape (strings): usage → weekly, the 300-minute window → 5h", () => {
    const o = kimi.parse(shared("kimi/coding_usages_default.json"));
    const w = windows(o);
    expect(plan(o)).toBe("intermediate");
    expect(w.weekly).toEqual({ window: "weekly", used: 0, limit: 100, remaining: 100, unit: "requests", reset_at: "2026-07-13T09:59:07.479Z", period_seconds: 604800 });
    expect(w["5h"]).toMatchObject({ used: 0, limit: 100, remaining: 100, reset_at: "2026-07-11T13:59:07.479Z", period_seconds: 18000 });
    const after = windows(kimi.parse(shared("kimi/coding_usages_post_reset.json")));
    expect(after.weekly.reset_at).toBe("2026-07-20T09:59:07.479Z");
  });
  test("newer shape: usedRatio as percent, string or number", () => {
    const o = kimi.parse(own("kimi/usages_new.json"));
    const w = windows(o);
    expect(plan(o)).toBe("andante");
    expect(w["5h"]).toMatchObject({ used: 37, remaining: 63, reset_at: "2026-11-22T15:00:00Z" });
    expect(w.weekly).toMatchObject({ used: 12.5, remaining: 87.5, reset_at: "2026-11-28T14:00:00Z" });
  });
  test("API balance → balance in cny", () => {
    expect(windows(kimi.parseBalance(own("kimi/balance.json"))).balance).toEqual({ window: "balance", used: 0, limit: 49.59, remaining: 49.59, unit: "cny", reset_at: null, period_seconds: null });
  });
});

describe("minimax", () => {
  test("usage_count is what REMAINS: used = total − usage_count", () => {
    const w = windows(minimax.parse(own("minimax/remains_used.json")));
    expect(w["5h"]).toEqual({ window: "5h", used: 300, limit: 1500, remaining: 1200, unit: "requests", reset_at: "2026-11-22T14:00:00Z", period_seconds: 18000 });
    expect(w.weekly).toMatchObject({ used: 1000, limit: 15000, remaining: 14000 });
  });
  test("live capture: zero totals fall back to the remaining percent; other models get suffixes", () => {
    const w = windows(minimax.parse(shared("minimax/coding_plan_remains_live.json")));
    expect(w["5h"]).toMatchObject({ used: 1, remaining: 99, unit: "percent", reset_at: "2026-07-11T10:00:00Z" });
    expect(w.weekly).toMatchObject({ used: 2, remaining: 98, reset_at: "2026-07-13T00:00:00Z", period_seconds: 604800 });
    expect(w.video_daily).toMatchObject({ used: 0, limit: 3, remaining: 3, reset_at: "2026-07-12T00:00:00Z" });
    expect(w.weekly_video).toMatchObject({ used: 0, limit: 21, remaining: 21 });
  });
  test("a login failure in base_resp is auth_required", () => {
    expect(minimax.parse(own("minimax/error_auth.json")).status).toBe("auth_required");
  });
});

describe("balances", () => {
  test("deepseek: decimal strings per currency", () => {
    const w = windows(deepseek.parse(own("deepseek/balance.json")));
    expect(w.balance).toMatchObject({ remaining: 110.5, limit: 110.5, used: 0, unit: "cny" });
    expect(w.balance_usd).toMatchObject({ remaining: 2.25, unit: "usd" });
  });
  test("deepseek: is_available false → unavailable", () => {
    expect(deepseek.parse(own("deepseek/unavailable.json")).status).toBe("unavailable");
  });
  test("siliconflow: totalBalance in cny", () => {
    expect(windows(siliconflow.parse(own("siliconflow/user_info.json"))).balance).toMatchObject({ remaining: 12.88, unit: "cny" });
  });
  test("openrouter: credits used of total, and the key's own limit", () => {
    const o = openrouter.parse(own("openrouter/credits.json"), own("openrouter/key.json"));
    const w = windows(o);
    expect(plan(o)).toBe("paid");
    expect(w.credits).toEqual({ window: "credits", used: 7.35, limit: 25, remaining: 17.65, unit: "usd", reset_at: null, period_seconds: null });
    expect(w.key_limit).toMatchObject({ used: 3.5, limit: 10, remaining: 6.5 });
    const free = openrouter.parse(own("openrouter/credits.json"), own("openrouter/key_unlimited.json"));
    expect(plan(free)).toBe("free");
    expect(windows(free).key_limit).toBeUndefined();
  });
});

describe("grok", () => {
  test("format=credits: productUsage → weekly_<product> over the current period", () => {
    const w = windows(grok.parse(shared("grok/cli_billing_format_credits.json")));
    expect(w.weekly_grokbuild).toEqual({ window: "weekly_grokbuild", used: 75, limit: 100, remaining: 25, unit: "percent", reset_at: "2026-07-14T10:46:52.885Z", period_seconds: 604800 });
  });
  test("creditUsagePercent when no product is listed", () => {
    const body = shared("grok/cli_billing_format_credits.json");
    delete body.config.productUsage;
    body.config.creditUsagePercent = 40;
    expect(windows(grok.parse(body)).weekly).toMatchObject({ used: 40, remaining: 60 });
  });
  test("plain billing view: monthly credits", () => {
    const w = windows(grok.parse(shared("grok/cli_billing_default.json")));
    expect(w.monthly).toMatchObject({ used: 2931, limit: 15000, remaining: 12069, unit: "credits", reset_at: "2026-08-01T00:00:00Z", period_seconds: 31 * 86400 });
  });
  test("auth.json: the newest unexpired key wins", () => {
    expect(grok.readAuth(own("grok/auth_keys.json"), Date.parse("2026-11-22T00:00:00Z"))?.token).toBe("xai-new");
    const allExpired = { keys: [{ key: "a", created_at: "2026-01-01T00:00:00Z", expires_at: "2026-02-01T00:00:00Z" }] };
    expect(grok.readAuth(allExpired, Date.parse("2026-11-22T00:00:00Z"))).toMatchObject({ token: "a", expiresAt: Date.parse("2026-02-01T00:00:00Z") });
  });
});
