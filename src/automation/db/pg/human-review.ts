// Human-review tasks on PostgreSQL: the same rows and answers as db/sqlite/human-review.ts. Writes that
// also move the run (park, approve, reject) are one transaction with the runs store's `parkIn`,
// `requeueIn` and `endWaitingIn`. A park locks the run row first (two attempts of the same step record
// one task); a reviewer action locks the task row (FOR UPDATE), so of two concurrent decisions one wins
// and the other sees the version it moved (or the decided status) and writes nothing.
import type { DecisionRow, HumanReviewStore, ListTasks, NewDecision, NewTask, TaskActResult, TaskRow, TaskWrite } from "../../human-review/store";
import { endWaitingIn, parkIn, requeueIn } from "./runs";
import { type Pg, plain, plainRows } from "./rows";

const TASK_COLUMNS = `id, tenant_id AS "tenantId", run_id AS "runId", step_path AS "stepPath", automation_id AS "automationId",
  automation_name AS "automationName", source_label AS "sourceLabel", status, required_count AS "requiredCount",
  confirmed_count AS "confirmedCount", version, data::text AS data, files::text AS files, instructions, meta::text AS meta,
  decided_by AS "decidedBy", decided_by_id AS "decidedById", decided_at AS "decidedAt", reason, created_at AS "createdAt", updated_at AS "updatedAt"`;

const DECISION_COLUMNS = `id, task_id AS "taskId", position, path, original_value::text AS "originalValue", current_value::text AS "currentValue",
  required::int AS required, reason, confirmed::int AS confirmed, confirmed_by AS "confirmedBy", confirmed_at AS "confirmedAt", version`;

/** Thrown inside the transaction to roll it back when the run is no longer waiting. */
class RunNotWaiting extends Error {}

export class PgHumanReviewStore implements HumanReviewStore {
  constructor(
    readonly pg: Pg,
    /** The runs store's journal: a step's start is committed before its park turns it `waiting`. */
    private readonly journal: { flush(): Promise<void> },
  ) {}

  private async getIn(db: Pg, tenantId: string, id: string, lock = false): Promise<TaskRow | undefined> {
    const [r] = await db.unsafe(`SELECT ${TASK_COLUMNS} FROM human_review_tasks WHERE id = $1 AND tenant_id = $2${lock ? " FOR UPDATE" : ""}`, [id, tenantId]);
    return r ? plain<TaskRow>(r) : undefined;
  }

  private async decisionsIn(db: Pg, taskId: string): Promise<DecisionRow[]> {
    return plainRows<DecisionRow>(await db.unsafe(`SELECT ${DECISION_COLUMNS} FROM human_review_decisions WHERE task_id = $1 ORDER BY position, path`, [taskId]));
  }

  get(tenantId: string, id: string): Promise<TaskRow | undefined> {
    return this.getIn(this.pg, tenantId, id);
  }

  decisions(taskId: string): Promise<DecisionRow[]> {
    return this.decisionsIn(this.pg, taskId);
  }

  async list(f: ListTasks): Promise<TaskRow[]> {
    const args: unknown[] = [f.tenantId];
    const p = (v: unknown) => (args.push(v), `$${args.length}`);
    const where = ["tenant_id = $1", "status = 'pending'"];
    if (f.automationId) where.push(`automation_id = ${p(f.automationId)}`);
    if (f.waitingBefore) where.push(`created_at < CAST(${p(f.waitingBefore)} AS text)::timestamptz`);
    if (f.after) {
      const c = `CAST(${p(f.after.createdAt)} AS text)::timestamptz`;
      where.push(`(created_at > ${c} OR (created_at = ${c} AND id > ${p(f.after.id)}))`);
    }
    return plainRows<TaskRow>(await this.pg.unsafe(`SELECT ${TASK_COLUMNS} FROM human_review_tasks WHERE ${where.join(" AND ")} ORDER BY created_at, id LIMIT ${p(f.limit)}`, args));
  }

