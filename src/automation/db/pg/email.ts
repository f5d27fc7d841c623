// E-mail servers and delivery claims on PostgreSQL. A live name is taken once (the partial unique
// index answers racing creates and renames); a delivery is claimed once (its primary key, ON CONFLICT
// DO NOTHING), so a send goes out once however many processes resume the step. `enabled` is a boolean
// here and 0/1 on SQLite: rows come back as SQLite's.
import type { EmailStore } from "../../email/store";
import type { Delivery, EmailServerRow } from "../tables/email";
import { isUniqueViolation, type Pg, plainRows } from "./rows";

const SERVER_COLS = `id, tenant_id AS "tenantId", name, enabled::int AS enabled, transport, from_email AS "fromEmail", from_name AS "fromName", host, port, security,
  username, ca_pem AS "caPem", secret, created_at AS "createdAt", updated_at AS "updatedAt", deleted_at AS "deletedAt"`;
const DELIVERY_COLS = `run_id AS "runId", step_path AS "stepPath", tenant_id AS "tenantId", server_id AS "serverId", state, result::text AS result, created_at AS "createdAt"`;

/** Server columns a PATCH may set, by field. */
const COLUMN: Record<string, string> = {
  name: "name", enabled: "enabled", transport: "transport", fromEmail: "from_email", fromName: "from_name", host: "host", port: "port",
  security: "security", username: "username", caPem: "ca_pem", secret: "secret", updatedAt: "updated_at", deletedAt: "deleted_at",
};

export class PgEmailStore implements EmailStore {
  constructor(readonly pg: Pg) {}

  private async servers(where: string, args: unknown[]): Promise<EmailServerRow[]> {
    return plainRows<EmailServerRow>(await this.pg.unsafe(`SELECT ${SERVER_COLS} FROM email_servers WHERE tenant_id = $1 AND deleted_at IS NULL AND ${where}`, args));
  }

  async insertServer(r: EmailServerRow): Promise<"ok" | "name_taken"> {
    try {
      await this.pg`INSERT INTO email_servers (id, tenant_id, name, enabled, transport, from_email, from_name, host, port, security, username, ca_pem, secret, created_at, updated_at, deleted_at)
        VALUES (${r.id}, ${r.tenantId}, ${r.name}, ${r.enabled === 1}, ${r.transport}, ${r.fromEmail}, ${r.fromName}, ${r.host}, ${r.port}, ${r.security}, ${r.username}, ${r.caPem}, ${r.secret},
          ${r.createdAt}, ${r.updatedAt}, ${r.deletedAt})`;
      return "ok";
    } catch (err) {
      if (isUniqueViolation(err, "email_servers_live_name")) return "name_taken";
      throw err;
    }
  }

  async server(tenantId: string, id: string): Promise<EmailServerRow | undefined> {
    return (await this.servers("id = $2", [tenantId, id]))[0];
  }

  async serverByRef(tenantId: string, ref: string): Promise<EmailServerRow | undefined> {
    return (await this.servers("(id = $2 OR name = $2) ORDER BY CASE WHEN id = $2 THEN 0 ELSE 1 END LIMIT 1", [tenantId, ref]))[0];
  }

  async nameTaken(tenantId: string, name: string, except?: string): Promise<boolean> {
    const [row] = await this.servers("name = $2", [tenantId, name]);
    return row !== undefined && row.id !== except;
  }

  async listServers(tenantId: string, limit: number, offset: number): Promise<{ rows: EmailServerRow[]; total: number }> {
    const rows = await this.servers("TRUE ORDER BY created_at DESC, id DESC LIMIT $2 OFFSET $3", [tenantId, limit, offset]);
    const [{ n }] = await this.pg`SELECT COUNT(*)::int AS n FROM email_servers WHERE tenant_id = ${tenantId} AND deleted_at IS NULL`;
    return { rows, total: n };
  }

  async updateServer(tenantId: string, id: string, set: Partial<EmailServerRow>): Promise<EmailServerRow | undefined | "name_taken"> {
    const args: unknown[] = [tenantId, id];
    const assignments = Object.entries(set)
      .filter(([k, v]) => v !== undefined && COLUMN[k])
      .map(([k, v]) => {
        args.push(k === "enabled" ? v === 1 : v);
        return `${COLUMN[k]} = $${args.length}`;
      });
    if (!assignments.length) return this.server(tenantId, id);
    try {
      const rows = await this.pg.unsafe(`UPDATE email_servers SET ${assignments.join(", ")} WHERE tenant_id = $1 AND id = $2 AND deleted_at IS NULL RETURNING ${SERVER_COLS}`, args);
      return plainRows<EmailServerRow>(rows)[0];
    } catch (err) {
      if (isUniqueViolation(err, "email_servers_live_name")) return "name_taken";
      throw err;
    }
  }

  async delivery(runId: string, stepPath: string): Promise<Delivery | undefined> {
    return plainRows<Delivery>(await this.pg.unsafe(`SELECT ${DELIVERY_COLS} FROM email_deliveries WHERE run_id = $1 AND step_path = $2`, [runId, stepPath]))[0];
  }

  async claimDelivery(r: Delivery): Promise<boolean> {
    const rows = await this.pg`INSERT INTO email_deliveries (run_id, step_path, tenant_id, server_id, state, result, created_at)
      VALUES (${r.runId}, ${r.stepPath}, ${r.tenantId}, ${r.serverId}, ${r.state}, CAST(${r.result} AS text)::json, ${r.createdAt})
      ON CONFLICT DO NOTHING RETURNING run_id`;
    return rows.length > 0;
  }

  async markSent(runId: string, stepPath: string, result: string): Promise<void> {
    await this.pg`UPDATE email_deliveries SET state = 'sent', result = CAST(${result} AS text)::json WHERE run_id = ${runId} AND step_path = ${stepPath}`;
  }

  async releaseDelivery(runId: string, stepPath: string): Promise<void> {
    await this.pg`DELETE FROM email_deliveries WHERE run_id = ${runId} AND step_path = ${stepPath}`;
  }
}
