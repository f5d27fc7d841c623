// The order server's tables. Money is integer kopecks; times are epoch milliseconds (UTC).
import { sql } from "drizzle-orm";
import { check, index, integer, sqliteTable, text, uniqueIndex } from "drizzle-orm/sqlite-core";

export const users = sqliteTable(
  "users",
  {
    id: integer("id").primaryKey({ autoIncrement: true }),
    username: text("username").notNull(),
    /** Lower-cased username: uniqueness and login are case-insensitive. */
    usernameKey: text("username_key").notNull(),
    passwordHash: text("password_hash").notNull(),
    userType: text("user_type", { enum: ["Customer", "Performer"] }).notNull(),
    money: integer("money").notNull(),
    createdAt: integer("created_at").notNull(),
  },
  (t) => [
    uniqueIndex("users_username_key").on(t.usernameKey),
    check("users_money_not_negative", sql`${t.money} >= 0`),
    check("users_type", sql`${t.userType} IN ('Customer', 'Performer')`),
  ],
);

/** Access tokens: only the SHA-256 of the opaque token is stored. */
export const tokens = sqliteTable(
  "tokens",
  {
    hash: text("hash").primaryKey(),
    userId: integer("user_id")
      .notNull()
      .references(() => users.id),
    expiresAt: integer("expires_at").notNull(),
    createdAt: integer("created_at").notNull(),
  },
  (t) => [index("tokens_user").on(t.userId), index("tokens_expires").on(t.expiresAt)],
);

/**
 * `status` is the lifecycle position (0 WAITING, 1 IN_PROGRESS, 2 READY, 3 COMPLETED) so that sorting by
 * status follows the lifecycle and the list indexes stay small.
 */
export const orders = sqliteTable(
  "orders",
  {
    id: integer("id").primaryKey({ autoIncrement: true }),
    description: text("description").notNull(),
    price: integer("price").notNull(),
    status: integer("status").notNull(),
    createdAt: integer("created_at").notNull(),
    customerId: integer("customer_id")
      .notNull()
      .references(() => users.id),
    performerId: integer("performer_id").references(() => users.id),
  },
  (t) => [
    index("orders_status_created").on(t.status, t.createdAt, t.id),
    // The open-orders list sorted by price, or by id / status (an index on status is ordered by rowid).
    index("orders_status_price").on(t.status, t.price, t.id),
    index("orders_status_id").on(t.status),
    index("orders_customer_created").on(t.customerId, t.createdAt, t.id),
    index("orders_performer_created").on(t.performerId, t.createdAt, t.id),
    check("orders_price_positive", sql`${t.price} > 0`),
    check("orders_status_range", sql`${t.status} BETWEEN 0 AND 3`),
  ],
);

/**
 * Every balance change. `userId` null is the platform account (collected commission). Kinds: `opening`
 * (starting balance), `payment` (customer pays the price), `commission` (customer pays / platform
 * receives the fee), `earning` (performer receives the price).
 */
export const ledger = sqliteTable(
  "ledger",
  {
    id: integer("id").primaryKey({ autoIncrement: true }),
    userId: integer("user_id").references(() => users.id),
    orderId: integer("order_id").references(() => orders.id),
    amount: integer("amount").notNull(),
    kind: text("kind", { enum: ["opening", "payment", "commission", "earning"] }).notNull(),
    createdAt: integer("created_at").notNull(),
  },
  (t) => [index("ledger_user").on(t.userId), index("ledger_order").on(t.orderId)],
);

/** Orders per status, kept by triggers (migration 0001) so list totals never count 100,000 rows. */
export const orderCounts = sqliteTable("order_counts", {
  status: integer("status").primaryKey(),
  n: integer("n").notNull(),
});

/** Failed (and in-flight) logins per username key, so the throttle holds across instances (migration 0003). */
export const loginFailures = sqliteTable(
  "login_failures",
  {
    id: integer("id").primaryKey({ autoIncrement: true }),
    key: text("key").notNull(),
    at: integer("at").notNull(),
  },
  (t) => [index("login_failures_key_at").on(t.key, t.at), index("login_failures_at").on(t.at)],
);
