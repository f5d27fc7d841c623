// Human-review tasks: the pending queue, one task with its fields and files, field confirmations, and
// the decision (approve resumes the parked run with the reviewed data, reject ends it `rejected`).
// A 409 is a ConflictError whose `envelope` also carries `error`, `currentVersion` and `status`, so a
// caller can reload and retry (see `taskConflict`). The wire types are the server's (human-review/model.ts).
import { AutomationError } from "./errors";
import { enc } from "./files";
import type { Transport } from "./transport";
import type { HumanReviewFile, HumanReviewList, HumanReviewSummary, HumanReviewTask } from "./types";

export interface HumanReviewListQuery {
  automationId?: string;
  /** ISO time: only tasks waiting since before it. */
  waitingBefore?: string;
  cursor?: string;
  limit?: number;
}

/** What a 409 of a task write says: why, and the task's current version and status. */
export interface TaskConflictInfo {
  error: "version_conflict" | "task_not_pending" | "unconfirmed_fields";
  currentVersion: number;
  status: string;
}

/** The task-conflict details of an error from a task write, or undefined for any other error. */
export function taskConflict(err: unknown): TaskConflictInfo | undefined {
  if (!(err instanceof AutomationError) || err.status !== 409) return undefined;
  const e = err.envelope as (typeof err.envelope & Partial<TaskConflictInfo>) | undefined;
  if (!e || typeof e.error !== "string" || typeof e.currentVersion !== "number") return undefined;
  return { error: e.error, currentVersion: e.currentVersion, status: String(e.status) };
}

const path = (id: string, rest = "") => `/v1/human-reviews/${enc(id)}${rest}`;

export class HumanReviewsResource {
  constructor(private readonly http: Transport) {}

  /** Pending tasks, oldest first. */
  list(query: HumanReviewListQuery = {}): Promise<HumanReviewList> {
    return this.http.json({ method: "GET", path: "/v1/human-reviews", query: { ...query } });
  }

  /** Pages through `list` with `nextCursor`. */
  async *iterate(query: Omit<HumanReviewListQuery, "cursor"> = {}): AsyncGenerator<HumanReviewSummary> {
    let cursor: string | null | undefined;
    do {
      const page = await this.list({ ...query, cursor: cursor ?? undefined });
      yield* page.tasks;
      cursor = page.nextCursor;
    } while (cursor);
  }

  get(id: string): Promise<HumanReviewTask> {
    return this.http.json({ method: "GET", path: path(id) });
  }

  /**
   * Sets one scalar field (and confirms it unless `confirmed: false`). `idempotencyKey` is required
   * by the server: a retry with the same key replays the first answer.
   */
  setField(id: string, body: { path: string; value: string | number | boolean | null; expectedVersion: number; idempotencyKey: string; confirmed?: boolean }): Promise<HumanReviewTask> {
    return this.http.json({ method: "PUT", path: path(id, "/fields"), json: body });
  }

  /** Approves once every required field is confirmed; the run resumes with the reviewed data. */
  approve(id: string, body: { expectedVersion: number; idempotencyKey?: string }): Promise<HumanReviewTask> {
    return this.http.json({ method: "POST", path: path(id, "/approve"), json: body });
  }

  /** Rejects; the run ends `rejected` with the reason as its error. */
  reject(id: string, body: { reason: string; expectedVersion: number; idempotencyKey: string }): Promise<HumanReviewTask> {
    return this.http.json({ method: "POST", path: path(id, "/reject"), json: body });
  }

  /** A task file's bytes (stream the Response body). */
  file(id: string, fileId: string): Promise<Response> {
    return this.http.response({ method: "GET", path: path(id, `/files/${enc(fileId)}/content`) });
  }
}
