// What a token costs: an embedded, dated table (USD per million tokens), a `--pricing FILE` override and
// `--refresh-pricing`, which fetches LiteLLM's public price list once and keeps it in the cache directory.
// Cost is computed at report time from token sums (report.ts), so a new table never needs a new index.
import * as v from "valibot";

/** USD per million tokens. `long` applies to a whole request whose prompt is over `longAbove` tokens. */
export interface Price {
  input: number;
  output: number;
  cacheRead: number;
  /** 5-minute cache write; a 1-hour write costs 2 × input (Anthropic's rule). */
  cacheWrite: number;
  long?: { above: number; input: number; output: number; cacheRead: number; cacheWrite: number };
}

export interface PriceTable {
  source: string;
  date: string;
  models: Record<string, Price>;
}

const p = (input: number, output: number, cacheRead: number, cacheWrite = 0): Price => ({ input, output, cacheRead, cacheWrite });
// Sonnet 4 / 4.5 with the 1M-token context: a prompt over 200k tokens is billed at the long rates
// for all of its tokens, input and output (Anthropic's pricing page).
const sonnetLong = { ...p(3, 15, 0.3, 3.75), long: { above: 200_000, input: 6, output: 22.5, cacheRead: 0.6, cacheWrite: 7.5 } };

/** The embedded table: Anthropic's and OpenAI's list prices, as LiteLLM also lists them on this date. */
export const EMBEDDED: PriceTable = {
  source: "Anthropic and OpenAI list prices",
  date: "2025-11-20",
  models: {
    "claude-opus-4-5": p(5, 25, 0.5, 6.25),
    "claude-opus-4-1": p(15, 75, 1.5, 18.75),
    "claude-opus-4": p(15, 75, 1.5, 18.75),
    "claude-sonnet-4-5": sonnetLong,
    "claude-sonnet-4": sonnetLong,
    "claude-3-7-sonnet": p(3, 15, 0.3, 3.75),
    "claude-3-5-sonnet": p(3, 15, 0.3, 3.75),
    "claude-haiku-4-5": p(1, 5, 0.1, 1.25),
    "claude-3-5-haiku": p(0.8, 4, 0.08, 1),
    "claude-3-haiku": p(0.25, 1.25, 0.03, 0.3),
    "claude-3-opus": p(15, 75, 1.5, 18.75),
    "gpt-5": p(1.25, 10, 0.125),
    "gpt-5-codex": p(1.25, 10, 0.125),
    "gpt-5.1": p(1.25, 10, 0.125),
    "gpt-5.1-codex": p(1.25, 10, 0.125),
    "gpt-5.1-codex-max": p(1.25, 10, 0.125),
    "gpt-5-mini": p(0.25, 2, 0.025),
    "gpt-5.1-codex-mini": p(0.25, 2, 0.025),
    "gpt-5-nano": p(0.05, 0.4, 0.005),
    "gpt-5-pro": p(15, 120, 15),
    "gpt-4.1": p(2, 8, 0.5),
    "gpt-4.1-mini": p(0.4, 1.6, 0.1),
    "gpt-4o": p(2.5, 10, 1.25),
    "o3": p(2, 8, 0.5),
    "o4-mini": p(1.1, 4.4, 0.275),
    "codex-mini-latest": p(1.5, 6, 0.375),
  },
};

export const LITELLM_URL = "https://raw.githubusercontent.com/BerriAI/litellm/main/model_prices_and_context_window.json";

/**
 * The table's entry for a model as the logs spell it: exact, then without a date suffix
 * (`-20250929`, `@20250929`), a provider prefix (`anthropic/`, `us.anthropic.`, `openai/`) or a
 * version suffix (`-v1:0`). Undefined when unpriced: the report lists such models.
 */
