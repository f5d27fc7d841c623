// The drizzle handle the PostgreSQL store implementations take. Its own module, so the stores import a
// type and not the module that builds the backend out of them (which would close a circle).
import type { SQL } from "bun";
import type { BunSQLQueryResultHKT } from "drizzle-orm/bun-sql/session";
import type { PgDatabase } from "drizzle-orm/pg-core";
import type * as schema from "./schema.pg";

/** The pool's drizzle handle, or a transaction on it (see `inTransaction` in pg.ts): stores run over either. */
export type PgOrdersDb = PgDatabase<BunSQLQueryResultHKT, typeof schema> & { $client: SQL };
