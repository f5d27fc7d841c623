// One drizzle handle per SQLite connection, so stores share it without each wrapping the connection.
import type { Database } from "bun:sqlite";
import { drizzle, type BunSQLiteDatabase } from "drizzle-orm/bun-sqlite";

export type Db = BunSQLiteDatabase;
const handles = new WeakMap<Database, Db>();

export function dbOf(sqlite: Database): Db {
  let db = handles.get(sqlite);
  if (!db) {
    db = drizzle(sqlite);
    handles.set(sqlite, db);
  }
  return db;
}
