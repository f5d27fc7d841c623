// The order server's migrations, embedded into the executable as text (see src/kernel/db.ts).
import type { Migration } from "../../src/kernel/db";
import init from "./0000_init.sql" with { type: "text" };
import orderCounts from "./0001_order_counts.sql" with { type: "text" };
import listIndexes from "./0002_list_indexes.sql" with { type: "text" };
import loginFailures from "./0003_login_failures.sql" with { type: "text" };
import orderChanges from "./0004_order_changes.sql" with { type: "text" };

export const orderMigrations: Migration[] = [
  { name: "0000_init", sql: init },
  { name: "0001_order_counts", sql: orderCounts },
  { name: "0002_list_indexes", sql: listIndexes },
  { name: "0003_login_failures", sql: loginFailures },
  { name: "0004_order_changes", sql: orderChanges },
];
