import { Database } from "bun:sqlite";
import { mkdirSync } from "node:fs";
import { dirname } from "node:path";
import { FatalError } from "./errors";

/**
 * Statements `query()` keeps prepared, per database. bun:sqlite's default is 20, least recently used
 * first out: a store runs more distinct statements than that in one request or one run, so it prepared
 * them again and again (18 % of the automation server's CPU in a backtest's profile, `prepare` under
 * `query`). Our statement texts are constants with bound parameters (a few vary with a list's length),
 * so this bounds memory while every statement stays prepared.
 */
export const STATEMENT_CACHE = 2000;
Database.MAX_QUERY_CACHE_SIZE = STATEMENT_CACHE;

/** One embedded migration: drizzle-kit SQL imported as text (see db/<product>/index.ts). */
export interface Migration {
  name: string;
  sql: string;
}

/**
 * Opens (creating if needed) a SQLite database with WAL, foreign keys and a busy timeout, then applies
 * the embedded migrations that have not run yet, each in its own transaction. `:memory:` works.
 * `busyTimeoutMs`: how long a statement waits for another connection's write lock before it fails.
 */
export function openSqlite(path: string, migrations: Migration[], busyTimeoutMs = 5000): Database {
  if (path !== ":memory:") {
    try {
      mkdirSync(dirname(path), { recursive: true });
    } catch (err) {
      throw new FatalError(`cannot create the directory for ${path}: ${(err as Error).message}`);
    }
  }
  let sqlite: Database;
  try {
    sqlite = new Database(path, { create: true, strict: true });
    // The busy timeout comes first: switching to WAL takes a lock another process (a server beside an
    // admin command) may hold. It only helps transactions that take the write lock at their start
    // (IMMEDIATE): a deferred one that read first is refused at once (SQLITE_BUSY_SNAPSHOT), so every
    // write transaction of the stores is IMMEDIATE.
    sqlite.exec(`PRAGMA busy_timeout = ${busyTimeoutMs}`);
    sqlite.exec("PRAGMA journal_mode = WAL");
    sqlite.exec("PRAGMA synchronous = NORMAL");
    sqlite.exec("PRAGMA foreign_keys = ON");
  } catch (err) {
    throw new FatalError(`cannot open database ${path}: ${(err as Error).message}`);
  }
  migrate(sqlite, migrations);
  return sqlite;
}

export function migrate(sqlite: Database, migrations: Migration[]): string[] {
  sqlite.exec(
    "CREATE TABLE IF NOT EXISTS __migrations (name TEXT PRIMARY KEY, applied_at TEXT NOT NULL)",
  );
  const done = new Set(
    sqlite.query<{ name: string }, []>("SELECT name FROM __migrations").all().map((r) => r.name),
  );
  const applied: string[] = [];
  for (const m of migrations) {
    if (done.has(m.name)) continue;
    sqlite.transaction(() => {
      for (const stmt of m.sql.split("--> statement-breakpoint")) {
        if (stmt.trim()) sqlite.exec(stmt);
      }
      sqlite.query("INSERT INTO __migrations (name, applied_at) VALUES (?, ?)").run(m.name, new Date().toISOString());
    })();
    applied.push(m.name);
  }
  return applied;
}
