import type { SQL } from "bun";

/**
 * The data version as this instance sees it: the `data_version` row, read at most once per event-loop
 * turn and shared by the requests of that turn. Exact for HTTP clients: every request served with a
 * reading arrived before the reading was sent, so any commit its client had seen is in it (the same
 * argument as SQLite's DataVersion). A plain statement on the pool, not a drizzle query: building the
 * query object cost ~8 % of a cached page's CPU (a profile, issue 42).
 */
export class PgDataVersion {
  private pending: Promise<number> | undefined;

  constructor(private readonly client: SQL) {}

  current(): Promise<number> {
    if (!this.pending) {
      const p = this.client`SELECT v FROM data_version WHERE id = 1`.then((rows: { v: number | string }[]) => Number(rows[0]?.v ?? 0));
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
