// InboundStore on PostgreSQL (migration db/automation/pg/0410_inbound_email.sql). The per-sender count
// is one atomic upsert, so instances sharing the database count together; a token is minted once per
// automation (ON CONFLICT keeps the first).
import type { InboundAddress, InboundStore } from "../../inbound/store";
import { int, type Pg } from "./rows";

export class PgInboundStore implements InboundStore {
  private pruned = 0;
  constructor(readonly pg: Pg) {}

  async token(tenantId: string, automationId: string, mint: () => string, at: string): Promise<string> {
    const [have] = await this.pg`SELECT token FROM inbound_addresses WHERE automation_id = ${automationId}`;
    if (have) return have.token as string;
    await this.pg`INSERT INTO inbound_addresses (automation_id, tenant_id, token, created_at) VALUES (${automationId}, ${tenantId}, ${mint()}, ${at}) ON CONFLICT (automation_id) DO NOTHING`;
    const [row] = await this.pg`SELECT token FROM inbound_addresses WHERE automation_id = ${automationId}`;
    return row.token as string;
  }

  async byToken(token: string): Promise<InboundAddress | undefined> {
    const [row] = await this.pg`SELECT tenant_id AS "tenantId", automation_id AS "automationId", token FROM inbound_addresses WHERE token = ${token}`;
    return row ? { tenantId: row.tenantId, automationId: row.automationId, token: row.token } : undefined;
  }

  async countSender(sender: string, minute: number): Promise<number> {
    if (minute > this.pruned) {
      await this.pg`DELETE FROM inbound_sender_minutes WHERE minute < ${minute - 1}`;
      this.pruned = minute;
    }
    const [row] = await this.pg`INSERT INTO inbound_sender_minutes (sender, minute, count) VALUES (${sender}, ${minute}, 1)
      ON CONFLICT (sender, minute) DO UPDATE SET count = inbound_sender_minutes.count + 1 RETURNING count`;
    return int(row.count);
  }

  async runOf(dedupeKey: string): Promise<string | undefined> {
    const [row] = await this.pg`SELECT id FROM runs WHERE dedupe_key = ${dedupeKey}`;
    return row?.id as string | undefined;
  }
}
