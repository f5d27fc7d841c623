// Times every statement run on an SQLite connection into the kernel's `db_query_duration_seconds`.
import type { Database } from "bun:sqlite";
import type { Metrics } from "../../../kernel/metrics";

const STATEMENT_METHODS = ["all", "get", "run", "values"] as const;

/**
 * Times every statement run on `sqlite` into `db_query_duration_seconds{op="all|get|run|values"}`:
 * prepared statements (drizzle's and the stores' own) get timed methods once, when first handed out.
 */
export function timeStatements(sqlite: Database, kernel: Metrics): void {
  const done = new WeakSet<object>();
  const timedStatement = <S extends object>(stmt: S): S => {
    if (done.has(stmt)) return stmt;
    done.add(stmt);
    const target = stmt as unknown as Record<string, (...args: unknown[]) => unknown>;
    for (const op of STATEMENT_METHODS) {
      const original = target[op];
      if (typeof original !== "function") continue;
      target[op] = (...args: unknown[]) => {
        const t0 = performance.now();
        try {
          return original.apply(stmt, args);
        } finally {
          kernel.dbDuration.observe({ op }, (performance.now() - t0) / 1000);
        }
      };
    }
    return stmt;
  };
  const query = sqlite.query.bind(sqlite);
  const prepare = sqlite.prepare.bind(sqlite);
  sqlite.query = ((sql: string) => timedStatement(query(sql))) as typeof sqlite.query;
  sqlite.prepare = ((sql: string, params?: never) => timedStatement(prepare(sql, params))) as typeof sqlite.prepare;
}
