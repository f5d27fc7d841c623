// End to end on the compiled binary: `quotas usage` on real-format samples, two processes indexing the
// same logs at once, and `{cost_today}` in the prompt line and the pre-rendered statusline file.
import { afterEach, beforeAll, describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { generate } from "../quotas/usage/generate";
import { claudeLine, UsageHome, type UsageJson } from "../quotas/usage/logs";
import { ensureBuilt } from "./support";

let bin: string;
let u: UsageHome | undefined;
beforeAll(async () => {
  bin = await ensureBuilt("quotas");
});
afterEach(() => {
  u?.cleanup();
  u = undefined;
});

async function run(args: string[], env: Record<string, string>) {
  const p = Bun.spawn([bin, ...args], { env, stdin: "ignore", stdout: "pipe", stderr: "pipe" });
  const [out, err, code] = await Promise.all([new Response(p.stdout).text(), new Response(p.stderr).text(), p.exited]);
  return { out, err, code };
}

describe("quotas usage (compiled)", () => {
  test("the samples: ccusage's totals; one clear line and exit 2 for a bad flag", async () => {
    u = new UsageHome();
    u.fixture("claude-session.jsonl", ".claude/projects/-home-u-proj/0b1c2d3e-1111-4222-8333-944455556666.jsonl");
    u.fixture("codex-rollout.jsonl", ".codex/sessions/2025/10/12/rollout-2025-10-12T08-30-00-7f1e2d3c-aaaa-4bbb-8ccc-0123456789ab.jsonl");
    const r = await run(["usage", "daily", "--json"], u.h.env);
    expect(r.code).toBe(0);
    const j = JSON.parse(r.out) as UsageJson;
    expect(j.totals).toMatchObject({ total_tokens: 62564, cost_usd: 0.096412 });
    const bad = await run(["usage", "--since=soon"], u.h.env);
    expect(bad.code).toBe(2);
    expect(bad.err.split("\n")[0]).toBe('quotas: --since must be a date like 2025-10-12 (got "soon")');
  });

  test("two processes building the index at once agree, and leave one good index", async () => {
    u = new UsageHome();
    const g = await generate({ home: u.home, entries: 20_000, seed: 11, days: 30 });
    const both = await Promise.all([run(["usage", "daily", "--json"], u.h.env), run(["usage", "monthly", "--json"], u.h.env)]);
    const totals = both.map((r) => {
      expect(r.code).toBe(0);
      return (JSON.parse(r.out) as UsageJson).totals;
    });
    expect(totals[0]).toEqual(totals[1]);
    expect(totals[0]).toMatchObject({ input_tokens: g.input, output_tokens: g.output, cache_write_tokens: g.cacheWrite, cache_read_tokens: g.cacheRead, entries: g.entries });
    const third = JSON.parse((await run(["usage", "--json"], u.h.env)).out) as UsageJson;
    expect(third.index).toEqual({ bytes_read: 0, files_read: 0, rebuilt: false });
    expect(third.totals).toEqual(totals[0]);
  });

  test("{cost_today}: in --statusline and in the pre-rendered file, from the logs' spend today", async () => {
    u = new UsageHome();
    const now = new Date();
    u.claude("p/today.jsonl", [claudeLine({ ts: now.toISOString(), model: "claude-sonnet-4-5-20250929", input: 100_000, output: 10_000 })]);
    const fetched = now.toISOString();
    u.h.write(".cache/quotas/cache.json", { version: 1, refreshed_at: fetched, results: { "claude:default": { provider: "claude", profile: "default", name: "Claude", status: "available", plan: "max", windows: [{ window: "5h", used: 42, limit: 100, remaining: 58, unit: "percent", reset_at: new Date(now.getTime() + 3_600_000).toISOString(), period_seconds: 18000 }], fetched_at: fetched, cached_at: null, auth_source: "~/.claude/.credentials.json" } } });
    u.h.write(".cache/quotas/update.json", { checked_at: fetched, current: "0.0.0", latest: "0.0.0" });
    u.h.write(".config/quotas/config.toml", '[statusline]\nformat = "%provider %percent {cost_today}"\nicons = false\n');
    // before any usage run: no figure, nothing else changes
    expect((await run(["--statusline", "--no-icons", "--format=%provider %percent {cost_today}"], u.h.env)).out.trim()).toBe("Claude 42%");
    expect((await run(["usage"], u.h.env)).code).toBe(0);
    // 100k × $3 + 10k × $15 per million = $0.45
    expect((await run(["--statusline", "--no-icons", "--format=%provider %percent {cost_today}"], u.h.env)).out.trim()).toBe("Claude 42% $0.45");
    // the first prompt after the change pre-renders statusline.txt, which the shell then reads itself
    await run(["--statusline"], u.h.env);
    expect(readFileSync(join(u.home, ".cache/quotas/statusline.txt"), "utf8")).toBe("Claude 42% $0.45\n");
  });
});
