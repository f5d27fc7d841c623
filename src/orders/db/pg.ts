// The PostgreSQL backend: a Bun SQL pool under drizzle, migrations applied at start under an advisory
// lock (instances starting together migrate once), and a data version every instance's caches share.
import { SQL } from "bun";
import type { ExtractTablesWithRelations } from "drizzle-orm";
import { drizzle } from "drizzle-orm/bun-sql";
import type { BunSQLQueryResultHKT } from "drizzle-orm/bun-sql/session";
import type { PgTransaction } from "drizzle-orm/pg-core";
import { orderPgMigrations } from "../../../db/orders/pg";
import { migratePg, PG_POOL_MAX, redactUrl } from "../../kernel/pg";
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

/** The order server's migration series: its lock and its table (`__migrations`, as since the start). */
const SERIES = { lock: 7_242_015_001, table: "__migrations", migrations: orderPgMigrations };

export interface PgOptions {
  /** Pool size per instance. */
  max?: number;
}

/** Connects, migrates (under the advisory lock) and returns the stores. A bad URL or server is one FatalError line. */
export async function openPgStorage(url: string, opts: PgOptions = {}): Promise<OrderStorage> {
  const client = new SQL({ url, max: opts.max ?? PG_POOL_MAX, connectionTimeout: 10 });
  try {
    await migratePg(client, SERIES);
  } catch (err) {
    await client.close().catch(() => {});
    throw new FatalError(`cannot open database ${redactUrl(url)}: ${(err as Error).message}`);
  }
  const db = drizzle({ client, schema });
  const version = new PgDataVersion(client);
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
