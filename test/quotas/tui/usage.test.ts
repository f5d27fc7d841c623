// The TUI's usage view (U): it asks the host for the figures once opened, draws today, this week, the
// models and a 30-day sparkline in exactly the terminal's size, and Esc goes back.
import { describe, expect, test } from "bun:test";
import type { UsageSummary } from "../../../src/quotas/model/types.ts";
import { init, reduce, type State } from "../../../src/quotas/tui/state.ts";
import { sparkline } from "../../../src/quotas/tui/usage.ts";
import { render } from "../../../src/quotas/tui/view.ts";
import { NOW, claude, claudeResult } from "./fixtures.ts";

const strip = (s: string) => s.replace(/\x1b\[[0-9;]*m/g, "");
const summary: UsageSummary = {
  timezone: "Europe/Berlin",
  today: { cost: 12.5, tokens: 2_500_000 },
  week: { cost: 80.25, tokens: 30_000_000 },
  models: [
    { agent: "claude", model: "claude-sonnet-4-5-20250929", cost: 70, tokens: 25_000_000 },
    { agent: "codex", model: "gpt-5-codex", cost: 10.25, tokens: 5_000_000 },
  ],
  daily: Array.from({ length: 30 }, (_, i) => ({ day: `2026-10-${String(i + 1).padStart(2, "0")}`, cost: i % 7 === 0 ? 0 : i })),
};

const start = (w: number, h: number): State =>
  init({ targets: [claude], cached: [claudeResult], favorites: [], prefs: {}, autoRefreshSeconds: 0, refreshOnStart: false, width: w, height: h }).state;

describe("usage view", () => {
  test("U opens it and asks for the figures; they fill in; Esc goes back", () => {
    const opened = reduce(start(100, 30), { type: "key", key: "u" });
    expect(opened.state.view).toBe("usage");
    expect(opened.effects).toEqual([{ type: "loadUsage" }]);
    expect(render(opened.state, NOW, { color: false, version: "1" }).join("\n")).toContain("reading the agents' logs");
    const loaded = reduce(opened.state, { type: "usage", summary }).state;
    const text = render(loaded, NOW, { color: false, version: "1" }).join("\n");
    expect(text).toContain("Today");
    expect(text).toContain("$12.50");
    expect(text).toContain("$80.25");
    expect(text).toContain("claude-sonnet-4-5-20250929 (claude)");
    expect(text).toContain(sparkline(summary.daily.map((d) => d.cost)));
    expect(reduce(loaded, { type: "key", key: "esc" }).state.view).toBe("dashboard");
    expect(reduce(loaded, { type: "key", key: "r" }).effects).toEqual([{ type: "loadUsage" }]);
  });

  test("a failure is one message line, not a crash", () => {
    const s = reduce(reduce(start(80, 24), { type: "key", key: "u" }).state, { type: "usage", summary: null, error: "Could not read the agents' logs: EACCES" }).state;
    expect(strip(render(s, NOW, { color: true, version: "1" }).at(-1)!)).toContain("Could not read the agents' logs: EACCES");
  });

  for (const [w, h] of [[80, 24], [40, 12], [200, 60], [12, 4]] as const) {
    test(`${w}×${h}: exactly ${h} lines of ${w} cells`, () => {
      const s = reduce(reduce(start(w, h), { type: "key", key: "u" }).state, { type: "usage", summary }).state;
      for (const color of [false, true]) {
        const frame = render(s, NOW, { color, version: "1" });
        expect(frame.length).toBe(h);
        for (const l of frame) expect(Bun.stringWidth(l)).toBe(w);
      }
    });
  }

  test("sparkline: busiest day full, idle days blank", () => {
    expect(sparkline([0, 1, 2, 4, 8])).toBe(" ▂▃▅█");
  });
});
