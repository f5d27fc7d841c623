// Generates Claude Code and Codex CLI logs in their real formats (see the fixtures beside this file for
// lines copied from real sessions): deterministic for a seed, streamed to disk, any size. The tests use
// it small; test/bench/quotas-usage.ts makes a gigabyte of it.
import { mkdirSync } from "node:fs";
import { dirname, join } from "node:path";

export interface GenOptions {
  /** HOME to write into: .claude/projects/... and .codex/sessions/... */
  home: string;
  /** usage entries to write (lines carrying usage; repeated lines included) */
  entries: number;
  seed?: number;
  /** first session start, ms */
  start?: number;
  /** days the sessions spread over */
  days?: number;
  /** share of entries that are Codex's */
  codexShare?: number;
  /** filler bytes in each message text (the logs' bulk is text) */
  textBytes?: number;
  /** share of assistant calls preceded by a user line (tool loops have fewer) */
  userShare?: number;
  /** stop once this many bytes are written */
  maxBytes?: number;
}

export interface GenTotals {
  input: number;
  output: number;
  cacheWrite: number;
  cacheRead: number;
  entries: number;
  files: number;
  bytes: number;
}

export function rng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const CLAUDE_MODELS: [string, number][] = [
  ["claude-sonnet-4-5-20250929", 0.55],
  ["claude-opus-4-1-20250805", 0.1],
  ["claude-haiku-4-5-20251001", 0.15],
  ["claude-opus-4-5-20251101", 0.12],
  ["claude-sonnet-4-20250514", 0.08],
];
const CODEX_MODELS: [string, number][] = [
  ["gpt-5-codex", 0.5],
  ["gpt-5", 0.2],
  ["gpt-5.1-codex", 0.2],
  ["gpt-5-mini", 0.1],
];

const pick = (r: () => number, xs: [string, number][]) => {
  let x = r();
  for (const [m, w] of xs) if ((x -= w) < 0) return m;
  return xs[0][0];
};
const hex = (r: () => number, n: number) => Array.from({ length: n }, () => Math.floor(r() * 16).toString(16)).join("");
const uuid = (r: () => number) => `${hex(r, 8)}-${hex(r, 4)}-4${hex(r, 3)}-8${hex(r, 3)}-${hex(r, 12)}`;
const b62 = (r: () => number, n: number) => Array.from({ length: n }, () => "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"[Math.floor(r() * 62)]).join("");
const WORDS = "the a to of and in is that for it with as on this be are by from at or an not we can use your file test code run build function return value error type data line change".split(" ");
const text = (r: () => number, bytes: number) => {
  let s = "";
  while (s.length < bytes) s += WORDS[Math.floor(r() * WORDS.length)] + (r() < 0.1 ? ".\\n" : " ");
  return s;
};

class Out {
  private parts: string[] = [];
  private size = 0;
  bytes = 0;
  constructor(private readonly sink: Bun.FileSink) {}
  line(s: string) {
    this.parts.push(s, "\n");
    this.size += s.length + 1;
    if (this.size > 1 << 20) this.flush();
  }
  flush() {
    if (!this.parts.length) return;
    const chunk = this.parts.join("");
    this.sink.write(chunk);
    this.bytes += Buffer.byteLength(chunk);
    this.parts = [];
    this.size = 0;
  }
  async end() {
    this.flush();
    await this.sink.end();
  }
}

function open(path: string): Out {
  mkdirSync(dirname(path), { recursive: true });
  return new Out(Bun.file(path).writer({ highWaterMark: 1 << 20 }));
}

