// The config as the statusline needs it, without paying for the TOML parser and valibot on every
// prompt: the parsed result is remembered in the cache directory under a hash of the file's text.
// A prompt reads config.toml (to hash it) and the memo; only an edited file goes through the parser.
import { defaults, type Config } from "./defaults";
import { cacheDir, configFile, join, type Ctx } from "../core/context";
import { readTextFast, writeAtomic } from "../core/files";
import { VERSION } from "../core/version";

interface Memo {
  version: string;
  hash: string;
  /** The parts of Config the statusline uses; never the copilot token. */
  config: Pick<Config, "providers" | "profiles" | "quotaPreferences">;
}

export const configMemoPath = (ctx: Ctx) => join(cacheDir(ctx), "statusline-config.json");

function strings(x: unknown): x is string[] {
  if (!Array.isArray(x)) return false;
  for (const s of x) if (typeof s !== "string") return false; // not .every: see cache.ts on first calls
  return true;
}

function readMemo(ctx: Ctx, hash: string): Config | undefined {
  const text = readTextFast(configMemoPath(ctx));
  if (!text) return undefined;
  try {
    const m = JSON.parse(text) as Memo;
    if (m.version !== VERSION || m.hash !== hash) return undefined;
    const c = m.config;
    // Our own file, written atomically; checked just enough that a damaged one is re-made, not trusted.
    if (!strings(c.providers.enabled) || !strings(c.providers.disabled) || typeof c.profiles.entries !== "object" || typeof c.quotaPreferences !== "object") return undefined;
    return { ...defaults(), providers: c.providers, profiles: c.profiles, quotaPreferences: c.quotaPreferences };
  } catch {
    return undefined;
  }
}

/**
 * The config for a statusline: defaults when there is no file; the memo when the file is unchanged;
 * else the full parser (an invalid file means defaults, as everywhere), whose result is remembered.
 */
export async function statuslineConfig(ctx: Ctx): Promise<Config> {
  const path = configFile(ctx);
  const text = readTextFast(path);
  if (text === undefined) return defaults();
  const hash = String(Bun.hash(text));
  const memo = readMemo(ctx, hash);
  if (memo) return memo;
  const { parseConfig } = await import("./config");
  const { config } = parseConfig(text, path);
  const keep: Memo = { version: VERSION, hash, config: { providers: config.providers, profiles: config.profiles, quotaPreferences: config.quotaPreferences } };
  try {
    writeAtomic(configMemoPath(ctx), JSON.stringify(keep) + "\n");
  } catch {
    // a read-only cache directory: parse again next time
  }
  return config;
}
