// The only code touching the email_servers and email_deliveries tables.
import { and, count, desc, eq, isNull, or } from "drizzle-orm";
import type { Db } from "../db/client";
import { emailDeliveries, emailServers, type EmailServerRow } from "./schema";

const live = (tenantId: string) => and(eq(emailServers.tenantId, tenantId), isNull(emailServers.deletedAt));

export const serverStore = {
  insert(db: Db, row: EmailServerRow): void {
    db.insert(emailServers).values(row).run();
  },
  byId(db: Db, tenantId: string, id: string): EmailServerRow | undefined {
    return db.select().from(emailServers).where(and(live(tenantId), eq(emailServers.id, id))).get();
  },
  /** By id or by name (workflows may name the server). */
  byRef(db: Db, tenantId: string, ref: string): EmailServerRow | undefined {
    return db.select().from(emailServers).where(and(live(tenantId), or(eq(emailServers.id, ref), eq(emailServers.name, ref)))).get();
  },
  nameTaken(db: Db, tenantId: string, name: string, except?: string): boolean {
    const row = db.select({ id: emailServers.id }).from(emailServers).where(and(live(tenantId), eq(emailServers.name, name))).get();
    return row !== undefined && row.id !== except;
  },
  list(db: Db, tenantId: string, limit: number, offset: number): { rows: EmailServerRow[]; total: number } {
    const rows = db.select().from(emailServers).where(live(tenantId)).orderBy(desc(emailServers.createdAt), desc(emailServers.id)).limit(limit).offset(offset).all();
    return { rows, total: db.select({ n: count() }).from(emailServers).where(live(tenantId)).get()?.n ?? 0 };
  },
  update(db: Db, tenantId: string, id: string, set: Partial<EmailServerRow>): EmailServerRow | undefined {
    return db.update(emailServers).set(set).where(and(live(tenantId), eq(emailServers.id, id))).returning().get();
  },
};

export type Delivery = typeof emailDeliveries.$inferSelect;

export const deliveryStore = {
  get(db: Db, runId: string, stepPath: string): Delivery | undefined {
    return db.select().from(emailDeliveries).where(and(eq(emailDeliveries.runId, runId), eq(emailDeliveries.stepPath, stepPath))).get();
  },
  /** Claims the send for this step execution; false when an earlier attempt already did. */
  claim(db: Db, row: Delivery): boolean {
    return db.insert(emailDeliveries).values(row).onConflictDoNothing().returning({ runId: emailDeliveries.runId }).all().length > 0;
  },
  sent(db: Db, runId: string, stepPath: string, result: string): void {
    db.update(emailDeliveries).set({ state: "sent", result }).where(and(eq(emailDeliveries.runId, runId), eq(emailDeliveries.stepPath, stepPath))).run();
  },
  /** The send failed for sure: forget the claim. */
  release(db: Db, runId: string, stepPath: string): void {
    db.delete(emailDeliveries).where(and(eq(emailDeliveries.runId, runId), eq(emailDeliveries.stepPath, stepPath))).run();
  },
};
