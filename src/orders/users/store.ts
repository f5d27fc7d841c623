import { eq, sql } from "drizzle-orm";
import type { OrdersDb } from "../db/open";
import { ledger, users } from "../db/schema";
import type { DataVersion } from "../db/version";
import type { Account, UserType } from "./model";

export interface UserRow extends Account {
  passwordHash: string;
}

export class UserStore {
  private readonly byKey;
  private readonly byId;

  constructor(
    readonly db: OrdersDb,
    private readonly version?: DataVersion,
  ) {
    this.byKey = db.select().from(users).where(eq(users.usernameKey, sql.placeholder("key"))).prepare();
    this.byId = db
      .select({ id: users.id, username: users.username, userType: users.userType, money: users.money })
      .from(users)
      .where(eq(users.id, sql.placeholder("id")))
      .prepare();
  }

  findByKey(key: string): UserRow | undefined {
    return this.byKey.get({ key });
  }

  findById(id: number): Account | undefined {
    return this.byId.get({ id });
  }

  /** Inserts the user and its opening ledger row; undefined when the username is taken. */
  insert(u: { username: string; key: string; passwordHash: string; userType: UserType; money: number; at: number }): Account | undefined {
    try {
      return this.insertTx(u);
    } finally {
      this.version?.bump();
    }
  }

  private insertTx(u: { username: string; key: string; passwordHash: string; userType: UserType; money: number; at: number }): Account | undefined {
    return this.db.transaction(
      (tx) => {
        const row = tx
          .insert(users)
          .values({
            username: u.username,
            usernameKey: u.key,
            passwordHash: u.passwordHash,
            userType: u.userType,
            money: u.money,
            createdAt: u.at,
          })
          .onConflictDoNothing({ target: users.usernameKey })
          .returning({ id: users.id, username: users.username, userType: users.userType, money: users.money })
          .get();
        if (!row) return undefined;
        tx.insert(ledger).values({ userId: row.id, amount: u.money, kind: "opening", createdAt: u.at }).run();
        return row;
      },
      { behavior: "immediate" },
    );
  }

  count(): number {
    return this.db.select({ n: sql<number>`count(*)` }).from(users).get()!.n;
  }
}
