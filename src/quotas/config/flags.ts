// The command line of `quotas`: flags, help text, and which mode a command line asks for.
import { helpText, parseFlags, type FlagSpec, type FlagValues } from "../../kernel/config";
import { UsageError } from "../../kernel/errors";
import { identities } from "../model/names";
import { DEFAULT_FORMAT } from "../output/statusline";
import { parseSelectors, type Selector } from "../model/selectors";

export const flags = {
  json: { type: "boolean", help: "print JSON for all (or the --provider) providers, fetched in parallel" },
  pretty: { type: "boolean", help: "indent the JSON (with --json)" },
  raw: { type: "boolean", help: "include each provider's raw responses (with --json; they hold e-mails and account ids)" },
  provider: { type: "string", value: "NAMES", help: "only these providers, comma-separated; aliases and name:profile accepted" },
  statusline: { type: "boolean", help: "print one line from the cache for a shell prompt; never waits on the network" },
  format: { type: "string", value: "TPL", help: `statusline template: %provider %remaining %limit %window %used %percent %reset %pace %cost_today (default "${DEFAULT_FORMAT}")` },
  "no-icons": { type: "boolean", help: "statusline without provider icons" },
  "no-update-check": { type: "boolean", help: "no background version check" },
  "check-update": { type: "boolean", help: "ask the npm registry whether a newer release exists (exit 1 if the check fails)" },
  interval: { type: "number", value: "SECONDS", help: "with daemon / install-timer: seconds between refreshes (default 300, at least 60)" },
  once: { type: "boolean", help: "with daemon: refresh once and exit (what the installed timer runs)" },
  kind: { type: "string", value: "KIND", help: "with install-timer: systemd or launchd (default: launchd on macOS, else systemd)" },
  version: { type: "boolean", short: "v", help: "print the installed version" },
  help: { type: "boolean", short: "h", help: "show this help" },
} satisfies Record<string, FlagSpec>;

// Modes the statusline starts in a detached child; not for users, so not in --help.
const hidden = {
  "refresh-cache": { type: "boolean", help: "" },
  "refresh-update": { type: "boolean", help: "" },
} satisfies Record<string, FlagSpec>;

const all = { ...flags, ...hidden };

export type Mode = "tui" | "json" | "statusline" | "check-update" | "refresh-cache" | "refresh-update" | "daemon" | "install-timer" | "help" | "version";

export const DEFAULT_INTERVAL_SECONDS = 300;
const COMMANDS = ["daemon", "install-timer"] as const;

export interface Args {
  mode: Mode;
  f: FlagValues<typeof all>;
  selectors?: Selector[];
}

/** Parses and checks a command line; mistakes throw UsageError (one line, exit 2). */
export function parseArgs(argv: string[]): Args {
  const { values: f, positionals } = parseFlags(argv, all, {});
  const command = COMMANDS.find((c) => c === positionals[0]);
  if (positionals.length > (command ? 1 : 0)) throw new UsageError(`unexpected argument "${positionals[command ? 1 : 0]}" (commands: ${COMMANDS.join(", ")})`);
  if (f.help) return { mode: "help", f };
  if (f.version) return { mode: "version", f };
  const modes: Mode[] = command ? [command] : [];
  for (const m of ["json", "statusline", "check-update", "refresh-cache", "refresh-update"] as const) if (f[m]) modes.push(m);
  const spell = (m: Mode) => ((COMMANDS as readonly string[]).includes(m) ? m : `--${m}`);
  if (modes.length > 1) throw new UsageError(`${spell(modes[0])} and ${spell(modes[1])} cannot be combined`);
  const mode: Mode = modes[0] ?? "tui";
  for (const only of ["pretty", "raw"] as const) if (f[only] && mode !== "json") throw new UsageError(`--${only} only works with --json`);
  if (f["no-icons"] && mode !== "statusline") throw new UsageError("--no-icons only works with --statusline");
  if (f.format !== undefined && mode !== "statusline") throw new UsageError("--format only works with --statusline");
  if (f.interval !== undefined && mode !== "daemon" && mode !== "install-timer") throw new UsageError("--interval only works with daemon and install-timer");
  if (f.interval !== undefined && !(f.interval >= 60)) throw new UsageError(`--interval must be at least 60 seconds (got ${f.interval})`);
  if (f.once && mode !== "daemon") throw new UsageError("--once only works with daemon");
  if (f.kind !== undefined && mode !== "install-timer") throw new UsageError("--kind only works with install-timer");
  if (f.kind !== undefined && f.kind !== "systemd" && f.kind !== "launchd") throw new UsageError(`--kind must be systemd or launchd (got "${f.kind}")`);
  return { mode, f, selectors: parseSelectors(f.provider) };
}

const USAGE = `quotas: how much of each AI provider's plan, quota or balance is used

Usage:
  quotas                                   interactive dashboard
  quotas --json [--pretty] [--raw] [--provider=a,b]
  quotas --statusline [--no-icons] [--format=TPL] [--provider=a,b]
  quotas usage [daily|weekly|monthly|session|blocks] [--json|--csv] ...   tokens and cost from local agent logs (quotas usage --help)
  quotas daemon [--interval=SECONDS] [--once]   refresh in the foreground, for the prompt files
  quotas install-timer [--interval=SECONDS] [--kind=systemd|launchd]
  quotas --check-update | --version | --help`;

// A function: built only for --help, not on every prompt.
const extra = () => `Providers: ${identities.map((p) => p.id).join(", ")}
  aliases: ${identities.flatMap((p) => p.aliases.map((a) => `${a}→${p.id}`)).join(", ")}

Examples:
  quotas --json --pretty --provider=claude,codex:work
  quotas --statusline --format='%provider %percent (%window, %reset)'
  PS1='$(quotas --statusline --no-icons) \\$ '
  quotas install-timer && systemctl --user enable --now quotas.timer

Environment:
  QUOTAS_ENDPOINT_<PROVIDER>   base URL override, e.g. QUOTAS_ENDPOINT_CLAUDE=http://127.0.0.1:9999
  QUOTAS_TIMEOUT_MS            per-provider timeout in ms (default 10000)
  npm_config_registry          registry for the update check (else registry= in ~/.npmrc or npm's global npmrc, else https://registry.npmjs.org)
  XDG_CONFIG_HOME, XDG_CACHE_HOME, XDG_DATA_HOME   config.toml, cache.json/update.json, opencode auth

Config: $XDG_CONFIG_HOME/quotas/config.toml (else ~/.config/quotas/config.toml)
Cache:  $XDG_CACHE_HOME/quotas/ (else ~/.cache/quotas/): cache.json, statusline.txt (pre-rendered)
History: $XDG_DATA_HOME/quotas/history.db (else ~/.local/share/quotas/), 30 days`;

export const help = () => helpText(USAGE, flags, extra());
