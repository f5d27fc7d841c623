// Fake provider APIs on loopback (one real HTTP server per provider) and a temporary HOME holding fake
// credentials for all twelve, for the end-to-end tests and the benchmark.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { jwt, tempHome, type TempHome } from "./helpers";

const shared = (p: string) => readFileSync(join(import.meta.dir, "fixtures/recorded", p), "utf8");
const own = (p: string) => readFileSync(join(import.meta.dir, "fixtures", p), "utf8");

/** Each provider's routes and the recorded body it answers with. */
export const routes: Record<string, Record<string, () => string>> = {
  claude: { "/api/oauth/usage": () => own("claude/oauth_usage.json") },
  codex: { "/backend-api/wham/usage": () => shared("codex/wham_usage_live.json") },
  antigravity: { "/v1internal:retrieveUserQuotaSummary": () => shared("antigravity/retrieve_user_quota_summary_live.json") },
  copilot: { "/copilot_internal/user": () => own("copilot/user_paid.json") },
  cursor: {
    "/api/dashboard/get-plan-info": () => shared("cursor/plan_default.json"),
    "/api/dashboard/get-current-period-usage": () => shared("cursor/usage_default.json"),
  },
  zai: { "/api/monitor/usage/quota/limit": () => own("zai/quota_limit.json") },
  kimi: { "/coding/v1/usages": () => shared("kimi/coding_usages_default.json"), "/v1/users/me/balance": () => own("kimi/balance.json") },
  minimax: { "/v1/api/openplatform/coding_plan/remains": () => own("minimax/remains_used.json") },
  deepseek: { "/user/balance": () => own("deepseek/balance.json") },
  siliconflow: { "/v1/user/info": () => own("siliconflow/user_info.json") },
  openrouter: { "/api/v1/credits": () => own("openrouter/credits.json"), "/api/v1/key": () => own("openrouter/key.json") },
  grok: { "/v1/billing": () => shared("grok/cli_billing_format_credits.json") },
};

export type Mode =
  | { kind: "ok"; delayMs?: number; fail?: Record<string, number> }
  | { kind: "status"; status: number; body: string; headers?: Record<string, string> }
  | { kind: "hang" };

export interface Seen {
  method: string;
  path: string;
  search: string;
  headers: Record<string, string>;
  body: string;
}

export interface Fake {
  provider: string;
  url: string;
  mode: Mode;
  seen: Seen[];
  stop(): void;
}

export function fakeProvider(provider: string, mode: Mode = { kind: "ok" }): Fake {
  const fake: Fake = { provider, url: "", mode, seen: [], stop: () => server.stop(true) };
  const server = Bun.serve({
    port: 0,
    hostname: "127.0.0.1",
    idleTimeout: 0,
    async fetch(req) {
      const u = new URL(req.url);
      fake.seen.push({ method: req.method, path: u.pathname, search: u.search, headers: Object.fromEntries(req.headers), body: await req.text() });
      const m = fake.mode;
      if (m.kind === "hang") return new Promise<Response>(() => {});
      if (m.kind === "status") return new Response(m.body, { status: m.status, headers: { "content-type": "application/json", ...m.headers } });
      if (m.delayMs) await Bun.sleep(m.delayMs);
      const failing = m.fail?.[u.pathname];
      if (failing) return new Response('{"error":{"message":"not here"}}', { status: failing });
      const route = routes[provider][u.pathname];
      if (!route) return new Response('{"error":"not found"}', { status: 404 });
      return new Response(route(), { headers: { "content-type": "application/json" } });
    },
  });
  fake.url = `http://127.0.0.1:${server.port}`;
  return fake;
}

export const allProviders = Object.keys(routes);

/** Tokens written into the fake credential files; output must never contain them. */
export const secrets = {
  claude: "sk-ant-oat-SECRET-claude",
  codex: jwt({ exp: 4102444800, sub: "codex-user", secret: "SECRET-codex" }),
  antigravity: "ya29.SECRET-gemini",
  copilot: "gho_SECRETcopilot",
  cursor: jwt({ exp: 4102444800, sub: "auth0|user_SECRET01" }),
  zai: "SECRET-zai-key",
  kimi: "SECRET-kimi-token",
  minimax: "SECRET-minimax-key",
  deepseek: "sk-SECRET-deepseek",
  siliconflow: "sk-SECRET-siliconflow",
  openrouter: "sk-or-SECRET-openrouter",
  grok: "xai-SECRET-grok",
};

/** A HOME with credentials for every provider, each in one of the places the spec names. */
export function homeWithCredentials(): TempHome {
  const h = tempHome();
  const later = 4102444800000; // 2100
  h.write(".claude/.credentials.json", { claudeAiOauth: { accessToken: secrets.claude, refreshToken: "rt", expiresAt: later, subscriptionType: "max" } });
  h.write(".codex/auth.json", { tokens: { access_token: secrets.codex, account_id: "acct-123", refresh_token: "rt" } });
  h.write(".gemini/oauth_creds.json", { access_token: secrets.antigravity, refresh_token: "rt", expiry_date: later });
  h.write(".config/github-copilot/apps.json", { "github.com:Iv1.b507": { user: "me", oauth_token: secrets.copilot } });
  h.write(".config/cursor/auth.json", { accessToken: secrets.cursor });
  h.env.ZAI_API_KEY = secrets.zai;
  h.write(".kimi/credentials/kimi-code.json", { access_token: secrets.kimi, expires_at: later / 1000 });
  h.write(".minimax", `# minimax\n${secrets.minimax}\n`);
  h.env.DEEPSEEK_API_KEY = secrets.deepseek;
  h.write(".siliconflow", `api_key=${secrets.siliconflow}\n`);
  h.write(".openrouter", secrets.openrouter);
  h.write(".grok/auth.json", { keys: [{ key: secrets.grok, created_at: "2026-11-01T00:00:00Z" }] });
  return h;
}

/** The environment a run of the binary gets: only what the test sets (never the machine's keys). */
export function runEnv(h: TempHome, fakes: Fake[], extra: Record<string, string> = {}): Record<string, string> {
  // The update check goes to a refused port unless a test starts a fake registry.
  const env: Record<string, string> = { PATH: process.env.PATH ?? "/usr/bin:/bin", ...h.env, QUOTAS_TIMEOUT_MS: "3000", npm_config_registry: "http://127.0.0.1:9" };
  for (const f of fakes) env[`QUOTAS_ENDPOINT_${f.provider.toUpperCase()}`] = f.url;
  return { ...env, ...extra };
}
