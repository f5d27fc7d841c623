import { describe, expect, test } from "bun:test";
import {
  cardWindows, detailWindows, init, orderedTargets, reduce, selectedTarget,
  type Effect, type Key, type State, type Step,
} from "../../../src/quotas/tui/state.ts";
import { claude, claudeResult, codex, codexResult, deepseek, deepseekResult, kimi, manyWindows, result, target, win, zai, zaiAuth } from "./fixtures.ts";

const TARGETS = [claude, codex, zai, kimi, deepseek];

function start(over: Partial<Parameters<typeof init>[0]> = {}): Step {
  return init({
    targets: TARGETS,
    cached: [claudeResult, codexResult, zaiAuth, deepseekResult],
    favorites: [],
    prefs: {},
    autoRefreshSeconds: 0,
    refreshOnStart: false,
    width: 80,
    height: 24,
    ...over,
  });
}

function press(s: State, ...keys: Key[]): Step {
  let step: Step = { state: s, effects: [] };
  const effects: Effect[] = [];
  for (const key of keys) {
    step = reduce(step.state, { type: "key", key });
    effects.push(...step.effects);
  }
  return { state: step.state, effects };
}

const fetched = (effects: Effect[]) => effects.flatMap((e) => (e.type === "fetch" ? e.targets.map((t) => t.key) : []));

describe("init", () => {
  test("shows cached results at once and fetches only targets without a result when refresh_on_start is off", () => {
    const { state, effects } = start();
    expect(state.results["claude:default"].windows[0].used).toBe(42);
    expect(fetched(effects)).toEqual(["kimi:default"]);
    expect(state.loading).toEqual(["kimi:default"]);
    expect(state.selected).toBe("claude:default");
  });

  test("refresh_on_start fetches every target in the background", () => {
    const { state, effects } = start({ refreshOnStart: true });
    expect(fetched(effects).sort()).toEqual(TARGETS.map((t) => t.key).sort());
    expect(state.loading.length).toBe(5);
  });

  test("cached results of targets no longer shown (disabled providers) are ignored", () => {
    const other = result(target("grok"), [win("weekly", 1, 100)]);
    const { state } = start({ cached: [other, claudeResult] });
    expect(Object.keys(state.results)).toEqual(["claude:default"]);
  });

  test("auto-refresh starts on when the config sets an interval, off otherwise", () => {
    expect(start({ autoRefreshSeconds: 120 }).state.autoRefresh).toBe(true);
    expect(start({ autoRefreshSeconds: 120 }).state.autoRefreshSeconds).toBe(120);
    expect(start().state.autoRefresh).toBe(false);
  });

  test("favourite providers come first; the first card is selected", () => {
    const { state } = start({ favorites: ["deepseek", "codex:default"] });
    expect(orderedTargets(state).map((t) => t.key)).toEqual([
      "codex:default", "deepseek:default", "claude:default", "zai:default", "kimi:default",
    ]);
    expect(state.selected).toBe("codex:default");
  });
});

