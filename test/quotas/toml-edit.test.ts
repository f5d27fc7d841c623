// The format-preserving config edit: only the touched key changes; comments and layout stay.
import { afterEach, describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import toml from "toml";
import { setFavoriteProvider, setQuotaPreference } from "../../src/quotas/config/preferences";
import { setStringArray } from "../../src/quotas/config/toml-edit";
import { tempHome, type TempHome } from "./helpers";

const CONFIG = `# Quotas config — keep my notes!
[tui]
auto_refresh = 60 # seconds

[favorites]
# the ones I look at first
providers = [
  "claude", # work
  "codex",
]   # trailing note

[quota_preferences.claude]
hidden = ['weekly_opus'] # noisy
`;

describe("setStringArray", () => {
  test("replaces a multi-line array in place, keeping every other line and the trailing comment", () => {
    const out = setStringArray(CONFIG, ["favorites"], "providers", ["claude", "codex", "zai"]);
    expect(out).toBe(CONFIG.replace(`providers = [\n  "claude", # work\n  "codex",\n]   # trailing note`, `providers = ["claude", "codex", "zai"]   # trailing note`));
    expect(toml.parse(out).favorites.providers).toEqual(["claude", "codex", "zai"]);
  });
  test("replaces a one-line value keeping its comment", () => {
    const out = setStringArray(CONFIG, ["quota_preferences", "claude"], "hidden", []);
    expect(out).toContain("hidden = [] # noisy\n");
    expect(out.replace("hidden = [] # noisy", "hidden = ['weekly_opus'] # noisy")).toBe(CONFIG);
  });
  test("adds a missing key at the end of its table", () => {
    const out = setStringArray(CONFIG, ["quota_preferences", "claude"], "favorites", ["5h"]);
    expect(out).toBe(CONFIG.replace("hidden = ['weekly_opus'] # noisy\n", "hidden = ['weekly_opus'] # noisy\nfavorites = [\"5h\"]\n"));
  });
  test("adds a missing table at the end, quoting keys that need it", () => {
    const out = setStringArray(CONFIG, ["quota_preferences", "claude:work"], "favorites", ["weekly"]);
    expect(out.startsWith(CONFIG.trimEnd())).toBe(true);
    expect(out.slice(CONFIG.trimEnd().length)).toBe('\n\n[quota_preferences."claude:work"]\nfavorites = ["weekly"]\n');
    expect(toml.parse(out).quota_preferences["claude:work"].favorites).toEqual(["weekly"]);
  });
  test("works on an empty file", () => {
    expect(setStringArray("", ["favorites"], "providers", ["kimi"])).toBe('[favorites]\nproviders = ["kimi"]\n');
  });
  test("a key of the same name in another table is left alone", () => {
    const text = '[quota_preferences.codex]\nfavorites = ["5h"]\n\n[quota_preferences.claude]\nfavorites = ["weekly"]\n';
    const out = setStringArray(text, ["quota_preferences", "claude"], "favorites", []);
    expect(out).toBe('[quota_preferences.codex]\nfavorites = ["5h"]\n\n[quota_preferences.claude]\nfavorites = []\n');
  });
});

describe("saving TUI preferences", () => {
  let h: TempHome;
  afterEach(() => h?.cleanup());
  test("favourite provider and hidden window toggles edit only their key", async () => {
    h = tempHome();
    const path = h.write(".config/quotas/config.toml", CONFIG);
    await setFavoriteProvider(h.ctx, "zai", true);
    await setQuotaPreference(h.ctx, "claude", "weekly_opus", "hidden", false);
    await setQuotaPreference(h.ctx, "codex", "5h", "favorites", true);
    const text = readFileSync(path, "utf8");
    const data = toml.parse(text);
    expect(data.favorites.providers).toEqual(["claude", "codex", "zai"]);
    expect(data.quota_preferences.claude.hidden).toEqual([]);
    expect(data.quota_preferences.codex.favorites).toEqual(["5h"]);
    for (const kept of ["# Quotas config — keep my notes!", "auto_refresh = 60 # seconds", "# the ones I look at first", "   # trailing note", "# noisy"]) {
      expect(text).toContain(kept);
    }
    await setFavoriteProvider(h.ctx, "claude", false);
    expect(toml.parse(readFileSync(path, "utf8")).favorites.providers).toEqual(["codex", "zai"]);
  });
  test("creates the file when there is none", async () => {
    h = tempHome();
    await setFavoriteProvider(h.ctx, "claude", true);
    expect(readFileSync(join(h.home, ".config/quotas/config.toml"), "utf8")).toBe('[favorites]\nproviders = ["claude"]\n');
  });
  test("a layout it cannot rewrite (inline table) is refused, and the file is untouched", async () => {
    h = tempHome();
    const text = "quota_preferences = { claude = { hidden = [\"5h\"] } }\n";
    const path = h.write(".config/quotas/config.toml", text);
    await expect(setQuotaPreference(h.ctx, "claude", "weekly", "hidden", true)).rejects.toThrow(/cannot update|not valid/);
    expect(readFileSync(path, "utf8")).toBe(text);
  });
  test("an invalid file is refused, not overwritten", async () => {
    h = tempHome();
    const path = h.write(".config/quotas/config.toml", "[favorites\n");
    await expect(setFavoriteProvider(h.ctx, "claude", true)).rejects.toThrow(/not valid TOML/);
    expect(readFileSync(path, "utf8")).toBe("[favorites\n");
  });
});
