import { and, eq, gt, lte, sql } from "drizzle-orm";
import type { OrdersDb } from "../db/handle.sqlite";
import { loginFailures, tokens, users } from "../db/schema.sqlite";
import type { DataVersion } from "../../kernel/data-version";
import type { Caller } from "../users/model";
import { TokenCache } from "./cache";
import type { ThrottleStore, TokenStore } from "./store";

export class SqliteTokenStore implements TokenStore {
  private readonly byHash;
  private readonly cache = new TokenCache();

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
  async insert(hash: string, userId: number, at: number, expiresAt: number): Promise<void> {
    this.db.insert(tokens).values({ hash, userId, createdAt: at, expiresAt }).run();
  }

  userFor(hash: string, now: number): Caller | undefined {
    const version = this.version.current();
    const hit = this.cache.lookup(hash, now, version);
    if (hit !== undefined) return hit ?? undefined;
    return this.cache.remember(hash, version, this.byHash.get({ hash, now }));
  }

  async deleteExpired(now: number): Promise<number> {
    try {
      return this.db.delete(tokens).where(lte(tokens.expiresAt, now)).returning({ hash: tokens.hash }).all().length;
    } finally {
      this.version.bump();
    }
  }
}

export class SqliteThrottleStore implements ThrottleStore {
  constructor(private readonly db: OrdersDb) {}

  async begin(key: string, now: number, max: number, windowMs: number): Promise<number> {
    // IMMEDIATE: the count and the insert happen under the write lock, so parallel guesses (from any
    // process on this file) cannot all read "below the limit".
    return this.db.transaction(
      (tx) => {
        const oldest = tx
          .select({ at: loginFailures.at })
          .from(loginFailures)
          .where(and(eq(loginFailures.key, key), gt(loginFailures.at, now - windowMs)))
          .orderBy(sql`${loginFailures.at} DESC`)
          .limit(1)
          .offset(max - 1)
          .get();
        if (oldest) return oldest.at + windowMs - now;
        tx.insert(loginFailures).values({ key, at: now }).run();
        return 0;
      },
      { behavior: "immediate" },
    );
  }

  async reset(key: string): Promise<void> {
    this.db.delete(loginFailures).where(eq(loginFailures.key, key)).run();
  }

  async sweep(before: number): Promise<void> {
    this.db.delete(loginFailures).where(lte(loginFailures.at, before)).run();
  }
}
