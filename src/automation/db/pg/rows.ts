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

/**
 * Reads asked in one event-loop turn with the same key share one query, sent at the end of that turn:
 * after every one of them was asked, so each still sees everything committed before it asked. Under
 * load (many requests naming one automation) this saves the pool a round trip per request. Each caller
 * gets its own `copy` of the answer.
 */
export function sharedPerTurn<V>(load: (key: string) => Promise<V>, copy: (v: V) => V): (key: string) => Promise<V> {
  let asked = new Map<string, { resolve(v: V): void; reject(err: unknown): void }[]>();
  const send = () => {
    const batch = asked;
    asked = new Map();
    for (const [key, waiters] of batch) {
      load(key).then(
        (v) => waiters.forEach((w, i) => w.resolve(i === 0 ? v : copy(v))),
        (err) => waiters.forEach((w) => w.reject(err)),
      );
    }
  };
  return (key) =>
    new Promise<V>((resolve, reject) => {
      if (asked.size === 0) setImmediate(send);
      const waiters = asked.get(key);
      if (waiters) waiters.push({ resolve, reject });
      else asked.set(key, [{ resolve, reject }]);
    });
}
