import { and, eq, gt, lte, sql } from "drizzle-orm";
import type { OrdersDb } from "../db/open";
import { tokens, users } from "../db/schema";
import type { Caller } from "../users/model";

export class TokenStore {
  private readonly byHash;
  /**
   * hash → the token's user and expiry. Safe to keep: a token row and a user's id, name and type never
   * change (there is no revocation), and expiry is checked on every use.
   */
  private readonly cache = new Map<string, { user: Caller; expiresAt: number }>();

  constructor(private readonly db: OrdersDb) {
    // A primary-key read on the token hash; made once per token and process thanks to the cache.
    this.byHash = db
      .select({ id: users.id, username: users.username, userType: users.userType, expiresAt: tokens.expiresAt })
      .from(tokens)
      .innerJoin(users, eq(users.id, tokens.userId))
      .where(and(eq(tokens.hash, sql.placeholder("hash")), gt(tokens.expiresAt, sql.placeholder("now"))))
      .prepare();
  }

  insert(hash: string, userId: number, at: number, expiresAt: number): void {
    this.db.insert(tokens).values({ hash, userId, createdAt: at, expiresAt }).run();
  }

  /** The live token's user, or undefined for unknown or expired tokens. */
  userFor(hash: string, now: number): Caller | undefined {
    const hit = this.cache.get(hash);
    if (hit) return hit.expiresAt > now ? hit.user : undefined;
    const row = this.byHash.get({ hash, now });
    if (!row) return undefined;
    const { expiresAt, ...user } = row;
    if (this.cache.size >= 10_000) this.cache.clear();
    this.cache.set(hash, { user, expiresAt });
    return user;
  }

  deleteExpired(now: number): number {
    return this.db.delete(tokens).where(lte(tokens.expiresAt, now)).returning({ hash: tokens.hash }).all().length;
  }
}
