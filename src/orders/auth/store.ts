// What authentication needs from storage (one implementation per backend). Both live in the database,
// so every instance on it sees the same tokens and the same failed-login counts.
import type { Caller } from "../users/model";

export interface TokenStore {
  /** Stores a token's hash. */
  insert(hash: string, userId: number, at: number, expiresAt: number): Promise<void>;
  /**
   * The live token's user, or undefined for unknown, revoked (row deleted) or expired tokens. SQLite
   * answers synchronously (no promise on an authenticated request's path), PostgreSQL with a promise.
   */
  userFor(hash: string, now: number): Caller | undefined | Promise<Caller | undefined>;
  deleteExpired(now: number): Promise<number>;
}

export interface ThrottleStore {
  /**
   * Starts a login attempt for `key` at `now`: counts it as a failure at once and answers 0, or, when
   * `max` failures already sit inside the window, answers the ms until the oldest of those leaves it
   * (nothing recorded). Atomic across instances.
   */
  begin(key: string, now: number, max: number, windowMs: number): Promise<number>;
  /** A correct login clears the key's failures. */
  reset(key: string): Promise<void>;
  /** Drops failures older than `before` (they no longer count). */
  sweep(before: number): Promise<void>;
}
