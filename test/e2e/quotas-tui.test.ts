// The compiled `quotas` TUI in a real terminal (tmux): temporary HOME and XDG dirs, a fake Claude
// credential file, Z.ai and DeepSeek keys in the environment, and one fake provider server on
// loopback that all endpoints point at (QUOTAS_ENDPOINT_<PROVIDER>).
import { afterAll, afterEach, beforeAll, describe, expect, test } from "bun:test";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import toml from "toml";
import { openHistory } from "../../src/quotas/fetch/history.ts";
import { expectRestored, Tmux } from "../quotas/tui/tmux.ts";
import { ensureBuilt } from "./support.ts";

const T = 60_000;
const H = 3_600_000;
const CONFIG = `# My quotas setup: keep this comment
[providers]
enabled = ["claude", "codex", "zai", "deepseek"] # the ones I pay for

# TUI behaviour
[tui]
refresh_on_start = true
`;

let bin: string;
let server: ReturnType<typeof Bun.serve>;
const hits: string[] = [];
let delayMs = 0;
let claude5h = 42;
// Reset times fixed once, 30 s past the minute, so "resets in 3h 12m" holds for the whole run.
const resets5h = new Date(Date.now() + 3 * H + 12 * 60_000 + 30_000).toISOString();
const resetsWeek = new Date(Date.now() + 4 * 24 * H + 30_000).toISOString();

let dir: string;
let term: Tmux | null = null;

beforeAll(async () => {
  bin = await ensureBuilt("quotas");
  server = Bun.serve({
    port: 0,
    hostname: "127.0.0.1",
    async fetch(req) {
      const url = new URL(req.url);
      hits.push(url.pathname);
      if (delayMs) await Bun.sleep(delayMs);
      const auth = req.headers.get("authorization");
      if (url.pathname === "/api/oauth/usage" && auth === "Bearer claude-work-token") {
        return Response.json({ five_hour: { utilization: 66, resets_at: resets5h }, seven_day: { utilization: 30, resets_at: resetsWeek } });
      }
      if (url.pathname === "/api/oauth/usage" && auth === "Bearer claude-token") {
        return Response.json({
          five_hour: { utilization: claude5h, resets_at: resets5h },
          seven_day: { utilization: 10, resets_at: resetsWeek },
          seven_day_opus: { utilization: 95, resets_at: resetsWeek },
        });
      }
      if (url.pathname === "/api/monitor/usage/quota/limit" && auth === "Bearer zai-key") {
        return Response.json({
          code: 200, msg: "ok", success: true,
          data: {
            level: "pro",
            limits: [
              { type: "TOKENS_LIMIT", unit: 3, usage: 1_000_000, currentValue: 250_000, remaining: 750_000, percentage: 25, nextResetTime: Date.parse(resets5h) },
              { type: "TIME_LIMIT", unit: 5, usage: 1000, currentValue: 42, remaining: 958, percentage: 4, nextResetTime: Date.parse(resetsWeek) },
            ],
          },
        });
      }
      if (url.pathname === "/user/balance" && auth === "Bearer deepseek-key") {
        return Response.json({ is_available: true, balance_infos: [{ currency: "CNY", total_balance: "37.20", granted_balance: "0.00", topped_up_balance: "37.20" }] });
      }
      return Response.json({ error: "unexpected request" }, { status: 404 });
    },
  });
});

afterAll(() => {
  server.stop(true);
});

afterEach(() => {
  term?.stop();
  term = null;
  rmSync(dir, { recursive: true, force: true });
  hits.length = 0;
  delayMs = 0;
  claude5h = 42;
});

function makeHome(): void {
  dir = mkdtempSync(join(tmpdir(), "qtui-e2e-"));
  for (const d of ["home/.claude", "config/quotas", "cache", "data"]) mkdirSync(join(dir, d), { recursive: true });
  writeFileSync(join(dir, "home/.claude/.credentials.json"), JSON.stringify({
    claudeAiOauth: { accessToken: "claude-token", refreshToken: "never-used", expiresAt: Date.now() + 24 * H, subscriptionType: "max" },
  }));
  writeFileSync(join(dir, "config/quotas/config.toml"), CONFIG);
}

