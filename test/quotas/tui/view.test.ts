import { describe, expect, test } from "bun:test";
import { init, reduce, type Key, type State } from "../../../src/quotas/tui/state.ts";
import { render } from "../../../src/quotas/tui/view.ts";
import { NOW, iso, claude, claudeResult, codex, codexResult, deepseek, deepseekResult, kimi, manyWindows, target, win, result, zai, zaiAuth } from "./fixtures.ts";

const ESC = "\x1b";
const strip = (s: string) => s.replace(/\x1b\[[0-9;]*m/g, "");

function state(width: number, height: number, over: Partial<Parameters<typeof init>[0]> = {}): State {
  return init({
    targets: [claude, codex, zai, kimi, deepseek],
    cached: [claudeResult, codexResult, zaiAuth, deepseekResult],
    favorites: [],
    prefs: {},
    autoRefreshSeconds: 0,
    refreshOnStart: false,
    width,
    height,
    ...over,
  }).state;
}

function press(s: State, ...keys: Key[]): State {
  for (const key of keys) s = reduce(s, { type: "key", key }).state;
  return s;
}

const draw = (s: State, color = false) => render(s, NOW, { color, version: "1.2.3" });

describe("frame size", () => {
  for (const [w, h] of [[80, 24], [200, 60], [120, 40], [40, 12], [12, 4]] as const) {
    for (const color of [false, true]) {
      test(`${w}×${h} ${color ? "colour" : "NO_COLOR"}: dashboard and detail have exactly ${h} lines of ${w} cells`, () => {
        const many = manyWindows(target("openrouter"), 30);
        const s = state(w, h, { targets: [claude, codex, zai, kimi, deepseek, target("openrouter")], cached: [claudeResult, codexResult, zaiAuth, deepseekResult, many] });
        const frames = [draw(s, color), draw(press(s, "enter"), color), draw(press(s, "enter", "tab"), color), draw(press(s, "end", "enter", "pgdn"), color)];
        for (const frame of frames) {
          expect(frame.length).toBe(h);
          for (const l of frame) expect(Bun.stringWidth(l)).toBe(w);
        }
      });
    }
  }
});

describe("dashboard", () => {
  test("each window shows label, used/limit, a bar and the reset countdown", () => {
    const text = draw(state(80, 24)).join("\n");
    expect(text).toMatch(/5h\s+42\/100%\s+█+░+\s+resets in 3h 12m/);
    expect(text).toMatch(/weekly\s+10\/100%\s+█+░+\s+resets in 4d/);
    expect(text).toMatch(/weekly\s+71\/100%/);
    expect(text).toContain("Claude · max");
    expect(text).toContain("Codex · plus");
    expect(text).toContain("balance  37.20 CNY");
  });

  test("the bar fills in proportion to use", () => {
    const line = draw(state(80, 24)).find((l) => l.includes("42/100%"))!;
    const filled = (line.match(/█/g) ?? []).length;
    const empty = (line.match(/░/g) ?? []).length;
    expect(Math.round((filled / (filled + empty)) * 100)).toBeGreaterThanOrEqual(40);
    expect(Math.round((filled / (filled + empty)) * 100)).toBeLessThanOrEqual(44);
  });

  test("the footer counts loaded providers and names those needing a key", () => {
    const frame = draw(state(80, 24));
    expect(frame[22]).toContain("3 of 5 providers loaded");
    expect(frame[22]).toContain("needs a key: Z.ai");
  });

  test("a card without a result shows a spinner while loading; the header counts fetches in flight", () => {
    const s = state(80, 24);
    const text = draw(s).join("\n");
    expect(text).toContain("⠋ loading…");
    expect(draw(s)[0]).toContain("refreshing 1");
    const ticked = draw(reduce(s, { type: "tick" }).state).join("\n");
    expect(ticked).toContain("⠙ loading…");
    const done = reduce(s, { type: "result", key: "kimi:default", result: result(kimi, [win("weekly", 64, 100)]) }).state;
    const after = draw(done).join("\n");
    expect(after).not.toContain("loading…");
    expect(after).toContain("64/100%");
    expect(draw(done)[0]).not.toContain("refreshing");
  });

  test("favourites come first and carry a star", () => {
    const frame = draw(state(80, 24, { favorites: ["deepseek"] }));
    expect(frame[1]).toContain("★ DeepSeek");
    expect(frame.join("\n").indexOf("DeepSeek")).toBeLessThan(frame.join("\n").indexOf("Claude"));
  });

  test("the selected card has a heavy border; moving moves it", () => {
    const s = state(80, 24);
    expect(draw(s).find((l) => l.includes("Claude"))).toContain("┏");
    expect(draw(s).find((l) => l.includes("Codex"))).toContain("╭");
    const moved = draw(press(s, "down"));
    expect(moved.find((l) => l.includes("Codex"))).toContain("┏");
    expect(moved.find((l) => l.includes("Claude"))).toContain("╭");
  });

  test("200 columns show three cards side by side", () => {
    const top = draw(state(200, 60))[1];
    expect(top).toContain("Claude");
    expect(top).toContain("Codex");
    expect(top).toContain("Z.ai");
  });

  test("hidden windows are left off the card", () => {
    const text = draw(state(80, 24, { prefs: { claude: { favorites: [], hidden: ["weekly_opus"] } } })).join("\n");
    expect(text).not.toContain("weekly_opus");
    expect(text).toContain("42/100%");
  });

  test("auth_required, unavailable and network_error cards say so", () => {
    const un = { ...result(codex, []), status: "unavailable" as const, message: "plan inactive" };
    const ne = { ...result(deepseek, []), status: "network_error" as const, message: "timeout after 10 s" };
    const text = draw(state(80, 24, { cached: [claudeResult, un, zaiAuth, ne] })).join("\n");
    expect(text).toContain("needs a key: set ZAI_API_KEY");
    expect(text).toContain("unavailable: plan inactive");
    expect(text).toContain("network error: timeout after 10 s");
  });

  test("the list scrolls to keep the selected card visible", () => {
    const many = Array.from({ length: 12 }, (_, i) => target(`p${i}`));
    const s = state(80, 24, { targets: many, cached: many.map((t) => result(t, [win("5h", 1, 100)])) });
    expect(draw(s).join("\n")).not.toContain("P11");
    const last = draw(press(s, "end")).join("\n");
    expect(last).toContain("P11");
    expect(last).not.toContain("P0 ");
  });

  test("the message line replaces the key help", () => {
    const s = press(state(80, 24), "a");
    expect(draw(s)[23]).toContain("Auto-refresh on: every 5m");
    expect(draw(state(80, 24))[23]).toContain("Q quit");
    expect(draw(s)[0]).toContain("auto-refresh every 5m");
  });

  test("an empty target list explains itself", () => {
    expect(draw(state(80, 24, { targets: [], cached: [] })).join("\n")).toContain("No providers to show");
  });
});

describe("colour", () => {
  test("NO_COLOR: no escape sequence at all", () => {
    for (const s of [state(80, 24), press(state(80, 24), "enter"), press(state(200, 60), "enter", "tab")]) {
      for (const l of draw(s, false)) expect(l).not.toContain(ESC);
    }
  });

  test("with colour: critical use is red, usage ahead of the clock yellow, on-pace use green", () => {
    const frame = draw(state(80, 24), true);
    const red = "\x1b[31m", yellow = "\x1b[33m", green = "\x1b[32m";
    const text = frame.join("\n");
    // codex 5h: 12 % used with 60 % of the window elapsed → green
    expect(text).toContain(`${green}12/100%`);
    // claude 5h: 42 % used with 36 % elapsed → ahead of pace → yellow
    expect(text).toContain(`${yellow}42/100%`);
    // codex weekly 71 % → warn; claude weekly_opus 95 % → red
    expect(text).toContain(`${yellow}71/100%`);
    expect(text).toContain(`${red}95/100%`);
    expect(strip(frame[1])).toBe(draw(state(80, 24), false)[1]);
  });
});

describe("detail", () => {
  test("shows plan, status, source, console and every window, hidden ones dimmed and tagged", () => {
    const s = press(state(80, 24, { prefs: { claude: { favorites: [], hidden: ["weekly_opus"] } } }), "enter");
    const frame = draw(s);
    const text = frame.join("\n");
    expect(frame[0]).toContain("› Claude");
    expect(text).toContain("plan max · available");
    expect(text).toContain("source ~/.claude/.credentials.json");
    expect(text).toContain("https://claude.ai/settings/usage");
    expect(text).toMatch(/weekly_opus\s+95\/100%.*\(hidden\)/);
    expect(text).toContain("3 quotas · 1 hidden · layout auto (compact)");
    expect(draw(s, true).find((l) => l.includes("(hidden)"))).toContain("\x1b[2m");
  });

  test("the focus marker follows Up/Down", () => {
    const s = press(state(80, 24), "enter");
    const focused = (f: string[]) => f.slice(5).find((l) => l.includes(" › "));
    expect(focused(draw(s))).toContain("5h");
    expect(focused(draw(press(s, "down")))).toContain("weekly");
    expect(draw(press(s, "down"))[22]).toContain("quota 2 of 3");
  });

  test("normal layout adds the remaining amount, reset time, window length and pace", () => {
    const s = press(state(120, 24), "enter", "tab");
    const text = draw(s).join("\n");
    expect(text).toContain("layout normal");
    expect(text).toContain("58% left · resets 2026-11-22 12:12 UTC · 5h window · 6 pts ahead of pace");
    expect(text).toContain("90% left · resets 2026-11-26 09:00 UTC · 7d window · 33 pts under pace");
    expect(text).toContain("7d window");
  });

  test("normal layout shows the current window's sparkline and the projection from its pace", () => {
    const [w5, wk, opus] = claudeResult.windows;
    const paced = {
      ...claudeResult,
      windows: [
        // 42 % used at 20 %/h: 100 % in 2h 54m, before the reset in 3h 12m
        { ...w5, pace: { rate_per_hour: 20, exhausts_at: iso(2 * 3_600_000 + 54 * 60_000), before_reset: true, projected_used: 106, since: iso(-3_600_000) } },
        // 10 % used, slow: 31 % at the reset in 4d
        { ...wk, pace: { rate_per_hour: 0.22, exhausts_at: iso(409 * 3_600_000), before_reset: false, projected_used: 31, since: iso(-24 * 3_600_000) } },
        { ...opus, pace: null },
      ],
      spark: { "5h": [0, 0.1, 0.2, 0.3, 0.42], weekly: [0.1] },
    };
    const s = press(state(120, 24, { cached: [paced, codexResult, zaiAuth, deepseekResult] }), "enter", "tab");
    const text = draw(s).join("\n");
    expect(text).toContain("▁▂▂▃▄  at this pace: 100 % in 2h 54m, before the reset in 3h 12m");
    expect(text).toMatch(/\n {7}at this pace: 31 % at the reset in 4d +\n/); // one sample: no sparkline yet
    expect(text).not.toMatch(/weekly_opus[^\n]*\n[^\n]*\n[^\n]*at this pace/); // no pace: no projection line
  });

  test("auto layout is normal on a large terminal and compact on a small one", () => {
    expect(draw(press(state(200, 60), "enter")).join("\n")).toContain("layout auto (normal)");
    expect(draw(press(state(80, 24), "enter")).join("\n")).toContain("layout auto (compact)");
  });

  test("favourite quotas carry a star and come first", () => {
    const s = press(state(80, 24, { prefs: { claude: { favorites: ["weekly_opus"], hidden: [] } } }), "enter");
    const rows = draw(s).slice(5, 8);
    expect(rows[0]).toMatch(/★ weekly_opus/);
    expect(rows[1]).toContain("5h");
  });

  test("PgDn shows later windows and the scroll hints", () => {
    const s = state(80, 24, { targets: [claude], cached: [manyWindows(claude, 40)] });
    const first = draw(press(s, "enter"));
    expect(first.join("\n")).toContain("w00");
    expect(first[22]).toContain("↓ more below");
    const paged = draw(press(s, "enter", "pgdn"));
    expect(paged.join("\n")).not.toContain("w00 ");
    expect(paged[5]).toContain("w17");
    expect(paged[22]).toContain("↑ more above");
  });

  test("a card still loading shows the spinner in the detail view", () => {
    const s = press(state(80, 24), "down", "down", "down", "enter"); // kimi: fetch in flight
    expect(draw(s).join("\n")).toContain("⠋ loading…");
  });

  test("a card needing a key explains how to get one", () => {
    const s = press(state(80, 24), "down", "down", "enter");
    expect(draw(s).join("\n")).toContain("needs a key: set ZAI_API_KEY");
  });
});
