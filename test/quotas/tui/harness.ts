// A stand-in for bin/quotas.ts, for driving the TUI in a real terminal (tmux) with an in-memory host:
// targets and cached results come from a JSON file, fetches go to a fake server on loopback
// (GET <QTUI_SERVER>/<provider>/<profile> answers a ProviderResult), preferences and clipboard
// copies are recorded in JSON files. Run: bun test/quotas/tui/harness.ts <setup.json>
import { readFileSync, renameSync, writeFileSync } from "node:fs";
import { runTui } from "../../../src/quotas/tui/index.ts";
import type { ProviderResult, Target, TuiHost } from "../../../src/quotas/model/types.ts";

interface Setup {
  server: string;
  prefsFile: string;
  clipFile: string;
  targets: Target[];
  cached: ProviderResult[];
  autoRefreshSeconds: number;
  refreshOnStart: boolean;
  /** Makes the clipboard call throw, to see the terminal restored after an unexpected error. */
  throwOnCopy?: boolean;
  /** Throws from a timer outside the TUI after this many ms: an uncaught error in the process. */
  crashAfterMs?: number;
}

interface Saved {
  favorites: string[];
  prefs: Record<string, { favorites: string[]; hidden: string[] }>;
}

const setup = JSON.parse(readFileSync(process.argv[2], "utf8")) as Setup;
const load = (): Saved => {
  try {
    return JSON.parse(readFileSync(setup.prefsFile, "utf8")) as Saved;
  } catch {
    return { favorites: [], prefs: {} };
  }
};
const save = (s: Saved) => {
  writeFileSync(`${setup.prefsFile}.tmp`, JSON.stringify(s));
  renameSync(`${setup.prefsFile}.tmp`, setup.prefsFile);
};

const host: TuiHost = {
  version: "9.9.9-harness",
  targets: () => setup.targets,
  cached: () => setup.cached,
  async fetch(t) {
    const r = await fetch(`${setup.server}/${t.provider}/${t.profile}`);
    return (await r.json()) as ProviderResult;
  },
  tui: { autoRefreshSeconds: setup.autoRefreshSeconds, refreshOnStart: setup.refreshOnStart },
  favoriteProviders: () => load().favorites,
  quotaPreferences: (p) => load().prefs[p] ?? { favorites: [], hidden: [] },
  async setFavoriteProvider(p, on) {
    const s = load();
    s.favorites = on ? [...s.favorites, p] : s.favorites.filter((x) => x !== p);
    save(s);
  },
  async setQuotaPreference(p, w, list, on) {
    const s = load();
    const cur = s.prefs[p] ?? { favorites: [], hidden: [] };
    cur[list] = on ? [...cur[list], w] : cur[list].filter((x) => x !== w);
    s.prefs[p] = cur;
    save(s);
  },
  copyToSystemClipboard(text) {
    if (setup.throwOnCopy) throw new Error("clipboard exploded");
    writeFileSync(setup.clipFile, text);
    return Promise.resolve(true);
  },
};

if (setup.crashAfterMs) {
  setTimeout(() => {
    throw new Error("uncaught elsewhere");
  }, setup.crashAfterMs);
}
process.exit(await runTui(host));
