// End to end: `quotas --statusline` reads only the cache, forks a detached refresh when the cache is
// stale or missing, never waits for it; concurrent refreshes never corrupt the cache; update checks.
import { afterEach, beforeAll, describe, expect, test } from "bun:test";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import pkg from "../../src/quotas/manifest.json";
import { allProviders, fakeProvider, homeWithCredentials, runEnv, type Fake } from "../quotas/fakes";
import { tempHome, type TempHome } from "../quotas/helpers";
import type { ProviderResult } from "../../src/quotas/model/types";
import { ensureBuilt } from "./support";

let bin: string;
let h: TempHome;
let fakes: Fake[] = [];
let servers: { stop(force?: boolean): void }[] = [];

beforeAll(async () => {
  bin = await ensureBuilt("quotas");
});
afterEach(async () => {
  // Let any background child finish before its servers and HOME go away.
  if (h) await until(() => !existsSync(join(h.home, ".cache/quotas/refresh.lock")) && !existsSync(join(h.home, ".cache/quotas/update.lock")), "background children", 20_000).catch(() => {});
  for (const f of fakes) f.stop();
  for (const s of servers) s.stop(true);
  fakes = [];
  servers = [];
  h?.cleanup();
});

async function run(args: string[], env: Record<string, string>) {
  const p = Bun.spawn([bin, ...args], { env, stdin: "ignore", stdout: "pipe", stderr: "pipe" });
  const [stdout, stderr, code] = await Promise.all([new Response(p.stdout).text(), new Response(p.stderr).text(), p.exited]);
  return { stdout, stderr, code };
}

async function until(cond: () => boolean, what: string, ms = 15_000) {
  const end = Date.now() + ms;
  while (!cond()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await Bun.sleep(25);
  }
}

const hits = () => fakes.reduce((n, f) => n + f.seen.length, 0);
const cacheFile = () => join(h.home, ".cache/quotas/cache.json");
const readCache = () => JSON.parse(readFileSync(cacheFile(), "utf8")) as { refreshed_at: string | null; results: Record<string, ProviderResult> };

function result(provider: string, name: string, used: number, limit = 100, profile = "default"): ProviderResult {
  return {
    provider, profile, name, status: "available", plan: null,
    windows: [
      { window: "5h", used, limit, remaining: limit - used, unit: "percent", reset_at: null, period_seconds: 18000 },
      { window: "weekly", used: 1, limit, remaining: limit - 1, unit: "percent", reset_at: null, period_seconds: 604800 },
    ],
    fetched_at: new Date().toISOString(), cached_at: null, auth_source: null,
  };
}

function writeCache(refreshedAt: string | null, results: ProviderResult[]) {
  h.write(".cache/quotas/cache.json", { version: 1, refreshed_at: refreshedAt, results: Object.fromEntries(results.map((r) => [`${r.provider}:${r.profile}`, r])) });
}

const fresh = () => new Date().toISOString();
const stale = () => new Date(Date.now() - 31 * 60_000).toISOString();

