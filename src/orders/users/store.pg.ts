import { eq, sql } from "drizzle-orm";
import type { PgOrdersDb } from "../db/handle.pg";
import { ledger, users } from "../db/schema.pg";
import type { Account } from "./model";
import type { NewUser, UserRow, UserStore } from "./store";

const account = { id: users.id, username: users.username, userType: users.userType, money: users.money };

export class PgUserStore implements UserStore {
  constructor(private readonly db: PgOrdersDb) {}

  async findByKey(key: string): Promise<UserRow | undefined> {
    return (await this.db.select({ ...account, passwordHash: users.passwordHash }).from(users).where(eq(users.usernameKey, key)))[0];
  }

  async findById(id: number): Promise<Account | undefined> {
    return (await this.db.select(account).from(users).where(eq(users.id, id)))[0];
  }

  async insert(u: NewUser): Promise<Account | undefined> {
    return this.db.transaction(async (tx) => {
      // ON CONFLICT DO NOTHING: of two instances registering one name at once, one gets the row.
      const [row] = await tx
        .insert(users)
        .values({ username: u.username, usernameKey: u.key, passwordHash: u.passwordHash, userType: u.userType, money: u.money, createdAt: u.at })
        .onConflictDoNothing({ target: users.usernameKey })
        .returning(account);
      if (!row) return undefined;
      await tx.insert(ledger).values({ userId: row.id, amount: u.money, kind: "opening", createdAt: u.at });
      return row;
    });
  }

  async count(): Promise<number> {
    return Number((await this.db.select({ n: sql<string>`count(*)` }).from(users))[0].n);
  }
}
