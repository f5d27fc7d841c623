// Picks the order server's storage backend from the --db value: the one module that knows both.
import { openPgStorage, type PgOptions } from "./pg";
import { openOrdersDb, sqliteStorage } from "./sqlite";
import { isPostgresUrl } from "../../kernel/pg";
import type { OrderStorage } from "./storage";

/** Opens the storage `target` names, migrated: a PostgreSQL URL, or a SQLite file (`:memory:` allowed). */
export async function openOrderStorage(target: string, pg: PgOptions = {}): Promise<OrderStorage> {
  return isPostgresUrl(target) ? openPgStorage(target, pg) : sqliteStorage(openOrdersDb(target));
}