/** Writes the logs; returns what a correct reader must total (each entry once). */
export async function generate(o: GenOptions): Promise<GenTotals> {
  const r = rng(o.seed ?? 1);
  const start = o.start ?? Date.UTC(2025, 5, 1);
  const days = o.days ?? 60;
  const textBytes = o.textBytes ?? 200;
  const t: GenTotals = { input: 0, output: 0, cacheWrite: 0, cacheRead: 0, entries: 0, files: 0, bytes: 0 };
  const codexTarget = Math.round(o.entries * (o.codexShare ?? 0.3));
  let written = 0;
  let codexWritten = 0;
  const userShare = o.userShare ?? 1;
  while (written < o.entries && t.bytes < (o.maxBytes ?? Number.POSITIVE_INFINITY)) {
    const codex = codexWritten < codexTarget && r() < (o.codexShare ?? 0.3);
    const n = Math.min(o.entries - written, 20 + Math.floor(r() * 300));
    let ts = start + Math.floor(r() * days * 86_400_000);
    t.files++;
    if (codex) {
      const id = uuid(r);
      const d = new Date(ts).toISOString();
      const path = join(o.home, ".codex/sessions", d.slice(0, 4), d.slice(5, 7), d.slice(8, 10), `rollout-${d.slice(0, 19).replace(/:/g, "-")}-${id}.jsonl`);
      const out = open(path);
      out.line(JSON.stringify({ timestamp: d, type: "session_meta", payload: { id, timestamp: d, cwd: "/home/dev/project", originator: "codex_cli_rs", cli_version: "0.46.0", instructions: null, git: { commit_hash: hex(r, 40), branch: "main" } } }));
      const total = { input_tokens: 0, cached_input_tokens: 0, output_tokens: 0, reasoning_output_tokens: 0, total_tokens: 0 };
      let model = pick(r, CODEX_MODELS);
      // a few sessions start before any turn_context names the model: priced as gpt-5
      if (r() < 0.97) out.line(JSON.stringify({ timestamp: new Date(ts).toISOString(), type: "turn_context", payload: { cwd: "/home/dev/project", approval_policy: "on-request", sandbox_policy: { mode: "workspace-write" }, model, effort: "medium", summary: "auto" } }));
      else model = "gpt-5";
      for (let i = 0; i < n; i++) {
        ts += 2000 + Math.floor(r() * 60_000);
        const iso = new Date(ts).toISOString();
        if (r() < userShare) out.line(JSON.stringify({ timestamp: iso, type: "response_item", payload: { type: "message", role: "user", content: [{ type: "input_text", text: text(r, textBytes) }] } }));
        const input = 2000 + Math.floor(r() * 60_000);
        const cached = Math.floor(input * r() * 0.9);
        const output = 50 + Math.floor(r() * 3000);
        const reasoning = Math.floor(output * r() * 0.5);
        const last = { input_tokens: input, cached_input_tokens: cached, output_tokens: output, reasoning_output_tokens: reasoning, total_tokens: input + output };
        for (const k of Object.keys(total) as (keyof typeof total)[]) total[k] += last[k];
        out.line(JSON.stringify({ timestamp: iso, type: "event_msg", payload: { type: "token_count", info: { total_token_usage: { ...total }, last_token_usage: last, model_context_window: 272000 }, rate_limits: { primary: { used_percent: Math.round(r() * 100), window_minutes: 300, resets_in_seconds: 3600 }, secondary: null } } }));
        t.input += input - cached;
        t.cacheRead += cached;
        t.output += output;
        t.entries++;
      }
      await out.end();
      t.bytes += out.bytes;
      codexWritten += n;
    } else {
      const session = uuid(r);
      const project = `-home-dev-project${Math.floor(r() * 8)}`;
      const out = open(join(o.home, ".claude/projects", project, `${session}.jsonl`));
      const base = { isSidechain: false, userType: "external", cwd: "/home/dev/project", sessionId: session, version: "2.0.14", gitBranch: "main" };
      let parent: string | null = null;
      for (let i = 0; i < n; i++) {
        ts += 2000 + Math.floor(r() * 60_000);
        const uid = uuid(r);
        if (r() < userShare) out.line(JSON.stringify({ parentUuid: parent, ...base, type: "user", message: { role: "user", content: text(r, textBytes) }, uuid: uid, timestamp: new Date(ts).toISOString() }));
        const model = pick(r, CLAUDE_MODELS);
        const cacheRead = Math.floor(r() * 150_000);
        const w1h = r() < 0.1 ? Math.floor(r() * 5000) : 0;
        const w5m = Math.floor(r() * 20_000);
        const usage = { input_tokens: 1 + Math.floor(r() * 3000), cache_creation_input_tokens: w5m + w1h, cache_read_input_tokens: cacheRead, cache_creation: { ephemeral_5m_input_tokens: w5m, ephemeral_1h_input_tokens: w1h }, output_tokens: 1 + Math.floor(r() * 4000), service_tier: "standard" };
        const msg = `msg_01${b62(r, 22)}`;
        const req = `req_011C${b62(r, 20)}`;
        // one response, written as one line per content block: the same message and request id
        const blocks = r() < 0.3 ? 2 : 1;
        for (let b = 0; b < blocks; b++) {
          const content = b === 0 ? [{ type: "text", text: text(r, textBytes) }] : [{ type: "tool_use", id: `toolu_01${b62(r, 22)}`, name: "Bash", input: { command: "bun test", description: "Run the tests" } }];
          const aid = uuid(r);
          out.line(JSON.stringify({ parentUuid: uid, ...base, message: { id: msg, type: "message", role: "assistant", model, content, stop_reason: null, stop_sequence: null, usage }, requestId: req, type: "assistant", uuid: aid, timestamp: new Date(ts + 500 + b * 300).toISOString() }));
          written += b > 0 ? 1 : 0;
        }
        parent = uid;
        t.input += usage.input_tokens;
        t.output += usage.output_tokens;
        t.cacheWrite += usage.cache_creation_input_tokens;
        t.cacheRead += usage.cache_read_input_tokens;
        t.entries++;
      }
      await out.end();
      t.bytes += out.bytes;
    }
    written += n;
  }
  return t;
}
