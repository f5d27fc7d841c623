// What every PostgreSQL store shares: rows as the store interfaces hand them out (times as the ISO
// strings SQLite holds, bigint counts as numbers), JSON bound as text, and the unique-violation test.
import type { SQL } from "bun";

/** A Bun SQL client, or a transaction of one: stores run the same statements on either. */
export type Pg = SQL;

/** Timestamps come back as Date: the interfaces carry ISO strings (milliseconds, `Z`), as SQLite stores them. */
export function plain<T>(row: Record<string, unknown>): T {
  for (const k in row) {
    const v = row[k];
    if (v instanceof Date) row[k] = v.toISOString();
  }
  return row as T;
}

export function plainRows<T>(rows: Record<string, unknown>[]): T[] {
  return rows.map((r) => plain<T>(r));
}

/** A bigint (COUNT, SUM) as Bun returns it, a string, as a number. */
export const int = (v: unknown): number => (v === null || v === undefined ? 0 : Number(v));

/** PostgreSQL's unique_violation, optionally on one constraint/index. */
export function isUniqueViolation(err: unknown, constraint?: string): boolean {
  const e = err as { errno?: string; code?: string; constraint?: string; message?: string };
  const code = e?.errno ?? e?.code;
  if (code !== "23505" && !/duplicate key value/.test(e?.message ?? "")) return false;
  return !constraint || e.constraint === constraint || (e.message ?? "").includes(constraint);
}
