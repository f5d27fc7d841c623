// The only SQL of human-review tasks (tables in db/automation/0200_reviews.sql). Writes that also move
// the run (park, approve, reject) run inside one IMMEDIATE transaction with the runs store's
// `parkIn`/`requeueIn`/`endWaitingIn`, so a task and its run never disagree, even across a crash.
import type { Database } from "bun:sqlite";

export interface TaskRow {
  id: string;
  tenantId: string;
  runId: string;
  stepPath: string;
  automationId: string;
  automationName: string | null;
  sourceLabel: string;
  status: "pending" | "approved" | "rejected" | "cancelled";
  requiredCount: number;
  confirmedCount: number;
  version: number;
  data: string;
  files: string;
  instructions: string | null;
  meta: string | null;
  decidedBy: string | null;
  decidedAt: string | null;
  reason: string | null;
  createdAt: string;
  updatedAt: string;
}

export interface DecisionRow {
  id: string;
  taskId: string;
  position: number;
  path: string;
  originalValue: string | null;
  currentValue: string | null;
  required: number;
  reason: string | null;
  confirmed: number;
  confirmedBy: string | null;
  confirmedAt: string | null;
  version: number;
}

export type NewTask = Omit<TaskRow, "confirmedCount" | "version" | "decidedBy" | "decidedAt" | "reason" | "updatedAt">;
export type NewDecision = Omit<DecisionRow, "taskId" | "confirmed" | "confirmedBy" | "confirmedAt" | "version">;

const TASK_COLUMNS = `id, tenant_id AS tenantId, run_id AS runId, step_path AS stepPath, automation_id AS automationId,
  automation_name AS automationName, source_label AS sourceLabel, status, required_count AS requiredCount,
  confirmed_count AS confirmedCount, version, data, files, instructions, meta, decided_by AS decidedBy,
  decided_at AS decidedAt, reason, created_at AS createdAt, updated_at AS updatedAt`;

const DECISION_COLUMNS = `id, task_id AS taskId, position, path, original_value AS originalValue, current_value AS currentValue,
  required, reason, confirmed, confirmed_by AS confirmedBy, confirmed_at AS confirmedAt, version`;

export interface ListTasks {
  tenantId: string;
  automationId?: string;
  waitingBefore?: string;
  after?: { createdAt: string; id: string };
  limit: number;
}

export class HumanReviewStore {
  constructor(readonly sqlite: Database) {}

  /** One IMMEDIATE transaction: the version checks inside it cannot interleave with another writer's. */
  tx<T>(fn: () => T): T {
    return this.sqlite.transaction(fn).immediate();
  }

  byStep(runId: string, path: string): TaskRow | undefined {
    return this.sqlite.query<TaskRow, [string, string]>(`SELECT ${TASK_COLUMNS} FROM human_review_tasks WHERE run_id = ? AND step_path = ?`).get(runId, path) ?? undefined;
  }

  get(tenantId: string, id: string): TaskRow | undefined {
    return this.sqlite.query<TaskRow, [string, string]>(`SELECT ${TASK_COLUMNS} FROM human_review_tasks WHERE id = ? AND tenant_id = ?`).get(id, tenantId) ?? undefined;
  }

  insert(task: NewTask, decisions: NewDecision[]): void {
    this.sqlite
      .query(
        `INSERT INTO human_review_tasks (id, tenant_id, run_id, step_path, automation_id, automation_name, source_label, status,
           required_count, data, files, instructions, meta, created_at, updated_at)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
      )
      .run(
        task.id, task.tenantId, task.runId, task.stepPath, task.automationId, task.automationName, task.sourceLabel, task.status,
        task.requiredCount, task.data, task.files, task.instructions, task.meta, task.createdAt, task.createdAt,
      );
    const ins = this.sqlite.query(
      "INSERT INTO human_review_decisions (id, task_id, position, path, original_value, current_value, required, reason) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
    );
    for (const d of decisions) ins.run(d.id, task.id, d.position, d.path, d.originalValue, d.currentValue, d.required, d.reason);
  }

  decisions(taskId: string): DecisionRow[] {
    return this.sqlite.query<DecisionRow, [string]>(`SELECT ${DECISION_COLUMNS} FROM human_review_decisions WHERE task_id = ? ORDER BY position, path`).all(taskId);
  }

  /** Pending tasks, oldest first; `after` is the last row of the previous page. */
  list(f: ListTasks): TaskRow[] {
    const where = ["tenant_id = ?", "status = 'pending'"];
    const args: string[] = [f.tenantId];
    if (f.automationId) (where.push("automation_id = ?"), args.push(f.automationId));
    if (f.waitingBefore) (where.push("created_at < ?"), args.push(f.waitingBefore));
    if (f.after) (where.push("(created_at > ? OR (created_at = ? AND id > ?))"), args.push(f.after.createdAt, f.after.createdAt, f.after.id));
    return this.sqlite
      .query<TaskRow, (string | number)[]>(`SELECT ${TASK_COLUMNS} FROM human_review_tasks WHERE ${where.join(" AND ")} ORDER BY created_at, id LIMIT ?`)
      .all(...args, f.limit);
  }

  /** Sets a field's reviewed value (a new decision row when the step had not selected the field). */
  putDecision(taskId: string, d: { path: string; originalValue: string; currentValue: string; confirmed: boolean; by: string; at: string; position: number; id: string }): void {
    this.sqlite
      .query(
        `INSERT INTO human_review_decisions (id, task_id, position, path, original_value, current_value, required, reason, confirmed, confirmed_by, confirmed_at)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, 0, 'edited by the reviewer', ?7, ?8, ?9)
         ON CONFLICT (task_id, path) DO UPDATE SET current_value = excluded.current_value, confirmed = excluded.confirmed,
           confirmed_by = excluded.confirmed_by, confirmed_at = excluded.confirmed_at, version = version + 1`,
      )
      .run(d.id, taskId, d.position, d.path, d.originalValue, d.currentValue, d.confirmed ? 1 : 0, d.confirmed ? d.by : null, d.confirmed ? d.at : null);
  }

  /** Bumps the task version and recounts confirmed required fields. */
  touch(taskId: string, at: string): void {
    this.sqlite
      .query(
        `UPDATE human_review_tasks SET version = version + 1, updated_at = ?,
           confirmed_count = (SELECT COUNT(*) FROM human_review_decisions WHERE task_id = ?2 AND required = 1 AND confirmed = 1)
         WHERE id = ?2`,
      )
      .run(at, taskId);
  }

  decide(taskId: string, status: "approved" | "rejected", by: string, at: string, reason: string | null): void {
    this.sqlite
      .query("UPDATE human_review_tasks SET status = ?, decided_by = ?, decided_at = ?, reason = ?, version = version + 1, updated_at = ? WHERE id = ?")
      .run(status, by, at, reason, at, taskId);
  }

  reply(taskId: string, key: string): { status: number; body: string } | undefined {
    return this.sqlite
      .query<{ status: number; body: string }, [string, string]>("SELECT status, body FROM human_review_replies WHERE task_id = ? AND idempotency_key = ?")
      .get(taskId, key) ?? undefined;
  }

  saveReply(taskId: string, key: string, status: number, body: string, at: string): void {
    this.sqlite.query("INSERT INTO human_review_replies (task_id, idempotency_key, status, body, created_at) VALUES (?, ?, ?, ?, ?)").run(taskId, key, status, body, at);
  }
}
