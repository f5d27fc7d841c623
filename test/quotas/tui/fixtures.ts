// Sample targets and results for the TUI tests. Times are relative to NOW so countdowns are known.
import type { ProviderResult, QuotaWindow, Target } from "../../../src/quotas/model/types.ts";

export const NOW = new Date("2026-11-22T09:00:00Z");

export const iso = (msFromNow: number) => new Date(NOW.getTime() + msFromNow).toISOString();
const H = 3_600_000;
const M = 60_000;

export function target(provider: string, profile = "default", name?: string): Target {
  return { key: `${provider}:${profile}`, provider, profile, name: name ?? provider[0].toUpperCase() + provider.slice(1) };
}

export function win(window: string, used: number, limit: number, extra: Partial<QuotaWindow> = {}): QuotaWindow {
  return { window, used, limit, remaining: limit - used, unit: "percent", reset_at: null, period_seconds: null, ...extra };
}

export function result(t: Target, windows: QuotaWindow[], extra: Partial<ProviderResult> = {}): ProviderResult {
  return {
    provider: t.provider, profile: t.profile, name: t.name, status: "available", plan: "pro", windows,
    fetched_at: iso(-2 * M), cached_at: null, auth_source: `env ${t.provider.toUpperCase()}_API_KEY`, ...extra,
  };
}

export const claude = target("claude");
export const codex = target("codex");
export const zai = target("zai", "default", "Z.ai");
export const kimi = target("kimi");
export const deepseek = target("deepseek", "default", "DeepSeek");

/** Claude: 5h at 42 % with 3h 12m left of 5h (elapsed 36 %: ahead of pace), weekly at 10 %. */
export const claudeResult = result(claude, [
  win("5h", 42, 100, { reset_at: iso(3 * H + 12 * M), period_seconds: 5 * 3600 }),
  win("weekly", 10, 100, { reset_at: iso(4 * 24 * H), period_seconds: 7 * 86400 }),
  win("weekly_opus", 95, 100, { reset_at: iso(4 * 24 * H), period_seconds: 7 * 86400 }),
], { plan: "max", console_url: "https://claude.ai/settings/usage", auth_source: "~/.claude/.credentials.json" });

export const codexResult = result(codex, [
  win("5h", 12, 100, { reset_at: iso(2 * H), period_seconds: 5 * 3600 }),
  win("weekly", 71, 100, { reset_at: iso(2 * 24 * H), period_seconds: 7 * 86400 }),
], { plan: "plus" });

export const zaiAuth: ProviderResult = {
  ...result(zai, []), status: "auth_required", plan: null, hint: "set ZAI_API_KEY", auth_source: null,
};

export const deepseekResult = result(deepseek, [
  { window: "balance", used: 0, limit: 0, remaining: 37.2, unit: "cny", reset_at: null, period_seconds: null },
], { plan: null });

/** A result with many windows, for scrolling. */
export function manyWindows(t: Target, n: number): ProviderResult {
  return result(t, Array.from({ length: n }, (_, i) => win(`w${String(i).padStart(2, "0")}`, i, 100, { reset_at: iso((i + 1) * H), period_seconds: 86400 })));
}
