// cache.json rules: a network_error keeps the last good result (shown with its age); auth_required
// and other results replace it; writes are atomic and concurrent writers never corrupt the file.
import { afterEach, describe, expect, test } from "bun:test";
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { cachePath, readCache, record } from "../../src/quotas/fetch/cache";
import type { ProviderResult } from "../../src/quotas/model/types";
import { tempHome, type TempHome } from "./helpers";

let h: TempHome;
afterEach(() => h?.cleanup());

const result = (status: ProviderResult["status"], at: string, extra: Partial<ProviderResult> = {}): ProviderResult => ({
  provider: "claude", profile: "default", name: "Claude", status, plan: status === "available" ? "max" : null,
  windows: status === "available" ? [{ window: "5h", used: 42, limit: 100, remaining: 58, unit: "percent", reset_at: null, period_seconds: 18000 }] : [],
  fetched_at: at, cached_at: null, auth_source: "~/.claude/.credentials.json", ...extra,
});

describe("cache", () => {
  test("a network_error keeps the older good result and shows it with cached_at", async () => {
    h = tempHome();
    await record(h.ctx, [result("available", "2026-11-22T08:00:00Z", { raw: { email: "me@example.com" } })], true);
    const [shown] = await record(h.ctx, [result("network_error", "2026-11-22T09:00:00Z", { message: "timed out after 10 s" })], true);
    expect(shown).toMatchObject({ status: "available", cached_at: "2026-11-22T08:00:00Z", fetched_at: "2026-11-22T08:00:00Z" });
    expect(shown.message).toContain("timed out");
    const stored = readCache(h.ctx).results["claude:default"];
    expect(stored).toMatchObject({ status: "available", fetched_at: "2026-11-22T08:00:00Z" });
    expect(readFileSync(cachePath(h.ctx), "utf8")).not.toContain("me@example.com");
  });
  test("auth_required after a logout replaces the good result", async () => {
    h = tempHome();
    await record(h.ctx, [result("available", "2026-11-22T08:00:00Z")], true);
    const [shown] = await record(h.ctx, [result("auth_required", "2026-11-22T09:00:00Z", { hint: "run `claude`" })], true);
    expect(shown.status).toBe("auth_required");
    expect(readCache(h.ctx).results["claude:default"].status).toBe("auth_required");
  });
  test("a network_error with nothing good before is stored as it is", async () => {
    h = tempHome();
    const [shown] = await record(h.ctx, [result("network_error", "2026-11-22T09:00:00Z", { message: "refused" })], false);
    expect(shown).toMatchObject({ status: "network_error", cached_at: null });
    expect(readCache(h.ctx)).toMatchObject({ refreshed_at: null, results: { "claude:default": { status: "network_error" } } });
  });
  test("a corrupt cache reads as empty and is replaced on the next write", async () => {
    h = tempHome();
    h.write(".cache/quotas/cache.json", "{ not json");
    expect(readCache(h.ctx).results).toEqual({});
    await record(h.ctx, [result("available", "2026-11-22T08:00:00Z")], true);
    expect(readCache(h.ctx).refreshed_at).toBe("2026-11-22T09:00:00.000Z");
  });
  test("many concurrent writers: the file always parses and keeps every key; no temp files left", async () => {
    h = tempHome();
    const writers = Array.from({ length: 20 }, (_, i) =>
      record(h.ctx, [result("available", "2026-11-22T08:00:00Z", { provider: `p${i}`, profile: "default" })], false),
    );
    await Promise.all(writers);
    const cache = readCache(h.ctx);
    expect(Object.keys(cache.results).sort()).toEqual(Array.from({ length: 20 }, (_, i) => `p${i}:default`).sort());
    expect(readdirSync(join(h.home, ".cache/quotas"))).toEqual(["cache.json"]);
  });
});
