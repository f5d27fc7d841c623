// The rules of human-review tasks: list (pending, oldest first), detail, confirm/edit fields with an
// optimistic `expectedVersion`, approve (the reviewed data becomes the step's output and the run goes
// back to the durable queue, once) and reject (the run ends `rejected`). Every write is one IMMEDIATE
// transaction holding the version check, the change and the run's move; an idempotency key stores
// the first answer with it, so a retried request replays that answer instead of acting twice.
import { DomainError, Invalid, NotFound } from "../../kernel/errors";
import { newId } from "../../kernel/ids";
import type { AutomationContext } from "../context";
import { openBlob } from "../files/service";
import { runsOf } from "../runs/service";
import type { ApproveBody, FieldBody, HumanReviewList, HumanReviewSummary, HumanReviewTask, ListQuery, RejectBody, TaskFile } from "./model";
import { assign, lookup } from "./pointer";
import { type DecisionRow, HumanReviewStore, type TaskRow } from "./store";

/** 409 with what the client needs to recover: the task's current version and status. */
export class TaskConflict extends DomainError {
  constructor(
    message: string,
    readonly error: "version_conflict" | "task_not_pending" | "unconfirmed_fields",
    readonly currentVersion: number,
    readonly taskStatus: string,
    opts: { field?: string; issues?: DomainError["issues"] } = {},
  ) {
    super("conflict", message, { code: error, ...opts });
  }
}

/** Who acts: the API key (the platform has no users). */
export interface Reviewer {
  tenantId: string;
  keyId: string;
}

/** A stored answer: what the route sends (status + body). */
export interface Answer {
  status: number;
  body: unknown;
}

const parse = (s: string | null): unknown => (s == null ? null : JSON.parse(s));
const storeOf = new WeakMap<AutomationContext, HumanReviewStore>();
const store = (ctx: AutomationContext) => {
  let s = storeOf.get(ctx);
  if (!s) storeOf.set(ctx, (s = new HumanReviewStore(ctx.sqlite)));
  return s;
};

export function summary(t: TaskRow): HumanReviewSummary {
  return {
    id: t.id,
    executionId: t.runId,
    automationId: t.automationId,
    automationName: t.automationName,
    sourceKind: "workflow_step" as const,
    sourceLabel: t.sourceLabel,
    status: t.status,
    requiredCount: t.requiredCount,
    confirmedCount: t.confirmedCount,
    version: t.version,
    createdAt: t.createdAt,
    updatedAt: t.updatedAt,
  };
}

/** The task's data with every reviewed value applied. */
function currentData(t: TaskRow, decisions: DecisionRow[]): unknown {
  let data = parse(t.data);
  for (const d of decisions) if (d.currentValue !== d.originalValue) data = assign(data, d.path, parse(d.currentValue));
  return data;
}

function detail(s: HumanReviewStore, t: TaskRow): HumanReviewTask {
  const decisions = s.decisions(t.id);
  const meta = (parse(t.meta) ?? {}) as { schema?: unknown; fieldMetadata?: Record<string, unknown> };
  return {
    ...summary(t),
    data: currentData(t, decisions),
    decisions: decisions.map((d) => ({
      id: d.id,
      path: d.path,
      originalValue: parse(d.originalValue),
      currentValue: parse(d.currentValue),
      required: d.required === 1,
      confirmed: d.confirmed === 1,
      reason: d.reason,
      confirmedBy: d.confirmedBy,
      confirmedAt: d.confirmedAt,
      version: d.version,
    })),
    files: (JSON.parse(t.files) as TaskFile[]).map(({ sha256: _, ...f }) => f),
    instructions: t.instructions,
    schema: meta.schema ?? null,
    fieldMetadata: meta.fieldMetadata ?? {},
    decision: t.status === "approved" || t.status === "rejected" ? { status: t.status, by: t.decidedBy, at: t.decidedAt, reason: t.reason } : null,
  };
}

function find(s: HumanReviewStore, tenantId: string, id: string): TaskRow {
  const t = s.get(tenantId, id);
  if (!t) throw NotFound(`human review task ${id} not found`, { field: "id" });
  return t;
}

const encodeCursor = (t: TaskRow) => Buffer.from(JSON.stringify({ c: t.createdAt, i: t.id })).toString("base64url");
function decodeCursor(s: string): { createdAt: string; id: string } {
  try {
    const c = JSON.parse(Buffer.from(s, "base64url").toString()) as { c?: unknown; i?: unknown };
    if (typeof c.c === "string" && typeof c.i === "string") return { createdAt: c.c, id: c.i };
  } catch {}
  throw Invalid("cursor is not valid; pass nextCursor from a previous page", { field: "cursor", code: "invalid_cursor" });
}

export function listTasks(ctx: AutomationContext, tenantId: string, q: ListQuery): HumanReviewList {
  const rows = store(ctx).list({
    tenantId,
    automationId: q.automationId,
    waitingBefore: q.waitingBefore,
    after: q.cursor ? decodeCursor(q.cursor) : undefined,
    limit: q.limit + 1,
  });
  const more = rows.length > q.limit;
  const page = more ? rows.slice(0, q.limit) : rows;
  return { tasks: page.map(summary), nextCursor: more ? encodeCursor(page.at(-1)!) : null };
}

