import type { Database } from "bun:sqlite";

/**
 * A number that changes whenever the data may have changed: our own writes bump a counter, and
 * SQLite's `PRAGMA data_version` moves when another connection (another server on the same file)
 * commits. Read caches compare it before trusting an entry.
 */
export class DataVersion {
  private local = 0;
  private external: number | undefined;
  private readonly pragma;

  constructor(sqlite: Database) {
    this.pragma = sqlite.prepare<{ data_version: number }, []>("PRAGMA data_version");
  }

  bump(): void {
    this.local++;
  }

  /**
   * Our own writes count at once. `data_version` costs a few µs per read (a quarter of the list
   * endpoint's throughput if read twice per request), so it is read once per event-loop turn and
   * forgotten by an immediate, which Bun runs at the start of the next tick, before it polls sockets
   * again. That is exact for HTTP clients: every request served in this turn arrived in the poll
   * before the read, so any commit its client could have seen finished before the read too; a request
   * sent after seeing a later commit arrives in a later poll and reads afresh. (Code calling
   * `app.handle` directly, with a second connection in the same process, must let a turn pass after
   * writing through it: tests do.)
   */
  current(): number {
    if (this.external === undefined) {
      this.external = this.pragma.get()!.data_version;
      setImmediate(this.forget);
    }
    return this.external * 1_000_000_000 + this.local;
  }

  private readonly forget = () => {
    this.external = undefined;
  };
}
