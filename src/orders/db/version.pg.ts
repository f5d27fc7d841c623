import type { PgOrdersDb } from "./handle.pg";
import * as schema from "./schema.pg";

/**
 * The data version as this instance sees it: the `data_version` row, read at most once per event-loop
 * turn and shared by the requests of that turn. Exact for HTTP clients: every request served with a
 * reading arrived before the reading was sent, so any commit its client had seen is in it (the same
 * argument as SQLite's DataVersion).
 */
export class PgDataVersion {
  private pending: Promise<number> | undefined;

  constructor(private readonly db: PgOrdersDb) {}

  current(): Promise<number> {
    if (!this.pending) {
      const p = this.db
        .select({ v: schema.dataVersion.v })
        .from(schema.dataVersion)
        .then((rows) => rows[0]?.v ?? 0);
      this.pending = p;
      const forget = () => {
        if (this.pending === p) this.pending = undefined;
      };
      setImmediate(forget);
      p.catch(forget);
    }
    return this.pending;
  }
}
