// What both servers need from PostgreSQL before any store: the URL test, a redacted URL for messages,
// the default pool size, and migrations applied under an advisory lock (instances starting together
// migrate once: the second waits for the lock, then finds nothing left to apply).
import type { SQL } from "bun";
import type { Migration } from "./db";

/** A `postgres://` (or `postgresql://`) URL selects PostgreSQL. */
export function isPostgresUrl(target: string): boolean {
  return /^postgres(ql)?:\/\//i.test(target);
}

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

/** Connections in a server's pool unless the operator asks for another size (`--db-pool`). */
export const PG_POOL_MAX = 10;

export interface MigrationSeries {
  /** Any fixed 64-bit number, the same on every instance of one server. */
  lock: number;
  /** The table recording applied migrations. */
  table: string;
  migrations: Migration[];
}

/** Applies the migrations not applied yet, each in its own transaction, holding the advisory lock throughout. */
export async function migratePg(client: SQL, series: MigrationSeries): Promise<string[]> {
  if (!/^[a-z_][a-z0-9_]*$/.test(series.table)) throw new Error(`bad migrations table name ${series.table}`);
  const conn = await client.reserve();
  const applied: string[] = [];
  try {
    await conn`SELECT pg_advisory_lock(${series.lock})`;
    try {
      await conn.unsafe(`CREATE TABLE IF NOT EXISTS ${series.table} (name text PRIMARY KEY, applied_at text NOT NULL)`);
      const done = new Set((await conn.unsafe(`SELECT name FROM ${series.table}`) as { name: string }[]).map((r) => r.name));
      for (const m of series.migrations) {
        if (done.has(m.name)) continue;
        await conn.begin(async (tx) => {
          for (const stmt of m.sql.split("--> statement-breakpoint")) if (stmt.trim()) await tx.unsafe(stmt);
          await tx.unsafe(`INSERT INTO ${series.table} (name, applied_at) VALUES ($1, $2)`, [m.name, new Date().toISOString()]);
        });
        applied.push(m.name);
      }
    } finally {
      await conn`SELECT pg_advisory_unlock(${series.lock})`;
    }
  } finally {
    conn.release();
  }
  return applied;
}

/**
 * True when `error` (or a cause it wraps: drizzle wraps the driver's error) says the database cannot be
 * reached right now rather than that the query was wrong: Bun SQL's connection errors, PostgreSQL's
 * connection-exception (08xxx) and shutdown/restart (57P01-57P03) states, and socket errors.
 */
export function databaseUnavailable(error: unknown): boolean {
  for (let e = error, depth = 0; e && typeof e === "object" && depth < 5; e = (e as { cause?: unknown }).cause, depth++) {
    const { code, errno } = e as { code?: unknown; errno?: unknown };
    if (typeof code === "string" && (/^ERR_POSTGRES_(CONNECTION_|IDLE_TIMEOUT|LIFETIME_TIMEOUT)/.test(code) || /^(ECONNREFUSED|ECONNRESET|EPIPE|ETIMEDOUT)$/.test(code))) return true;
    if (typeof errno === "string" && /^(08|57P0[123])/.test(errno)) return true;
  }
  return false;
}
