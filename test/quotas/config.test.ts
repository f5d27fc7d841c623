// config.toml: every table, aliases, and one-line errors naming file, line and problem.
import { describe, expect, test } from "bun:test";
import { defaults, parseConfig } from "../../src/quotas/config/config";

const FULL = `# my quotas config
[tui]
auto_refresh = 120
refresh_on_start = false

[providers]
enabled = ["*"]
disabled = ["grok", "openai"]

[favorites]
providers = ["claude", "codex:work"]

[quota_preferences.claude]
favorites = ["5h"]
hidden = ["weekly_opus"]

[profiles]
autodetect = false

[profiles.entries."claude:work"]
canonical = "~/.claude-work"
name = "Work"
enabled = true

[copilot]
token = "gho_abc"

[endpoints]
claude = "http://127.0.0.1:9999"
`;

describe("config", () => {
  test("every table of the spec is read; aliases become canonical names", () => {
    const { config, warning } = parseConfig(FULL, "config.toml");
    expect(warning).toBeUndefined();
    expect(config.tui).toEqual({ autoRefreshSeconds: 120, refreshOnStart: false });
    expect(config.providers).toEqual({ enabled: ["*"], disabled: ["grok", "codex"] });
    expect(config.favorites).toEqual(["claude", "codex:work"]);
    expect(config.quotaPreferences.claude).toEqual({ favorites: ["5h"], hidden: ["weekly_opus"] });
    expect(config.profiles).toEqual({ autodetect: false, entries: { "claude:work": { canonical: "~/.claude-work", name: "Work", enabled: true } } });
    expect(config.copilotToken).toBe("gho_abc");
    expect(config.endpoints).toEqual({ claude: "http://127.0.0.1:9999" });
  });
  test("an empty file means defaults", () => {
    expect(parseConfig("", "config.toml")).toEqual({ config: defaults(), path: "config.toml" });
  });
  test("a TOML syntax error: one line with file and line, then defaults", () => {
    const { config, warning } = parseConfig("[tui]\nauto_refresh = 5\n\n[providers]\nenabled = [\"claude\"\n", "~/.config/quotas/config.toml");
    expect(warning).toMatch(/^~\/\.config\/quotas\/config\.toml:\d+: invalid TOML: .+; using defaults$/);
    expect(warning!.split("\n")).toHaveLength(1);
    expect(config).toEqual(defaults());
  });
  test("a wrong type names the key's line", () => {
    const { config, warning } = parseConfig("# c\n[tui]\nrefresh_on_start = true\nauto_refresh = \"often\"\n", "cfg.toml");
    expect(warning).toStartWith("cfg.toml:4: tui.auto_refresh:");
    expect(config).toEqual(defaults());
  });
  test("an unknown provider name is reported on its line", () => {
    const { warning } = parseConfig("[providers]\n\ndisabled = [\"nope\"]\n", "cfg.toml");
    expect(warning).toBe('cfg.toml:3: providers.disabled.0: unknown provider "nope"; using defaults');
  });
  test("[statusline] with named formats and [alerts]: read, defaulted, checked", () => {
    const { config, warning } = parseConfig('[statusline]\nicons = false\n\n[statusline.formats.tmux]\nformat = "%percent"\nproviders = ["anthropic", "codex:work"]\n\n[alerts]\nthresholds = [95, 80, 80]\n', "cfg.toml");
    expect(warning).toBeUndefined();
    expect(config.statusline).toEqual({
      format: "%provider %remaining/%limit",
      icons: false,
      formats: { tmux: { format: "%percent", icons: true, providers: ["claude", "codex:work"] } },
    });
    expect(config.alerts).toEqual({ thresholds: [80, 95], notify: true });
    expect(defaults().alerts).toEqual({ thresholds: [], notify: true }); // off unless set
    expect(parseConfig("[alerts]\nthresholds = [0]\n", "cfg.toml").warning).toStartWith("cfg.toml:2: alerts.thresholds.0:");
    expect(parseConfig('[statusline.formats."a b"]\nicons = true\n', "cfg.toml").warning).toContain("format names are letters, digits, - and _");
  });
  test("an unknown table is reported", () => {
    const { warning } = parseConfig("[tui]\n\n[colours]\nx = 1\n", "cfg.toml");
    expect(warning).toStartWith("cfg.toml:3: colours:");
  });
});