const configText = () => readFileSync(join(dir, "config/quotas/config.toml"), "utf8");

async function openTerminal(width = 80, height = 24, extraEnv: Record<string, string> = {}): Promise<Tmux> {
  const base = `http://127.0.0.1:${server.port}`;
  term = await Tmux.start({
    width,
    height,
    cwd: dir,
    env: {
      HOME: join(dir, "home"),
      XDG_CONFIG_HOME: join(dir, "config"),
      XDG_CACHE_HOME: join(dir, "cache"),
      XDG_DATA_HOME: join(dir, "data"),
      ZAI_API_KEY: "zai-key",
      DEEPSEEK_API_KEY: "deepseek-key",
      QUOTAS_ENDPOINT_CLAUDE: base,
      QUOTAS_ENDPOINT_ZAI: base,
      QUOTAS_ENDPOINT_DEEPSEEK: base,
      npm_config_registry: "http://127.0.0.1:9/",
      ...extraEnv,
    },
  });
  return term;
}

/** Starts `quotas` at the prompt and waits until every card has its numbers. */
async function launch(t: Tmux): Promise<string> {
  t.type(`${bin} --no-update-check`);
  return t.waitFor((s) => s.includes("3 of 4 providers loaded") && !s.includes("refreshing"), "all providers loaded");
}

async function quitAndWait(t: Tmux, key = "q"): Promise<void> {
  t.keys(key);
  await t.waitForPrompt();
}

