// The TuiHost the interactive UI drives: targets, cached results, fetch (which records into the
// cache), preferences saved into config.toml, clipboard; and the CLI handing it to the TUI.
import { afterEach, describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { main } from "../../src/quotas/cli";
import { clipboardCommands } from "../../src/quotas/output/clipboard";
import { loadConfig } from "../../src/quotas/config/config";
import { createHost } from "../../src/quotas/fetch/host";
import type { TuiHost } from "../../src/quotas/model/types";
import { fakeProvider, homeWithCredentials, type Fake } from "./fakes";
import type { TempHome } from "./helpers";

let h: TempHome;
let fakes: Fake[] = [];
afterEach(() => {
  for (const f of fakes) f.stop();
  fakes = [];
  h?.cleanup();
});

describe("TuiHost", () => {
  test("targets, fetch recording into the cache, cached results for the first frame", async () => {
    h = homeWithCredentials();
    h.write(".claude-work/.credentials.json", { claudeAiOauth: { accessToken: "w", expiresAt: 4102444800000 } });
    h.write(".config/quotas/config.toml", '[providers]\nenabled = ["claude", "deepseek"]\n\n[tui]\nauto_refresh = 90\nrefresh_on_start = false\n');
    fakes = [fakeProvider("claude"), fakeProvider("deepseek")];
    for (const f of fakes) h.env[`QUOTAS_ENDPOINT_${f.provider.toUpperCase()}`] = f.url;
    const host = createHost(h.ctx, loadConfig(h.ctx).config);
    expect(host.targets()).toEqual([
      { key: "claude:default", provider: "claude", profile: "default", name: "Claude" },
      { key: "claude:work", provider: "claude", profile: "work", name: "Claude (work)" },
      { key: "deepseek:default", provider: "deepseek", profile: "default", name: "DeepSeek" },
    ]);
    expect(host.tui).toEqual({ autoRefreshSeconds: 90, refreshOnStart: false });
    expect(host.cached()).toEqual([]);
    const results = await Promise.all(host.targets().map((t) => host.fetch(t)));
    expect(results.map((r) => r.status)).toEqual(["available", "available", "available"]);
    const cached = host.cached();
    expect(cached.map((r) => `${r.provider}:${r.profile}`).sort()).toEqual(["claude:default", "claude:work", "deepseek:default"]);
    expect(cached.every((r) => r.cached_at === r.fetched_at)).toBe(true);
    // A provider going down afterwards: the host shows the last good result, aged.
    fakes[1].mode = { kind: "hang" };
    h.ctx.timeoutMs = 300;
    const down = await host.fetch(host.targets()[2]);
    expect(down).toMatchObject({ status: "available", cached_at: results[2].fetched_at });
  });

  test("favourites and quota preferences are read from and saved to config.toml", async () => {
    h = homeWithCredentials();
    const path = h.write(".config/quotas/config.toml", "# mine\n[favorites]\nproviders = [\"codex\"] # top\n");
    const host = createHost(h.ctx, loadConfig(h.ctx).config);
    expect(host.favoriteProviders()).toEqual(["codex"]);
    await host.setFavoriteProvider("claude", true);
    await host.setQuotaPreference("claude", "weekly_opus", "hidden", true);
    await host.setQuotaPreference("claude", "5h", "favorites", true);
    expect(host.favoriteProviders()).toEqual(["codex", "claude"]);
    expect(host.quotaPreferences("claude")).toEqual({ favorites: ["5h"], hidden: ["weekly_opus"] });
    expect(host.quotaPreferences("zai")).toEqual({ favorites: [], hidden: [] });
    const text = readFileSync(path, "utf8");
    expect(text).toStartWith('# mine\n[favorites]\nproviders = ["codex", "claude"] # top\n');
  });

  test("clipboard tools are only used where they exist", () => {
    const have = (bins: string[]) => (b: string) => (bins.includes(b) ? `/usr/bin/${b}` : null);
    expect(clipboardCommands({ WAYLAND_DISPLAY: "wayland-0", DISPLAY: ":0" }, have(["wl-copy", "xsel"]))).toEqual([["wl-copy"], ["xsel", "--clipboard", "--input"]]);
    expect(clipboardCommands({}, have(["wl-copy", "xclip", "xsel"]))).toEqual([]);
  });
});

describe("the CLI without a mode flag runs the TUI with a host", () => {
  test("runTui gets a working host and its exit code is the command's", async () => {
    h = homeWithCredentials();
    let seen: TuiHost | undefined;
    const code = await main([ "--no-update-check", "--provider=zai"], h.env, {
      out: () => {},
      err: () => {},
      runTui: async (host) => {
        seen = host;
        return 7;
      },
    });
    expect(code).toBe(7);
    expect(seen!.targets().map((t) => t.key)).toEqual(["zai:default"]);
    expect(seen!.version).toBe(JSON.parse(readFileSync(join(import.meta.dir, "../../src/quotas/manifest.json"), "utf8")).version);
  });
});
