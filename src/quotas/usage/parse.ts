// One log line → one usage record, for each agent's format. The fast paths read the few keys they need
// straight from the bytes; a line they cannot read with certainty goes through JSON.parse and a valibot
// schema instead, so odd but valid lines still count and broken ones are counted as malformed.
import * as v from "valibot";
import { intAfter, isoMs, objectEnd, pat, stringEnd } from "./bytes";

/** What one line contributed. `mid`/`rid` are byte ranges (or strings from the slow path) for dedupe. */
export interface Rec {
  ts: number;
  model: string;
  input: number;
  output: number;
  cacheRead: number;
  cacheWrite5m: number;
  cacheWrite1h: number;
  mid: string;
  rid: string;
  sidechain: boolean;
}

export const newRec = (): Rec => ({ ts: 0, model: "", input: 0, output: 0, cacheRead: 0, cacheWrite5m: 0, cacheWrite1h: 0, mid: "", rid: "", sidechain: false });

export const OK = 1;
export const MALFORMED = 0;
export const IGNORED = 2;
export type LineResult = typeof OK | typeof MALFORMED | typeof IGNORED;

// ---- Claude Code: ~/.claude/projects/<project>/<session>.jsonl, one JSON object per line; assistant
// lines carry message.{id, model, usage} and a top-level requestId, timestamp and isSidechain.
export const USAGE = pat('"usage":{');
const MESSAGE = pat('"message":{');
const CONTENT = pat('"content":');
const ID = pat('"id":"');
const MODEL = pat('"model":"');
const REQUEST = pat('"requestId":"');
const TIMESTAMP = pat('"timestamp":"');
const SIDECHAIN = pat('"isSidechain":true');
const DATA = pat('"data":{');
const IN = pat('"input_tokens":');
const OUT = pat('"output_tokens":');
const CREATE = pat('"cache_creation_input_tokens":');
const READ = pat('"cache_read_input_tokens":');
const E5M = pat('"ephemeral_5m_input_tokens":');
const E1H = pat('"ephemeral_1h_input_tokens":');

const str = (line: Buffer, key: Buffer, from: number): string | undefined => {
  const at = line.indexOf(key, from);
  if (at === -1) return undefined;
  const end = stringEnd(line, at + key.length, line.length);
  return end === -1 ? undefined : line.toString("utf8", at + key.length, end);
};

/** Claude Code line with `"usage":{` at `u` (a line holding that marker more than once takes the slow path). */
export function claudeLine(line: Buffer, u: number, r: Rec): LineResult {
  const msg = line.indexOf(MESSAGE);
  if (msg === -1 || msg > u || line.indexOf(USAGE, u + 1) !== -1 || line.indexOf(DATA) !== -1) return claudeSlow(line, r);
  // message.id and message.model come before message.content; after it they could be a tool input's keys
  const content = line.indexOf(CONTENT, msg);
  const limit = content === -1 ? u : content;
  const idAt = line.indexOf(ID, msg);
  const modelAt = line.indexOf(MODEL, msg);
  if ((idAt !== -1 && idAt > limit) || (modelAt !== -1 && modelAt > limit)) return claudeSlow(line, r);
  const close = objectEnd(line, u + USAGE.length - 1, line.length);
  if (close === -1) return MALFORMED;
  const usage = line.subarray(u, close);
  const input = intAfter(usage, IN);
  const output = intAfter(usage, OUT);
  if (input < 0 || output < 0) return claudeSlow(line, r);
  const create = Math.max(0, intAfter(usage, CREATE));
  const e5 = intAfter(usage, E5M);
  const e1 = intAfter(usage, E1H);
  const tsAt = line.lastIndexOf(TIMESTAMP);
  r.ts = tsAt === -1 ? Number.NaN : isoMs(line, tsAt + TIMESTAMP.length);
  if (Number.isNaN(r.ts)) return MALFORMED;
  r.input = input;
  r.output = output;
  r.cacheRead = Math.max(0, intAfter(usage, READ));
  // the 5m/1h split when the log has it; otherwise all cache writes are 5-minute ones
  r.cacheWrite1h = e1 > 0 ? e1 : 0;
  r.cacheWrite5m = e5 >= 0 || e1 > 0 ? Math.max(0, e5) : create;
  if (r.cacheWrite5m + r.cacheWrite1h !== create && create > 0) r.cacheWrite5m = create - r.cacheWrite1h;
  r.model = (modelAt === -1 ? undefined : str(line, MODEL, msg)) ?? "unknown";
  r.mid = (idAt === -1 ? undefined : str(line, ID, msg)) ?? "";
  const reqAt = line.lastIndexOf(REQUEST);
  r.rid = reqAt === -1 ? "" : (str(line, REQUEST, reqAt) ?? "");
  const side = line.indexOf(SIDECHAIN);
  r.sidechain = side !== -1 && side < msg;
  return OK;
}

