// Test helpers for `quotas usage`: a temp HOME, Claude Code / Codex CLI lines in their real shapes, and
// the command run in-process through the CLI's main (the same code path as the binary).
import { appendFileSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { main } from "../../../src/quotas/cli";
import { tempHome, type TempHome } from "../helpers";

export const FIXTURES = join(import.meta.dir, "../fixtures/usage");

export interface ClaudeEntry {
  ts: string;
  model?: string;
  id?: string;
  req?: string;
  input?: number;
  output?: number;
  cacheWrite?: number;
  cacheWrite1h?: number;
  cacheRead?: number;
  sidechain?: boolean;
}

let n = 0;
export function claudeLine(e: ClaudeEntry): string {
  n++;
  const w1h = e.cacheWrite1h ?? 0;
  const w5m = e.cacheWrite ?? 0;
  return JSON.stringify({
    parentUuid: null,
    isSidechain: e.sidechain ?? false,
    userType: "external",
    cwd: "/home/u/p",
    sessionId: "s",
    version: "2.0.14",
    gitBranch: "main",
    message: {
      id: e.id ?? `msg_${n}`,
      type: "message",
      role: "assistant",
      model: e.model ?? "claude-sonnet-4-5-20250929",
      content: [{ type: "text", text: "ok" }],
      stop_reason: null,
      stop_sequence: null,
      usage: { input_tokens: e.input ?? 100, cache_creation_input_tokens: w5m + w1h, cache_read_input_tokens: e.cacheRead ?? 0, cache_creation: { ephemeral_5m_input_tokens: w5m, ephemeral_1h_input_tokens: w1h }, output_tokens: e.output ?? 10, service_tier: "standard" },
    },
    requestId: e.req ?? `req_${n}`,
    type: "assistant",
    uuid: `u${n}`,
    timestamp: e.ts,
  });
}

export function codexLines(model: string | null, turns: { ts: string; input: number; cached: number; output: number; lastOnly?: boolean; totalOnly?: boolean }[]): string[] {
  const out = [JSON.stringify({ timestamp: turns[0]?.ts ?? "2025-01-01T00:00:00Z", type: "session_meta", payload: { id: "x", cwd: "/p", originator: "codex_cli_rs", cli_version: "0.46.0" } })];
  if (model) out.push(JSON.stringify({ timestamp: turns[0]?.ts, type: "turn_context", payload: { cwd: "/p", approval_policy: "on-request", model, effort: "medium", summary: "auto" } }));
  const total = { input_tokens: 0, cached_input_tokens: 0, output_tokens: 0, reasoning_output_tokens: 0, total_tokens: 0 };
  for (const t of turns) {
    const last = { input_tokens: t.input, cached_input_tokens: t.cached, output_tokens: t.output, reasoning_output_tokens: 0, total_tokens: t.input + t.output };
    total.input_tokens += t.input;
    total.cached_input_tokens += t.cached;
    total.output_tokens += t.output;
    total.total_tokens += t.input + t.output;
    const info = t.totalOnly ? { total_token_usage: { ...total } } : t.lastOnly ? { last_token_usage: last } : { total_token_usage: { ...total }, last_token_usage: last, model_context_window: 272000 };
    out.push(JSON.stringify({ timestamp: t.ts, type: "event_msg", payload: { type: "token_count", info, rate_limits: null } }));
  }
  return out;
}

export interface UsageJson {
  groups: { key: string; input_tokens: number; output_tokens: number; cache_write_tokens: number; cache_read_tokens: number; total_tokens: number; cost_usd: number; entries: number; active?: boolean; burn?: { tokens_per_minute: number; projected_cost_usd: number }; models: { agent: string; model: string; cost_usd: number; total_tokens: number; input_tokens: number }[] }[];
  totals: { input_tokens: number; output_tokens: number; cache_write_tokens: number; cache_read_tokens: number; total_tokens: number; cost_usd: number; entries: number };
  unpriced_models: string[];
  malformed_lines: number;
  duplicate_entries: number;
  files: number;
  index: { bytes_read: number; files_read: number; rebuilt: boolean };
  quota: string[];
  timezone: string;
}

export class UsageHome {
  readonly h: TempHome;
  constructor(env: Record<string, string> = {}) {
    this.h = tempHome({ TZ: "UTC", ...env });
  }
  get home() {
    return this.h.home;
  }
  claude(rel: string, lines: string[]): string {
    return this.write(join(".claude/projects", rel), lines);
  }
  codex(rel: string, lines: string[]): string {
    return this.write(join(".codex/sessions", rel), lines);
  }
  write(rel: string, lines: string[]): string {
    const p = join(this.home, rel);
    mkdirSync(dirname(p), { recursive: true });
    writeFileSync(p, lines.map((l) => l + "\n").join(""));
    return p;
  }
  append(path: string, text: string): void {
    appendFileSync(path, text);
  }
  fixture(name: string, rel: string): string {
    return this.write(rel, readFileSync(join(FIXTURES, name), "utf8").trimEnd().split("\n"));
  }
  async run(args: string[]): Promise<{ code: number; out: string; err: string }> {
    let out = "";
    let err = "";
    const code = await main(["usage", ...args], this.h.env, { out: (s) => void (out += s), err: (s) => void (err += s) });
    return { code, out, err };
  }
  async json(args: string[] = []): Promise<UsageJson> {
    const r = await this.run(["daily", "--json", ...args]);
    if (r.code !== 0) throw new Error(r.err);
    return JSON.parse(r.out) as UsageJson;
  }
  cleanup() {
    this.h.cleanup();
  }
}
