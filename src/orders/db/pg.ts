// The PostgreSQL backend: a Bun SQL pool under drizzle, migrations applied at start under an advisory
// lock (instances starting together migrate once), and a data version every instance's caches share.
import { SQL } from "bun";
import type { ExtractTablesWithRelations } from "drizzle-orm";
import { drizzle } from "drizzle-orm/bun-sql";
import type { BunSQLQueryResultHKT } from "drizzle-orm/bun-sql/session";
import type { PgTransaction } from "drizzle-orm/pg-core";
import { orderPgMigrations } from "../../../db/orders/pg";
import type { Migration } from "../../kernel/db";
import { FatalError } from "../../kernel/errors";
import { PgThrottleStore, PgTokenStore } from "../auth/store.pg";
import { PgOrderStore } from "../orders/store.pg";
import { PgUserStore } from "../users/store.pg";
import type { PgOrdersDb } from "./handle.pg";
import * as schema from "./schema.pg";
import type { OrderStorage } from "./storage";
import { PgDataVersion } from "./version.pg";

/**
 * A drizzle transaction as a PgOrdersDb: its `$client` is the Bun SQL transaction it runs on (drizzle
 * keeps that on the transaction's session), so the stores' raw queries join the transaction too.
 */
function inTransaction(tx: PgTransaction<BunSQLQueryResultHKT, typeof schema, ExtractTablesWithRelations<typeof schema>>): PgOrdersDb {
  const client = (tx as unknown as { session: { client?: SQL } }).session.client;
  if (!client) throw new Error("drizzle's transaction has no session client: check drizzle-orm's bun-sql session");
  return Object.assign(tx, { $client: client });
}

/** Any fixed 64-bit number: the advisory lock migrations run under, on every instance. */
const MIGRATION_LOCK = 7_242_015_001;

/** The URL without its password, for messages and logs. */
export function redactUrl(url: string): string {
  try {
    const u = new URL(url);
    if (u.password) u.password = "***";
    return u.href;
  } catch {
    return "(unparsable URL)";
  }
}

/** Applies the migrations not applied yet, each in its own transaction, holding the advisory lock throughout. */
export async function migratePg(client: SQL, migrations: Migration[]): Promise<string[]> {
  const conn = await client.reserve();
  const applied: string[] = [];
  try {
    await conn`SELECT pg_advisory_lock(${MIGRATION_LOCK})`;
    try {
      await conn`CREATE TABLE IF NOT EXISTS __migrations (name text PRIMARY KEY, applied_at text NOT NULL)`;
      const done = new Set((await conn<{ name: string }[]>`SELECT name FROM __migrations`).map((r) => r.name));
      for (const m of migrations) {
        if (done.has(m.name)) continue;
        await conn.begin(async (tx) => {
          for (const stmt of m.sql.split("--> statement-breakpoint")) if (stmt.trim()) await tx.unsafe(stmt);
          await tx`INSERT INTO __migrations (name, applied_at) VALUES (${m.name}, ${new Date().toISOString()})`;
        });
        applied.push(m.name);
      }
    } finally {
      await conn`SELECT pg_advisory_unlock(${MIGRATION_LOCK})`;
    }
  } finally {
    conn.release();
  }
  return applied;
}

/** Connections in the pool unless the caller asks for another size. */
export const PG_POOL_MAX = 10;

export interface PgOptions {
  /** Pool size per instance. */
  max?: number;
}

/** Connects, migrates (under the advisory lock) and returns the stores. A bad URL or server is one FatalError line. */
export async function openPgStorage(url: string, opts: PgOptions = {}): Promise<OrderStorage> {
  const client = new SQL({ url, max: opts.max ?? PG_POOL_MAX, connectionTimeout: 10 });
  try {
    await migratePg(client, orderPgMigrations);
  } catch (err) {
    await client.close().catch(() => {});
    throw new FatalError(`cannot open database ${redactUrl(url)}: ${(err as Error).message}`);
  }
  const db = drizzle({ client, schema });
  const version = new PgDataVersion(db);
  return {
    backend: "postgres",
    users: new PgUserStore(db),
    orders: new PgOrderStore(db, version),
    tokens: new PgTokenStore(db, version),
    throttle: new PgThrottleStore(db),
    // Stores over a drizzle transaction: their own `transaction` calls become savepoints. Two instances
    // seeding together serialize on the users' unique index: the second waits for the first to finish.
    atomically: (fn) =>
      db.transaction((drizzleTx) => {
        const tx = inTransaction(drizzleTx);
        return fn({ users: new PgUserStore(tx), orders: new PgOrderStore(tx, version) });
      }),
    async ping() {
      await client`SELECT 1`;
    },
    async query<T>(text: string): Promise<T[]> {
      return [...(await client.unsafe(text))] as T[];
    },
    async close() {
      await client.close({ timeout: 5 });
    },
  };
}
