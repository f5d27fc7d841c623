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
