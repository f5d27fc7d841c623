// The `quotas` command: flags, then one mode (TUI, --json, --statusline, version/update checks, and
// the hidden background modes the statusline forks).
import { join } from "node:path";
import { helpText, parseFlags, type FlagSpec } from "../kernel/config";
import { UsageError } from "../kernel/errors";
import { spawnDetached } from "./background";
import { readCache, record } from "./cache";
import { loadConfig } from "./config";
import { cacheDir, makeCtx, type Ctx, type Env } from "./context";
import { fetchAll } from "./fetcher";
import { tryLock, unlock, writeAtomic } from "./files";
import { createHost } from "./host";
import { renderJson, report } from "./output/json";
import { DEFAULT_FORMAT, statusline } from "./output/statusline";
import { providerNames, providers } from "./providers";
import { enabled, parseSelectors, resolveTargets, type Selector } from "./targets";
import type { ProviderResult, TuiHost } from "./types";
import { availableUpdate, checkRegistry, readUpdate, updateDue, updatePath } from "./update";
import { PACKAGE_NAME, VERSION } from "./version";

export const STALE_MS = 30 * 60 * 1000;

const flags = {
  json: { type: "boolean", help: "print JSON for all (or the --provider) providers, fetched in parallel" },
  pretty: { type: "boolean", help: "indent the JSON (with --json)" },
  raw: { type: "boolean", help: "include each provider's raw responses (with --json; they hold e-mails and account ids)" },
  provider: { type: "string", value: "NAMES", help: "only these providers, comma-separated; aliases and name:profile accepted" },
  statusline: { type: "boolean", help: "print one line from the cache for a shell prompt; never waits on the network" },
  format: { type: "string", value: "TPL", default: DEFAULT_FORMAT, help: "statusline template: %provider %remaining %limit %window %used %percent %reset" },
  "no-icons": { type: "boolean", help: "statusline without provider icons" },
  "no-update-check": { type: "boolean", help: "no background version check" },
  "check-update": { type: "boolean", help: "ask the npm registry whether a newer release exists (exit 1 if the check fails)" },
  version: { type: "boolean", short: "v", help: "print the installed version" },
  help: { type: "boolean", short: "h", help: "show this help" },
} satisfies Record<string, FlagSpec>;

// Modes the statusline starts in a detached child; not for users, so not in --help.
const hidden = {
  "refresh-cache": { type: "boolean", help: "" },
  "refresh-update": { type: "boolean", help: "" },
} satisfies Record<string, FlagSpec>;

const USAGE = `quotas: how much of each AI provider's plan, quota or balance is used

Usage:
  quotas                                   interactive dashboard
  quotas --json [--pretty] [--raw] [--provider=a,b]
  quotas --statusline [--no-icons] [--format=TPL] [--provider=a,b]
  quotas --check-update | --version | --help`;

const EXTRA = `Providers: ${providerNames.join(", ")}
  aliases: ${providers.flatMap((p) => p.aliases.map((a) => `${a}→${p.id}`)).join(", ")}

Examples:
  quotas --json --pretty --provider=claude,codex:work
  quotas --statusline --format='%provider %percent (%window, %reset)'
  PS1='$(quotas --statusline --no-icons) \\$ '

Environment:
  QUOTAS_ENDPOINT_<PROVIDER>   base URL override, e.g. QUOTAS_ENDPOINT_CLAUDE=http://127.0.0.1:9999
  QUOTAS_TIMEOUT_MS            per-provider timeout in ms (default 10000)
  npm_config_registry          registry for the update check (default https://registry.npmjs.org)
  XDG_CONFIG_HOME, XDG_CACHE_HOME, XDG_DATA_HOME   config.toml, cache.json/update.json, opencode auth

Config: $XDG_CONFIG_HOME/quotas/config.toml (else ~/.config/quotas/config.toml)
Cache:  $XDG_CACHE_HOME/quotas/ (else ~/.cache/quotas/)`;

export const refreshLockPath = (ctx: Ctx) => join(cacheDir(ctx), "refresh.lock");
const updateLockPath = (ctx: Ctx) => join(cacheDir(ctx), "update.lock");

export interface Io {
  out: (s: string) => void;
  err: (s: string) => void;
  runTui?: (host: TuiHost) => Promise<number>;
}

