// `quotas usage`: totals, dedupe, time zones, malformed and truncated lines, the incremental index
// (appends, truncation, rotation), pricing tiers and overrides, Codex token events, blocks, output forms.
import { afterEach, describe, expect, test } from "bun:test";
import { renameSync, truncateSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { generate } from "./generate";
import { claudeLine, codexLines, UsageHome } from "./logs";

let u: UsageHome | undefined;
afterEach(() => {
  u?.cleanup();
  u = undefined;
});
const home = (env: Record<string, string> = {}) => (u = new UsageHome(env));
const round = (x: number) => Math.round(x * 1e6) / 1e6;

describe("totals", () => {
  test("the real-format samples: same tokens and cost as ccusage 20.0.24 prints for them", async () => {
    const h = home();
    h.fixture("claude-session.jsonl", ".claude/projects/-home-u-proj/0b1c2d3e-1111-4222-8333-944455556666.jsonl");
    h.fixture("codex-rollout.jsonl", ".codex/sessions/2025/10/12/rollout-2025-10-12T08-30-00-7f1e2d3c-aaaa-4bbb-8ccc-0123456789ab.jsonl");
    const j = await h.json();
    // ccusage daily --json --offline on the same two files: 62564 tokens, $0.096412
    expect(j.totals).toMatchObject({ input_tokens: 5014, output_tokens: 1550, cache_write_tokens: 1000, cache_read_tokens: 55000, total_tokens: 62564, cost_usd: 0.096412, entries: 4 });
    expect(j.duplicate_entries).toBe(1);
    expect(j.groups.map((g) => g.key)).toEqual(["2025-10-12"]);
    const models = Object.fromEntries(j.groups[0].models.map((m) => [m.model, m.cost_usd]));
    expect(models).toEqual({ "claude-opus-4-1-20250805": 0.06765, "gpt-5-codex": 0.01675, "claude-sonnet-4-5-20250929": 0.012012 });
  });

  test("generated logs of both agents: every token counted once, per agent and per model", async () => {
    const h = home();
    const g = await generate({ home: h.home, entries: 3000, seed: 3, days: 20 });
    const j = await h.json();
    expect(j.totals).toMatchObject({ input_tokens: g.input, output_tokens: g.output, cache_write_tokens: g.cacheWrite, cache_read_tokens: g.cacheRead, entries: g.entries });
    expect(j.unpriced_models).toEqual([]);
    const claude = await h.json(["--agent=claude"]);
    const codex = await h.json(["--agent=codex"]);
    expect(claude.totals.total_tokens + codex.totals.total_tokens).toBe(j.totals.total_tokens);
    expect(round(claude.totals.cost_usd + codex.totals.cost_usd)).toBeCloseTo(j.totals.cost_usd, 4);
    const opus = await h.json(["--model=opus"]);
    expect(opus.groups.flatMap((x) => x.models.map((m) => m.model)).every((m) => m.includes("opus"))).toBe(true);
    const monthly = await h.run(["monthly", "--json"]);
    expect((JSON.parse(monthly.out) as { totals: { total_tokens: number } }).totals.total_tokens).toBe(j.totals.total_tokens);
  });

  test("--since/--until keep whole days; bad dates and names are usage errors", async () => {
    const h = home();
    h.claude("p/a.jsonl", ["2025-03-01T10:00:00Z", "2025-03-02T10:00:00Z", "2025-03-03T10:00:00Z"].map((ts) => claudeLine({ ts })));
    expect((await h.json(["--since=2025-03-02", "--until=20250302"])).groups.map((g) => g.key)).toEqual(["2025-03-02"]);
    await expect(h.run(["--since=yesterday"])).rejects.toThrow("--since must be a date");
    await expect(h.run(["--agent=cursor"])).rejects.toThrow('unknown agent "cursor"');
    await expect(h.run(["hourly"])).rejects.toThrow('unknown report "hourly"');
    await expect(h.run(["--timezone=Mars/Olympus"])).rejects.toThrow("unknown time zone");
  });
});

describe("dedupe", () => {
  test("the same message and request id counts once, across files too; another request id counts again", async () => {
    const h = home();
    const a = claudeLine({ ts: "2025-05-01T10:00:00Z", id: "msg_A", req: "req_1", input: 1000 });
    h.claude("p/one.jsonl", [a, a]);
    h.claude("p/two.jsonl", [a, claudeLine({ ts: "2025-05-01T10:01:00Z", id: "msg_A", req: "req_2", input: 7 })]);
    const j = await h.json();
    expect(j.totals.input_tokens).toBe(1007);
    expect(j.duplicate_entries).toBe(2);
  });

  test("a sidechain replay of a message (same id, new request id) counts once", async () => {
    const h = home();
    h.claude("p/main.jsonl", [claudeLine({ ts: "2025-05-01T10:00:00Z", id: "msg_P", req: "req_parent", cacheRead: 5000 })]);
    h.claude("p/main/subagents/agent-1.jsonl", [
      claudeLine({ ts: "2025-05-01T10:00:01Z", id: "msg_P", req: "req_side", cacheRead: 5000, sidechain: true }),
      claudeLine({ ts: "2025-05-01T10:00:02Z", id: "msg_S", req: "req_side2", input: 3, sidechain: true }),
    ]);
    const j = await h.json();
    expect(j.totals.cache_read_tokens).toBe(5000);
    expect(j.totals.entries).toBe(2);
  });

  test("a duplicate appended later is still recognised by the index", async () => {
    const h = home();
    const a = claudeLine({ ts: "2025-05-01T10:00:00Z", id: "msg_A", req: "req_1", input: 1000 });
    const f = h.claude("p/one.jsonl", [a]);
    expect((await h.json()).totals.input_tokens).toBe(1000);
    h.append(f, `${a}\n`);
    h.claude("p/two.jsonl", [a]);
    const j = await h.json();
    expect(j.totals.input_tokens).toBe(1000);
    expect(j.index.rebuilt).toBe(false);
  });
});

describe("time zones and day boundaries", () => {
  test("an entry at 23:30 UTC is the next day in Berlin and the same day in Los Angeles", async () => {
    const h = home();
    h.claude("p/a.jsonl", [claudeLine({ ts: "2025-01-15T23:30:00Z", input: 1 }), claudeLine({ ts: "2025-01-16T07:59:59.999Z", input: 2 }), claudeLine({ ts: "2025-01-16T08:00:00Z", input: 4 })]);
    const days = async (tz: string) => Object.fromEntries((await h.json([`--timezone=${tz}`])).groups.map((g) => [g.key, g.input_tokens]));
    expect(await days("UTC")).toEqual({ "2025-01-15": 1, "2025-01-16": 6 });
    expect(await days("Europe/Berlin")).toEqual({ "2025-01-16": 7 });
    expect(await days("America/Los_Angeles")).toEqual({ "2025-01-15": 3, "2025-01-16": 4 });
    expect(await days("Asia/Kolkata")).toEqual({ "2025-01-16": 7 }); // +05:30
    // --since is a day in the chosen zone
    expect((await h.json(["--timezone=America/Los_Angeles", "--since=2025-01-16"])).totals.input_tokens).toBe(4);
  });

  test("days across a DST change; offsets in timestamps; $TZ is the default zone", async () => {
    const h = home({ TZ: "Europe/Berlin" });
    // Berlin leaves summer time on 2025-10-26 at 03:00 local (01:00 UTC)
    // 22:30 UTC is 00:30 the next day in summer time (+2), 23:30 the same day in winter time (+1)
    h.claude("p/a.jsonl", [
      claudeLine({ ts: "2025-10-25T22:30:00Z", input: 1 }),
      claudeLine({ ts: "2025-10-26T22:30:00Z", input: 2 }),
      claudeLine({ ts: "2025-10-26T23:30:00Z", input: 4 }),
      claudeLine({ ts: "2025-10-27T00:30:00+02:00", input: 8 }),
    ]);
    const j = await h.json();
    expect(j.timezone).toBe("Europe/Berlin");
    expect(Object.fromEntries(j.groups.map((g) => [g.key, g.input_tokens]))).toEqual({ "2025-10-26": 11, "2025-10-27": 4 });
    const weekly = JSON.parse((await h.run(["weekly", "--json"])).out) as { groups: { key: string }[] };
    expect(weekly.groups.map((g) => g.key)).toEqual(["2025-10-20", "2025-10-27"]); // ISO weeks start on Monday
  });
});

describe("broken lines", () => {
  test("malformed lines are skipped and counted; a last line without its newline waits for the next run", async () => {
    const h = home();
    const good = claudeLine({ ts: "2025-05-01T10:00:00Z", input: 10 });
    const half = claudeLine({ ts: "2025-05-01T10:05:00Z", input: 20 });
    const f = h.claude("p/a.jsonl", [good, good.slice(0, good.indexOf('"usage":{') + 30), "not json at all", '{"type":"summary","summary":"x"}']);
    h.append(f, half.slice(0, 200));
    const j = await h.json();
    expect(j.totals.input_tokens).toBe(10);
    expect(j.malformed_lines).toBe(1);
    h.append(f, `${half.slice(200)}\n`);
    const k = await h.json();
    expect(k.totals.input_tokens).toBe(30);
    expect(k.index.rebuilt).toBe(false);
    expect(k.malformed_lines).toBe(1);
    const text = await h.run([]);
    expect(text.out).toContain("1 malformed line skipped");
  });
});

describe("the incremental index", () => {
  test("a second run reads only what was appended", async () => {
    const h = home();
    await generate({ home: h.home, entries: 2000, seed: 5, days: 5 });
    const cold = await h.json();
    expect(cold.index.rebuilt).toBe(true);
    const warm = await h.json();
    expect(warm.index).toEqual({ bytes_read: 0, files_read: 0, rebuilt: false });
    expect(warm.totals).toEqual(cold.totals);
    const line = `${claudeLine({ ts: "2025-06-03T10:00:00Z", input: 123 })}\n`;
    const f = join(h.home, ".claude/projects/p/new.jsonl");
    h.claude("p/new.jsonl", []);
    h.append(f, line);
    const after = await h.json();
    expect(after.index).toEqual({ bytes_read: line.length, files_read: 1, rebuilt: false });
    expect(after.totals.input_tokens).toBe(cold.totals.input_tokens + 123);
  });

  test("a truncated, rewritten, rotated or deleted log makes the index start over, with correct totals", async () => {
    const h = home();
    const lines = [1, 2, 3, 4].map((i) => claudeLine({ ts: `2025-05-0${i}T10:00:00Z`, input: i }));
    const f = h.claude("p/a.jsonl", lines);
    expect((await h.json()).totals.input_tokens).toBe(10);
    // truncated to its first line
    truncateSync(f, lines[0].length + 1);
    let j = await h.json();
    expect(j.index.rebuilt).toBe(true);
    expect(j.totals.input_tokens).toBe(1);
    // rotated: the old file renamed (still a log), a new one in its place
    renameSync(f, f.replace("a.jsonl", "a-old.jsonl"));
    h.claude("p/a.jsonl", [claudeLine({ ts: "2025-05-09T10:00:00Z", input: 100 })]);
    j = await h.json();
    expect(j.index.rebuilt).toBe(true);
    expect(j.totals.input_tokens).toBe(101);
    // deleted
    const { rmSync } = await import("node:fs");
    rmSync(f.replace("a.jsonl", "a-old.jsonl"));
    j = await h.json();
    expect(j.totals.input_tokens).toBe(100);
    // a broken index is a cold index
    writeFileSync(join(h.home, ".cache/quotas/usage/manifest.json"), "{ nope");
    j = await h.json();
    expect(j.index.rebuilt).toBe(true);
    expect(j.totals.input_tokens).toBe(100);
  });
});

describe("an unusable cache directory", () => {
  test("the report still comes out, read straight from the logs", async () => {
    const h = home();
    h.claude("p/a.jsonl", [claudeLine({ ts: "2025-05-01T10:00:00Z", input: 42 })]);
    h.h.env.XDG_CACHE_HOME = h.write("not-a-dir", ["x"]);
    expect((await h.json()).totals.input_tokens).toBe(42);
    expect((await h.json()).totals.input_tokens).toBe(42);
  });
});

describe("pricing", () => {
  test("long-context tier: a Sonnet 4.5 prompt over 200k tokens is billed at the long rates; Opus has none", async () => {
    const h = home();
    h.claude("p/a.jsonl", [
      claudeLine({ ts: "2025-05-01T10:00:00Z", model: "claude-sonnet-4-5-20250929", input: 1000, cacheRead: 199_000, output: 1000 }),
      claudeLine({ ts: "2025-05-01T10:01:00Z", model: "claude-sonnet-4-5-20250929", input: 1001, cacheRead: 199_000, output: 1000 }),
      claudeLine({ ts: "2025-05-01T10:02:00Z", model: "claude-opus-4-1-20250805", input: 1001, cacheRead: 199_000, output: 1000 }),
    ]);
    const models = (await h.json()).groups[0].models;
    const cost = Object.fromEntries(models.map((m) => [m.model, m.cost_usd]));
    // 1000×3 + 199000×0.3 + 1000×15 = 77700 µ$ at the base rate; 1001×6 + 199000×0.6 + 1000×22.5 = 147906 µ$ long
    expect(cost["claude-sonnet-4-5-20250929"]).toBeCloseTo(0.0777 + 0.147906, 6);
    expect(cost["claude-opus-4-1-20250805"]).toBeCloseTo((1001 * 15 + 199_000 * 1.5 + 1000 * 75) / 1e6, 6);
  });

  test("1-hour cache writes cost twice the input price; 5-minute ones the cache-write price", async () => {
    const h = home();
    h.claude("p/a.jsonl", [claudeLine({ ts: "2025-05-01T10:00:00Z", model: "claude-haiku-4-5-20251001", input: 0, output: 0, cacheWrite: 1_000_000, cacheWrite1h: 1_000_000 })]);
    expect((await h.json()).totals.cost_usd).toBeCloseTo(1.25 + 2, 6);
  });

  test("--pricing FILE (ours or LiteLLM's shape) overrides; an unknown model is listed and counted at $0", async () => {
    const h = home();
    h.claude("p/a.jsonl", [claudeLine({ ts: "2025-05-01T10:00:00Z", model: "my-model-1", input: 100_000, output: 0 }), claudeLine({ ts: "2025-05-01T10:00:00Z", model: "claude-sonnet-4-5", input: 100_000, output: 0 })]);
    const plain = await h.json();
    expect(plain.unpriced_models).toEqual(["my-model-1"]);
    expect(plain.totals.cost_usd).toBeCloseTo(0.3, 6);
    const ours = h.write("prices.json", [JSON.stringify({ date: "2026-01-01", models: { "my-model-1": { input: 2, output: 4 } } })]);
    expect((await h.json([`--pricing=${ours}`])).totals.cost_usd).toBeCloseTo(0.5, 6);
    const litellm = h.write("litellm.json", [JSON.stringify({ "my-model-1": { input_cost_per_token: 1e-6, output_cost_per_token: 2e-6, litellm_provider: "x" }, sample_spec: { note: "ignored" } })]);
    const j = await h.json([`--pricing=${litellm}`]);
    expect(j.totals.cost_usd).toBeCloseTo(0.4, 6);
    expect(j.unpriced_models).toEqual([]);
    await expect(h.run([`--pricing=${join(h.home, "missing.json")}`])).rejects.toThrow("cannot read");
  });

  test("--refresh-pricing fetches the list once (from QUOTAS_PRICING_URL in tests) and later runs use it offline", async () => {
    const server = Bun.serve({ port: 0, hostname: "127.0.0.1", fetch: () => Response.json({ "my-model-1": { input_cost_per_token: 3e-6, output_cost_per_token: 0 } }) });
    try {
      const h = home({ QUOTAS_PRICING_URL: `http://127.0.0.1:${server.port}/prices.json` });
      h.claude("p/a.jsonl", [claudeLine({ ts: "2025-05-01T10:00:00Z", model: "my-model-1", input: 1_000_000, output: 0 })]);
      const r = await h.run(["--refresh-pricing", "--json"]);
      expect(r.err).toContain("prices for");
      expect((JSON.parse(r.out) as { totals: { cost_usd: number } }).totals.cost_usd).toBeCloseTo(3, 6);
      server.stop(true);
      expect((await h.json()).totals.cost_usd).toBeCloseTo(3, 6);
    } finally {
      server.stop(true);
    }
  });
});

describe("Codex CLI", () => {
  test("turn deltas from last_token_usage, or from running totals; repeated totals count once; cached input is cache read", async () => {
    const h = home();
    h.codex("2025/05/01/rollout-a.jsonl", codexLines("gpt-5-codex", [
      { ts: "2025-05-01T10:00:00Z", input: 1000, cached: 400, output: 100 },
      { ts: "2025-05-01T10:01:00Z", input: 2000, cached: 1500, output: 50, totalOnly: true },
    ]));
    const lines = codexLines(null, [{ ts: "2025-05-01T11:00:00Z", input: 500, cached: 0, output: 10 }]);
    h.codex("2025/05/01/rollout-b.jsonl", [...lines, lines[lines.length - 1]]);
    const j = await h.json();
    expect(j.totals).toMatchObject({ input_tokens: 600 + 500 + 500, cache_read_tokens: 1900, output_tokens: 160, cache_write_tokens: 0 });
    const models = Object.fromEntries(j.groups[0].models.map((m) => [m.model, m.input_tokens]));
    expect(models).toEqual({ "gpt-5-codex": 1100, "gpt-5": 500 }); // no turn_context: priced as gpt-5, as ccusage does
  });

  test("a rollout in both sessions/ and archived_sessions/ counts once (the active copy)", async () => {
    const h = home();
    const lines = codexLines("gpt-5", [{ ts: "2025-05-01T10:00:00Z", input: 10, cached: 0, output: 1 }]);
    h.codex("2025/05/01/rollout-a.jsonl", lines);
    h.write(".codex/archived_sessions/2025/05/01/rollout-a.jsonl", lines);
    h.write(".codex/archived_sessions/2025/04/01/rollout-b.jsonl", codexLines("gpt-5", [{ ts: "2025-04-01T10:00:00Z", input: 100, cached: 0, output: 1 }]));
    expect((await h.json()).totals.input_tokens).toBe(110);
  });

  test("CODEX_HOME and CLAUDE_CONFIG_DIR (several, comma-separated) are where the logs are", async () => {
    const h = home();
    h.write("elsewhere/codex/sessions/2025/05/01/rollout-x.jsonl", codexLines("gpt-5", [{ ts: "2025-05-01T10:00:00Z", input: 10, cached: 0, output: 1 }]));
    h.write("cfg1/projects/p/a.jsonl", [claudeLine({ ts: "2025-05-01T10:00:00Z", input: 1000 })]);
    h.write("cfg2/projects/p/b.jsonl", [claudeLine({ ts: "2025-05-01T10:00:00Z", input: 2000 })]);
    h.claude("p/ignored.jsonl", [claudeLine({ ts: "2025-05-01T10:00:00Z", input: 50_000 })]);
    h.h.env.CODEX_HOME = join(h.home, "elsewhere/codex");
    h.h.env.CLAUDE_CONFIG_DIR = `${join(h.home, "cfg1")},${join(h.home, "cfg2")}`;
    expect((await h.json()).totals.input_tokens).toBe(3010);
  });
});

describe("reports", () => {
  test("blocks: 5-hour windows from the hour of the first entry; the active one has burn rate and projection, tied to the plan's 5h window", async () => {
    const h = home();
    const now = Date.now();
    const iso = (ms: number) => new Date(ms).toISOString();
    h.claude("p/a.jsonl", [
      claudeLine({ ts: iso(now - 30 * 3_600_000), input: 1 }),
      claudeLine({ ts: iso(now - 29 * 3_600_000), input: 2 }),
      claudeLine({ ts: iso(now - 40 * 60_000), input: 100_000, output: 1000 }),
      claudeLine({ ts: iso(now - 10 * 60_000), input: 100_000, output: 1000 }),
    ]);
    h.h.write(".cache/quotas/cache.json", { version: 1, refreshed_at: iso(now), results: { "claude:default": { provider: "claude", profile: "default", name: "Claude", status: "available", plan: "max", windows: [{ window: "5h", used: 40, limit: 100, remaining: 60, unit: "percent", reset_at: iso(now + 4 * 3_600_000), period_seconds: 18000 }], fetched_at: iso(now), cached_at: null, auth_source: "~" } } });
    const r = await h.run(["blocks", "--json"]);
    const j = JSON.parse(r.out) as { groups: { key: string; active: boolean; input_tokens: number; burn?: { tokens_per_minute: number; projected_cost_usd: number; cost_per_hour_usd: number } }[]; quota: string[] };
    expect(j.groups.map((g) => g.input_tokens)).toEqual([3, 200_000]);
    expect(j.groups.map((g) => g.active)).toEqual([false, true]);
    expect(Date.parse(j.groups[0].key) % 3_600_000).toBe(0);
    const burn = j.groups[1].burn!;
    expect(burn.tokens_per_minute).toBeGreaterThan(0);
    expect(burn.projected_cost_usd).toBeGreaterThan(0);
    expect(j.quota[0]).toMatch(/^claude 5h window: 40% used at \d\d:\d\d, \$\d+\.\d\d spent in it so far, resets \d\d:\d\d; at this rate it runs out at \d\d:\d\d$/);
    const text = await h.run(["blocks"]);
    expect(text.out).toContain("(active)");
    expect(text.out).toContain("Active block:");
  });

  test("session, CSV and the table", async () => {
    const h = home();
    h.claude("-home-u-p/sess-1.jsonl", [claudeLine({ ts: "2025-05-01T10:00:00Z", input: 5 })]);
    h.codex("2025/05/02/rollout-2025-05-02T10-00-00-abc.jsonl", codexLines("gpt-5", [{ ts: "2025-05-02T10:00:00Z", input: 7, cached: 0, output: 1 }]));
    const s = JSON.parse((await h.run(["session", "--json"])).out) as { groups: { key: string }[] };
    expect(s.groups.map((g) => g.key)).toEqual(["claude:-home-u-p/sess-1", "codex:rollout-2025-05-02T10-00-00-abc"]);
    const csv = (await h.run(["daily", "--csv"])).out.trim().split("\n");
    expect(csv[0]).toBe("period,agent,model,input_tokens,output_tokens,cache_write_tokens,cache_read_tokens,total_tokens,cost_usd");
    expect(csv.slice(1)).toEqual(["2025-05-01,claude,claude-sonnet-4-5-20250929,5,10,0,0,15,0.000165", "2025-05-02,codex,gpt-5,7,1,0,0,8,0.000019"]);
    const table = (await h.run([])).out;
    expect(table).toContain("2025-05-01");
    expect(table).toMatch(/Total\s+12\s+11/);
    await expect(h.run(["--json", "--csv"])).rejects.toThrow("cannot be combined");
    expect((await h.run(["--help"])).out).toContain("--refresh-pricing");
  });
});
