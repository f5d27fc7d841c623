// E-mail servers and delivery claims on SQLite (db/automation/0250), through drizzle. A live name is
// taken once (the partial unique index); a delivery is claimed once (its primary key).
import type { Database } from "bun:sqlite";
import { and, count, desc, eq, isNull, or, sql } from "drizzle-orm";
import { dbOf, type Db } from "../client";
import type { EmailStore } from "../../email/store";
import { emailDeliveries, emailServers, type Delivery, type EmailServerRow } from "../tables/email";

const live = (tenantId: string) => and(eq(emailServers.tenantId, tenantId), isNull(emailServers.deletedAt));
/** A unique-constraint failure, also when drizzle wraps it (its `cause`). */
const isUnique = (err: unknown): boolean => {
  const e = err as { code?: string; message?: string; cause?: unknown } | undefined;
  return !!e && (e.code === "SQLITE_CONSTRAINT_UNIQUE" || /UNIQUE constraint failed/.test(e.message ?? "") || (e.cause !== undefined && isUnique(e.cause)));
};
const delivery = (runId: string, stepPath: string) => and(eq(emailDeliveries.runId, runId), eq(emailDeliveries.stepPath, stepPath));

export class SqliteEmailStore implements EmailStore {
  private readonly db: Db;
  constructor(sqlite: Database) {
    this.db = dbOf(sqlite);
  }

  async insertServer(row: EmailServerRow): Promise<"ok" | "name_taken"> {
    try {
      this.db.insert(emailServers).values(row).run();
      return "ok";
    } catch (err) {
      if (isUnique(err)) return "name_taken";
      throw err;
    }
  }

  async server(tenantId: string, id: string): Promise<EmailServerRow | undefined> {
    return this.db.select().from(emailServers).where(and(live(tenantId), eq(emailServers.id, id))).get();
  }

  async serverByRef(tenantId: string, ref: string): Promise<EmailServerRow | undefined> {
    return this.db
      .select()
      .from(emailServers)
      .where(and(live(tenantId), or(eq(emailServers.id, ref), eq(emailServers.name, ref))))
      .orderBy(sql`CASE WHEN ${emailServers.id} = ${ref} THEN 0 ELSE 1 END`)
      .get();
  }

  async nameTaken(tenantId: string, name: string, except?: string): Promise<boolean> {
    const row = this.db.select({ id: emailServers.id }).from(emailServers).where(and(live(tenantId), eq(emailServers.name, name))).get();
    return row !== undefined && row.id !== except;
  }

  async listServers(tenantId: string, limit: number, offset: number): Promise<{ rows: EmailServerRow[]; total: number }> {
    const rows = this.db.select().from(emailServers).where(live(tenantId)).orderBy(desc(emailServers.createdAt), desc(emailServers.id)).limit(limit).offset(offset).all();
    return { rows, total: this.db.select({ n: count() }).from(emailServers).where(live(tenantId)).get()?.n ?? 0 };
  }

  async updateServer(tenantId: string, id: string, set: Partial<EmailServerRow>): Promise<EmailServerRow | undefined | "name_taken"> {
    try {
      return this.db.update(emailServers).set(set).where(and(live(tenantId), eq(emailServers.id, id))).returning().get();
    } catch (err) {
      if (isUnique(err)) return "name_taken";
      throw err;
    }
  }

  async delivery(runId: string, stepPath: string): Promise<Delivery | undefined> {
    return this.db.select().from(emailDeliveries).where(delivery(runId, stepPath)).get();
  }

  async claimDelivery(row: Delivery): Promise<boolean> {
    return this.db.insert(emailDeliveries).values(row).onConflictDoNothing().returning({ runId: emailDeliveries.runId }).all().length > 0;
  }

  async markSent(runId: string, stepPath: string, result: string): Promise<void> {
    this.db.update(emailDeliveries).set({ state: "sent", result }).where(delivery(runId, stepPath)).run();
  }

  async releaseDelivery(runId: string, stepPath: string): Promise<void> {
    this.db.delete(emailDeliveries).where(delivery(runId, stepPath)).run();
  }
}
