// The driver in a real terminal (tmux), through test/quotas/tui/harness.ts: an in-memory host whose
// fetches go to a fake provider server on loopback. The compiled `quotas` is driven in test/e2e/.
import { afterAll, afterEach, beforeAll, describe, expect, test } from "bun:test";
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { ProviderResult } from "../../../src/quotas/model/types.ts";
import { claude, claudeResult, codex, codexResult, deepseek, deepseekResult, kimi, result, win, zai, zaiAuth } from "./fixtures.ts";
import { expectRestored, Tmux } from "./tmux.ts";

const root = join(import.meta.dir, "../../..");
const T = 30_000;
const requests: string[] = [];
let delayMs = 0;
let kimiUsed = 64;
let server: ReturnType<typeof Bun.serve>;
let dir: string;
const dirs: string[] = [];
let term: Tmux | null = null;

beforeAll(() => {
  server = Bun.serve({
    port: 0,
    hostname: "127.0.0.1",
    async fetch(req) {
      const path = new URL(req.url).pathname;
      requests.push(path);
      if (delayMs) await Bun.sleep(delayMs);
      const byPath: Record<string, ProviderResult> = {
        "/claude/default": claudeResult,
        "/codex/default": codexResult,
        "/zai/default": zaiAuth,
        "/kimi/default": result(kimi, [win("weekly", kimiUsed, 100)], { plan: "moderato" }),
        "/deepseek/default": deepseekResult,
      };
      return Response.json(byPath[path]);
    },
  });
});

afterAll(() => {
  server.stop(true);
});

afterEach(() => {
  term?.stop();
  term = null;
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
  requests.length = 0;
  delayMs = 0;
});

interface Opts {
  width?: number;
  height?: number;
  env?: Record<string, string>;
  refreshOnStart?: boolean;
  throwOnCopy?: boolean;
  crashAfterMs?: number;
  keepDir?: boolean;
}

async function launch(o: Opts = {}): Promise<Tmux> {
  if (!o.keepDir) dirs.push((dir = mkdtempSync(join(tmpdir(), "qtui-driver-"))));
  writeFileSync(join(dir, "setup.json"), JSON.stringify({
    server: `http://127.0.0.1:${server.port}`,
    prefsFile: join(dir, "prefs.json"),
    clipFile: join(dir, "clip.txt"),
    targets: [claude, codex, zai, kimi, deepseek],
    cached: [claudeResult, codexResult, zaiAuth, deepseekResult],
    autoRefreshSeconds: 0,
    refreshOnStart: o.refreshOnStart ?? false,
    throwOnCopy: o.throwOnCopy ?? false,
    crashAfterMs: o.crashAfterMs,
  }));
  term ??= await Tmux.start({ width: o.width ?? 80, height: o.height ?? 24, env: o.env ?? {}, cwd: root });
  term.type(`${process.execPath} test/quotas/tui/harness.ts ${join(dir, "setup.json")}`);
  await term.waitForText("providers loaded");
  return term;
}


