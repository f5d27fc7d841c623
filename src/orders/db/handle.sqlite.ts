// The drizzle handle the SQLite store implementations take. Its own module, so the stores import a type
// and not the module that builds the backend out of them (which would close a circle).
import type { Database } from "bun:sqlite";
import type { BunSQLiteDatabase } from "drizzle-orm/bun-sqlite";
import type * as schema from "./schema.sqlite";

export type OrdersDb = BunSQLiteDatabase<typeof schema> & { $client: Database };
