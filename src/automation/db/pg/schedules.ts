// The ScheduleStore on PostgreSQL: the same answers as db/sqlite/schedules.ts. A started tick is claimed
// by the run insert (db/pg/runs.ts, `RunInsertOptions.tick`) in its transaction; the ticks' primary key
// decides which of several instances firing the same tick wins.
import type { LiveAutomation, ScheduleStore, TickKey, TickRow } from "../../schedules/store";
import { type Pg, plain, plainRows } from "./rows";

const TICK_COLUMNS = `automation_id AS "automationId", schedule_key AS "scheduleKey", scheduled_at AS "scheduledAt", outcome, run_id AS "runId", decided_at AS "decidedAt"`;

export class PgScheduleStore implements ScheduleStore {
  constructor(readonly pg: Pg) {}

  async live(): Promise<LiveAutomation[]> {
    // `triggers` is the version's JSON flag object; only versions flagged cron can hold schedules.
    return plainRows<LiveAutomation>(
      await this.pg`SELECT a.id AS "automationId", a.tenant_id AS "tenantId", v.id AS "versionId", a.updated_at AS since
        FROM automations a JOIN automation_versions v ON v.id = a.current_version_id
        WHERE a.status = 'active' AND v.triggers::jsonb -> 'cron' IN ('true'::jsonb, '1'::jsonb)
        ORDER BY a.id`,
    );
  }

  async yaml(versionId: string): Promise<string | undefined> {
    const [r] = await this.pg`SELECT yaml FROM automation_versions WHERE id = ${versionId}`;
    return r?.yaml;
  }

  async lastTick(automationId: string, scheduleKey: string): Promise<TickRow | undefined> {
    const [r] = await this.pg.unsafe(`SELECT ${TICK_COLUMNS} FROM schedule_ticks WHERE automation_id = $1 AND schedule_key = $2 ORDER BY scheduled_at DESC LIMIT 1`, [
      automationId,
      scheduleKey,
    ]);
    return r ? plain<TickRow>(r) : undefined;
  }

  async previousRunOpen(automationId: string, scheduleKey: string): Promise<boolean> {
    const [r] = await this.pg`SELECT r.status FROM schedule_ticks t JOIN runs r ON r.id = t.run_id
      WHERE t.automation_id = ${automationId} AND t.schedule_key = ${scheduleKey} AND t.run_id IS NOT NULL ORDER BY t.scheduled_at DESC LIMIT 1`;
    return !!r && !["completed", "failed", "cancelled", "rejected"].includes(r.status);
  }

  async skip(tick: TickKey, tenantId: string, outcome: "skipped_overlap" | "skipped_missed" | "refused", at: string): Promise<boolean> {
    const rows = await this.pg`INSERT INTO schedule_ticks (automation_id, schedule_key, scheduled_at, tenant_id, outcome, run_id, decided_at)
      VALUES (${tick.automationId}, ${tick.scheduleKey}, ${tick.scheduledAt}, ${tenantId}, ${outcome}, NULL, ${at}) ON CONFLICT DO NOTHING RETURNING outcome`;
    return rows.length === 1;
  }
}
