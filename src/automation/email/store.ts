// Compatibility shim: demo/documents.ts (owned by the automations conversion) still looks a server up
// synchronously over the SQLite handle. Everything else uses `ctx.storage.email` (db/storage.ts);
// delete this file once the demo calls `await ctx.storage.email.serverByRef(tenantId, ref)`.
import { and, eq, isNull, or } from "drizzle-orm";
import type { Db } from "../db/client";
import { emailServers, type EmailServerRow } from "../db/tables/email";

export const serverStore = {
  /** @deprecated use `ctx.storage.email.serverByRef`. */
  byRef(db: Db, tenantId: string, ref: string): EmailServerRow | undefined {
    return db.select().from(emailServers).where(and(eq(emailServers.tenantId, tenantId), isNull(emailServers.deletedAt), or(eq(emailServers.id, ref), eq(emailServers.name, ref)))).get();
  },
};
