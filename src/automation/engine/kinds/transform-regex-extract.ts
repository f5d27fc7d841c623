// transform.regex-extract: matches `pattern` (JavaScript syntax, `flags`) against `input`.
// Output {matches: [{match, index, captures, groups}], count, first} (first = the first match or null).
// The match runs in the script sandbox, so a catastrophically backtracking pattern hits a time limit
// instead of freezing the server.
import * as v from "valibot";
import { StepError } from "../errors";
import { defineKind } from "../kind";
import { runSandboxed } from "../sandbox/isolate";

export const schema = v.strictObject({
  input: v.pipe(v.string(), v.maxLength(5 * 1024 * 1024)),
  pattern: v.pipe(v.string(), v.minLength(1), v.maxLength(2000)),
  flags: v.optional(v.pipe(v.string(), v.regex(/^(?!.*(.).*\1)[imsuy]*$/, "allowed flags are i, m, s, u, y, each once")), ""),
  all: v.optional(v.boolean(), true),
  maxMatches: v.optional(v.pipe(v.number(), v.integer(), v.minValue(1), v.maxValue(100_000)), 10_000),
  timeoutMs: v.optional(v.pipe(v.number(), v.integer(), v.minValue(1), v.maxValue(60_000)), 2_000),
});

const MATCHER = `function script(input, pattern, flags, all, max) {
  let re;
  try { re = new RegExp(pattern, flags + "g"); } catch (e) { return { invalid: String(e.message) }; }
  const matches = [];
  for (const m of input.matchAll(re)) {
    const groups = {};
    for (const k of Object.keys(m.groups || {})) groups[k] = m.groups[k] === undefined ? null : m.groups[k];
    matches.push({ match: m[0], index: m.index, captures: m.slice(1).map((c) => (c === undefined ? null : c)), groups });
    if (!all || matches.length >= max) break;
  }
  return { matches };
}`;

type Match = { match: string; index: number; captures: (string | null)[]; groups: Record<string, string | null> };

export default defineKind({
  type: "transform.regex-extract",
  configAt: "with",
  schema,
  async run(config, ctx) {
    const timeoutMs = Math.min(config.timeoutMs, ctx.step.timeout ?? Number.POSITIVE_INFINITY);
    const result = (await runSandboxed(MATCHER, [config.input, config.pattern, config.flags, config.all, config.maxMatches], {
      timeoutMs,
      memoryBytes: 64 * 1024 * 1024, // the same sandbox module as default scripts
    }, ctx.signal).catch((e) => {
      if (e instanceof StepError && e.code === "script_timeout") throw new StepError(`pattern took longer than ${timeoutMs} ms and was stopped`, "regex_timeout", { retryable: false });
      throw e;
    })) as { invalid?: string; matches?: Match[] };
    if (result.invalid !== undefined) throw new StepError(`invalid pattern: ${result.invalid}`, "invalid_config", { retryable: false });
    const matches = result.matches ?? [];
    return { matches, count: matches.length, first: matches[0] ?? null };
  },
});
