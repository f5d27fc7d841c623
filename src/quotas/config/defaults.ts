// The shape of config.toml once parsed, and its defaults: no parser here, so the statusline can use
// them without loading the TOML parser or valibot (see statusline-config.ts).
export interface ProfileEntry {
  canonical?: string;
  name?: string;
  enabled?: boolean;
}

export interface Config {
  tui: { autoRefreshSeconds: number; refreshOnStart: boolean };
  providers: { enabled: string[]; disabled: string[] };
  favorites: string[];
  quotaPreferences: Record<string, { favorites: string[]; hidden: string[] }>;
  profiles: { autodetect: boolean; entries: Record<string, ProfileEntry> };
  copilotToken?: string;
  endpoints: Record<string, string>;
  /** Pre-rendered statusline files (statusline.txt and one per named format). */
  statusline: StatuslineConfig;
  alerts: { thresholds: number[]; notify: boolean };
}

export interface StatuslineFormat {
  format: string;
  icons: boolean;
  /** Only these providers (names or provider:profile keys); undefined = all enabled. */
  providers?: string[];
}

export interface StatuslineConfig extends StatuslineFormat {
  /** `[statusline.formats.<name>]` → `statusline-<name>.txt`. */
  formats: Record<string, StatuslineFormat>;
}

export const DEFAULT_FORMAT = "%provider %remaining/%limit";

export const DEFAULT_AUTO_REFRESH_SECONDS = 300;

export function defaults(): Config {
  return {
    tui: { autoRefreshSeconds: DEFAULT_AUTO_REFRESH_SECONDS, refreshOnStart: true },
    providers: { enabled: ["*"], disabled: [] },
    favorites: [],
    quotaPreferences: {},
    profiles: { autodetect: true, entries: {} },
    endpoints: {},
    statusline: { format: DEFAULT_FORMAT, icons: true, formats: {} },
    alerts: { thresholds: [], notify: true },
  };
}
