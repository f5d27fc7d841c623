// transform.regex-extract: matches `pattern` (JavaScript syntax, `flags`) against `input`.
// Output {matches: [{match, index, captures, groups}], count, first} (first = the first match or null).
import * as v from "valibot";
import { StepError } from "../errors";
import { defineKind } from "../kind";

export const schema = v.strictObject({
  input: v.pipe(v.string(), v.maxLength(5 * 1024 * 1024)),
  pattern: v.pipe(v.string(), v.minLength(1), v.maxLength(2000)),
  flags: v.optional(v.pipe(v.string(), v.regex(/^[imsuy]*$/, "allowed flags are i, m, s, u, y")), ""),
  all: v.optional(v.boolean(), true),
  maxMatches: v.optional(v.pipe(v.number(), v.integer(), v.minValue(1), v.maxValue(100_000)), 10_000),
});

export default defineKind({
  type: "transform.regex-extract",
  configAt: "with",
  schema,
  async run(config) {
    let re: RegExp;
    try {
      re = new RegExp(config.pattern, `${config.flags}g`);
    } catch (e) {
      throw new StepError(`invalid pattern: ${(e as Error).message}`, "invalid_config", { retryable: false });
    }
    const matches: { match: string; index: number; captures: (string | null)[]; groups: Record<string, string | null> }[] = [];
    for (const m of config.input.matchAll(re)) {
      matches.push({
        match: m[0],
        index: m.index ?? 0,
        captures: m.slice(1).map((c) => c ?? null),
        groups: Object.fromEntries(Object.entries(m.groups ?? {}).map(([k, g]) => [k, g ?? null])),
      });
      if (!config.all || matches.length >= config.maxMatches) break;
    }
    return { matches, count: matches.length, first: matches[0] ?? null };
  },
});