describe("quotas TUI (compiled binary in tmux)", () => {
  test("the dashboard shows each provider's numbers from the fake servers", async () => {
    makeHome();
    const t = await openTerminal();
    const screen = await launch(t);
    expect(screen).toMatch(/5h\s+42\/100%\s+█+░+\s+resets in 3h 12m/);
    expect(screen).toMatch(/weekly\s+10\/100%/);
    expect(screen).toMatch(/weekly_opus\s+95\/100%/);
    expect(screen).toContain("Claude · max");
    expect(screen).toMatch(/5h\s+250k\/1M tok/);
    expect(screen).toMatch(/monthly_mcp\s+42\/1000 req/);
    expect(screen).toContain("Z.ai · pro");
    expect(screen).toContain("balance  37.20 CNY");
    expect(screen).toContain("3 of 4 providers loaded · needs a key: Codex");
    expect(new Set(hits)).toEqual(new Set(["/api/oauth/usage", "/api/monitor/usage/quota/limit", "/user/balance"]));
    await quitAndWait(t);
  }, T);

  test("with a warm cache the first frame has the numbers before any provider answers", async () => {
    makeHome();
    const t = await openTerminal();
    await launch(t);
    await quitAndWait(t);
    delayMs = 3000;
    claude5h = 43;
    t.type(`${bin} --no-update-check`);
    const first = await t.waitForText("providers loaded");
    expect(first).toContain("42/100%"); // the cached value ...
    expect(first).toContain("refreshing"); // ... while the refresh is still in flight
    expect(first).toContain("37.20 CNY");
    await t.waitForText("43/100%", 15_000); // then the card fills in with the fresh answer
    await quitAndWait(t);
  }, T);

  test("navigation and Enter open the right card; Esc goes back", async () => {
    makeHome();
    const t = await openTerminal();
    await launch(t);
    t.keys("Down", "Down", "Enter");
    const detail = await t.waitForText("› Z.ai");
    expect(detail).toContain("Z.ai · plan pro · available");
    expect(detail).toContain("source env ZAI_API_KEY");
    expect(detail).toMatch(/› {3}5h\s+250k\/1M tok/);
    t.keys("Escape", "j", "Enter");
    const ds = await t.waitForText("› DeepSeek");
    expect(ds).toContain("37.20 CNY");
    t.keys("Escape", "k", "k", "Enter");
    await t.waitForText("› Codex");
    expect(t.text()).toContain("needs a key");
    await quitAndWait(t);
  }, T);

  test("F saves a favourite provider into config.toml, comments kept, and it comes first after a restart", async () => {
    makeHome();
    const t = await openTerminal();
    await launch(t);
    t.keys("Down", "Down", "Down", "f");
    await t.waitForText("DeepSeek is a favourite");
    await t.waitFor(() => configText().includes("deepseek"), "config.toml updated");
    const text = configText();
    expect(text).toContain("# My quotas setup: keep this comment");
    expect(text).toContain('enabled = ["claude", "codex", "zai", "deepseek"] # the ones I pay for');
    expect(text).toContain("# TUI behaviour");
    expect(text).toMatch(/\[favorites\]\s*\nproviders = \["deepseek"\]/);
    await quitAndWait(t);
    const again = await launch(t);
    const rows = again.split("\n");
    expect(rows[1]).toContain("★ DeepSeek");
    await quitAndWait(t);
  }, T);

  test("X hides a window on the dashboard, is saved, and survives a restart", async () => {
    makeHome();
    const t = await openTerminal();
    await launch(t);
    t.keys("Enter", "Down", "Down", "x");
    await t.waitForText("weekly_opus is hidden on the dashboard");
    await t.waitFor(() => configText().includes("weekly_opus"), "config.toml updated");
    expect(configText()).toMatch(/\[quota_preferences\.claude\]\s*\nhidden = \["weekly_opus"\]/);
    expect(configText()).toContain("# My quotas setup: keep this comment");
    t.keys("f");
    await t.waitForText("weekly_opus is a favourite");
    await t.waitFor(() => configText().includes("favorites"), "config.toml updated");
    const saved = toml.parse(configText());
    expect(saved.quota_preferences.claude).toEqual({ hidden: ["weekly_opus"], favorites: ["weekly_opus"] });
    expect(saved.providers.enabled).toEqual(["claude", "codex", "zai", "deepseek"]);
    t.keys("Escape");
    await t.waitFor((s) => s.includes("providers loaded") && !s.includes("weekly_opus"), "card without the hidden window");
    await quitAndWait(t);
    const again = await launch(t);
    expect(again).not.toContain("weekly_opus");
    expect(again).toMatch(/weekly\s+10\/100%/);
    t.keys("Enter");
    const detail = await t.waitForText("(hidden)");
    expect(detail).toMatch(/weekly_opus\s+95\/100%.*\(hidden\)/);
    expect(detail).toContain("3 quotas · 1 hidden");
    expect(detail.split("\n")[5]).toMatch(/★ weekly_opus/); // the favourite quota comes first
    await quitAndWait(t);
  }, T);

  test("[tui] auto_refresh refetches on its interval; A switches it off", async () => {
    makeHome();
    writeFileSync(join(dir, "config/quotas/config.toml"), CONFIG.replace("refresh_on_start = true", "refresh_on_start = true\nauto_refresh = 1"));
    const t = await openTerminal();
    await launch(t);
    expect(t.screen()[0]).toContain("auto-refresh every 1s");
    const start = hits.length;
    await t.waitFor(() => hits.length >= start + 6, "two automatic refreshes", 10_000);
    t.keys("a");
    await t.waitForText("Auto-refresh off");
    await t.waitFor((s) => !s.includes("refreshing"), "refresh settled");
    const off = hits.length;
    await Bun.sleep(2500);
    expect(hits.length).toBe(off);
    await quitAndWait(t);
  }, T);

  test("a second Claude account is its own card; F on it saves provider:profile", async () => {
    makeHome();
    mkdirSync(join(dir, "home/.claude-work"));
    writeFileSync(join(dir, "home/.claude-work/.credentials.json"), JSON.stringify({
      claudeAiOauth: { accessToken: "claude-work-token", expiresAt: Date.now() + 24 * H, subscriptionType: "team" },
    }));
    const t = await openTerminal();
    t.type(`${bin} --no-update-check`);
    const screen = await t.waitFor((s) => s.includes("4 of 5 providers loaded") && !s.includes("refreshing"), "both Claude accounts");
    expect(screen).toMatch(/5h\s+42\/100%/);
    expect(screen).toMatch(/5h\s+66\/100%/);
    const rows = screen.split("\n");
    const work = rows.findIndex((r) => r.includes("Claude (work) · team"));
    expect(work).toBeGreaterThan(0);
    expect(rows[work + 1]).toContain("66/100%");
    t.keys("Down", "f");
    await t.waitFor(() => configText().includes("claude:work"), "config.toml updated");
    expect(toml.parse(configText()).favorites.providers).toEqual(["claude:work"]);
    await quitAndWait(t);
  }, T);

  test("C emits the provider's JSON as OSC 52 and through the system clipboard tool", async () => {
    makeHome();
    // A stand-in wl-copy on PATH, found because WAYLAND_DISPLAY is set; it keeps what it was given.
    mkdirSync(join(dir, "bin"));
    writeFileSync(join(dir, "bin/wl-copy"), `#!/bin/sh\ncat > "${join(dir, "clipboard.txt")}"\n`, { mode: 0o755 });
    const t = await openTerminal(80, 24, { PATH: `${join(dir, "bin")}:${process.env.PATH}`, WAYLAND_DISPLAY: "wayland-test" });
    await launch(t);
    t.keys("Down", "Down", "c");
    await t.waitForText("Copied Z.ai JSON");
    await t.waitForText("via OSC 52 and the system clipboard");
    const raw = await t.waitForRaw((r) => /\x1b\]52;c;[A-Za-z0-9+/=]+\x07/.test(r), "OSC 52");
    const m = raw.match(/\x1b\]52;c;([A-Za-z0-9+/=]+)\x07/);
    expect(m).not.toBeNull();
    const json = JSON.parse(Buffer.from(m![1], "base64").toString("utf8"));
    expect(json.provider).toBe("zai");
    expect(json.status).toBe("available");
    expect(json.plan).toBe("pro");
    expect(json.windows[0]).toMatchObject({ window: "5h", used: 250_000, limit: 1_000_000, remaining: 750_000, unit: "tokens" });
    expect(JSON.stringify(json)).not.toContain("zai-key");
    expect(JSON.parse(readFileSync(join(dir, "clipboard.txt"), "utf8"))).toEqual(json);
    await quitAndWait(t);
  }, T);

  test("R refetches: the fake server sees new requests and the card shows the new answer", async () => {
    makeHome();
    const t = await openTerminal();
    await launch(t);
    hits.length = 0;
    claude5h = 77;
    t.keys("r");
    await t.waitForText("77/100%");
    await t.waitFor(() => hits.length >= 3, "three new requests");
    expect(new Set(hits)).toEqual(new Set(["/api/oauth/usage", "/api/monitor/usage/quota/limit", "/user/balance"]));
    await quitAndWait(t);
  }, T);

  test("Q leaves the terminal as it was", async () => {
    makeHome();
    const t = await openTerminal();
    await launch(t);
    t.keys("q");
    await expectRestored(t, 0, `${bin} --no-update-check`);
  }, T);

  test("Q while providers are still answering gives the prompt back at once, not after the fetch timeout", async () => {
    makeHome();
    const t = await openTerminal();
    await launch(t);
    await quitAndWait(t);
    delayMs = 8000; // every provider now takes 8 s to answer
    t.type(`${bin} --no-update-check`);
    await t.waitForText("refreshing");
    const started = Date.now();
    t.keys("q");
    await t.waitForPrompt();
    t.type("echo rc=$?");
    await t.waitForText("rc=0");
    expect(Date.now() - started).toBeLessThan(4000);
  }, T);

  test("Ctrl-C leaves the terminal as it was (from the detail view too)", async () => {
    makeHome();
    const t = await openTerminal();
    await launch(t);
    t.keys("Enter");
    await t.waitForText("› Claude");
    t.keys("C-c");
    await expectRestored(t, 130, `${bin} --no-update-check`);
  }, T);

  test("NO_COLOR: no colour escapes in anything the binary writes; colours without it", async () => {
    makeHome();
    const t = await openTerminal(80, 24, { NO_COLOR: "1" });
    await launch(t);
    t.keys("Enter");
    await t.waitForText("› Claude");
    await quitAndWait(t);
    const raw = await t.rawAfterExit();
    expect(raw).toContain("42/100%");
    // Only attribute resets (ESC[0m) are allowed: no colour, bold, dim, underline or inverse.
    expect(raw).not.toMatch(/\x1b\[(?:[0-9;]*;)?(?:3[0-7]|1|2|4|7)m/);
    term!.stop();
    term = null;
    const c = await openTerminal();
    await launch(c);
    await quitAndWait(c);
    expect(await c.rawAfterExit()).toMatch(/\x1b\[32m\d+\/100%/);
  }, T);

  test("without a terminal it says to use --json or --statusline and exits 2", async () => {
    makeHome();
    const p = Bun.spawn([bin, "--no-update-check"], {
      env: { PATH: process.env.PATH, HOME: join(dir, "home"), XDG_CONFIG_HOME: join(dir, "config"), XDG_CACHE_HOME: join(dir, "cache") },
      stdin: "ignore",
      stdout: "pipe",
      stderr: "pipe",
    });
    expect(await p.exited).toBe(2);
    const err = await new Response(p.stderr).text();
    expect(err).toBe("quotas: the interactive view needs a terminal; use --json or --statusline\n");
    expect(await new Response(p.stdout).text()).toBe("");
  }, T);

  for (const [w, h] of [[80, 24], [200, 60]] as const) {
    test(`${w}×${h} renders cleanly: full borders, nothing past the edge, footer at the bottom`, async () => {
      makeHome();
      const t = await openTerminal(w, h);
      await launch(t);
      const rows = t.screen();
      expect(rows.length).toBe(h);
      for (const r of rows) expect(Bun.stringWidth(r)).toBeLessThanOrEqual(w);
      const cols = w >= 180 ? 3 : 1;
      const tops = rows.filter((r) => /[╭┏]/.test(r));
      expect(tops.length).toBe(Math.ceil(4 / cols));
      for (const r of tops) {
        expect(Bun.stringWidth(r.trimEnd())).toBe(Math.floor(w / cols) * (r.match(/[╭┏]/g) ?? []).length);
        expect(r.trimEnd()).toMatch(/[╮┓]$/);
      }
      expect(rows[h - 2]).toContain("3 of 4 providers loaded");
      expect(rows[h - 1]).toContain("Q quit");
      if (cols === 3) expect(rows[1]).toMatch(/Claude.*Codex.*Z\.ai/);
      t.keys("Enter");
      const detail = (await t.waitForText("› Claude")).split("\n");
      expect(detail.length).toBe(h);
      for (const r of detail) expect(Bun.stringWidth(r)).toBeLessThanOrEqual(w);
      expect(detail.join("\n")).toContain(`layout auto (${w >= 100 ? "normal" : "compact"})`);
      await quitAndWait(t);
    }, T);
  }

  test("the detail view shows the 5h window's sparkline from history.db and where this pace leads", async () => {
    makeHome();
    // history: 12 % at -55 min rising 4 points per 5 minutes to 52 % at -5 min; the API now says 56 %:
    // ~48 %/h, 44 left → about 55 minutes, before the reset in 3h 12m
    const minute = Math.floor(Date.now() / 60_000) * 60_000;
    const store = openHistory(join(dir, "data/quotas/history.db"));
    for (let k = 11; k >= 1; k--) {
      const t = minute - k * 5 * 60_000;
      store.append("claude:default", [{ window: "5h", sample: { t, used: 52 - (k - 1) * 4, limit: 100, reset: Date.parse(resets5h) } }], t);
    }
    store.close();
    claude5h = 56;
    const t = await openTerminal(120, 40);
    await launch(t);
    t.keys("Enter");
    const detail = await t.waitForText("at this pace");
    expect(detail).toContain("layout auto (normal)");
    expect(detail).toMatch(/[▁▂▃▄▅▆▇█]{10,}  at this pace: 100 % in (5\d|6[0-2])m, before the reset in 3h 1[12]m/);
    await quitAndWait(t);
  }, T);
});
