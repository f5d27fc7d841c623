// The automation server's PostgreSQL schema: its migration series (db/automation/pg/) applied under an
// advisory lock of its own, into a table of its own, so it can share a database with the order server.
import { SQL } from "bun";
import { automationPgMigrations } from "../../../db/automation/pg/index";
import { FatalError } from "../../kernel/errors";
import { migratePg, PG_POOL_MAX, redactUrl } from "../../kernel/pg";

const SERIES = { lock: 7_242_015_021, table: "automation_migrations", migrations: automationPgMigrations };

/** Applies what is pending over an open pool (a server starting on PostgreSQL). */
export function migrateAutomationClient(client: SQL): Promise<string[]> {
  return migratePg(client, SERIES);
}

/** Connects to `url`, applies what is pending and closes; a bad URL or server is one FatalError line. */
export async function migrateAutomationPg(url: string, pool = PG_POOL_MAX): Promise<string[]> {
  const client = new SQL({ url, max: Math.max(1, pool), connectionTimeout: 10 });
  try {
    return await migratePg(client, SERIES);
  } catch (err) {
    throw new FatalError(`cannot migrate database ${redactUrl(url)}: ${(err as Error).message}`);
  } finally {
    await client.close({ timeout: 5 }).catch(() => {});
  }
}
