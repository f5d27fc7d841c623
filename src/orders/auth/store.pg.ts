import { and, desc, eq, gt, lte, sql } from "drizzle-orm";
import type { PgOrdersDb } from "../db/handle.pg";
import type { PgDataVersion } from "../db/version.pg";
import { loginFailures, tokens, users } from "../db/schema.pg";
import type { Caller } from "../users/model";
import { TokenCache } from "./cache";
import type { ThrottleStore, TokenStore } from "./store";

export class PgTokenStore implements TokenStore {
  private readonly cache = new TokenCache();

  constructor(
    private readonly db: PgOrdersDb,
    private readonly version: PgDataVersion,
  ) {}

  async insert(hash: string, userId: number, at: number, expiresAt: number): Promise<void> {
    await this.db.insert(tokens).values({ hash, userId, createdAt: at, expiresAt });
  }

  async userFor(hash: string, now: number): Promise<Caller | undefined> {
    // Deleting a token row (revocation, on any instance or by an operator) moves the data version, so
    // a cached answer is only trusted while the version stands still.
    const version = await this.version.current();
    const hit = this.cache.lookup(hash, now, version);
    if (hit !== undefined) return hit ?? undefined;
    const [row] = await this.db
      .select({ id: users.id, username: users.username, userType: users.userType, expiresAt: tokens.expiresAt })
      .from(tokens)
      .innerJoin(users, eq(users.id, tokens.userId))
      .where(and(eq(tokens.hash, hash), gt(tokens.expiresAt, now)));
    return this.cache.remember(hash, version, row);
  }

  async deleteExpired(now: number): Promise<number> {
    return (await this.db.delete(tokens).where(lte(tokens.expiresAt, now)).returning({ hash: tokens.hash })).length;
  }
}

export class PgThrottleStore implements ThrottleStore {
  constructor(private readonly db: PgOrdersDb) {}

  async begin(key: string, now: number, max: number, windowMs: number): Promise<number> {
    return this.db.transaction(async (tx) => {
      // One username's attempts queue on a transaction-scoped advisory lock, so parallel guesses
      // through any instances cannot all read "below the limit".
      await tx.execute(sql`SELECT pg_advisory_xact_lock(hashtext(${key}))`);
      const [oldest] = await tx
        .select({ at: loginFailures.at })
        .from(loginFailures)
        .where(and(eq(loginFailures.key, key), gt(loginFailures.at, now - windowMs)))
        .orderBy(desc(loginFailures.at))
        .limit(1)
        .offset(max - 1);
      if (oldest) return oldest.at + windowMs - now;
      await tx.insert(loginFailures).values({ key, at: now });
      return 0;
    });
  }

  async reset(key: string): Promise<void> {
    await this.db.delete(loginFailures).where(eq(loginFailures.key, key));
  }

  async sweep(before: number): Promise<void> {
    await this.db.delete(loginFailures).where(lte(loginFailures.at, before));
  }
}