  async park(task: NewTask, decisions: NewDecision[]): Promise<string | null> {
    await this.journal.flush();
    return this.pg.begin(async (tx) => {
      // The run's row lock first: a second attempt at the same step waits here, then finds this task.
      const [run] = await tx`SELECT id FROM runs WHERE id = ${task.runId} FOR UPDATE`;
      if (!run) return null;
      const [existing] = await tx`SELECT id FROM human_review_tasks WHERE run_id = ${task.runId} AND step_path = ${task.stepPath}`;
      const taskId: string = existing?.id ?? task.id;
      const event = { type: "waiting", status: "waiting", message: `waiting for human review ${taskId}`, metadata: { taskId, step: task.stepPath } };
      if (!(await parkIn(tx, task.runId, task.createdAt, task.stepPath, event))) return null;
      if (existing) return taskId;
      await tx.unsafe(
        `INSERT INTO human_review_tasks (id, tenant_id, run_id, step_path, automation_id, automation_name, source_label, status,
           required_count, data, files, instructions, meta, created_at, updated_at)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, CAST($10 AS text)::json, CAST($11 AS text)::json, $12, CAST($13 AS text)::json, $14, $14)`,
        [
          task.id, task.tenantId, task.runId, task.stepPath, task.automationId, task.automationName, task.sourceLabel, task.status,
          task.requiredCount, task.data, task.files, task.instructions, task.meta, task.createdAt,
        ],
      );
      for (const d of decisions) {
        await tx.unsafe(
          `INSERT INTO human_review_decisions (id, task_id, position, path, original_value, current_value, required, reason)
           VALUES ($1, $2, $3, $4, CAST($5 AS text)::json, CAST($6 AS text)::json, CAST($7 AS int) <> 0, $8)`,
          [d.id, task.id, d.position, d.path, d.originalValue, d.currentValue, d.required, d.reason],
        );
      }
      return task.id;
    });
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
      return await this.pg.begin(async (tx): Promise<TaskActResult> => {
        const t = (seen = await this.getIn(tx, tenantId, id, true));
        if (!t) return { kind: "not_found" };
        if (m.key) {
          const [prior] = await tx`SELECT status, body::text AS body, request FROM human_review_replies WHERE task_id = ${t.id} AND idempotency_key = ${m.key}`;
          // Replies stored before fingerprints (request NULL) replay as they did.
          if (prior && prior.request !== null && prior.request !== m.request) return { kind: "key_reused", version: t.version, status: t.status };
          if (prior) return { kind: "replay", status: prior.status, body: JSON.parse(prior.body) };
        }
        if (t.status !== "pending") return { kind: "not_pending", version: t.version, status: t.status };
        if (t.version !== m.expectedVersion) return { kind: "version_conflict", version: t.version, status: t.status };
        const w = plan(t, await this.decisionsIn(tx, t.id));
        if (w.field) await this.writeField(tx, t.id, w.field, m.at);
        if (w.decide) await this.writeDecision(tx, t, w.decide, m.at);
        const after = (await this.getIn(tx, tenantId, id))!;
        const body = answer(after, await this.decisionsIn(tx, t.id));
        if (m.key) {
          await tx.unsafe("INSERT INTO human_review_replies (task_id, idempotency_key, status, body, created_at, request) VALUES ($1, $2, $3, CAST($4 AS text)::json, $5, $6)", [
            t.id, m.key, 200, JSON.stringify(body), m.at, m.request,
          ]);
        }
        return { kind: "done", body };
      });
    } catch (err) {
      if (err instanceof RunNotWaiting && seen) return { kind: "run_not_waiting", version: seen.version, status: seen.status };
      throw err;
    }
  }

  private async writeField(tx: Pg, taskId: string, f: NonNullable<TaskWrite["field"]>, at: string): Promise<void> {
    await tx.unsafe(
      `INSERT INTO human_review_decisions (id, task_id, position, path, original_value, current_value, required, reason, confirmed, confirmed_by, confirmed_at)
       VALUES ($1, $2, $3, $4, CAST($5 AS text)::json, CAST($6 AS text)::json, false, 'edited by the reviewer', CAST($7 AS int) <> 0, $8, CAST($9 AS text)::timestamptz)
       ON CONFLICT (task_id, path) DO UPDATE SET current_value = excluded.current_value, confirmed = excluded.confirmed,
         confirmed_by = excluded.confirmed_by, confirmed_at = excluded.confirmed_at, version = human_review_decisions.version + 1`,
      [f.id, taskId, f.position, f.path, f.originalValue, f.currentValue, f.confirmed ? 1 : 0, f.confirmed ? f.by : null, f.confirmed ? at : null],
    );
    // The task's version moves with every field, and its confirmed count is recounted from the rows.
    await tx`UPDATE human_review_tasks SET version = version + 1, updated_at = ${at},
        confirmed_count = (SELECT COUNT(*)::int FROM human_review_decisions WHERE task_id = ${taskId} AND required AND confirmed)
      WHERE id = ${taskId}`;
  }

  private async writeDecision(tx: Pg, t: TaskRow, d: NonNullable<TaskWrite["decide"]>, at: string): Promise<void> {
    const reason = d.status === "rejected" ? d.reason : null;
    await tx`UPDATE human_review_tasks SET status = ${d.status}, decided_by = ${d.by}, decided_by_id = ${d.byId}, decided_at = ${at}, reason = ${reason}, version = version + 1, updated_at = ${at}
      WHERE id = ${t.id}`;
    const moved =
      d.status === "approved"
        ? await requeueIn(tx, t.runId, at, t.stepPath, d.output, { type: "resumed", status: "pending", message: `human review ${t.id} approved by ${d.by}`, metadata: { taskId: t.id, by: d.by, byId: d.byId } })
        : await endWaitingIn(tx, t.runId, at, t.stepPath, "rejected", { message: d.reason, code: "rejected" });
    if (!moved) throw new RunNotWaiting();
  }
}
