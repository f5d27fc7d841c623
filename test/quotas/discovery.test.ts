// Credential discovery and profiles: the spec's order, opencode slots, key files, expired tokens,
// autodetected profiles with realpath dedupe and [profiles.entries] overrides.
import { afterEach, describe, expect, test } from "bun:test";
import { readFileSync, symlinkSync, mkdirSync, statSync } from "node:fs";
import { join } from "node:path";
import { defaults, type Config } from "../../src/quotas/config/config";
import { discover } from "../../src/quotas/discovery/credentials";
import { opencodeSlot, parseKeyFile } from "../../src/quotas/discovery/files";
import { profilesOf } from "../../src/quotas/discovery/profiles";
import { lookup } from "../../src/quotas/providers";
import { resolveTargets } from "../../src/quotas/fetch/targets";
import { jwt, tempHome, type TempHome } from "./helpers";

let h: TempHome;
afterEach(() => h?.cleanup());
const def = (name: string) => lookup(name)!;
const found = (d: ReturnType<typeof discover>) => (d.kind === "found" ? d.cred : undefined);
const future = Date.parse("2026-11-23T00:00:00Z");
const past = Date.parse("2026-11-21T00:00:00Z");

describe("key files", () => {
  test("first non-comment line, or an api_key=/token= line", () => {
    expect(parseKeyFile("# my key\n\nsk-abc\nother\n")).toBe("sk-abc");
    expect(parseKeyFile("# comment\nname = work\napi_key = \"sk-xyz\"\n")).toBe("sk-xyz");
    expect(parseKeyFile("token=tok-1\n")).toBe("tok-1");
    expect(parseKeyFile("# only comments\n")).toBeUndefined();
  });
  test("opencode slots: oauth access or api key", () => {
    const auth = { anthropic: { type: "oauth", access: "at", refresh: "rt", expires: 123 }, "zai-coding-plan": { type: "api", key: "zk" } };
    expect(opencodeSlot(auth, "anthropic")).toEqual({ token: "at", expiresAt: 123, accountId: undefined });
    expect(opencodeSlot(auth, "zai-coding-plan")).toEqual({ token: "zk" });
    expect(opencodeSlot(auth, "openai")).toBeUndefined();
  });
});

