// history.db ($XDG_DATA_HOME/quotas/, else ~/.local/share/quotas/): one compact sample per provider
// window per refresh, kept for RETENTION_DAYS, plus the alert state per window. The only SQL of the
// quota viewer lives here, behind a small interface.
//
// Compact on purpose (30 days of 5-minute samples for 12 providers, two windows each, take ~4 MB): a
// WITHOUT ROWID table keyed by (series, minute); usage as basis points of the limit (2 bytes; the limit
// itself is kept once per series, and a projection only needs fractions); the reset as minutes after
// the sample (2 bytes) rather than an absolute time (4). At most one sample per window per minute: a
// later one in the same minute replaces it.
import type { Database } from "bun:sqlite";
import { dirname, join, xdgDataHome, type Ctx } from "../core/context";
import type { Sample } from "../model/pace";

export const RETENTION_DAYS = 30;
const MINUTE = 60_000;

export interface HistoryStore {
  /** Adds one sample per window of `key` (`provider:profile`) at `at` (ms); drops what is past retention. */
  append(key: string, samples: { window: string; sample: Sample }[], at: number): void;
  /** The samples of one window since `since` (ms), oldest first. */
  samples(key: string, window: string, since: number): Sample[];
  /** Highest alert threshold already fired in this window instance, and that instance's reset (ms). */
  alertState(key: string, window: string): { level: number; reset: number | null } | undefined;
  setAlertState(key: string, window: string, level: number, reset: number | null): void;
  /** Runs `fn` as one transaction (one commit for a whole refresh instead of one per provider). */
  batch<T>(fn: () => T): T;
  close(): void;
}

export const historyPath = (ctx: Ctx) => join(xdgDataHome(ctx), "quotas", "history.db");

const SCHEMA = `
CREATE TABLE IF NOT EXISTS series (id INTEGER PRIMARY KEY, key TEXT NOT NULL, window TEXT NOT NULL, lim REAL NOT NULL DEFAULT 0, UNIQUE (key, window));
CREATE TABLE IF NOT EXISTS samples (
  series INTEGER NOT NULL, t INTEGER NOT NULL, bp INTEGER NOT NULL, reset_in INTEGER,
  PRIMARY KEY (series, t)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS alerts (series INTEGER PRIMARY KEY, level REAL NOT NULL, reset INTEGER);
CREATE TABLE IF NOT EXISTS meta (name TEXT PRIMARY KEY, value INTEGER NOT NULL);
`;

/**
 * WAL + synchronous NORMAL: a commit is not an fsync (a sample lost to a power cut is harmless), and
 * readers never wait for the writer. Switching to WAL and creating the tables can meet SQLITE_BUSY from
 * a second process doing the same, which the busy timeout does not cover: retried for up to 3 s.
 */
function setUp(db: Database, path: string): void {
  for (let attempt = 0; ; attempt++) {
    try {
      if (path !== ":memory:") db.exec("PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL");
      db.exec(SCHEMA);
      return;
    } catch (err) {
      const busy = String((err as Error).message).includes("locked") || (err as { code?: string }).code === "SQLITE_BUSY";
      if (!busy || attempt >= 60) throw err;
      Bun.sleepSync(20 + Math.random() * 30);
    }
  }
}

const toMin = (ms: number) => Math.floor(ms / MINUTE);

/** Opens (creating) the history database; `path` ":memory:" for tests. */
export function openHistory(path: string): HistoryStore {
  const { Database } = require("bun:sqlite") as typeof import("bun:sqlite");
  if (path !== ":memory:") (require("node:fs") as typeof import("node:fs")).mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
  const db: Database = new Database(path, { create: true });
  // The daemon, the dashboard and a prompt's background refresh may write at once.
  db.exec("PRAGMA busy_timeout = 3000");
  setUp(db, path);
  const findSeries = db.query<{ id: number; lim: number }, [string, string]>("SELECT id, lim FROM series WHERE key = ? AND window = ?");
  const addSeries = db.query<{ id: number; lim: number }, [string, string]>("INSERT INTO series (key, window) VALUES (?, ?) RETURNING id, lim");
  const setLimit = db.query("UPDATE series SET lim = ? WHERE id = ?");
  const put = db.query("INSERT OR REPLACE INTO samples (series, t, bp, reset_in) VALUES (?, ?, ?, ?)");
  const prune = db.query("DELETE FROM samples WHERE series = ? AND t < ?");
  const read = db.query<{ t: number; bp: number; reset_in: number | null }, [number, number]>(
    "SELECT t, bp, reset_in FROM samples WHERE series = ? AND t >= ? ORDER BY t",
  );
  const getAlert = db.query<{ level: number; reset: number | null }, [number]>("SELECT level, reset FROM alerts WHERE series = ?");
  const putAlert = db.query("INSERT OR REPLACE INTO alerts (series, level, reset) VALUES (?, ?, ?)");
  const series = (key: string, window: string, create: boolean) => findSeries.get(key, window) ?? (create ? addSeries.get(key, window)! : undefined);
  const seriesId = (key: string, window: string, create: boolean): number | undefined => series(key, window, create)?.id;
  // Each append prunes its own series; once a day everything else too (a provider no longer asked).
  const prunedAt = db.query<{ value: number }, []>("SELECT value FROM meta WHERE name = 'pruned_at'");
  const setPrunedAt = db.query("INSERT OR REPLACE INTO meta (name, value) VALUES ('pruned_at', ?)");
  const pruneAll = db.query("DELETE FROM samples WHERE t < ?");
  const append = db.transaction((key: string, samples: { window: string; sample: Sample }[], at: number) => {
    const cutoff = toMin(at) - RETENTION_DAYS * 1440;
    if ((prunedAt.get()?.value ?? 0) < toMin(at) - 1440) {
      pruneAll.run(cutoff);
      setPrunedAt.run(toMin(at));
    }
    for (const { window, sample: s } of samples) {
      const row = series(key, window, true)!;
      if (row.lim !== s.limit) setLimit.run(s.limit, row.id);
      const t = toMin(s.t);
      put.run(row.id, t, s.limit > 0 ? Math.round((s.used / s.limit) * 10_000) : 0, s.reset === null ? null : Math.round(s.reset / MINUTE) - t);
      prune.run(row.id, cutoff);
    }
  });
  return {
    append: (key, samples, at) => append(key, samples, at),
    samples(key, window, since) {
      const row = series(key, window, false);
      if (!row) return [];
      // usage comes back in the window's current unit: basis points of the latest limit
      return read.all(row.id, toMin(since)).map((r) => ({
        t: r.t * MINUTE,
        used: Math.round(r.bp * row.lim) / 10_000,
        limit: row.lim,
        reset: r.reset_in === null ? null : (r.t + r.reset_in) * MINUTE,
      }));
    },
    alertState(key, window) {
      const id = seriesId(key, window, false);
      const row = id === undefined ? null : getAlert.get(id);
      return row ? { level: row.level, reset: row.reset === null ? null : row.reset * MINUTE } : undefined;
    },
    setAlertState(key, window, level, reset) {
      putAlert.run(seriesId(key, window, true)!, level, reset === null ? null : toMin(reset));
    },
    batch: (fn) => db.transaction(fn)(),
    close: () => db.close(),
  };
}
