// The two backends the store contract tests run on: SQLite in memory, and a fresh database on the test
// process's PostgreSQL server (test/support/postgres.ts). Every store test asks both the same questions.
import { SQL } from "bun";
import { migrations } from "../../../db/automation/index";
import { migrateAutomationPg } from "../../../src/automation/db/pg-migrate";
import { pgStorage } from "../../../src/automation/db/pg/index";
import { sqliteStorage } from "../../../src/automation/db/sqlite/index";
import type { AutomationStorage } from "../../../src/automation/db/storage";
import { openSqlite } from "../../../src/kernel/db";
import { freshPostgresDb } from "../../support/postgres";

export interface Backend {
  storage: AutomationStorage;
  /** Another storage over the same database, as a second server process would hold (its own journal batches). */
  peer(): AutomationStorage;
  /** One statement with `?` placeholders, for seeding rows of other features. */
  exec(sql: string, args: unknown[]): Promise<void>;
  /** Rows in `table`. */
  count(table: string): Promise<number>;
  /** PostgreSQL only: the pool the stores use. */
  pg?: SQL;
  close(): Promise<void>;
}

export async function sqliteBackend(): Promise<Backend> {
  const db = openSqlite(":memory:", migrations);
  return {
    storage: sqliteStorage(db),
    peer: () => sqliteStorage(db),
    exec: async (sql, args) => void db.query(sql).run(...(args as never[])),
    count: async (table) => (db.query(`SELECT count(*) AS n FROM ${table}`).get() as { n: number }).n,
    close: async () => db.close(),
  };
}

export async function pgBackend(): Promise<Backend> {
  const url = await freshPostgresDb();
  await migrateAutomationPg(url);
  const pg = new SQL({ url, max: 10 });
  const storage = pgStorage(pg);
  const peers: AutomationStorage[] = [];
  return {
    storage,
    pg,
    peer: () => {
      const p = pgStorage(pg);
      peers.push(p);
      return p;
    },
    exec: async (sql, args) => {
      let n = 0;
      await pg.unsafe(sql.replace(/\?/g, () => `$${++n}`), args as never[]);
    },
    count: async (table) => Number((await pg.unsafe(`SELECT count(*) AS n FROM ${table}`))[0].n),
    close: async () => {
      // Listening connections (key lookups subscribe to revocations) end before the pool.
      for (const s of [storage, ...peers]) await s.notifications.close();
      await pg.close();
    },
  };
}

/**
 * `onBoth(body)` for a test file: opens both backends (into `opened`, which the file closes after its
 * tests), prepares each with `seed`, and returns what `body` answered on each, for a cross-backend comparison.
 */
export function bothIn(opened: Backend[], seed?: (b: Backend) => Promise<void>) {
  return async <T>(body: (b: Backend) => Promise<T>): Promise<{ sqlite: T; postgres: T }> => {
    const s = await sqliteBackend();
    const p = await pgBackend();
    opened.push(s, p);
    for (const b of [s, p]) await seed?.(b);
    return { sqlite: await body(s), postgres: await body(p) };
  };
}