export function priceOf(table: PriceTable, model: string): Price | undefined {
  const m = table.models;
  if (m[model]) return m[model];
  let name = model.toLowerCase().replace(/^(?:[a-z]+\/)+/, "").replace(/^(?:[a-z]{2}\.)?anthropic\./, "");
  name = name.replace(/-v\d+:\d+$/, "").replace(/[-@]\d{8}$/, "");
  if (m[name]) return m[name];
  // `claude-sonnet-4-5-thinking`, `gpt-5-codex-high`: the longest known prefix
  let best: string | undefined;
  for (const k in m) if (name.startsWith(k + "-") && (!best || k.length > best.length)) best = k;
  return best ? m[best] : undefined;
}

// --pricing FILE: our own shape, USD per million tokens, e.g.
// {"date": "2026-01-01", "models": {"my-model": {"input": 1, "output": 2, "cacheRead": 0.1, "cacheWrite": 1.25}}}
const PriceSchema = v.object({
  input: v.pipe(v.number(), v.minValue(0)),
  output: v.pipe(v.number(), v.minValue(0)),
  cacheRead: v.optional(v.pipe(v.number(), v.minValue(0)), 0),
  cacheWrite: v.optional(v.pipe(v.number(), v.minValue(0)), 0),
  long: v.optional(
    v.object({
      above: v.pipe(v.number(), v.minValue(0)),
      input: v.number(),
      output: v.number(),
      cacheRead: v.optional(v.number(), 0),
      cacheWrite: v.optional(v.number(), 0),
    }),
  ),
});
const TableSchema = v.object({ source: v.optional(v.string()), date: v.optional(v.string()), models: v.record(v.string(), PriceSchema) });

// LiteLLM's list: USD per token, long-context prices as `*_above_200k_tokens`.
const perToken = v.optional(v.nullable(v.number()));
const LiteLlmEntry = v.object({
  input_cost_per_token: perToken,
  output_cost_per_token: perToken,
  cache_read_input_token_cost: perToken,
  cache_creation_input_token_cost: perToken,
  input_cost_per_token_above_200k_tokens: perToken,
  output_cost_per_token_above_200k_tokens: perToken,
  cache_read_input_token_cost_above_200k_tokens: perToken,
  cache_creation_input_token_cost_above_200k_tokens: perToken,
});

/** Reads a table in our shape or in LiteLLM's; the file's models override the embedded ones. */
export function parseTable(text: string, origin: string): PriceTable {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (err) {
    throw new Error(`${origin}: not JSON (${(err as Error).message})`);
  }
  const ours = v.safeParse(TableSchema, json);
  if (ours.success) return { source: ours.output.source ?? origin, date: ours.output.date ?? "", models: { ...EMBEDDED.models, ...ours.output.models } };
  if (typeof json !== "object" || json === null) throw new Error(`${origin}: expected an object of models`);
  const models: Record<string, Price> = { ...EMBEDDED.models };
  const M = 1e6;
  for (const [name, entry] of Object.entries(json)) {
    const e = v.safeParse(LiteLlmEntry, entry);
    if (!e.success || e.output.input_cost_per_token == null || e.output.output_cost_per_token == null) continue;
    const o = e.output;
    const price: Price = p(o.input_cost_per_token! * M, o.output_cost_per_token! * M, (o.cache_read_input_token_cost ?? 0) * M, (o.cache_creation_input_token_cost ?? 0) * M);
    if (o.input_cost_per_token_above_200k_tokens != null) {
      price.long = {
        above: 200_000,
        input: o.input_cost_per_token_above_200k_tokens * M,
        output: (o.output_cost_per_token_above_200k_tokens ?? o.output_cost_per_token!) * M,
        cacheRead: (o.cache_read_input_token_cost_above_200k_tokens ?? o.cache_read_input_token_cost ?? 0) * M,
        cacheWrite: (o.cache_creation_input_token_cost_above_200k_tokens ?? o.cache_creation_input_token_cost ?? 0) * M,
      };
    }
    models[name] = price;
  }
  if (Object.keys(models).length === Object.keys(EMBEDDED.models).length) throw new Error(`${origin}: no model prices found`);
  return { source: origin, date: "", models };
}
