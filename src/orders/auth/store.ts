import { and, eq, gt, lte, sql } from "drizzle-orm";
import type { OrdersDb } from "../db/open";
import { tokens, users } from "../db/schema";
import type { DataVersion } from "../db/version";
import type { Caller } from "../users/model";

interface Cached {
  user: Caller;
  expiresAt: number;
  /** The data version the row was read at: any later commit (a token row deleted to revoke it, here or by another process) forces a re-read. */
  version: number;
}

export class TokenStore {
  private readonly byHash;
  /** hash → the token's user and expiry, valid while the data version stands still; expiry is checked on every use. */
  private readonly cache = new Map<string, Cached>();

  constructor(
    private readonly db: OrdersDb,
    private readonly version: DataVersion,
  ) {
    // A primary-key read on the token hash; a read-only load makes it once per token and process.
    this.byHash = db
      .select({ id: users.id, username: users.username, userType: users.userType, expiresAt: tokens.expiresAt })
      .from(tokens)
      .innerJoin(users, eq(users.id, tokens.userId))
      .where(and(eq(tokens.hash, sql.placeholder("hash")), gt(tokens.expiresAt, sql.placeholder("now"))))
      .prepare();
  }

  /** A new token changes no cached answer (a hash nobody has presented yet), so it moves no version. */
  insert(hash: string, userId: number, at: number, expiresAt: number): void {
    this.db.insert(tokens).values({ hash, userId, createdAt: at, expiresAt }).run();
  }

  /** The live token's user, or undefined for unknown, revoked (row deleted) or expired tokens. */
  userFor(hash: string, now: number): Caller | undefined {
    const version = this.version.current();
    const hit = this.cache.get(hash);
    if (hit && hit.version === version) return hit.expiresAt > now ? hit.user : undefined;
    const row = this.byHash.get({ hash, now });
    if (!row) {
      this.cache.delete(hash);
      return undefined;
    }
    const { expiresAt, ...user } = row;
    if (this.cache.size >= 10_000) this.cache.clear();
    this.cache.set(hash, { user, expiresAt, version });
    return user;
  }

  deleteExpired(now: number): number {
    try {
      return this.db.delete(tokens).where(lte(tokens.expiresAt, now)).returning({ hash: tokens.hash }).all().length;
    } finally {
      this.version.bump();
    }
  }
}
