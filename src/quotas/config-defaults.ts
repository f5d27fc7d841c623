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
}

export const DEFAULT_AUTO_REFRESH_SECONDS = 300;

export function defaults(): Config {
  return {
    tui: { autoRefreshSeconds: DEFAULT_AUTO_REFRESH_SECONDS, refreshOnStart: true },
    providers: { enabled: ["*"], disabled: [] },
    favorites: [],
    quotaPreferences: {},
    profiles: { autodetect: true, entries: {} },
    endpoints: {},
  };
}
