import type { Database } from "bun:sqlite";
import { drizzle } from "drizzle-orm/bun-sqlite";
import { orderMigrations } from "../../../db/orders";
import { openSqlite } from "../../kernel/db";
import { SqliteThrottleStore, SqliteTokenStore } from "../auth/store.sqlite";
import { SqliteOrderStore } from "../orders/store.sqlite";
import { SqliteUserStore } from "../users/store.sqlite";
import type { OrdersDb } from "./handle.sqlite";
import * as schema from "./schema.sqlite";
import type { OrderStorage } from "./storage";
import { DataVersion } from "../../kernel/data-version";

/** Opens the order database (file or `:memory:`) with its embedded migrations applied. */
export function openOrdersDb(path: string): OrdersDb {
  return drizzle(openSqlite(path, orderMigrations), { schema });
}

/** The SQLite backend: one connection, stores over it, a data version that sees other processes' commits. */
export function sqliteStorage(db: OrdersDb): OrderStorage & { db: OrdersDb } {
  const version = new DataVersion(db.$client);
  const users = new SqliteUserStore(db, version);
  const orders = new SqliteOrderStore(db, version);
  const pinged = db.$client.prepare("SELECT 1");
  return {
    backend: "sqlite",
    db,
    users,
    orders,
    tokens: new SqliteTokenStore(db, version),
    throttle: new SqliteThrottleStore(db),
    atomically: (fn) => atomically(db.$client, () => fn({ users, orders })).finally(() => version.bump()),
    // Synchronous: the health check of an embedded database needs no turn of the event loop.
    ping() {
      pinged.get();
    },
    async query<T>(text: string): Promise<T[]> {
      return db.$client.query(text).all() as T[];
    },
    async close() {
      // Folds the WAL back into the main file, so a stopped server leaves one clean file.
      db.$client.exec("PRAGMA wal_checkpoint(TRUNCATE)");
      db.$client.close();
    },
  };
}

/**
 * One transaction around an async `fn` on the single connection; the stores' own `db.transaction` calls
 * inside become savepoints (bun:sqlite nests when a transaction is open). Every statement on the
 * connection meanwhile joins this transaction, so nothing else may run one: `fn` must not yield to the
 * event loop (the SQLite stores are synchronous, so awaiting them only chains microtasks, and no timer,
 * socket or request callback can run before the commit). An immediate that fires before the end proves
 * `fn` yielded: the transaction is rolled back then rather than committing whatever joined it.
 */
async function atomically<T>(sqlite: Database, fn: () => Promise<T>): Promise<T> {
  sqlite.exec("BEGIN IMMEDIATE");
  let yielded = false;
  const watch = setImmediate(() => {
    yielded = true;
  });
  try {
    const result = await fn();
    if (yielded) throw new Error("atomically: fn yielded to the event loop inside a SQLite transaction");
    sqlite.exec("COMMIT");
    return result;
  } catch (err) {
    if (sqlite.inTransaction) sqlite.exec("ROLLBACK");
    throw err;
  } finally {
    clearImmediate(watch);
  }
}
