// The ScheduleStore over bun:sqlite. A started tick is claimed by the run insert (db/sqlite/runs.ts), in
// its transaction, so a tick and its run commit or roll back together.
import type { Database } from "bun:sqlite";
import { TERMINAL } from "../../runs/store";
import type { LiveAutomation, ScheduleStore, TickRow } from "../../schedules/store";

interface RawTick {
  automation_id: string;
  schedule_key: string;
  scheduled_at: string;
  outcome: TickRow["outcome"];
  run_id: string | null;
  decided_at: string;
}

const tickOf = (r: RawTick): TickRow => ({
  automationId: r.automation_id,
  scheduleKey: r.schedule_key,
  scheduledAt: r.scheduled_at,
  outcome: r.outcome,
  runId: r.run_id,
  decidedAt: r.decided_at,
});

const INSERT = `INSERT INTO schedule_ticks (automation_id, schedule_key, scheduled_at, tenant_id, outcome, run_id, decided_at)
  VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING`;

export function sqliteScheduleStore(sqlite: Database): ScheduleStore {
  return {
    async live() {
      // `triggers` is the version's JSON flag object; only versions flagged cron can hold schedules.
      return sqlite
        .query<LiveAutomation, []>(
          `SELECT a.id AS automationId, a.tenant_id AS tenantId, v.id AS versionId, a.updated_at AS since
           FROM automations a JOIN automation_versions v ON v.id = a.current_version_id
           WHERE a.status = 'active' AND json_extract(v.triggers, '$.cron') = 1`,
        )
        .all();
    },
    async yaml(versionId) {
      return sqlite.query<{ yaml: string }, [string]>("SELECT yaml FROM automation_versions WHERE id = ?").get(versionId)?.yaml;
    },
    async lastTick(automationId, scheduleKey) {
      const r = sqlite
        .query<RawTick, [string, string]>(
          "SELECT * FROM schedule_ticks WHERE automation_id = ? AND schedule_key = ? ORDER BY scheduled_at DESC LIMIT 1",
        )
        .get(automationId, scheduleKey);
      return r ? tickOf(r) : undefined;
    },
    async previousRunOpen(automationId, scheduleKey) {
      const r = sqlite
        .query<{ status: string }, [string, string]>(
          `SELECT r.status FROM schedule_ticks t JOIN runs r ON r.id = t.run_id
           WHERE t.automation_id = ? AND t.schedule_key = ? AND t.run_id IS NOT NULL ORDER BY t.scheduled_at DESC LIMIT 1`,
        )
        .get(automationId, scheduleKey);
      return r !== null && !(TERMINAL as readonly string[]).includes(r.status);
    },
    async skip(tick, tenantId, outcome, at) {
      return sqlite.query(INSERT).run(tick.automationId, tick.scheduleKey, tick.scheduledAt, tenantId, outcome, null, at).changes === 1;
    },
  };
}
