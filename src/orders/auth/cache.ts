import type { Caller } from "../users/model";

interface Cached {
  user: Caller;
  expiresAt: number;
  /** The data version the row was read at: any later commit (a token row deleted to revoke it, here or by another instance) forces a re-read. */
  version: number;
}

/** hash → the token's user and expiry, valid while the data version stands still; expiry is checked on every use. */
export class TokenCache {
  private readonly entries = new Map<string, Cached>();

  /** The cached answer: a user, `null` for a known but expired token, undefined when the database must be asked. */
  lookup(hash: string, now: number, version: number): Caller | null | undefined {
    const hit = this.entries.get(hash);
    if (!hit || hit.version !== version) return undefined;
    return hit.expiresAt > now ? hit.user : null;
  }

  /** Keeps what the database answered (a live token's row, or nothing) and returns the user. */
  remember(hash: string, version: number, row: (Caller & { expiresAt: number }) | undefined): Caller | undefined {
    if (!row) {
      this.entries.delete(hash);
      return undefined;
    }
    const { expiresAt, ...user } = row;
    if (this.entries.size >= 10_000) this.entries.clear();
    this.entries.set(hash, { user, expiresAt, version });
    return user;
  }
}
