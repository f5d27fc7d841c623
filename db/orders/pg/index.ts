// The order server's PostgreSQL migrations, embedded into the executable as text (see src/orders/db/pg.ts).
import type { Migration } from "../../../src/kernel/db";
import init from "./0000_init.sql" with { type: "text" };
import orderChanges from "./0001_order_changes.sql" with { type: "text" };

export const orderPgMigrations: Migration[] = [
  { name: "0000_init", sql: init },
  { name: "0001_order_changes", sql: orderChanges },
];