describe("dashboard keys", () => {
  test("down/up and j/k move one card at a time in a one-column grid (80 columns)", () => {
    const s = start().state;
    expect(press(s, "down").state.selected).toBe("codex:default");
    expect(press(s, "j", "j").state.selected).toBe("zai:default");
    expect(press(s, "j", "j", "up").state.selected).toBe("codex:default");
    expect(press(s, "j", "k").state.selected).toBe("claude:default");
    expect(press(s, "up").state.selected).toBe("claude:default");
    expect(press(s, "down", "down", "down", "down", "down", "down").state.selected).toBe("deepseek:default");
  });

  test("left/right and h/l move within a row; up/down move by a row (200 columns: three per row)", () => {
    const s = start({ width: 200, height: 60 }).state;
    expect(press(s, "right").state.selected).toBe("codex:default");
    expect(press(s, "l", "l").state.selected).toBe("zai:default");
    expect(press(s, "l", "l", "l").state.selected).toBe("zai:default"); // end of the row
    expect(press(s, "l", "h").state.selected).toBe("claude:default");
    expect(press(s, "left").state.selected).toBe("claude:default");
    expect(press(s, "down").state.selected).toBe("kimi:default");
    expect(press(s, "j", "k").state.selected).toBe("claude:default");
    // From the end of a full row down to a shorter last row: its last card.
    expect(press(s, "l", "l", "down").state.selected).toBe("deepseek:default");
    expect(press(s, "end").state.selected).toBe("deepseek:default");
    expect(press(s, "end", "home").state.selected).toBe("claude:default");
  });

  test("Enter opens the selected card in the detail view; Esc goes back", () => {
    const s = press(start().state, "down", "enter").state;
    expect(s.view).toBe("detail");
    expect(selectedTarget(s)?.key).toBe("codex:default");
    expect(s.focus).toBe(0);
    const back = press(s, "esc").state;
    expect(back.view).toBe("dashboard");
    expect(back.selected).toBe("codex:default");
  });

  test("Esc on the dashboard does nothing", () => {
    const s = start().state;
    const { state, effects } = press(s, "esc");
    expect(state.view).toBe("dashboard");
    expect(effects).toEqual([]);
  });

  test("R fetches every target not already loading and marks them loading", () => {
    const s = start().state; // kimi is loading already
    const { state, effects } = press(s, "r");
    expect(fetched(effects).sort()).toEqual(["claude:default", "codex:default", "deepseek:default", "zai:default"]);
    expect(state.loading.length).toBe(5);
    expect(state.message).toContain("Refreshing");
    expect(fetched(press(state, "R").effects)).toEqual([]);
  });

  test("A toggles auto-refresh with the configured interval", () => {
    const s = start({ autoRefreshSeconds: 0 }).state;
    const on = press(s, "a").state;
    expect(on.autoRefresh).toBe(true);
    expect(on.message).toBe("Auto-refresh on: every 5m");
    expect(press(on, "A").state.autoRefresh).toBe(false);
    const configured = press(start({ autoRefreshSeconds: 90 }).state, "a", "a").state;
    expect(configured.message).toBe("Auto-refresh on: every 90s");
  });

  test("F favourites the selected provider (saved), moves it first, and keeps it selected", () => {
    const s = press(start().state, "down", "down").state; // zai
    const { state, effects } = press(s, "f");
    expect(effects).toEqual([{ type: "saveFavoriteProvider", provider: "zai", on: true }]);
    expect(orderedTargets(state)[0].key).toBe("zai:default");
    expect(state.selected).toBe("zai:default");
    const off = press(state, "F");
    expect(off.effects).toEqual([{ type: "saveFavoriteProvider", provider: "zai", on: false }]);
    expect(orderedTargets(off.state)[0].key).toBe("claude:default");
  });

  test("F on a non-default profile saves provider:profile; un-favouriting removes the entry that matched", () => {
    const work = target("claude", "work", "Claude (work)");
    const s = init({ targets: [claude, work], cached: [], favorites: [], prefs: {}, autoRefreshSeconds: 0, refreshOnStart: false, width: 80, height: 24 }).state;
    expect(press(s, "down", "f").effects).toEqual([{ type: "saveFavoriteProvider", provider: "claude:work", on: true }]);
    const byName = { ...s, favorites: ["claude"] };
    expect(press(byName, "f").effects).toEqual([{ type: "saveFavoriteProvider", provider: "claude", on: false }]);
  });

  test("C copies the selected provider's JSON (without raw responses)", () => {
    const s = start({ cached: [{ ...claudeResult, raw: { email: "me@example.com" } }] }).state;
    const { effects } = press(s, "c");
    expect(effects.length).toBe(1);
    const copy = effects[0] as Extract<Effect, { type: "copy" }>;
    expect(copy.type).toBe("copy");
    expect(copy.label).toBe("Claude");
    const parsed = JSON.parse(copy.text);
    expect(parsed.provider).toBe("claude");
    expect(parsed.windows[0]).toEqual({ window: "5h", used: 42, limit: 100, remaining: 58, unit: "percent", reset_at: claudeResult.windows[0].reset_at, period_seconds: 18000 });
    expect(parsed.raw).toBeUndefined();
  });

  test("C without a result says there is nothing to copy", () => {
    const s = press(start().state, "down", "down", "down").state; // kimi: loading, no result
    const { state, effects } = press(s, "c");
    expect(effects).toEqual([]);
    expect(state.message).toBe("Nothing to copy yet");
  });

  test("X on the dashboard explains where hiding happens", () => {
    const { state, effects } = press(start().state, "x");
    expect(effects).toEqual([]);
    expect(state.message).toContain("Enter");
  });

  test("Q quits with 0, Ctrl-C with 130, from either view", () => {
    expect(press(start().state, "q").effects).toEqual([{ type: "quit", code: 0 }]);
    expect(press(start().state, "Q").state.quit).toBe(true);
    expect(press(start().state, "ctrl-c").effects).toEqual([{ type: "quit", code: 130 }]);
    expect(press(start().state, "enter", "q").effects).toEqual([{ type: "quit", code: 0 }]);
    expect(press(start().state, "enter", "ctrl-c").effects).toEqual([{ type: "quit", code: 130 }]);
  });

  test("a key clears the previous message", () => {
    const s = press(start().state, "a").state;
    expect(s.message).not.toBeNull();
    expect(press(s, "down").state.message).toBeNull();
  });
});