describe("discovery order", () => {
  test("claude: CLAUDE_CONFIG_DIR, then ~/.claude, then opencode's anthropic slot", () => {
    h = tempHome();
    const cfg = defaults();
    const place = { profile: "default", dir: join(h.home, ".claude") };
    h.write(".local/share/opencode/auth.json", { anthropic: { type: "oauth", access: "from-opencode", expires: future } });
    expect(found(discover(h.ctx, def("claude"), place, cfg))).toMatchObject({ token: "from-opencode", source: "~/.local/share/opencode/auth.json (anthropic)" });
    h.write(".claude/.credentials.json", { claudeAiOauth: { accessToken: "from-claude", expiresAt: future, subscriptionType: "max" } });
    expect(found(discover(h.ctx, def("claude"), place, cfg))).toMatchObject({ token: "from-claude", plan: "max", source: "~/.claude/.credentials.json" });
    h.write("elsewhere/.credentials.json", { claudeAiOauth: { accessToken: "from-env-dir", expiresAt: future } });
    h.ctx.env.CLAUDE_CONFIG_DIR = join(h.home, "elsewhere");
    expect(found(discover(h.ctx, def("claude"), place, cfg))?.token).toBe("from-env-dir");
  });
  test("login files before env vars before key files (zai: opencode, ZAI_API_KEY, ~/.api-zai)", () => {
    h = tempHome();
    const cfg = defaults();
    const place = { profile: "default", dir: null };
    h.write(".api-zai", "# z.ai\nkey-from-file\n");
    expect(found(discover(h.ctx, def("zai"), place, cfg))).toMatchObject({ token: "key-from-file", source: "~/.api-zai" });
    h.ctx.env.ZHIPU_API_KEY = "key-from-zhipu";
    expect(found(discover(h.ctx, def("zai"), place, cfg))).toMatchObject({ token: "key-from-zhipu", source: "env ZHIPU_API_KEY" });
    h.ctx.env.ZAI_API_KEY = "key-from-zai";
    expect(found(discover(h.ctx, def("zai"), place, cfg))?.token).toBe("key-from-zai");
    h.write(".local/share/opencode/auth.json", { "zai-coding-plan": { type: "api", key: "key-from-opencode" } });
    expect(found(discover(h.ctx, def("zai"), place, cfg))?.token).toBe("key-from-opencode");
  });
  test("copilot: apps.json, hosts.json, GITHUB_COPILOT_TOKEN, then [copilot] token", () => {
    h = tempHome();
    const cfg: Config = { ...defaults(), copilotToken: "from-config" };
    const place = { profile: "default", dir: null };
    expect(found(discover(h.ctx, def("copilot"), place, cfg))).toMatchObject({ token: "from-config", source: "config [copilot] token" });
    h.ctx.env.GITHUB_COPILOT_TOKEN = "from-env";
    expect(found(discover(h.ctx, def("copilot"), place, cfg))?.token).toBe("from-env");
    h.write(".config/github-copilot/hosts.json", { "github.com": { user: "me", oauth_token: "from-hosts" } });
    expect(found(discover(h.ctx, def("copilot"), place, cfg))?.token).toBe("from-hosts");
    h.write(".config/github-copilot/apps.json", { "github.com:Iv1.abc": { user: "me", oauth_token: "from-apps" } });
    expect(found(discover(h.ctx, def("copilot"), place, cfg))).toMatchObject({ token: "from-apps", source: "~/.config/github-copilot/apps.json" });
  });
  test("codex reads the account id; kimi the CLI's credentials before KIMI_API_KEY", () => {
    h = tempHome({ KIMI_API_KEY: "env-kimi" });
    const cfg = defaults();
    h.write(".codex/auth.json", { tokens: { access_token: jwt({ exp: future / 1000 }), account_id: "acct-1" } });
    expect(found(discover(h.ctx, def("codex"), { profile: "default", dir: join(h.home, ".codex") }, cfg))?.accountId).toBe("acct-1");
    expect(found(discover(h.ctx, def("kimi"), { profile: "default", dir: null }, cfg))?.token).toBe("env-kimi");
    h.write(".kimi/credentials/kimi-code.json", { access_token: "cli-kimi", expires_at: future / 1000 });
    expect(found(discover(h.ctx, def("kimi"), { profile: "default", dir: null }, cfg))?.token).toBe("cli-kimi");
  });
  test("nothing anywhere → missing", () => {
    h = tempHome();
    for (const p of ["deepseek", "openrouter", "siliconflow", "minimax", "grok", "cursor", "antigravity"]) {
      expect(discover(h.ctx, def(p), { profile: "default", dir: null }, defaults()).kind).toBe("missing");
    }
  });
});

describe("expired tokens are detected from the token files and never refreshed", () => {
  test("claude expiresAt (ms), codex JWT exp, gemini expiry_date → expired with the file as source", () => {
    h = tempHome();
    const cfg = defaults();
    const claudeFile = h.write(".claude/.credentials.json", { claudeAiOauth: { accessToken: "old", refreshToken: "rt", expiresAt: past } });
    h.write(".codex/auth.json", { tokens: { access_token: jwt({ exp: past / 1000 }), refresh_token: "rt" } });
    h.write(".gemini/oauth_creds.json", { access_token: "old", refresh_token: "rt", expiry_date: past });
    const before = readFileSync(claudeFile, "utf8");
    const mtime = statSync(claudeFile).mtimeMs;
    expect(discover(h.ctx, def("claude"), { profile: "default", dir: join(h.home, ".claude") }, cfg)).toEqual({ kind: "expired", source: "~/.claude/.credentials.json" });
    expect(discover(h.ctx, def("codex"), { profile: "default", dir: join(h.home, ".codex") }, cfg)).toEqual({ kind: "expired", source: "~/.codex/auth.json" });
    expect(discover(h.ctx, def("antigravity"), { profile: "default", dir: join(h.home, ".gemini") }, cfg)).toEqual({ kind: "expired", source: "~/.gemini/oauth_creds.json" });
    expect(readFileSync(claudeFile, "utf8")).toBe(before);
    expect(statSync(claudeFile).mtimeMs).toBe(mtime);
  });
});

