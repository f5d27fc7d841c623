// The operator's model configuration: `--models FILE` (TOML) or, without a file, a few environment
// variables. API keys are read here into memory only: never written to the database, never returned
// by the catalog, never logged (the config object keeps them out of JSON.stringify).
import { readFileSync } from "node:fs";
import * as v from "valibot";
import { UsageError } from "../../kernel/errors";
import type { ModelCapability } from "./contract";

export const CAPABILITIES = ["text", "vision", "ocr"] as const satisfies readonly ModelCapability[];

export type ProviderType = "openai" | "anthropic";

export interface ModelEntry {
  /** Name the provider knows the model by (`gpt-4o-mini`, `llama3.1`). */
  name: string;
  capabilities: ModelCapability[];
}

export interface ProviderConfig {
  /** Catalog prefix: model ids are `<id>/<model>`. */
  id: string;
  type: ProviderType;
  baseUrl: string;
  /** Name of the environment variable holding the key (for the catalog's health and error messages). */
  apiKeyEnv?: string;
  /** Whether calls need a key (hosted APIs); local OpenAI-compatible servers do not. */
  keyRequired: boolean;
  /** Per-attempt timeout. */
  timeoutMs: number;
  /** Extra attempts after a 429, a 5xx, a timeout or a connection failure. */
  maxRetries: number;
  /** First backoff delay; doubles per attempt (with jitter) unless the server sent Retry-After. */
  retryBaseMs: number;
  /** A Retry-After longer than this is not waited for: the call fails instead. */
  maxRetryAfterMs: number;
  /** How JSON output is requested from an OpenAI-compatible server. */
  jsonMode: "json_schema" | "json_object" | "none";
  models: ModelEntry[];
}

export interface ModelsConfig {
  providers: ProviderConfig[];
  /** Default catalog id per capability. */
  defaults: Partial<Record<ModelCapability, string>>;
  /** Keys by provider id; a Map so the config serialises without them. */
  keys: Map<string, string>;
}

const capability = v.picklist(CAPABILITIES, `must be one of ${CAPABILITIES.join(", ")}`);
const ms = (max: number) => v.pipe(v.number(), v.integer(), v.minValue(0), v.maxValue(max));
const modelSchema = v.union(
  [
    v.pipe(v.string(), v.minLength(1)),
    v.strictObject({ name: v.pipe(v.string(), v.minLength(1)), capabilities: v.optional(v.array(capability), ["text"]) }),
  ],
  'must be a model name or {name, capabilities}',
);
const providerSchema = v.strictObject({
  type: v.optional(v.picklist(["openai", "anthropic"], "must be openai (any OpenAI-compatible /chat/completions) or anthropic"), "openai"),
  base_url: v.optional(v.pipe(v.string(), v.url("must be a URL"))),
  api_key: v.optional(v.string()),
  api_key_env: v.optional(v.pipe(v.string(), v.regex(/^[A-Za-z_][A-Za-z0-9_]*$/, "must be an environment variable name"))),
  timeout_ms: v.optional(v.pipe(ms(3_600_000), v.minValue(1)), 120_000),
  max_retries: v.optional(v.pipe(v.number(), v.integer(), v.minValue(0), v.maxValue(10)), 2),
  retry_base_ms: v.optional(ms(60_000), 500),
  max_retry_after_ms: v.optional(ms(3_600_000), 60_000),
  json_mode: v.optional(v.picklist(["json_schema", "json_object", "none"]), "json_schema"),
  models: v.optional(v.array(modelSchema), []),
});
const fileSchema = v.strictObject({
  default: v.optional(v.string()),
  defaults: v.optional(v.strictObject({ text: v.optional(v.string()), vision: v.optional(v.string()), ocr: v.optional(v.string()) }), {}),
  providers: v.pipe(
    v.record(v.pipe(v.string(), v.regex(/^[a-z0-9][a-z0-9_.-]*$/, "provider names are lowercase letters, digits, _ . -")), providerSchema),
    v.check((p) => Object.keys(p).length > 0, "configure at least one provider"),
  ),
});

export type ModelsFile = v.InferInput<typeof fileSchema>;

const BASE_URLS: Record<ProviderType, string> = { openai: "https://api.openai.com/v1", anthropic: "https://api.anthropic.com" };
const isLoopback = (url: string) => /^https?:\/\/(localhost|127\.\d+\.\d+\.\d+|\[::1\])(:|\/|$)/i.test(url);

/**
 * Builds the configuration from parsed TOML (or an object of the same shape). `env` supplies keys named
 * by `api_key_env`. Throws UsageError naming the offending field.
 */