describe("detail keys", () => {
  const detailOf = (r = claudeResult, height = 24, prefs = {}) => {
    const s = init({ targets: [claude], cached: [r], favorites: [], prefs, autoRefreshSeconds: 0, refreshOnStart: false, width: 80, height }).state;
    return press(s, "enter").state;
  };

  test("Up/Down and j/k move the focused quota within bounds", () => {
    const s = detailOf();
    expect(press(s, "down").state.focus).toBe(1);
    expect(press(s, "j", "j", "j", "j").state.focus).toBe(2);
    expect(press(s, "j", "j", "up").state.focus).toBe(1);
    expect(press(s, "k").state.focus).toBe(0);
    expect(press(s, "end").state.focus).toBe(2);
    expect(press(s, "end", "home").state.focus).toBe(0);
  });

  test("PgDn/PgUp scroll a page and carry the focus; focus moves scroll to stay visible", () => {
    const s = detailOf(manyWindows(claude, 40)); // 80x24: compact, 17 lines for the list
    const down = press(s, "pgdn").state;
    expect(down.scroll).toBe(17);
    expect(down.focus).toBe(17);
    const end = press(s, "pgdn", "pgdn", "pgdn").state;
    expect(end.scroll).toBe(40 - 17);
    expect(end.focus).toBe(39);
    expect(press(end, "pgup").state.scroll).toBe(40 - 17 - 17);
    expect(press(end, "pgup", "pgup", "pgup").state).toMatchObject({ scroll: 0, focus: 0 });
    // Moving the focus below the page scrolls by one.
    const j = press(s, ...Array<Key>(17).fill("j")).state;
    expect(j.focus).toBe(17);
    expect(j.scroll).toBe(1);
  });

  test("Tab cycles the layout auto → normal → compact → auto; Shift-Tab goes back", () => {
    const s = detailOf();
    expect(s.layout).toBe("auto");
    const n = press(s, "tab").state;
    expect(n.layout).toBe("normal");
    expect(press(n, "tab").state.layout).toBe("compact");
    expect(press(n, "tab", "tab").state.layout).toBe("auto");
    expect(press(s, "backtab").state.layout).toBe("compact");
    expect(press(s, "tab", "tab", "tab").state.message).toBe("Layout: auto (compact)");
  });

  test("Tab on the dashboard does nothing", () => {
    expect(press(start().state, "tab").state.layout).toBe("auto");
  });

  test("F favourites the focused quota (saved), which moves first with the focus on it", () => {
    const s = press(detailOf(), "down").state; // weekly
    const { state, effects } = press(s, "f");
    expect(effects).toEqual([{ type: "saveQuotaPreference", provider: "claude", window: "weekly", list: "favorites", on: true }]);
    expect(detailWindows(state, claudeResult).map((w) => w.window)).toEqual(["weekly", "5h", "weekly_opus"]);
    expect(state.focus).toBe(0);
    const off = press(state, "f");
    expect(off.effects).toEqual([{ type: "saveQuotaPreference", provider: "claude", window: "weekly", list: "favorites", on: false }]);
    expect(detailWindows(off.state, claudeResult).map((w) => w.window)).toEqual(["5h", "weekly", "weekly_opus"]);
    expect(off.state.focus).toBe(1);
  });

  test("X hides the focused quota from the card (still listed in detail) and X again shows it", () => {
    const s = press(detailOf(), "down", "down").state; // weekly_opus
    const { state, effects } = press(s, "x");
    expect(effects).toEqual([{ type: "saveQuotaPreference", provider: "claude", window: "weekly_opus", list: "hidden", on: true }]);
    expect(cardWindows(state, claudeResult).map((w) => w.window)).toEqual(["5h", "weekly"]);
    expect(detailWindows(state, claudeResult).length).toBe(3);
    const shown = press(state, "X");
    expect(shown.effects).toEqual([{ type: "saveQuotaPreference", provider: "claude", window: "weekly_opus", list: "hidden", on: false }]);
    expect(cardWindows(shown.state, claudeResult).length).toBe(3);
  });

  test("F/X on a card without quotas change nothing", () => {
    const s = init({ targets: [zai], cached: [zaiAuth], favorites: [], prefs: {}, autoRefreshSeconds: 0, refreshOnStart: false, width: 80, height: 24 }).state;
    const { state, effects } = press(s, "enter", "x");
    expect(effects).toEqual([]);
    expect(state.message).toBe("No quota to change here");
  });

  test("R, A and C work in the detail view too", () => {
    const s = detailOf();
    expect(fetched(press(s, "r").effects)).toEqual(["claude:default"]);
    expect(press(s, "a").state.autoRefresh).toBe(true);
    expect(press(s, "c").effects[0].type).toBe("copy");
  });
});

