// What inbound e-mail keeps in the database, behind one small async interface so a PostgreSQL
// implementation can sit beside the SQLite one (db/sqlite/inbound.ts, db/pg/inbound.ts). This module imports no implementation.
// The exactly-once rule itself is not here: it is the unique `runs.dedupe_key`, written in the run's
// own insert transaction (runs/service.ts), so a message's run, its files and its key commit together.

/** An automation's address token and whom it belongs to. */
export interface InboundAddress {
  tenantId: string;
  automationId: string;
  token: string;
}

export interface InboundStore {
  /** The automation's address token, minted (`mint()`) and stored on the first call; the same ever after. */
  token(tenantId: string, automationId: string, mint: () => string, at: string): Promise<string>;
  /** Who owns an address token; undefined for a token no automation has. */
  byToken(token: string): Promise<InboundAddress | undefined>;
  /**
   * Counts one message from `sender` in `minute` (epoch minutes) and resolves to the count of
   * that minute so far, this one included. One atomic upsert: every instance sees the same count.
   */
  countSender(sender: string, minute: number): Promise<number>;
  /** The run a delivery with this dedupe key started, if one was committed. */
  runOf(dedupeKey: string): Promise<string | undefined>;
}
