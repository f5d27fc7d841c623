import type { Database } from "bun:sqlite";
import { drizzle, type BunSQLiteDatabase } from "drizzle-orm/bun-sqlite";
import { orderMigrations } from "../../../db/orders";
import { openSqlite } from "../../kernel/db";
import * as schema from "./schema";

export type OrdersDb = BunSQLiteDatabase<typeof schema> & { $client: Database };

/** Opens the order database (file or `:memory:`) with its embedded migrations applied. */
export function openOrdersDb(path: string): OrdersDb {
  return drizzle(openSqlite(path, orderMigrations), { schema });
}

/** Throws unless the database answers a query (the health check). */
export function pingOrdersDb(db: OrdersDb): void {
  db.$client.query("SELECT 1").get();
}

/** Folds the WAL back into the main file and closes it, so a stopped server leaves one clean file. */
export function closeOrdersDb(db: OrdersDb): void {
  db.$client.exec("PRAGMA wal_checkpoint(TRUNCATE)");
  db.$client.close();
}