/** Runs the command; returns the exit code. Usage errors throw UsageError (exit 2 via runMain). */
export async function main(argv: string[], env: Env = process.env, io: Io = defaultIo()): Promise<number> {
  const { values: f, positionals } = parseFlags(argv, { ...flags, ...hidden }, {});
  if (positionals.length) throw new UsageError(`unexpected argument "${positionals[0]}"`);
  if (f.help) {
    io.out(helpText(USAGE, flags, EXTRA));
    return 0;
  }
  if (f.version) {
    io.out(`${VERSION}\n`);
    return 0;
  }
  const modes = (["json", "statusline", "check-update", "refresh-cache", "refresh-update"] as const).filter((m) => f[m]);
  if (modes.length > 1) throw new UsageError(`--${modes[0]} and --${modes[1]} cannot be combined`);
  const mode = modes[0];
  if ((f.pretty || f.raw) && mode !== "json") throw new UsageError(`--${f.pretty ? "pretty" : "raw"} only works with --json`);
  if ((f["no-icons"] || argv.some((a) => a.startsWith("--format"))) && mode !== "statusline") {
    throw new UsageError(`--${f["no-icons"] ? "no-icons" : "format"} only works with --statusline`);
  }
  const selectors = parseSelectors(f.provider);
  const ctx = makeCtx(env);

  if (mode === "statusline") return statuslineMode(ctx, selectors, f.format, !f["no-icons"], !f["no-update-check"], io);
  if (mode === "check-update") return checkUpdateMode(ctx, io);
  if (mode === "refresh-update") return refreshUpdate(ctx);
  const { config, warning } = loadConfig(ctx);
  if (mode === "refresh-cache") {
    try {
      const results = await fetchAll(ctx, config, resolveTargets(ctx, config));
      await record(ctx, results, true);
    } finally {
      unlock(refreshLockPath(ctx));
    }
    return 0;
  }
  if (warning) io.err(`quotas: ${warning}\n`);
  if (mode === "json") {
    const targets = resolveTargets(ctx, config, selectors);
    const fresh = await fetchAll(ctx, config, targets);
    const results = await record(ctx, fresh, !selectors);
    io.out(renderJson(report(results, { raw: f.raw === true, now: ctx.clock.now() }), f.pretty === true) + "\n");
    return 0;
  }
  if (!f["no-update-check"]) startUpdateCheck(ctx, readUpdate(ctx));
  const host = createHost(ctx, config, selectors);
  const run = io.runTui ?? (await import("./tui")).runTui;
  return run(host);
}

function defaultIo(): Io {
  return { out: (s) => process.stdout.write(s), err: (s) => process.stderr.write(s) };
}

function startUpdateCheck(ctx: Ctx, state: ReturnType<typeof readUpdate>): void {
  if (updateDue(ctx, state) && tryLock(updateLockPath(ctx), 60_000)) spawnDetached(["--refresh-update"]);
}

/** Cache only: no network in this process, and children are never waited for. */
function statuslineMode(ctx: Ctx, selectors: Selector[] | undefined, format: string, icons: boolean, updateCheck: boolean, io: Io): number {
  const { config } = loadConfig(ctx); // a config warning would end up in the prompt; --json reports it
  const cache = readCache(ctx);
  const order = new Map(providers.map((p, i) => [p.id, i]));
  const results: ProviderResult[] = Object.values(cache.results)
    .filter((r) =>
      selectors
        ? selectors.some((s) => s.provider === r.provider && (s.profile === undefined || s.profile === r.profile))
        : enabled(config, r.provider) && enabled(config, r.provider, r.profile) && config.profiles.entries[`${r.provider}:${r.profile}`]?.enabled !== false,
    )
    .sort((a, b) => (order.get(a.provider) ?? 99) - (order.get(b.provider) ?? 99) || (a.profile === "default" ? -1 : b.profile === "default" ? 1 : a.profile.localeCompare(b.profile)));
  const now = ctx.clock.now();
  const refreshed = cache.refreshed_at ? Date.parse(cache.refreshed_at) : NaN;
  if (!(now.getTime() - refreshed <= STALE_MS) && tryLock(refreshLockPath(ctx), 2 * ctx.timeoutMs + 30_000)) {
    spawnDetached(["--refresh-cache"]);
  }
  let update: string | null = null;
  if (updateCheck) {
    const state = readUpdate(ctx);
    update = availableUpdate(state);
    startUpdateCheck(ctx, state);
  }
  const line = statusline(results, {
    format,
    icons,
    now,
    hidden: (p) => config.quotaPreferences[p]?.hidden ?? [],
    update,
  });
  io.out(line + "\n");
  return 0;
}

async function checkUpdateMode(ctx: Ctx, io: Io): Promise<number> {
  try {
    const s = await checkRegistry(ctx);
    io.out(
      availableUpdate(s)
        ? `${PACKAGE_NAME} ${s.latest} is available (installed ${VERSION}): npm install -g ${PACKAGE_NAME}\n`
        : `${PACKAGE_NAME} ${VERSION} is up to date (latest ${s.latest})\n`,
    );
    return 0;
  } catch (err) {
    io.err(`quotas: update check failed: ${(err as Error).message}\n`);
    return 1;
  }
}

/** Background check: a failure is remembered too, so a prompt does not retry it every time. */
async function refreshUpdate(ctx: Ctx): Promise<number> {
  try {
    await checkRegistry(ctx);
  } catch {
    const prev = readUpdate(ctx);
    try {
      writeAtomic(updatePath(ctx), JSON.stringify({ checked_at: ctx.clock.now().toISOString(), current: VERSION, latest: prev?.latest ?? VERSION }) + "\n");
    } catch {}
  } finally {
    unlock(updateLockPath(ctx));
  }
  return 0;
}
