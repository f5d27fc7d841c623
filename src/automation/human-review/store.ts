// What human review needs from storage: tasks, their field decisions, and the reviewer's actions that
// move the run in the same transaction. One async interface; db/sqlite/human-review.ts and
// db/pg/human-review.ts implement it. This module imports no implementation.

/** A file shown to the reviewer, as stored with the task (model.ts re-exports it for the wire). */
export interface TaskFile {
  fileId: string;
  filename: string;
  mimeType: string;
  size: number;
  fieldName: string | null;
  artifactPath: string;
  role: string;
  sha256: string;
}

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
  /** The id behind `decidedBy` (usr_… or a key's id; 0202): null for tasks decided before. */
  decidedById: string | null;
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

export type NewTask = Omit<TaskRow, "confirmedCount" | "version" | "decidedBy" | "decidedById" | "decidedAt" | "reason" | "updatedAt">;
export type NewDecision = Omit<DecisionRow, "taskId" | "confirmed" | "confirmedBy" | "confirmedAt" | "version">;

export interface ListTasks {
  tenantId: string;
  automationId?: string;
  waitingBefore?: string;
  after?: { createdAt: string; id: string };
  limit: number;
}

/** What a reviewer's action writes: a field's value, and/or the decision with the run's move. */
export interface TaskWrite {
  /** Sets a field's reviewed value (a new decision row when the step had not selected the field). */
  field?: { id: string; path: string; position: number; originalValue: string; currentValue: string; confirmed: boolean; by: string };
  /** Approve: the run goes back to the queue with its parked step completed as `output`. Reject: the run ends `rejected`. */
  decide?: { status: "approved"; by: string; byId: string; output: unknown } | { status: "rejected"; by: string; byId: string; reason: string };
}

/** The outcome of `HumanReviewStore.act`; anything but "done"/"replay" wrote nothing. */
export type TaskActResult =
  | { kind: "done"; body: unknown }
  | { kind: "replay"; status: number; body: unknown }
  | { kind: "key_reused"; version: number; status: string }
  | { kind: "not_found" }
  | { kind: "not_pending" | "version_conflict" | "run_not_waiting"; version: number; status: string };

/**
 * Human-review tasks. Writes that also move the run (park, approve, reject) commit with the run's
 * change, so a task and its run never disagree, even across a crash.
 */
export interface HumanReviewStore {
  get(tenantId: string, id: string): Promise<TaskRow | undefined>;
  decisions(taskId: string): Promise<DecisionRow[]>;
  /** Pending tasks, oldest first; `after` is the last row of the previous page. */
  list(f: ListTasks): Promise<TaskRow[]>;
  /**
   * Parks the task's run on its step (step and run `waiting`) and records the task, once: a step run
   * again after a crash gets the task its earlier attempt created. Null when the run may not wait (a
   * cancel was requested, or it is not running). Returns the task's id.
   */
  park(task: NewTask, decisions: NewDecision[]): Promise<string | null>;
  /**
   * One reviewer action, all or nothing: a known idempotency `key` replays its first answer when
   * `request` (the action's fingerprint: what, by whom, with which body) is the one stored with it, and
   * is refused (`key_reused`) when it is another request; else the
   * task must be pending at `expectedVersion`, `plan` (pure, synchronous; may throw a domain error)
   * says what to write, and `answer` builds the reply from the task as written, stored under `key`.
   */
  act(
    tenantId: string,
    id: string,
    m: { expectedVersion: number; key?: string; request: string; at: string },
    plan: (t: TaskRow, decisions: DecisionRow[]) => TaskWrite,
    answer: (t: TaskRow, decisions: DecisionRow[]) => unknown,
  ): Promise<TaskActResult>;
}
