// Human-review tasks on SQLite (tables in db/automation/0200_reviews.sql). Writes that also move the
// run (park, approve, reject) are one IMMEDIATE transaction with the runs store's
// `parkIn`/`requeueIn`/`endWaitingIn`, so a task and its run never disagree, even across a crash, and
// the version checks inside cannot interleave with another writer's.
import type { Database } from "bun:sqlite";
import type { SqliteRunStore } from "./runs";
import type { DecisionRow, HumanReviewStore, ListTasks, NewDecision, NewTask, TaskActResult, TaskRow, TaskWrite } from "../../human-review/store";

const TASK_COLUMNS = `id, tenant_id AS tenantId, run_id AS runId, step_path AS stepPath, automation_id AS automationId,
  automation_name AS automationName, source_label AS sourceLabel, status, required_count AS requiredCount,
  confirmed_count AS confirmedCount, version, data, files, instructions, meta, decided_by AS decidedBy, decided_by_id AS decidedById,
  decided_at AS decidedAt, reason, created_at AS createdAt, updated_at AS updatedAt`;

const DECISION_COLUMNS = `id, task_id AS taskId, position, path, original_value AS originalValue, current_value AS currentValue,
  required, reason, confirmed, confirmed_by AS confirmedBy, confirmed_at AS confirmedAt, version`;

/** The run's side of a review, as the runs store does it inside the caller's transaction. */
export type RunMoves = Pick<SqliteRunStore, "flushJournal" | "parkIn" | "requeueIn" | "endWaitingIn">;

/** Thrown inside the transaction to roll it back when the run is no longer waiting. */
class RunNotWaiting extends Error {}

export class SqliteHumanReviewStore implements HumanReviewStore {
  constructor(
    readonly sqlite: Database,
    private readonly runs: RunMoves,
  ) {}

  private getSync(tenantId: string, id: string): TaskRow | undefined {
    return this.sqlite.query<TaskRow, [string, string]>(`SELECT ${TASK_COLUMNS} FROM human_review_tasks WHERE id = ? AND tenant_id = ?`).get(id, tenantId) ?? undefined;
  }

  private decisionsSync(taskId: string): DecisionRow[] {
    return this.sqlite.query<DecisionRow, [string]>(`SELECT ${DECISION_COLUMNS} FROM human_review_decisions WHERE task_id = ? ORDER BY position, path`).all(taskId);
  }

  async get(tenantId: string, id: string): Promise<TaskRow | undefined> {
    return this.getSync(tenantId, id);
  }

  async decisions(taskId: string): Promise<DecisionRow[]> {
    return this.decisionsSync(taskId);
  }

  async list(f: ListTasks): Promise<TaskRow[]> {
    const where = ["tenant_id = ?", "status = 'pending'"];
    const args: string[] = [f.tenantId];
    if (f.automationId) (where.push("automation_id = ?"), args.push(f.automationId));
    if (f.waitingBefore) (where.push("created_at < ?"), args.push(f.waitingBefore));
    if (f.after) (where.push("(created_at > ? OR (created_at = ? AND id > ?))"), args.push(f.after.createdAt, f.after.createdAt, f.after.id));
    return this.sqlite
      .query<TaskRow, (string | number)[]>(`SELECT ${TASK_COLUMNS} FROM human_review_tasks WHERE ${where.join(" AND ")} ORDER BY created_at, id LIMIT ?`)
      .all(...args, f.limit);
  }

  async park(task: NewTask, decisions: NewDecision[]): Promise<string | null> {
    this.runs.flushJournal(); // the step's start must be committed before the park turns it `waiting`
    return this.sqlite.transaction(() => {
      const existing = this.sqlite
        .query<{ id: string }, [string, string]>("SELECT id FROM human_review_tasks WHERE run_id = ? AND step_path = ?")
        .get(task.runId, task.stepPath);
      const taskId = existing?.id ?? task.id;
      const event = { type: "waiting", status: "waiting", message: `waiting for human review ${taskId}`, metadata: { taskId, step: task.stepPath } };
      if (!this.runs.parkIn(task.runId, task.createdAt, task.stepPath, event)) return null;
      if (existing) return existing.id;
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
      return task.id;
    }).immediate();
  }