describe("driver in a real terminal", () => {
  test("first frame comes from the cache; the missing card fills in when its provider answers", async () => {
    delayMs = 700;
    const t = await launch();
    const first = t.text();
    expect(first).toContain("42/100%");
    expect(first).toContain("loading…");
    expect(first).toContain("refreshing 1");
    const later = await t.waitForText("64/100%");
    expect(later).not.toContain("loading…");
    expect(later).toContain("Kimi · moderato");
    expect(later).toContain("4 of 5 providers loaded · needs a key: Z.ai");
    expect(requests).toEqual(["/kimi/default"]);
    t.keys("q");
    await expectRestored(t, 0, "harness.ts");
  }, T);

  test("navigation and Enter open the right card; Esc comes back", async () => {
    const t = await launch();
    t.keys("Down", "Down", "Down", "Enter");
    const detail = await t.waitForText("› Kimi");
    expect(detail).toContain("weekly");
    t.keys("Escape");
    await t.waitForText("providers loaded");
    t.keys("k", "Enter");
    await t.waitForText("› Z.ai");
    expect(t.text()).toContain("needs a key: set ZAI_API_KEY");
    t.keys("q");
    await expectRestored(t, 0, "harness.ts");
  }, T);

  test("R refetches every provider and the fake server sees the requests", async () => {
    const t = await launch();
    await t.waitForText("64/100%");
    requests.length = 0;
    kimiUsed = 77;
    t.keys("r");
    await t.waitForText("77/100%");
    await t.waitFor(() => requests.length === 5, "5 requests");
    expect([...requests].sort()).toEqual(["/claude/default", "/codex/default", "/deepseek/default", "/kimi/default", "/zai/default"]);
    kimiUsed = 64;
    t.keys("q");
    await expectRestored(t, 0, "harness.ts");
  }, T);

  test("F and X are saved through the host; X survives a restart", async () => {
    const t = await launch();
    t.keys("Down", "f");
    await t.waitForText("Codex is a favourite");
    t.keys("Enter", "Down", "x");
    await t.waitForText("weekly is hidden on the dashboard");
    await t.waitFor(() => existsSync(join(dir, "prefs.json")) && readFileSync(join(dir, "prefs.json"), "utf8").includes("hidden"), "prefs saved");
    const saved = JSON.parse(readFileSync(join(dir, "prefs.json"), "utf8"));
    expect(saved).toEqual({ favorites: ["codex"], prefs: { codex: { favorites: [], hidden: ["weekly"] } } });
    t.keys("q");
    await t.waitForPrompt();
    const again = await launch({ keepDir: true });
    const screen = again.text();
    expect(screen).toContain("★ Codex");
    expect(screen).not.toContain("71/100%");
    again.keys("Enter");
    await again.waitForText("(hidden)");
    again.keys("q");
  }, T);

  test("C writes the provider's JSON as OSC 52 and hands it to the system clipboard", async () => {
    const t = await launch();
    t.keys("c");
    await t.waitForText("Copied Claude JSON");
    const raw = await t.waitForRaw((r) => /\x1b\]52;c;[A-Za-z0-9+/=]+\x07/.test(r), "OSC 52");
    const m = raw.match(/\x1b\]52;c;([A-Za-z0-9+/=]+)\x07/);
    expect(m).not.toBeNull();
    const json = JSON.parse(Buffer.from(m![1], "base64").toString("utf8"));
    expect(json.provider).toBe("claude");
    expect(json.windows.map((w: { window: string; used: number }) => [w.window, w.used])).toEqual([["5h", 42], ["weekly", 10], ["weekly_opus", 95]]);
    expect(JSON.parse(readFileSync(join(dir, "clip.txt"), "utf8"))).toEqual(json);
    t.keys("q");
    await expectRestored(t, 0, "harness.ts");
  }, T);

  test("Ctrl-C quits with 130 and restores the terminal", async () => {
    const t = await launch();
    t.keys("C-c");
    await expectRestored(t, 130, "harness.ts");
  }, T);

  for (const [sig, code] of [["SIGTERM", 143], ["SIGINT", 130], ["SIGHUP", 129]] as const) {
    test(`${sig} restores the terminal (exit ${code})`, async () => {
      const t = await launch();
      const pid = t.foregroundPid();
      expect(pid).not.toBeNull();
      process.kill(pid!, sig);
      await expectRestored(t, code, "harness.ts");
    }, T);
  }

  test("an unexpected error restores the terminal and prints one line", async () => {
    const t = await launch({ throwOnCopy: true });
    t.keys("c");
    await expectRestored(t, 1, "harness.ts");
    expect(t.text()).toContain("quotas: clipboard exploded");
  }, T);

  test("an uncaught error elsewhere in the process still restores the terminal", async () => {
    const t = await launch({ crashAfterMs: 1500 });
    await expectRestored(t, 1, "harness.ts");
    expect(t.text()).toContain("quotas: uncaught elsewhere");
  }, T);

  test("a resize redraws at the new size", async () => {
    const t = await launch();
    expect(t.screen()[1]).not.toContain("Codex");
    t.resize(200, 60);
    // Wait for the whole new frame (the capture may catch it half written).
    const rows = (await t.waitFor((s) => {
      const r = s.split("\n");
      return r.length === 60 && /Claude.*Codex.*Z\.ai/.test(r[1]) && r[58].includes("providers loaded");
    }, "three cards in a row at 200×60")).split("\n");
    expect(rows[0]).toContain("auto-refresh off");
    t.keys("q");
    await expectRestored(t, 0, "harness.ts");
  }, T);

  test("NO_COLOR: no colour sequences in the output; colour otherwise", async () => {
    const t = await launch({ env: { NO_COLOR: "1" } });
    t.keys("Enter");
    await t.waitForText("› Claude");
    t.keys("q");
    await t.waitForPrompt();
    expect(await t.rawAfterExit()).not.toMatch(/\x1b\[(3[0-7]|1|2|7)m/);
    term!.stop();
    term = null;
    const c = await launch();
    c.keys("q");
    await c.waitForPrompt();
    expect(await c.rawAfterExit()).toContain("\x1b[32m");
  }, T);

  test("only changed lines are rewritten and nothing is written while idle", async () => {
    const t = await launch();
    await t.waitForText("64/100%");
    // The driver wakes once a minute, on the wall-clock minute, to repaint countdowns; keep that
    // legitimate repaint out of the idle window.
    const toMinute = 60_000 - (Date.now() % 60_000);
    if (toMinute < 4000) await Bun.sleep(toMinute + 300);
    const before = await t.rawSettled();
    await Bun.sleep(1500);
    expect(JSON.stringify(t.raw().slice(before))).toBe('""');
    t.keys("Down");
    await t.waitForRaw((r) => r.length > before, "output after a key");
    await t.rawSettled(150);
    const delta = t.raw().slice(before);
    // Moving the selection changes two cards' borders, not the whole 24-line screen.
    const rowsWritten = delta.match(/\x1b\[\d+;1H/g) ?? [];
    expect(rowsWritten.length).toBeGreaterThan(0);
    expect(rowsWritten.length).toBeLessThan(14);
    expect(delta).not.toContain("\x1b[2J");
    t.keys("q");
  }, T);
});
