import type { Database } from "bun:sqlite";

/**
 * A number that changes whenever the data may have changed: our own writes bump a counter, and
 * SQLite's `PRAGMA data_version` moves when another connection (another server on the same file)
 * commits. Read caches compare it before trusting an entry.
 */
export class DataVersion {
  private local = 0;
  private readonly pragma;

  constructor(sqlite: Database) {
    this.pragma = sqlite.prepare<{ data_version: number }, []>("PRAGMA data_version");
  }

  bump(): void {
    this.local++;
  }

  /**
   * Read on every call (a few µs): remembering it for a while, even one event-loop turn, would let a
   * request that follows another process's commit be answered from before it.
   */
  current(): number {
    return this.pragma.get()!.data_version * 1_000_000_000 + this.local;
  }
}