  async act(
    tenantId: string,
    id: string,
    m: { expectedVersion: number; key?: string; request: string; at: string },
    plan: (t: TaskRow, decisions: DecisionRow[]) => TaskWrite,
    answer: (t: TaskRow, decisions: DecisionRow[]) => unknown,
  ): Promise<TaskActResult> {
    let seen: TaskRow | undefined;
    try {
      return this.sqlite.transaction((): TaskActResult => {
        const t = (seen = this.getSync(tenantId, id));
        if (!t) return { kind: "not_found" };
        if (m.key) {
          const prior = this.sqlite
            .query<{ status: number; body: string; request: string | null }, [string, string]>("SELECT status, body, request FROM human_review_replies WHERE task_id = ? AND idempotency_key = ?")
            .get(t.id, m.key);
          // Replies stored before fingerprints (request NULL) replay as they did.
          if (prior && prior.request !== null && prior.request !== m.request) return { kind: "key_reused", version: t.version, status: t.status };
          if (prior) return { kind: "replay", status: prior.status, body: JSON.parse(prior.body) };
        }
        if (t.status !== "pending") return { kind: "not_pending", version: t.version, status: t.status };
        if (t.version !== m.expectedVersion) return { kind: "version_conflict", version: t.version, status: t.status };
        const w = plan(t, this.decisionsSync(t.id));
        if (w.field) this.writeField(t.id, w.field, m.at);
        if (w.decide) this.writeDecision(t, w.decide, m.at);
        const after = this.getSync(tenantId, id)!;
        const body = answer(after, this.decisionsSync(t.id));
        if (m.key) {
          this.sqlite
            .query("INSERT INTO human_review_replies (task_id, idempotency_key, status, body, created_at, request) VALUES (?, ?, ?, ?, ?, ?)")
            .run(t.id, m.key, 200, JSON.stringify(body), m.at, m.request);
        }
        return { kind: "done", body };
      }).immediate();
    } catch (err) {
      if (err instanceof RunNotWaiting && seen) return { kind: "run_not_waiting", version: seen.version, status: seen.status };
      throw err;
    }
  }

  private writeField(taskId: string, f: NonNullable<TaskWrite["field"]>, at: string): void {
    this.sqlite
      .query(
        `INSERT INTO human_review_decisions (id, task_id, position, path, original_value, current_value, required, reason, confirmed, confirmed_by, confirmed_at)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, 0, 'edited by the reviewer', ?7, ?8, ?9)
         ON CONFLICT (task_id, path) DO UPDATE SET current_value = excluded.current_value, confirmed = excluded.confirmed,
           confirmed_by = excluded.confirmed_by, confirmed_at = excluded.confirmed_at, version = version + 1`,
      )
      .run(f.id, taskId, f.position, f.path, f.originalValue, f.currentValue, f.confirmed ? 1 : 0, f.confirmed ? f.by : null, f.confirmed ? at : null);
    // The task's version moves with every field, and its confirmed count is recounted from the rows.
    this.sqlite
      .query(
        `UPDATE human_review_tasks SET version = version + 1, updated_at = ?,
           confirmed_count = (SELECT COUNT(*) FROM human_review_decisions WHERE task_id = ?2 AND required = 1 AND confirmed = 1)
         WHERE id = ?2`,
      )
      .run(at, taskId);
  }

  private writeDecision(t: TaskRow, d: NonNullable<TaskWrite["decide"]>, at: string): void {
    const reason = d.status === "rejected" ? d.reason : null;
    this.sqlite
      .query("UPDATE human_review_tasks SET status = ?, decided_by = ?, decided_by_id = ?, decided_at = ?, reason = ?, version = version + 1, updated_at = ? WHERE id = ?")
      .run(d.status, d.by, d.byId, at, reason, at, t.id);
    const moved =
      d.status === "approved"
        ? this.runs.requeueIn(t.runId, at, t.stepPath, d.output, { type: "resumed", status: "pending", message: `human review ${t.id} approved by ${d.by}`, metadata: { taskId: t.id, by: d.by, byId: d.byId } })
        : this.runs.endWaitingIn(t.runId, at, t.stepPath, "rejected", { message: d.reason, code: "rejected" });
    if (!moved) throw new RunNotWaiting();
  }
}
