// Key material every instance on one database shares (migration 0020_shared_state): what
// key-material.ts needs from storage. One async interface; db/sqlite/secrets.ts and db/pg/secrets.ts
// implement it. This module imports no implementation.

/** A row of key material the instances share: the value (null when the operator holds it) and its fingerprint. */
export interface SharedSecret {
  value: string | null;
  fingerprint: string;
}

/** Key material created once for every instance of the database. */
export interface SharedSecretStore {
  /** The stored `name`, or `first` stored as it when there was none (racing callers all get the one stored). */
  claim(name: string, first: SharedSecret, at: string): Promise<SharedSecret>;
}
