import { eq, sql } from "drizzle-orm";
import type { OrdersDb } from "../db/handle.sqlite";
import { ledger, users } from "../db/schema.sqlite";
import type { DataVersion } from "../../kernel/data-version";
import type { Account } from "./model";
import type { NewUser, UserRow, UserStore } from "./store";

export class SqliteUserStore implements UserStore {
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

  async findByKey(key: string): Promise<UserRow | undefined> {
    return this.byKey.get({ key });
  }

  async findById(id: number): Promise<Account | undefined> {
    return this.byId.get({ id });
  }

  async insert(u: NewUser): Promise<Account | undefined> {
    try {
      return this.db.transaction(
        (tx) => {
          const row = tx
            .insert(users)
            .values({ username: u.username, usernameKey: u.key, passwordHash: u.passwordHash, userType: u.userType, money: u.money, createdAt: u.at })
            .onConflictDoNothing({ target: users.usernameKey })
            .returning({ id: users.id, username: users.username, userType: users.userType, money: users.money })
            .get();
          if (!row) return undefined;
          tx.insert(ledger).values({ userId: row.id, amount: u.money, kind: "opening", createdAt: u.at }).run();
          return row;
        },
        { behavior: "immediate" },
      );
    } finally {
      this.version?.bump();
    }
  }

  async count(): Promise<number> {
    return this.db.select({ n: sql<number>`count(*)` }).from(users).get()!.n;
  }
}