describe("--statusline", () => {
  test("a fresh cache: the line comes from the cache and no request reaches any provider", async () => {
    h = homeWithCredentials();
    fakes = allProviders.map((p) => fakeProvider(p));
    writeCache(fresh(), [result("claude", "Claude", 42), result("codex", "Codex", 88), { ...result("zai", "Z.ai", 0), status: "auth_required", windows: [] }]);
    const r = await run(["--statusline", "--no-icons", "--no-update-check"], runEnv(h, fakes));
    expect(r).toEqual({ stdout: "Claude 58/100 | Codex 12/100\n", stderr: "", code: 0 });
    await Bun.sleep(500); // a forked refresh would have reached the servers by now
    expect(hits()).toBe(0);
    expect(existsSync(join(h.home, ".cache/quotas/refresh.lock"))).toBe(false);
  });

  test("template, icons, --provider with profiles, hidden windows from the config", async () => {
    h = homeWithCredentials();
    writeCache(fresh(), [result("claude", "Claude", 42), result("claude", "Claude (work)", 90, 100, "work"), result("codex", "Codex", 10)]);
    h.write(".config/quotas/config.toml", '[quota_preferences.codex]\nhidden = ["5h"]\n');
    const env = runEnv(h, []);
    const fmt = await run(["--statusline", "--no-icons", "--no-update-check", "--format=%provider %window %percent"], env);
    expect(fmt.stdout).toBe("Claude 5h 42% | Claude (work) 5h 90% | Codex weekly 1%\n");
    const only = await run(["--statusline", "--no-icons", "--no-update-check", "--provider=anthropic:work"], env);
    expect(only.stdout).toBe("Claude (work) 10/100\n");
    const icons = await run(["--statusline", "--no-update-check", "--provider=codex"], env);
    expect(icons.stdout).toMatch(/^\S+ Codex 99\/100\n$/);
    expect(icons.stdout.startsWith("Codex")).toBe(false);
  });

  test("config edits apply at the next prompt: [providers] filters, profile names, an invalid file", async () => {
    h = homeWithCredentials();
    writeCache(fresh(), [result("codex", "Codex", 10), result("claude", "Claude (work)", 90, 100, "work"), result("claude", "Claude", 42), result("zai", "Z.ai", 5)]);
    const env = runEnv(h, []);
    const line = async () => (await run(["--statusline", "--no-icons", "--no-update-check"], env)).stdout;
    // registry order, the default profile before the others, whatever the cache's order
    expect(await line()).toBe("Claude 58/100 | Claude (work) 10/100 | Codex 90/100 | Z.ai 95/100\n");
    h.write(".config/quotas/config.toml", '[providers]\ndisabled = ["glm", "claude:work"]\n\n[copilot]\ntoken = "gho_SECRET_in_config"\n');
    expect(await line()).toBe("Claude 58/100 | Codex 90/100\n");
    expect(await line()).toBe("Claude 58/100 | Codex 90/100\n"); // the second prompt uses the remembered parse
    const memo = readFileSync(join(h.home, ".cache/quotas/statusline-config.json"), "utf8");
    expect(memo).not.toContain("SECRET");
    h.write(".config/quotas/config.toml", '[providers]\nenabled = ["claude", "zai"]\n\n[profiles.entries."claude:work"]\nname = "Work"\n');
    expect(await line()).toBe("Claude 58/100 | Work 10/100 | Z.ai 95/100\n");
    h.write(".config/quotas/config.toml", '[providers]\nenabled = "claude"\n'); // invalid: defaults, as everywhere
    const bad = await run(["--statusline", "--no-icons", "--no-update-check"], env);
    expect(bad).toEqual({ stdout: "Claude 58/100 | Claude (work) 10/100 | Codex 90/100 | Z.ai 95/100\n", stderr: "", code: 0 });
  });

  test("a stale cache: prints the cached line at once, the detached child refreshes it", async () => {
    h = homeWithCredentials();
    // The providers answer slowly, so the foreground provably finishes before any answer exists.
    fakes = allProviders.map((p) => fakeProvider(p, { kind: "ok", delayMs: 1500 }));
    const old = stale();
    writeCache(old, [result("claude", "Claude", 10)]);
    const r = await run(["--statusline", "--no-icons", "--no-update-check"], runEnv(h, fakes));
    expect(r).toEqual({ stdout: "Claude 90/100\n", stderr: "", code: 0 });
    expect(readCache().refreshed_at).toBe(old);
    await until(() => readCache().refreshed_at !== old, "the background refresh");
    expect(Object.keys(readCache().results)).toHaveLength(12);
    // after cache.json the child still writes history and the prompt files, then lets go of the lock
    await until(() => !existsSync(join(h.home, ".cache/quotas/refresh.lock")), "the refresh lock's release", 5000);
    expect(readFileSync(join(h.home, ".cache/quotas/statusline.txt"), "utf8")).toContain("Claude 39/100");
    const after = await run(["--statusline", "--no-icons", "--no-update-check", "--provider=claude"], runEnv(h, fakes));
    expect(after.stdout).toBe("Claude 39/100\n"); // the tightest window of the fixture: weekly_opus
  });

  test("no cache: an empty line, one refresh forked however often the prompt asks meanwhile", async () => {
    h = homeWithCredentials();
    fakes = allProviders.map((p) => fakeProvider(p, { kind: "ok", delayMs: 800 }));
    const env = runEnv(h, fakes);
    for (let i = 0; i < 4; i++) {
      const r = await run(["--statusline", "--no-update-check"], env);
      expect(r).toEqual({ stdout: "\n", stderr: "", code: 0 });
    }
    await until(() => existsSync(cacheFile()) && readCache().refreshed_at !== null, "the first refresh");
    // One refresh: each provider's endpoint(s) were asked exactly once.
    const perProvider = Object.fromEntries(fakes.map((f) => [f.provider, f.seen.length]));
    expect(perProvider).toEqual({ claude: 1, codex: 1, antigravity: 1, copilot: 1, cursor: 2, zai: 1, kimi: 1, minimax: 1, deepseek: 1, siliconflow: 1, openrouter: 2, grok: 1 });
  });

  test("two refreshes at once never corrupt the cache", async () => {
    h = homeWithCredentials();
    fakes = allProviders.map((p) => fakeProvider(p, { kind: "ok", delayMs: 100 }));
    const env = runEnv(h, fakes);
    for (let round = 0; round < 3; round++) {
      const [a, b] = await Promise.all([run(["--refresh-cache"], env), run(["--refresh-cache"], env)]);
      expect([a, b].map((x) => [x.code, x.stderr])).toEqual([[0, ""], [0, ""]]);
      const cache = readCache();
      expect(Object.keys(cache.results).sort()).toEqual(allProviders.map((p) => `${p}:default`).sort());
      expect(Object.values(cache.results).every((r) => r.status === "available")).toBe(true);
    }
    // no temp or lock files left behind: the cache and the pre-rendered prompt files only
    expect(readdirSync(join(h.home, ".cache/quotas")).sort()).toEqual(["cache.json", "statusline.due", "statusline.txt"]);
  });
});