describe("profiles", () => {
  test("prefix directories are profiles; a symlink to the same directory is one profile", () => {
    h = tempHome();
    mkdirSync(join(h.home, ".claude"));
    mkdirSync(join(h.home, ".claude-work"));
    symlinkSync(join(h.home, ".claude"), join(h.home, ".claude-alias"));
    mkdirSync(join(h.home, ".codex-personal"));
    const cfg = defaults();
    expect(profilesOf(h.ctx, def("claude"), cfg).map((p) => p.profile)).toEqual(["default", "work"]);
    expect(profilesOf(h.ctx, def("codex"), cfg).map((p) => p.profile)).toEqual(["default", "personal"]);
    expect(profilesOf(h.ctx, def("zai"), cfg).map((p) => p.profile)).toEqual(["default"]);
  });
  test("autodetect = false keeps only the default profile", () => {
    h = tempHome();
    mkdirSync(join(h.home, ".claude-work"));
    const cfg = defaults();
    cfg.profiles.autodetect = false;
    expect(profilesOf(h.ctx, def("claude"), cfg).map((p) => p.profile)).toEqual(["default"]);
  });
  test("entries: canonical pins the location, name renames, enabled = false hides", () => {
    h = tempHome();
    mkdirSync(join(h.home, ".claude-work"));
    mkdirSync(join(h.home, ".claude-old"));
    h.write("accounts/team/.credentials.json", { claudeAiOauth: { accessToken: "team-token", expiresAt: future } });
    const cfg = defaults();
    cfg.profiles.entries = {
      "claude:team": { canonical: "~/accounts/team", name: "Team Claude" },
      "claude:old": { enabled: false },
    };
    const targets = resolveTargets(h.ctx, cfg, [{ provider: "claude" }]);
    expect(targets.map((t) => [t.key, t.name])).toEqual([
      ["claude:default", "Claude"],
      ["claude:team", "Team Claude"],
      ["claude:work", "Claude (work)"],
    ]);
    const team = targets.find((t) => t.profile === "team")!;
    expect(found(discover(h.ctx, team.def, team.place, cfg))).toMatchObject({ token: "team-token", source: "~/accounts/team/.credentials.json" });
  });
  test("a named profile only reads its own directory, never the shared env/opencode sources", () => {
    h = tempHome({ CLAUDE_CONFIG_DIR: "/nonexistent" });
    mkdirSync(join(h.home, ".claude-work"));
    h.write(".local/share/opencode/auth.json", { anthropic: { type: "oauth", access: "shared", expires: future } });
    const work = profilesOf(h.ctx, def("claude"), defaults()).find((p) => p.profile === "work")!;
    expect(discover(h.ctx, def("claude"), work, defaults()).kind).toBe("missing");
  });
});

describe("cursor's state database", () => {
  test("the token is read from state.vscdb (read-only) when there is no auth.json", async () => {
    h = tempHome();
    const { Database } = await import("bun:sqlite");
    const path = join(h.home, ".config/Cursor/User/globalStorage/state.vscdb");
    mkdirSync(join(path, ".."), { recursive: true });
    const token = jwt({ sub: "auth0|user_1", exp: future / 1000 });
    const db = new Database(path, { create: true });
    db.run("CREATE TABLE ItemTable (key TEXT UNIQUE ON CONFLICT REPLACE, value BLOB)");
    db.run("INSERT INTO ItemTable VALUES ('cursorAuth/accessToken', ?)", [token]);
    db.close();
    const before = readFileSync(path);
    expect(found(discover(h.ctx, def("cursor"), { profile: "default", dir: null }, defaults()))).toMatchObject({
      token,
      source: "~/.config/Cursor/User/globalStorage/state.vscdb",
    });
    expect(readFileSync(path).equals(before)).toBe(true);
  });
});

describe("config filtering of targets", () => {
  test("enabled may name one profile; disabled may name a provider or one profile", () => {
    h = tempHome();
    mkdirSync(join(h.home, ".claude-work"));
    mkdirSync(join(h.home, ".codex-a"));
    const cfg = defaults();
    cfg.providers.enabled = ["claude:work", "codex", "zai"];
    cfg.providers.disabled = ["codex:a", "zai"];
    expect(resolveTargets(h.ctx, cfg).map((t) => t.key)).toEqual(["claude:work", "codex:default"]);
  });
});