describe("events", () => {
  test("a result fills its card in and ends its loading", () => {
    const s = start().state;
    const kimiResult = result(kimi, [win("weekly", 5, 100)]);
    const next = reduce(s, { type: "result", key: "kimi:default", result: kimiResult }).state;
    expect(next.loading).toEqual([]);
    expect(next.results["kimi:default"].windows[0].used).toBe(5);
  });

  test("a network error keeps the last good result (marked cached) and says so", () => {
    const s = press(start().state, "r").state;
    const err = { ...result(claude, []), status: "network_error" as const, message: "timeout after 10 s" };
    const next = reduce(s, { type: "result", key: "claude:default", result: err }).state;
    expect(next.results["claude:default"].status).toBe("available");
    expect(next.results["claude:default"].cached_at).toBe(claudeResult.fetched_at);
    expect(next.message).toContain("timeout after 10 s");
    expect(next.loading).not.toContain("claude:default");
  });

  test("an auth_required after a logout replaces the good result", () => {
    const auth = { ...result(claude, []), status: "auth_required" as const, hint: "run `claude login`" };
    const next = reduce(start().state, { type: "result", key: "claude:default", result: auth }).state;
    expect(next.results["claude:default"].status).toBe("auth_required");
  });

  test("the auto-refresh timer fetches everything only while auto-refresh is on", () => {
    const off = start().state;
    expect(reduce(off, { type: "autoRefresh" }).effects).toEqual([]);
    const on = press(off, "a").state;
    expect(fetched(reduce(on, { type: "autoRefresh" }).effects).length).toBe(4);
  });

  test("tick advances the spinner; message sets the message line; resize stores the size", () => {
    const s = start().state;
    expect(reduce(s, { type: "tick" }).state.spin).toBe(1);
    expect(reduce(s, { type: "message", text: "hi" }).state.message).toBe("hi");
    expect(reduce(s, { type: "resize", width: 200, height: 60 }).state).toMatchObject({ width: 200, height: 60 });
  });

  test("growing the terminal clamps the detail scroll", () => {
    const s = init({ targets: [claude], cached: [manyWindows(claude, 40)], favorites: [], prefs: {}, autoRefreshSeconds: 0, refreshOnStart: false, width: 80, height: 24 }).state;
    const scrolled = press(s, "enter", "end").state;
    expect(scrolled.scroll).toBe(23);
    const big = reduce(scrolled, { type: "resize", width: 80, height: 60 }).state;
    expect(big.scroll).toBe(0); // 40 compact lines fit into 53
  });
});
