import type { Database } from "bun:sqlite";
import { drizzle, type BunSQLiteDatabase } from "drizzle-orm/bun-sqlite";
import { orderMigrations } from "../../../db/orders";
import { openSqlite } from "../../kernel/db";
import { SqliteThrottleStore, SqliteTokenStore } from "../auth/store.sqlite";
import { SqliteOrderStore } from "../orders/store.sqlite";
import { SqliteUserStore } from "../users/store.sqlite";
import * as schema from "./schema.sqlite";
import type { OrderStorage } from "./storage";
import { DataVersion } from "./version.sqlite";

export type OrdersDb = BunSQLiteDatabase<typeof schema> & { $client: Database };

/** Opens the order database (file or `:memory:`) with its embedded migrations applied. */
export function openOrdersDb(path: string): OrdersDb {
  return drizzle(openSqlite(path, orderMigrations), { schema });
}

/** The SQLite backend: one connection, stores over it, a data version that sees other processes' commits. */
export function sqliteStorage(db: OrdersDb): OrderStorage & { db: OrdersDb } {
  const version = new DataVersion(db.$client);
  return {
    backend: "sqlite",
    db,
    users: new SqliteUserStore(db, version),
    orders: new SqliteOrderStore(db, version),
    tokens: new SqliteTokenStore(db, version),
    throttle: new SqliteThrottleStore(db),
    async ping() {
      db.$client.query("SELECT 1").get();
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
