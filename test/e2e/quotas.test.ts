// End to end: the compiled `quotas` with a temporary HOME/XDG holding fake credentials, against one
// fake provider server per provider on loopback.
import { afterAll, afterEach, beforeAll, describe, expect, test } from "bun:test";
import { existsSync, mkdirSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { allProviders, fakeProvider, homeWithCredentials, runEnv, secrets, type Fake } from "../quotas/fakes";
import { tempHome, type TempHome } from "../quotas/helpers";
import type { ProviderResult, Report } from "../../src/quotas/model/types";
import pkg from "../../src/quotas/manifest.json";
import { ensureBuilt, refusedPort } from "./support";

let bin: string;
let h: TempHome;
let fakes: Fake[] = [];

beforeAll(async () => {
  bin = await ensureBuilt("quotas");
});
afterEach(() => {
  for (const f of fakes) f.stop();
  fakes = [];
  h?.cleanup();
});

async function run(args: string[], env: Record<string, string>) {
  const p = Bun.spawn([bin, ...args], { env, stdin: "ignore", stdout: "pipe", stderr: "pipe" });
  const [stdout, stderr, code] = await Promise.all([new Response(p.stdout).text(), new Response(p.stderr).text(), p.exited]);
  return { stdout, stderr, code };
}

async function json(args: string[], env: Record<string, string>): Promise<Report> {
  const r = await run(["--json", ...args], env);
  expect(r.stderr).toBe("");
  expect(r.code).toBe(0);
  return JSON.parse(r.stdout);
}

const byKey = (rep: Report) => Object.fromEntries(rep.providers.map((p) => [`${p.provider}:${p.profile}`, p])) as Record<string, ProviderResult>;
const win = (r: ProviderResult, name: string) => r.windows.find((w) => w.window === name);
const hits = () => fakes.reduce((n, f) => n + f.seen.length, 0);

async function until(cond: () => boolean, what: string, ms = 15_000) {
  const end = Date.now() + ms;
  while (!cond()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await Bun.sleep(25);
  }
}

describe("--json", () => {
  test("all twelve providers available, with their numbers, sources and no secrets", async () => {
    h = homeWithCredentials();
    fakes = allProviders.map((p) => fakeProvider(p));
    const r = await run(["--json", "--pretty"], runEnv(h, fakes));
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('\n  "providers": [');
    const rep: Report = JSON.parse(r.stdout);
    expect(rep.version).toBe(pkg.version);
    const res = byKey(rep);
    expect(Object.keys(res)).toEqual(allProviders.map((p) => `${p}:default`));
    for (const p of rep.providers) expect([p.provider, p.status]).toEqual([p.provider, "available"]);
    expect(win(res["claude:default"], "5h")).toMatchObject({ used: 42, remaining: 58, limit: 100 });
    expect(res["claude:default"]).toMatchObject({ plan: "max", auth_source: "~/.claude/.credentials.json", cached_at: null });
    expect(win(res["codex:default"], "weekly")).toMatchObject({ used: 76 });
    expect(win(res["antigravity:default"], "weekly")).toMatchObject({ used: 18.13 });
    expect(win(res["copilot:default"], "premium")).toMatchObject({ used: 321, remaining: 1179 });
    expect(res["cursor:default"].plan).toBe("Pro");
    expect(res["zai:default"]).toMatchObject({ auth_source: "env ZAI_API_KEY", plan: "pro" });
    expect(win(res["kimi:default"], "5h")).toMatchObject({ limit: 100 });
    expect(win(res["minimax:default"], "5h")).toMatchObject({ used: 300, remaining: 1200 });
    expect(win(res["deepseek:default"], "balance")).toMatchObject({ remaining: 110.5, unit: "cny" });
    expect(res["siliconflow:default"].auth_source).toBe("~/.siliconflow");
    expect(win(res["openrouter:default"], "credits")).toMatchObject({ used: 7.35, limit: 25 });
    expect(win(res["grok:default"], "weekly_grokbuild")).toMatchObject({ used: 75 });
    const cache = readFileSync(join(h.home, ".cache/quotas/cache.json"), "utf8");
    for (const s of Object.values(secrets)) {
      expect(r.stdout).not.toContain(s);
      expect(cache).not.toContain(s);
    }
    expect(cache).not.toContain("REDACTED"); // raw responses (e-mails, account ids) are not cached
    expect(r.stdout).not.toContain('"raw"');
    // The requests carry what each provider expects.
    const claude = fakes.find((f) => f.provider === "claude")!.seen[0];
    expect(claude.headers.authorization).toBe(`Bearer ${secrets.claude}`);
    expect(claude.headers["anthropic-beta"]).toBe("oauth-2025-04-20");
    expect(claude.headers["user-agent"]).toStartWith("claude-code/");
    expect(fakes.find((f) => f.provider === "codex")!.seen[0].headers["chatgpt-account-id"]).toBe("acct-123");
    expect(fakes.find((f) => f.provider === "copilot")!.seen[0].headers.authorization).toBe(`token ${secrets.copilot}`);
    expect(fakes.find((f) => f.provider === "cursor")!.seen.map((s) => [s.method, s.headers.cookie])).toEqual([
      ["POST", `WorkosCursorSessionToken=user_SECRET01%3A%3A${secrets.cursor}`],
      ["POST", `WorkosCursorSessionToken=user_SECRET01%3A%3A${secrets.cursor}`],
    ]);
    expect(fakes.find((f) => f.provider === "grok")!.seen[0].search).toBe("?format=credits");
    const agy = fakes.find((f) => f.provider === "antigravity")!.seen[0];
    expect([agy.method, agy.body, agy.headers["user-agent"]]).toEqual(["POST", "{}", "antigravity"]);
    expect(fakes.find((f) => f.provider === "openrouter")!.seen.map((s) => s.path).sort()).toEqual(["/api/v1/credits", "/api/v1/key"]);
  });

  test("--raw adds each provider's raw response", async () => {
    h = homeWithCredentials();
    fakes = [fakeProvider("deepseek")];
    const rep = await json(["--raw", "--provider=deepseek"], runEnv(h, fakes));
    expect(rep.providers[0].raw).toMatchObject({ is_available: true });
  });

  test("auth_required: no credentials at all → every provider, each with a hint, and no request sent", async () => {
    h = tempHome();
    fakes = allProviders.map((p) => fakeProvider(p));
    const rep = await json([], runEnv(h, fakes));
    expect(rep.providers).toHaveLength(12);
    for (const p of rep.providers) {
      expect(p.status).toBe("auth_required");
      expect(p.hint).toBeTruthy();
      expect(p.auth_source).toBeNull();
    }
    expect(byKey(rep)["codex:default"].hint).toContain("codex login");
    expect(hits()).toBe(0);
  });

  test("auth_required: an expired token file is not sent, not refreshed, not rewritten", async () => {
    h = homeWithCredentials();
    const file = h.write(".claude/.credentials.json", { claudeAiOauth: { accessToken: secrets.claude, refreshToken: "single-use", expiresAt: Date.now() - 60_000 } });
    const before = readFileSync(file, "utf8");
    const mtime = statSync(file).mtimeMs;
    fakes = [fakeProvider("claude")];
    const rep = await json(["--provider=claude"], runEnv(h, fakes));
    expect(rep.providers[0]).toMatchObject({ status: "auth_required", auth_source: "~/.claude/.credentials.json", message: "the access token has expired" });
    expect(rep.providers[0].hint).toContain("claude");
    expect(hits()).toBe(0);
    expect(readFileSync(file, "utf8")).toBe(before);
    expect(statSync(file).mtimeMs).toBe(mtime);
  });

  test("auth_required on 401/403; unavailable on a plan error; network_error on refused and silent servers", async () => {
    h = homeWithCredentials();
    fakes = [
      fakeProvider("claude", { kind: "status", status: 401, body: readFileSync(join(import.meta.dir, "../quotas/fixtures/claude/error_401.json"), "utf8") }),
      fakeProvider("copilot", { kind: "status", status: 403, body: '{"message":"Resource not accessible"}' }),
      fakeProvider("zai", { kind: "status", status: 200, body: readFileSync(join(import.meta.dir, "../quotas/fixtures/zai/error_plan.json"), "utf8") }),
      fakeProvider("openrouter", { kind: "status", status: 402, body: '{"error":{"code":402,"message":"Insufficient credits"}}' }),
      fakeProvider("deepseek", { kind: "hang" }),
    ];
    const refused = refusedPort();
    const env = runEnv(h, fakes, { QUOTAS_ENDPOINT_GROK: `http://127.0.0.1:${refused}`, QUOTAS_TIMEOUT_MS: "700" });
    const rep = await json(["--provider=claude,copilot,zai,openrouter,deepseek,grok"], env);
    const res = byKey(rep);
    expect(res["claude:default"]).toMatchObject({ status: "auth_required", message: "credentials rejected (HTTP 401)" });
    expect(res["claude:default"].hint).toContain("claude");
    expect(res["copilot:default"].status).toBe("auth_required");
    expect(res["zai:default"]).toMatchObject({ status: "unavailable", console_url: "https://z.ai/manage-apikey/subscription" });
    expect(res["zai:default"].message).toContain("active coding plan");
    expect(res["openrouter:default"]).toMatchObject({ status: "unavailable", message: "HTTP 402: Insufficient credits" });
    expect(res["deepseek:default"]).toMatchObject({ status: "network_error", message: "timed out after 700 ms" });
    expect(res["grok:default"].status).toBe("network_error");
    expect(res["grok:default"].message).toBeTruthy();
  });

  test("claude 429: the last good result stays, and claude is left alone until Retry-After", async () => {
    h = homeWithCredentials();
    const claude = fakeProvider("claude");
    fakes = [claude];
    const first = await json(["--provider=claude"], runEnv(h, fakes));
    claude.mode = { kind: "status", status: 429, body: readFileSync(join(import.meta.dir, "../quotas/fixtures/claude/error_429.json"), "utf8"), headers: { "retry-after": "600" } };
    const limited = await json(["--provider=claude"], runEnv(h, fakes));
    expect(limited.providers[0]).toMatchObject({ status: "available", cached_at: first.providers[0].fetched_at, fetched_at: first.providers[0].fetched_at });
    expect(limited.providers[0].message).toContain("429");
    expect(win(limited.providers[0], "5h")).toMatchObject({ remaining: 58 });
    expect(claude.seen).toHaveLength(2);
    claude.mode = { kind: "ok" };
    const backedOff = await json(["--provider=claude"], runEnv(h, fakes));
    expect(claude.seen).toHaveLength(2);
    expect(backedOff.providers[0]).toMatchObject({ status: "available", cached_at: first.providers[0].fetched_at });
    expect(backedOff.providers[0].message).toContain("not asking again before");
  });

  test("a network_error keeps the last good result, shown with its age; a later 401 replaces it", async () => {
    h = homeWithCredentials();
    const claude = fakeProvider("claude");
    fakes = [claude];
    const first = await json(["--provider=claude"], runEnv(h, fakes));
    expect(first.providers[0]).toMatchObject({ status: "available", cached_at: null });
    claude.stop();
    const down = await json(["--provider=claude"], runEnv(h, fakes));
    expect(down.providers[0]).toMatchObject({ status: "available", cached_at: first.providers[0].fetched_at });
    const again = fakeProvider("claude", { kind: "status", status: 401, body: "{}" });
    fakes.push(again);
    const loggedOut = await json(["--provider=claude"], runEnv(h, [again]));
    expect(loggedOut.providers[0]).toMatchObject({ status: "auth_required", cached_at: null });
  });

  test("profiles: ~/.claude-work is claude:work; a symlinked twin is not a second profile; --provider=name:profile", async () => {
    h = homeWithCredentials();
    h.write(".claude-work/.credentials.json", { claudeAiOauth: { accessToken: "work-token", expiresAt: 4102444800000 } });
    await Bun.$`ln -s ${join(h.home, ".claude")} ${join(h.home, ".claude-same")}`.quiet();
    fakes = [fakeProvider("claude")];
    const rep = await json(["--provider=claude"], runEnv(h, fakes));
    expect(rep.providers.map((p) => [p.provider, p.profile, p.name, p.status, p.auth_source])).toEqual([
      ["claude", "default", "Claude", "available", "~/.claude/.credentials.json"],
      ["claude", "work", "Claude (work)", "available", "~/.claude-work/.credentials.json"],
    ]);
    expect(fakes[0].seen.map((s) => s.headers.authorization).sort()).toEqual([`Bearer ${secrets.claude}`, "Bearer work-token"].sort());
    const only = await json(["--provider=anthropic:work"], runEnv(h, fakes));
    expect(only.providers.map((p) => `${p.provider}:${p.profile}`)).toEqual(["claude:work"]);
  });

  test("config filtering: disabled providers, enabled list, hidden profile, renamed profile", async () => {
    h = homeWithCredentials();
    h.write(".claude-work/.credentials.json", { claudeAiOauth: { accessToken: "work-token", expiresAt: 4102444800000 } });
    h.write(".codex-old/auth.json", { tokens: { access_token: "x" } });
    h.write(
      ".config/quotas/config.toml",
      `[providers]\nenabled = ["anthropic", "codex", "deepseek"]\ndisabled = ["deepseek"]\n\n[profiles.entries."codex:old"]\nenabled = false\n\n[profiles.entries."claude:work"]\nname = "Work Claude"\n`,
    );
    fakes = allProviders.map((p) => fakeProvider(p));
    const rep = await json([], runEnv(h, fakes));
    expect(rep.providers.map((p) => [`${p.provider}:${p.profile}`, p.name])).toEqual([
      ["claude:default", "Claude"],
      ["claude:work", "Work Claude"],
      ["codex:default", "Codex"],
    ]);
    const asked = await json(["--provider=deepseek"], runEnv(h, fakes));
    expect(asked.providers.map((p) => p.provider)).toEqual(["deepseek"]);
  });

  test("kimi: when the coding-plan endpoint fails, the API balance is shown", async () => {
    h = homeWithCredentials();
    fakes = [fakeProvider("kimi", { kind: "ok", fail: { "/coding/v1/usages": 404 } })];
    const rep = await json(["--provider=moonshot"], runEnv(h, fakes));
    expect(rep.providers[0]).toMatchObject({ provider: "kimi", status: "available", windows: [{ window: "balance", remaining: 49.59, unit: "cny" }] });
    expect(fakes[0].seen.map((s) => s.path)).toEqual(["/coding/v1/usages", "/v1/users/me/balance"]);
  });

  test("without a mode flag the interactive view starts (and refuses a non-terminal)", async () => {
    h = tempHome();
    const r = await run(["--no-update-check"], runEnv(h, []));
    expect(r.code).toBe(2);
    expect(r.stderr).toBe("quotas: the interactive view needs a terminal; use --json or --statusline\n");
  });

  test("antigravity sends the Google Cloud project when one is set", async () => {
    h = homeWithCredentials();
    fakes = [fakeProvider("antigravity")];
    await json(["--provider=agy"], runEnv(h, fakes, { GOOGLE_CLOUD_PROJECT: "my-project" }));
    expect(JSON.parse(fakes[0].seen[0].body)).toEqual({ project: "my-project" });
  });

  test("[endpoints] in the config is used when no env override is set", async () => {
    h = homeWithCredentials();
    fakes = [fakeProvider("deepseek")];
    h.write(".config/quotas/config.toml", `[endpoints]\ndeepseek = "${fakes[0].url}"\n`);
    const env = runEnv(h, []);
    const rep = await json(["--provider=deepseek"], env);
    expect(rep.providers[0].status).toBe("available");
    expect(fakes[0].seen).toHaveLength(1);
  });

  test("an invalid config: one line naming file and line on stderr, then the defaults", async () => {
    h = homeWithCredentials();
    h.write(".config/quotas/config.toml", `[tui]\nauto_refresh = 60\n\n[providers]\ndisabled = "claude"\n`);
    fakes = [fakeProvider("deepseek")];
    const r = await run(["--json", "--provider=deepseek"], runEnv(h, fakes));
    expect(r.code).toBe(0);
    expect(r.stderr).toMatch(/^quotas: ~\/\.config\/quotas\/config\.toml:5: providers\.disabled: .*; using defaults\n$/);
    expect(JSON.parse(r.stdout).providers[0].status).toBe("available");
  });
});

describe("command line", () => {
  test("provider aliases", async () => {
    h = homeWithCredentials();
    fakes = allProviders.map((p) => fakeProvider(p));
    const rep = await json(["--provider=openai,gemini,github-copilot,moonshot,glm,xai,anthropic"], runEnv(h, fakes));
    expect(rep.providers.map((p) => p.provider)).toEqual(["claude", "codex", "antigravity", "copilot", "zai", "kimi", "grok"]);
  });
  test("unknown provider, profile or flag → exit 2 with a clear line", async () => {
    h = tempHome();
    const env = runEnv(h, []);
    const bad = await run(["--json", "--provider=claude,nope"], env);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toStartWith('quotas: unknown provider "nope" (valid: claude, codex, antigravity, copilot, cursor, zai, kimi, minimax, deepseek, siliconflow, openrouter, grok)\n');
    expect(bad.stdout).toBe("");
    const profile = await run(["--json", "--provider=claude:nope"], env);
    expect(profile.code).toBe(2);
    expect(profile.stderr).toContain('unknown profile "claude:nope"');
    // the statusline too, with the valid list, even when the cache holds other profiles
    h.write(".cache/quotas/cache.json", { version: 1, refreshed_at: new Date().toISOString(), results: {} });
    const line = await run(["--statusline", "--no-update-check", "--provider=claude:nope"], env);
    expect(line).toEqual({ stdout: "", stderr: 'quotas: unknown profile "claude:nope" (known: claude:default)\nRun \'quotas --help\' for usage.\n', code: 2 });
    const flag = await run(["--jsno"], env);
    expect(flag.code).toBe(2);
    expect(flag.stderr).toStartWith("quotas: unknown flag --jsno\n");
    const mixed = await run(["--json", "--statusline"], env);
    expect(mixed.code).toBe(2);
  });
  test("--version and --help", async () => {
    h = tempHome();
    const v = await run(["--version"], runEnv(h, []));
    // version, commit and build date, injected at build time (src/kernel/build-info.ts)
    expect(v.code).toBe(0);
    expect(v.stdout).toMatch(new RegExp(`^quotas ${pkg.version.replaceAll(".", "\\.")} \\(commit [0-9a-f]{12}(-dirty)?, built \\d{4}-\\d\\d-\\d\\dT\\d\\d:\\d\\d:\\d\\dZ\\)\n$`));
    const help = await run(["--help"], runEnv(h, []));
    for (const flag of ["--json", "--pretty", "--raw", "--provider", "--statusline", "--format", "--no-icons", "--no-update-check", "--check-update", "--version", "--help", "QUOTAS_ENDPOINT_", "QUOTAS_TIMEOUT_MS"]) {
      expect(help.stdout).toContain(flag);
    }
    expect(help.stdout).not.toContain("refresh-cache");
  });
  test("the binary copied alone into an empty directory works", async () => {
    h = homeWithCredentials();
    const dir = join(h.home, "alone");
    mkdirSync(dir);
    await Bun.$`cp ${bin} ${join(dir, "quotas")}`.quiet();
    fakes = [fakeProvider("deepseek")];
    const p = Bun.spawn([join(dir, "quotas"), "--json", "--provider=deepseek"], { cwd: dir, env: runEnv(h, fakes), stdout: "pipe", stderr: "pipe" });
    const out = await new Response(p.stdout).text();
    expect(await p.exited).toBe(0);
    expect(JSON.parse(out).providers[0].status).toBe("available");
  });
});
