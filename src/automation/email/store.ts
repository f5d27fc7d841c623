// What e-mail needs from storage: outbound servers (secrets sealed by the service) and the delivery
// claims of `action.email`. One async interface; db/sqlite/email.ts and db/pg/email.ts implement it.
// This module imports no implementation. Servers and deliveries are drizzle-inferred rows
// (db/tables/email.ts); callers take them from here.
import type { Delivery, EmailServerRow } from "../db/tables/email";

export type { Delivery, EmailServerRow };

/** Outbound e-mail servers (secrets sealed by the service) and the delivery claims of `action.email`. */
export interface EmailStore {
  /** "name_taken" (nothing written) when the tenant has a live server of that name. */
  insertServer(row: EmailServerRow): Promise<"ok" | "name_taken">;
  server(tenantId: string, id: string): Promise<EmailServerRow | undefined>;
  /** A live server by id or by name (an id match first). */
  serverByRef(tenantId: string, ref: string): Promise<EmailServerRow | undefined>;
  nameTaken(tenantId: string, name: string, except?: string): Promise<boolean>;
  /** Live servers, newest first. */
  listServers(tenantId: string, limit: number, offset: number): Promise<{ rows: EmailServerRow[]; total: number }>;
  /** Updates a live server; undefined when there is none, "name_taken" when the new name is another live server's. */
  updateServer(tenantId: string, id: string, set: Partial<EmailServerRow>): Promise<EmailServerRow | undefined | "name_taken">;
  delivery(runId: string, stepPath: string): Promise<Delivery | undefined>;
  /** Claims the send of one step execution; false when an earlier attempt (any process) already did. */
  claimDelivery(row: Delivery): Promise<boolean>;
  markSent(runId: string, stepPath: string, result: string): Promise<void>;
  /** The send failed for sure: forget the claim. */
  releaseDelivery(runId: string, stepPath: string): Promise<void>;
}
