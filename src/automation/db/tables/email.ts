// Drizzle tables of the e-mail feature. Migrations: db/automation/0250-0299.
import { integer, primaryKey, sqliteTable, text } from "drizzle-orm/sqlite-core";

/** Outbound e-mail servers. `secret` is the AES-256-GCM sealed API key or SMTP password, never plain. */
export const emailServers = sqliteTable("email_servers", {
  id: text("id").primaryKey(),
  tenantId: text("tenant_id").notNull(),
  name: text("name").notNull(),
  enabled: integer("enabled").notNull(),
  transport: text("transport").notNull(),
  fromEmail: text("from_email").notNull(),
  fromName: text("from_name"),
  host: text("host"),
  port: integer("port"),
  security: text("security"),
  username: text("username"),
  caPem: text("ca_pem"),
  secret: text("secret"),
  createdAt: text("created_at").notNull(),
  updatedAt: text("updated_at").notNull(),
  deletedAt: text("deleted_at"),
});

/**
 * One row per `action.email` step execution, written before the send: a run resumed after a crash
 * finds `sending` and refuses to send again (the outcome is unknown), or `sent` and reuses the result.
 */
export const emailDeliveries = sqliteTable(
  "email_deliveries",
  {
    runId: text("run_id").notNull(),
    stepPath: text("step_path").notNull(),
    tenantId: text("tenant_id").notNull(),
    serverId: text("server_id").notNull(),
    state: text("state").notNull(),
    result: text("result"),
    createdAt: text("created_at").notNull(),
  },
  (t) => [primaryKey({ columns: [t.runId, t.stepPath] })],
);

export type EmailServerRow = typeof emailServers.$inferSelect;
export type Delivery = typeof emailDeliveries.$inferSelect;