describe("update check", () => {
  function registry(latest: string | null): string {
    const s = Bun.serve({
      port: 0,
      hostname: "127.0.0.1",
      fetch: (req) =>
        latest === null
          ? new Response("boom", { status: 500 })
          : new URL(req.url).pathname === `/${pkg.name}`
            ? Response.json({ name: pkg.name, "dist-tags": { latest } })
            : new Response("{}", { status: 404 }),
    });
    servers.push(s);
    return `http://127.0.0.1:${s.port}`;
  }

  test("--check-update: newer, up to date, and a failing registry (exit 1)", async () => {
    h = tempHome();
    const newer = await run(["--check-update"], { ...runEnv(h, []), npm_config_registry: registry("99.0.0") });
    expect(newer).toEqual({ stdout: `${pkg.name} 99.0.0 is available (installed ${pkg.version}): npm install -g ${pkg.name}\n`, stderr: "", code: 0 });
    const same = await run(["--check-update"], { ...runEnv(h, []), npm_config_registry: registry(pkg.version) });
    expect(same).toEqual({ stdout: `${pkg.name} ${pkg.version} is up to date (latest ${pkg.version})\n`, stderr: "", code: 0 });
    const broken = await run(["--check-update"], { ...runEnv(h, []), npm_config_registry: registry(null) });
    expect(broken.code).toBe(1);
    expect(broken.stdout).toBe("");
    expect(broken.stderr).toMatch(/^quotas: update check failed: .*HTTP 500\n$/);
  });

  test("the statusline checks in the background once a day and then shows the update", async () => {
    h = tempHome();
    writeCache(fresh(), [result("claude", "Claude", 42)]);
    const env = { ...runEnv(h, []), npm_config_registry: registry("99.0.0") };
    const first = await run(["--statusline", "--no-icons"], env);
    expect(first.stdout).toBe("Claude 58/100\n");
    const updateFile = join(h.home, ".cache/quotas/update.json");
    await until(() => existsSync(updateFile), "update.json");
    expect(JSON.parse(readFileSync(updateFile, "utf8"))).toMatchObject({ current: pkg.version, latest: "99.0.0" });
    const second = await run(["--statusline", "--no-icons"], env);
    expect(second.stdout).toBe("Claude 58/100 | update 99.0.0\n");
    const quiet = await run(["--statusline", "--no-icons", "--no-update-check"], env);
    expect(quiet.stdout).toBe("Claude 58/100\n");
  });

  test("--no-update-check: no version check at all", async () => {
    h = tempHome();
    writeCache(fresh(), []);
    let asked = 0;
    const s = Bun.serve({ port: 0, hostname: "127.0.0.1", fetch: () => (asked++, Response.json({ "dist-tags": { latest: "99.0.0" } })) });
    servers.push(s);
    await run(["--statusline", "--no-update-check"], { ...runEnv(h, []), npm_config_registry: `http://127.0.0.1:${s.port}` });
    await Bun.sleep(500);
    expect(asked).toBe(0);
    expect(existsSync(join(h.home, ".cache/quotas/update.json"))).toBe(false);
  });
});