export function getTask(ctx: AutomationContext, tenantId: string, id: string): HumanReviewTask {
  const s = store(ctx);
  return detail(s, find(s, tenantId, id));
}

/**
 * Runs `act` in one transaction: a known idempotency key replays its first answer; otherwise the task
 * must be pending at `expectedVersion`. The answer is stored with the change.
 */
function mutate(ctx: AutomationContext, who: Reviewer, id: string, expectedVersion: number, key: string | undefined, act: (t: TaskRow, at: string) => void): Answer {
  const s = store(ctx);
  return s.tx(() => {
    const t = find(s, who.tenantId, id);
    if (key) {
      const prior = s.reply(t.id, key);
      if (prior) return { status: prior.status, body: JSON.parse(prior.body) };
    }
    if (t.status !== "pending") throw new TaskConflict(`task ${id} is ${t.status}`, "task_not_pending", t.version, t.status);
    if (t.version !== expectedVersion) {
      throw new TaskConflict(`task ${id} is at version ${t.version}, not ${expectedVersion}; reload it and retry`, "version_conflict", t.version, t.status, { field: "expectedVersion" });
    }
    const at = ctx.clock.now().toISOString();
    act(t, at);
    const body = detail(s, s.get(who.tenantId, id)!);
    if (key) s.saveReply(t.id, key, 200, JSON.stringify(body), at);
    return { status: 200, body };
  });
}

/** Sets (and by default confirms) one field; the pointer must name a field of the task's data. */
export function setField(ctx: AutomationContext, who: Reviewer, id: string, b: FieldBody): Answer {
  const s = store(ctx);
  return mutate(ctx, who, id, b.expectedVersion, b.idempotencyKey, (t, at) => {
    const hit = lookup(parse(t.data), b.path);
    if (!hit.found) throw Invalid(`the task's data has no field at ${b.path}`, { field: "path", code: "unknown_pointer" });
    if (hit.value !== null && typeof hit.value === "object") throw Invalid(`${b.path} is an object or array; set its scalar fields one by one`, { field: "path", code: "not_a_scalar_field" });
    const known = s.decisions(t.id);
    s.putDecision(t.id, {
      id: newId("hrd"),
      path: b.path,
      position: known.length,
      originalValue: JSON.stringify(hit.value),
      currentValue: JSON.stringify(b.value),
      confirmed: b.confirmed,
      by: who.keyId,
      at,
    });
    s.touch(t.id, at);
  });
}

/** Approves once every required field is confirmed: the run resumes with the reviewed data as the step's output. */
export function approve(ctx: AutomationContext, who: Reviewer, id: string, b: ApproveBody): Answer {
  const s = store(ctx);
  const runs = runsOf(ctx);
  const answer = mutate(ctx, who, id, b.expectedVersion, b.idempotencyKey, (t, at) => {
    const decisions = s.decisions(t.id);
    const open = decisions.filter((d) => d.required === 1 && d.confirmed !== 1);
    if (open.length) {
      throw new TaskConflict(`${open.length} required field(s) are not confirmed yet`, "unconfirmed_fields", t.version, t.status, {
        issues: open.map((d) => ({ field: d.path, message: `${d.path} must be confirmed before approval`, code: "unconfirmed_field" })),
      });
    }
    s.decide(t.id, "approved", who.keyId, at, null);
    const output = currentData(t, decisions);
    if (!runs.store.requeueIn(t.runId, at, t.stepPath, output, { type: "resumed", status: "pending", message: `human review ${t.id} approved`, metadata: { taskId: t.id } })) {
      throw new TaskConflict(`the run of task ${id} is no longer waiting`, "task_not_pending", t.version, t.status);
    }
  });
  runs.pool.wake();
  return answer;
}

/** Rejects: the run ends `rejected` with the reason as its error. */
export function reject(ctx: AutomationContext, who: Reviewer, id: string, b: RejectBody): Answer {
  const s = store(ctx);
  const runs = runsOf(ctx);
  let runId: string | undefined;
  const answer = mutate(ctx, who, id, b.expectedVersion, b.idempotencyKey, (t, at) => {
    s.decide(t.id, "rejected", who.keyId, at, b.reason);
    if (!runs.store.endWaitingIn(t.runId, at, t.stepPath, "rejected", { message: b.reason, code: "rejected" })) {
      throw new TaskConflict(`the run of task ${id} is no longer waiting`, "task_not_pending", t.version, t.status);
    }
    runId = t.runId;
  });
  if (runId) runs.finished(runId);
  return answer;
}

export async function fileContent(ctx: AutomationContext, tenantId: string, id: string, fileId: string): Promise<{ file: TaskFile; blob: Blob }> {
  const t = find(store(ctx), tenantId, id);
  const file = (JSON.parse(t.files) as TaskFile[]).find((f) => f.fileId === fileId);
  const blob = file ? await openBlob(ctx, file.sha256) : null;
  if (!file || !blob) throw NotFound(`task ${id} has no file ${fileId}`, { field: "fileId" });
  return { file, blob };
}
