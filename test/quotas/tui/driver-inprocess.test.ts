// The driver in-process, against a scripted terminal and host: first frame before any fetch answers,
// auto-refresh timer, save failures reported on the message line, errors restoring the terminal.
import { describe, expect, test } from "bun:test";
import { runDriver } from "../../../src/quotas/tui/driver.ts";
import { LEAVE } from "../../../src/quotas/tui/screen.ts";
import type { Terminal } from "../../../src/quotas/tui/terminal.ts";
import type { ProviderResult, Target, TuiHost } from "../../../src/quotas/model/types.ts";
import { claude, claudeResult, codex, codexResult } from "./fixtures.ts";

class FakeTerminal implements Terminal {
  isTTY = true;
  color = false;
  width = 80;
  height = 24;
  out = "";
  raw = false;
  private input: ((s: string) => void) | null = null;
  private resize: (() => void) | null = null;
  size() {
    return { width: this.width, height: this.height };
  }
  write(s: string) {
    this.out += s;
  }
  setRaw(on: boolean) {
    this.raw = on;
  }
  onInput(cb: (s: string) => void) {
    this.input = cb;
    return () => {
      this.input = null;
    };
  }
  onResize(cb: () => void) {
    this.resize = cb;
    return () => {
      this.resize = null;
    };
  }
  type(s: string) {
    this.input?.(s);
  }
  fireResize() {
    this.resize?.();
  }
  /** The screen as our own cursor-addressed writes leave it (SGR stripped). */
  screen(): string[] {
    const rows: string[] = Array(this.height).fill("");
    const re = /\x1b\[(\d+);1H([^\x1b]*(?:\x1b\[[0-9;]*m[^\x1b]*)*)/g;
    for (const m of this.out.matchAll(re)) rows[Number(m[1]) - 1] = m[2].replace(/\x1b\[[0-9;]*m/g, "");
    return rows;
  }
}

function makeHost(over: Partial<TuiHost> = {}): TuiHost & { calls: string[] } {
  const calls: string[] = [];
  const byKey: Record<string, ProviderResult> = { "claude:default": claudeResult, "codex:default": codexResult };
  return {
    calls,
    version: "0.0.1",
    targets: () => [claude, codex],
    cached: () => [claudeResult],
    fetch: (t: Target) => {
      calls.push(t.key);
      return Promise.resolve(byKey[t.key]);
    },
    tui: { autoRefreshSeconds: 0, refreshOnStart: false },
    favoriteProviders: () => [],
    quotaPreferences: () => ({ favorites: [], hidden: [] }),
    setFavoriteProvider: () => Promise.resolve(),
    setQuotaPreference: () => Promise.resolve(),
    copyToSystemClipboard: () => Promise.resolve(false),
    ...over,
  };
}

const until = async (pred: () => boolean, ms = 5000) => {
  const end = Date.now() + ms;
  while (!pred()) {
    if (Date.now() > end) throw new Error("condition not met");
    await Bun.sleep(10);
  }
};

describe("driver (in-process)", () => {
  test("the first frame is drawn from the cache before any fetch answers", async () => {
    const term = new FakeTerminal();
    const host = makeHost({ fetch: () => new Promise(() => {}) }); // never answers
    const done = runDriver(host, term);
    expect(term.raw).toBe(true);
    expect(term.out).toContain("\x1b[?1049h");
    const text = term.screen().join("\n");
    expect(text).toContain("42/100%");
    expect(text).toContain("loading…"); // codex: no cache, fetch in flight
    term.type("q");
    expect(await done).toBe(0);
    expect(term.out.endsWith(LEAVE)).toBe(true);
    expect(term.raw).toBe(false);
  });

  test("auto-refresh fetches every target on its interval while on, and stops when A turns it off", async () => {
    const term = new FakeTerminal();
    const host = makeHost({ tui: { autoRefreshSeconds: 1, refreshOnStart: false } });
    const done = runDriver(host, term);
    await until(() => host.calls.length >= 1); // codex (not cached) at start
    const atStart = host.calls.length;
    await until(() => host.calls.length >= atStart + 2, 4000); // one auto-refresh of both targets
    expect(host.calls.slice(atStart, atStart + 2).sort()).toEqual(["claude:default", "codex:default"]);
    term.type("a");
    await until(() => term.screen()[23].includes("Auto-refresh off"));
    const afterOff = host.calls.length;
    await Bun.sleep(2300);
    expect(host.calls.length).toBe(afterOff);
    term.type("q");
    expect(await done).toBe(0);
  });

  test("a failed save is reported on the message line", async () => {
    const term = new FakeTerminal();
    const host = makeHost({ setFavoriteProvider: () => Promise.reject(new Error("config.toml is read-only")) });
    const done = runDriver(host, term);
    term.type("f");
    await until(() => term.screen()[23].includes("Could not save the favourite: config.toml is read-only"));
    term.type("q");
    expect(await done).toBe(0);
  });

  test("C writes OSC 52 to the terminal and reports the copy", async () => {
    const term = new FakeTerminal();
    const host = makeHost({ copyToSystemClipboard: () => Promise.resolve(true) });
    const done = runDriver(host, term);
    term.type("c");
    const m = term.out.match(/\x1b\]52;c;([A-Za-z0-9+/=]+)\x07/);
    expect(JSON.parse(Buffer.from(m![1], "base64").toString()).name).toBe("Claude");
    await until(() => term.screen()[23].includes("via OSC 52 and the system clipboard"));
    term.type("\x03");
    expect(await done).toBe(130);
  });

  test("an arrow key split across two reads is one key; a lone ESC is Esc after a moment", async () => {
    const term = new FakeTerminal();
    const done = runDriver(makeHost(), term);
    term.type("\x1b");
    term.type("[B"); // Down: selects Codex (never "[" then "B")
    term.type("\r");
    await until(() => term.screen()[0].includes("› Codex"));
    term.type("\x1b");
    await until(() => !term.screen()[0].includes("›")); // Esc: back to the dashboard
    term.type("q");
    expect(await done).toBe(0);
  });

  test("a resize repaints every line at the new size", async () => {
    const term = new FakeTerminal();
    const done = runDriver(makeHost(), term);
    await Bun.sleep(20);
    term.out = "";
    term.width = 120;
    term.height = 30;
    term.fireResize();
    await Bun.sleep(20);
    const rows = [...term.out.matchAll(/\x1b\[(\d+);1H/g)].map((m) => Number(m[1]));
    expect(rows).toEqual(Array.from({ length: 30 }, (_, i) => i + 1));
    expect(term.screen()[29]).toContain("R refresh");
    term.type("q");
    expect(await done).toBe(0);
  });

  test("an error thrown by the host restores the terminal and exits 1", async () => {
    const term = new FakeTerminal();
    const host = makeHost({ cached: () => { throw new Error("cache exploded"); } });
    const errs: string[] = [];
    const orig = process.stderr.write.bind(process.stderr);
    process.stderr.write = ((s: string) => (errs.push(String(s)), true)) as typeof process.stderr.write;
    try {
      expect(await runDriver(host, term)).toBe(1);
    } finally {
      process.stderr.write = orig;
    }
    expect(term.out.endsWith(LEAVE)).toBe(true);
    expect(term.raw).toBe(false);
    expect(errs.join("")).toBe("quotas: cache exploded\n");
  });

  test("a host.fetch that throws (against its contract) shows a network error on the card", async () => {
    const term = new FakeTerminal();
    const host = makeHost({ fetch: () => Promise.reject(new Error("socket hang up")) });
    const done = runDriver(host, term);
    await until(() => term.screen().join("\n").includes("network error: socket hang up"));
    term.type("q");
    expect(await done).toBe(0);
  });
});