const count = v.optional(v.pipe(v.number(), v.integer(), v.minValue(0)), 0);
const Usage = v.object({
  input_tokens: count,
  output_tokens: count,
  cache_creation_input_tokens: count,
  cache_read_input_tokens: count,
  cache_creation: v.optional(v.object({ ephemeral_5m_input_tokens: count, ephemeral_1h_input_tokens: count })),
});
const Message = v.object({ id: v.optional(v.string()), model: v.optional(v.string()), usage: Usage });
const Inner = v.object({ timestamp: v.string(), requestId: v.optional(v.string()), isSidechain: v.optional(v.boolean()), message: Message });
// Agent progress lines nest the same entry under data.message
const ClaudeLine = v.union([Inner, v.object({ data: v.object({ message: Inner }) })]);

function claudeSlow(line: Buffer, r: Rec): LineResult {
  let json: unknown;
  try {
    json = JSON.parse(line.toString("utf8"));
  } catch {
    return MALFORMED;
  }
  const p = v.safeParse(ClaudeLine, json);
  if (!p.success) return typeof json === "object" && json !== null ? IGNORED : MALFORMED;
  const e = "data" in p.output ? p.output.data.message : p.output;
  const ts = Date.parse(e.timestamp);
  if (Number.isNaN(ts)) return MALFORMED;
  const u = e.message.usage;
  r.ts = ts;
  r.model = e.message.model ?? "unknown";
  r.input = u.input_tokens;
  r.output = u.output_tokens;
  r.cacheRead = u.cache_read_input_tokens;
  r.cacheWrite1h = u.cache_creation?.ephemeral_1h_input_tokens ?? 0;
  r.cacheWrite5m = u.cache_creation_input_tokens - r.cacheWrite1h;
  if (r.cacheWrite5m < 0) r.cacheWrite5m = u.cache_creation?.ephemeral_5m_input_tokens ?? 0;
  r.mid = e.message.id ?? "";
  r.rid = e.requestId ?? "";
  r.sidechain = e.isSidechain === true;
  return OK;
}

// ---- Codex CLI: ~/.codex/sessions/YYYY/MM/DD/rollout-*.jsonl. `turn_context` lines name the model;
// `event_msg` lines of payload type `token_count` carry the turn's usage (`last_token_usage`) and the
// session's running total (`total_token_usage`). input_tokens includes cached_input_tokens.
export const TOKEN_COUNT = pat('"type":"token_count"');
export const TURN_CONTEXT = pat('"type":"turn_context"');
const TOTAL = pat('"total_token_usage":{');
const LAST = pat('"last_token_usage":{');
const CACHED = pat('"cached_input_tokens":');

/** Per-file state a Codex file carries from line to line (and from one run to the next, in the index). */
export interface CodexState {
  model: string;
  /** the last running total seen: [input, cached, output] */
  total: [number, number, number] | null;
}

const usageAt = (line: Buffer, key: Buffer): [number, number, number] | null => {
  const at = line.indexOf(key);
  if (at === -1) return null;
  const close = objectEnd(line, at + key.length - 1, line.length);
  if (close === -1) return null;
  const u = line.subarray(at, close);
  const input = intAfter(u, IN);
  const output = intAfter(u, OUT);
  if (input < 0 || output < 0) return null;
  return [input, Math.max(0, intAfter(u, CACHED)), output];
};

/** The model a session starts with before any turn_context names one (ccusage's choice too). */
export const CODEX_FALLBACK_MODEL = "gpt-5";

export function codexLine(line: Buffer, s: CodexState, r: Rec): LineResult {
  if (line.indexOf(TURN_CONTEXT) !== -1) {
    const m = str(line, MODEL, 0);
    if (m) s.model = m;
    return IGNORED;
  }
  if (line.indexOf(TOKEN_COUNT) === -1) return IGNORED;
  if (line[line.length - 1] !== 125) return MALFORMED;
  const tsAt = line.indexOf(TIMESTAMP);
  r.ts = tsAt === -1 ? Number.NaN : isoMs(line, tsAt + TIMESTAMP.length);
  if (Number.isNaN(r.ts)) return MALFORMED;
  const total = usageAt(line, TOTAL);
  let last = usageAt(line, LAST);
  const prev = s.total;
  if (total) {
    // the same running total again: a repeated event, nothing new was used
    if (prev && total[0] === prev[0] && total[1] === prev[1] && total[2] === prev[2]) return IGNORED;
    if (!last) last = prev ? [total[0] - prev[0], total[1] - prev[1], total[2] - prev[2]] : total;
    s.total = total;
  }
  if (!last) return IGNORED; // rate-limit-only events (info: null)
  const [input, cached, output] = last;
  if (input <= 0 && output <= 0) return IGNORED;
  const c = Math.min(Math.max(0, cached), Math.max(0, input));
  r.input = Math.max(0, input) - c;
  r.cacheRead = c;
  r.output = Math.max(0, output);
  r.cacheWrite5m = 0;
  r.cacheWrite1h = 0;
  r.model = str(line, MODEL, 0) ?? s.model;
  r.mid = "";
  r.rid = "";
  r.sidechain = false;
  return OK;
}
