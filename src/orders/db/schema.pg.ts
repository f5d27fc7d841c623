// The order server's tables on PostgreSQL: the same tables and columns as schema.sqlite.ts. Money is
// integer kopecks and times epoch milliseconds, both int8 (read as JS numbers: far below 2^53).
import { sql } from "drizzle-orm";
import { bigint, check, index, integer, pgTable, smallint, text, uniqueIndex } from "drizzle-orm/pg-core";

const int8 = (name: string) => bigint(name, { mode: "number" });

export const users = pgTable(
  "users",
  {
    id: integer("id").primaryKey().generatedByDefaultAsIdentity(),
    username: text("username").notNull(),
    usernameKey: text("username_key").notNull(),
    passwordHash: text("password_hash").notNull(),
    userType: text("user_type", { enum: ["Customer", "Performer"] }).notNull(),
    money: int8("money").notNull(),
    createdAt: int8("created_at").notNull(),
  },
  (t) => [
    uniqueIndex("users_username_key").on(t.usernameKey),
    check("users_money_not_negative", sql`${t.money} >= 0`),
    check("users_type", sql`${t.userType} IN ('Customer', 'Performer')`),
  ],
);

export const tokens = pgTable(
  "tokens",
  {
    hash: text("hash").primaryKey(),
    userId: integer("user_id")
      .notNull()
      .references(() => users.id),
    expiresAt: int8("expires_at").notNull(),
    createdAt: int8("created_at").notNull(),
  },
  (t) => [index("tokens_user").on(t.userId), index("tokens_expires").on(t.expiresAt)],
);

export const orders = pgTable(
  "orders",
  {
    id: integer("id").primaryKey().generatedByDefaultAsIdentity(),
    description: text("description").notNull(),
    price: int8("price").notNull(),
    status: smallint("status").notNull(),
    createdAt: int8("created_at").notNull(),
    customerId: integer("customer_id")
      .notNull()
      .references(() => users.id),
    performerId: integer("performer_id").references(() => users.id),
  },
  (t) => [
    index("orders_status_created").on(t.status, t.createdAt, t.id),
    index("orders_status_price").on(t.status, t.price, t.id),
    index("orders_status_id").on(t.status, t.id),
    index("orders_customer_created").on(t.customerId, t.createdAt, t.id),
    index("orders_performer_created").on(t.performerId, t.createdAt, t.id),
  ],
);

export const ledger = pgTable(
  "ledger",
  {
    id: integer("id").primaryKey().generatedByDefaultAsIdentity(),
    userId: integer("user_id").references(() => users.id),
    orderId: integer("order_id").references(() => orders.id),
    amount: int8("amount").notNull(),
    kind: text("kind", { enum: ["opening", "payment", "commission", "earning"] }).notNull(),
    createdAt: int8("created_at").notNull(),
  },
  (t) => [index("ledger_user").on(t.userId), index("ledger_order").on(t.orderId)],
);

export const orderCounts = pgTable("order_counts", {
  status: smallint("status").primaryKey(),
  n: int8("n").notNull(),
});

export const loginFailures = pgTable(
  "login_failures",
  {
    id: integer("id").primaryKey().generatedByDefaultAsIdentity(),
    key: text("key").notNull(),
    at: int8("at").notNull(),
  },
  (t) => [index("login_failures_key_at").on(t.key, t.at), index("login_failures_at").on(t.at)],
);

/** One row whose `v` moves (in the writing transaction) whenever orders change or a token row goes. */
export const dataVersion = pgTable("data_version", {
  id: smallint("id").primaryKey(),
  v: int8("v").notNull(),
});
