// Picks the automation server's storage backend: PostgreSQL when the config names a `postgres://` URL
// (`--db`), else SQLite in the data dir (or in memory for tests). The one module that knows both.
import type { Database } from "bun:sqlite";
import { SQL } from "bun";
import { join, resolve } from "node:path";
import { migrations } from "../../../db/automation/index";
import { startCheckpointer, type Checkpointer } from "../../kernel/checkpointer";
import { openSqlite } from "../../kernel/db";
import type { Logger } from "../../kernel/logger";
import { FatalError } from "../../kernel/errors";
import { PG_POOL_MAX, redactUrl } from "../../kernel/pg";
import { migrateAutomationClient } from "./pg-migrate";
import { pgStorage } from "./pg/index";
import { sqliteStorage } from "./sqlite/index";
import type { AutomationStorage } from "./storage";

export interface OpenedStorage {
  storage: AutomationStorage;
  /** The SQLite connection (metrics time its statements, `backup` copies it); undefined on PostgreSQL. */
  sqlite?: Database;
  /** The PostgreSQL pool; undefined on SQLite. */
  pg?: SQL;
  /** Where the data is, for the startup line (the PostgreSQL URL without its password). */
  describe: string;
  /**
   * SQLite file: from now until close, the write-ahead log is checkpointed on a thread of its own
   * instead of inside commits (src/kernel/checkpointer.ts; the server calls it). Nothing elsewhere.
   */
  checkpointInBackground(log?: Logger): void;
  close(): Promise<void>;
}

/** Opens the database and applies pending migrations (on PostgreSQL under an advisory lock). */
/** Where the data is: `dataDir` (":memory:" in tests) and, for PostgreSQL, `db` with its pool size. */
export interface StorageTarget {
  dataDir: string;
  db?: string;
  dbPool?: number;
  /** Seconds an idle pooled connection stays open (default 60; tests use 1). */
  dbIdleTimeout?: number;
  /**
   * SQLite: how long a write waits for another connection's lock (default 5 s for a server, whose
   * event loop waits meanwhile; admin commands wait 30 s: they must never fail beside a busy server).
   */
  busyTimeoutMs?: number;
}

export async function openStorage(config: StorageTarget, opts: { onSqlite?: (sqlite: Database) => void } = {}): Promise<OpenedStorage> {
  if (config.db) {
    const url = config.db;
    // Idle connections close after a minute: a quiet instance does not hold its whole pool open.
    const pg = new SQL({ url, max: config.dbPool ?? PG_POOL_MAX, connectionTimeout: 10, idleTimeout: config.dbIdleTimeout ?? 60 });
    try {
      await migrateAutomationClient(pg);
    } catch (err) {
      await pg.close({ timeout: 1 }).catch(() => {});
      throw new FatalError(`cannot open database ${redactUrl(url)}: ${(err as Error).message}`);
    }
    const storage = pgStorage(pg);
    const close = async () => {
      await storage.notifications.close();
      await pg.close({ timeout: 5 });
    };
    return { storage, pg, describe: `PostgreSQL ${redactUrl(url)}`, checkpointInBackground: () => {}, close };
  }
  const memory = config.dataDir === ":memory:";
  const file = memory ? ":memory:" : join(config.dataDir, "automation.db");
  const sqlite = openSqlite(file, migrations, config.busyTimeoutMs);
  opts.onSqlite?.(sqlite);
  const storage = sqliteStorage(sqlite);
  let checkpointer: Checkpointer | undefined;
  const close = async () => {
    await storage.notifications.close();
    // The thread's connection first: the main one then closes last, which checkpoints and removes the log.
    await checkpointer?.stop();
    sqlite.close();
  };
  const checkpointInBackground = (log?: Logger) => {
    checkpointer ??= startCheckpointer(sqlite, { log });
  };
  return { storage, sqlite, describe: memory ? "SQLite in memory" : `SQLite ${resolve(file)}`, checkpointInBackground, close };
}
