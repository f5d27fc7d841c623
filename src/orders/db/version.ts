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
   * Reading `data_version` takes a read lock (~10 µs), so it is read once per event-loop turn: requests
   * handled in the same turn arrived together and may share one view of other processes' commits. Our
   * own writes count at once.
   */
  current(): number {
    if (this.external === undefined) {
      this.external = this.pragma.get()!.data_version;
      setImmediate(this.forget);
    }
    return this.external * 1_000_000_000 + this.local;
  }

  private external: number | undefined;
  private readonly forget = () => {
    this.external = undefined;
  };
}