export function modelsConfig(data: unknown, env: Record<string, string | undefined> = process.env, source = "models config"): ModelsConfig {
  const r = v.safeParse(fileSchema, data);
  if (!r.success) {
    const issue = r.issues[0];
    throw new UsageError(`${source}: ${v.getDotPath(issue) ?? "<root>"}: ${issue.message}`);
  }
  const keys = new Map<string, string>();
  const providers: ProviderConfig[] = Object.entries(r.output.providers).map(([id, p]) => {
    const baseUrl = (p.base_url ?? BASE_URLS[p.type]).replace(/\/+$/, "");
    const key = p.api_key ?? (p.api_key_env ? env[p.api_key_env] : undefined);
    if (key) keys.set(id, key);
    return {
      id,
      type: p.type,
      baseUrl,
      ...(p.api_key_env ? { apiKeyEnv: p.api_key_env } : {}),
      // A hosted API needs a key; a server on this machine (Ollama, llama.cpp) usually does not.
      keyRequired: p.api_key_env !== undefined || p.type === "anthropic" || !isLoopback(baseUrl),
      timeoutMs: p.timeout_ms,
      maxRetries: p.max_retries,
      retryBaseMs: p.retry_base_ms,
      maxRetryAfterMs: p.max_retry_after_ms,
      jsonMode: p.json_mode,
      models: p.models.map((m) => (typeof m === "string" ? { name: m, capabilities: ["text"] } : { name: m.name, capabilities: m.capabilities })),
    };
  });
  const defaults: ModelsConfig["defaults"] = { ...r.output.defaults };
  if (r.output.default && !defaults.text) defaults.text = r.output.default;
  // Without an explicit default, the first text model listed serves text requests.
  if (!defaults.text) {
    const p = providers.find((x) => x.models.some((m) => m.capabilities.includes("text")));
    const m = p?.models.find((x) => x.capabilities.includes("text"));
    if (p && m) defaults.text = `${p.id}/${m.name}`;
  }
  for (const [cap, id] of Object.entries(defaults)) {
    const provider = id.split("/")[0];
    if (!providers.some((p) => p.id === provider)) throw new UsageError(`${source}: defaults.${cap}: "${id}" names no configured provider (ids are provider/model)`);
  }
  return { providers, defaults, keys };
}

/** Reads `--models FILE`. */
export function loadModelsFile(path: string, env: Record<string, string | undefined> = process.env): ModelsConfig {
  let text: string;
  try {
    text = readFileSync(path, "utf8");
  } catch (err) {
    throw new UsageError(`--models: cannot read ${path}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`);
  }
  let data: unknown;
  try {
    data = (require("toml") as typeof import("toml")).parse(text);
  } catch (err) {
    const e = err as { location?: { start?: { line?: number } }; message: string };
    const line = e.location?.start?.line;
    throw new UsageError(`--models: ${path}${line ? ` line ${line}` : ""}: invalid TOML: ${e.message}`);
  }
  return modelsConfig(data, env, `--models ${path}`);
}

/**
 * Configuration from the environment alone, when no file is given: `AUTOMATION_DEFAULT_MODEL`
 * (`provider/model`) switches it on; `OPENAI_API_KEY`/`OPENAI_BASE_URL`, `ANTHROPIC_API_KEY`/
 * `ANTHROPIC_BASE_URL` and `OLLAMA_HOST` configure those providers. A key alone configures nothing,
 * so a developer's shell never silently sends workflow data to a hosted API.
 */
export function modelsFromEnv(env: Record<string, string | undefined> = process.env): ModelsConfig | undefined {
  const def = env.AUTOMATION_DEFAULT_MODEL?.trim();
  if (!def) return undefined;
  const slash = def.indexOf("/");
  if (slash <= 0 || slash === def.length - 1) throw new UsageError(`AUTOMATION_DEFAULT_MODEL must be provider/model (got "${def}")`);
  const provider = def.slice(0, slash);
  const model = def.slice(slash + 1);
  const providers: Record<string, Record<string, unknown>> = {};
  if (env.OPENAI_API_KEY || env.OPENAI_BASE_URL || provider === "openai") {
    providers.openai = { type: "openai", api_key_env: "OPENAI_API_KEY", ...(env.OPENAI_BASE_URL ? { base_url: env.OPENAI_BASE_URL } : {}) };
  }
  if (env.ANTHROPIC_API_KEY || env.ANTHROPIC_BASE_URL || provider === "anthropic") {
    providers.anthropic = { type: "anthropic", api_key_env: "ANTHROPIC_API_KEY", ...(env.ANTHROPIC_BASE_URL ? { base_url: env.ANTHROPIC_BASE_URL } : {}) };
  }
  if (env.OLLAMA_HOST || provider === "ollama") {
    const host = env.OLLAMA_HOST ?? "http://127.0.0.1:11434";
    providers.ollama = { type: "openai", base_url: `${/^https?:\/\//.test(host) ? host : `http://${host}`}/v1` };
  }
  if (!providers[provider]) throw new UsageError(`AUTOMATION_DEFAULT_MODEL: unknown provider "${provider}" (use openai, anthropic or ollama, or a --models file)`);
  providers[provider].models = [model];
  return modelsConfig({ default: def, providers }, env, "environment");
}
