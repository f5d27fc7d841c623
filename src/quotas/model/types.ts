// The quota viewer's shared vocabulary: what a provider fetch yields (the `--json` wire format of
// specs/quotas.md), and the host interface the TUI drives. Providers, cache, JSON, statusline and the
// TUI all speak these types.

export type Status = "available" | "auth_required" | "unavailable" | "network_error";

/** One quota window, exactly as `--json` prints it. Money is a decimal number in `unit` (usd, cny). */
export interface QuotaWindow {
  window: string; // "5h" | "weekly" | "monthly" | "weekly_<model>" | "balance" | provider-specific
  used: number;
  limit: number;
  remaining: number;
  unit: string; // "percent" | "requests" | "tokens" | "credits" | currency code
  reset_at: string | null; // ISO-8601 UTC
  period_seconds: number | null;
  /** The projection from history (see pace.ts): null when there is not enough of it yet. */
  pace?: Pace | null;
}

/** "At this pace": usage rate over the recent part of the current window and where it leads. */
export interface Pace {
  rate_per_hour: number; // in the window's unit
  exhausts_at: string | null; // when `used` reaches `limit` at this rate; null when it never does
  before_reset: boolean | null; // exhausts before reset_at; null when the reset time is unknown
  projected_used: number | null; // `used` at reset_at at this rate; null when the reset time is unknown
  since: string; // the sample the rate is measured from
}

/** One provider/profile result, exactly as `--json` prints it. */
export interface ProviderResult {
  provider: string; // canonical name, e.g. "claude"
  profile: string; // "default", "work", ...
  name: string; // card title, e.g. "Claude" or "Claude (work)"
  status: Status;
  plan: string | null;
  windows: QuotaWindow[];
  hint?: string; // auth_required
  message?: string; // unavailable, network_error
  console_url?: string;
  fetched_at: string; // when this result was fetched
  cached_at: string | null; // set when the result shown comes from the cache (stale good result)
  auth_source: string | null; // "~/.claude/.credentials.json", "env OPENROUTER_API_KEY", ... never the secret
  raw?: unknown; // only with --raw
  /** Rate-limited (HTTP 429): the provider is not asked again before this time. Not printed by --json. */
  retry_at?: string;
  /** History of the current window per window name, 0..1 of the limit, oldest first (TUI only; never cached or printed). */
  spark?: Record<string, number[]>;
}

export interface Report {
  version: string;
  timestamp: string;
  providers: ProviderResult[];
}

/** A provider/profile the tool will show (discovered credentials or not). Key is `provider:profile`. */
export interface Target {
  key: string;
  provider: string;
  profile: string;
  name: string;
}

/** What the TUI needs from the rest of the tool. The TUI never touches files or the network itself. */
/** What the TUI's usage view shows: spend from the agents' local logs (see `quotas usage`). */
export interface UsageSummary {
  timezone: string;
  today: { cost: number; tokens: number };
  week: { cost: number; tokens: number };
  /** this week, most expensive first */
  models: { agent: string; model: string; cost: number; tokens: number }[];
  /** the last 30 days, oldest first (days without use included, at 0) */
  daily: { day: string; cost: number }[];
}

export interface TuiHost {
  version: string;
  /** Targets to show, in config order (enabled providers, profiles). */
  targets(): Target[];
  /** Last results from cache.json (possibly empty), for the instant first frame. */
  cached(): ProviderResult[];
  /** Fetches one target (10 s timeout) and records the result in the cache. Never throws. */
  fetch(target: Target): Promise<ProviderResult>;
  /** `[tui]` settings. */
  tui: { autoRefreshSeconds: number; refreshOnStart: boolean };
  /** `[favorites] providers` (provider names or provider:profile keys). */
  favoriteProviders(): string[];
  /** `[quota_preferences.<provider>]`. */
  quotaPreferences(provider: string): { favorites: string[]; hidden: string[] };
  /** Spend from the local agent logs (the incremental index makes it quick after the first time). */
  usage?(): Promise<UsageSummary>;
  /** Persist a favourite provider toggle into config.toml, keeping comments and layout. */
  setFavoriteProvider(provider: string, on: boolean): Promise<void>;
  /** Persist a favourite/hidden quota window toggle into config.toml, keeping comments and layout. */
  setQuotaPreference(provider: string, window: string, list: "favorites" | "hidden", on: boolean): Promise<void>;
  /** Copy to the system clipboard tool when one exists (the TUI also emits OSC 52 itself). */
  copyToSystemClipboard(text: string): Promise<boolean>;
}
