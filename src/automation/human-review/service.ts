// The rules of human-review tasks: list (pending, oldest first), detail, confirm/edit fields with an
// optimistic `expectedVersion`, approve (the reviewed data becomes the step's output and the run goes
// back to the durable queue, once) and reject (the run ends `rejected`). Every write is one store
// action (`ctx.storage.humanReview.act`) holding the version check, the change and the run's move; an
// idempotency key stores the first answer with it, so a retried request replays that answer instead
// of acting twice.
import { DomainError, Invalid, NotFound } from "../../kernel/errors";
import { newId } from "../../kernel/ids";
import type { AutomationContext } from "../context";
import { actorOf, byText, storedActor } from "../tenancy/actor";
import type { Auth } from "../tenancy/model";
import { openBlob } from "../files/service";
import { runsOf } from "../runs/service";
import type { ApproveBody, FieldBody, HumanReviewList, HumanReviewSummary, HumanReviewTask, ListQuery, RejectBody, TaskFile } from "./model";
import { assign, lookup } from "../engine/pointer";
import type { DecisionRow, TaskActResult, TaskRow, TaskWrite } from "./store";

/** 409 with what the client needs to recover: the task's current version and status. */
export class TaskConflict extends DomainError {
  constructor(
    message: string,
    readonly error: "version_conflict" | "task_not_pending" | "unconfirmed_fields" | "idempotency_key_reused",
    readonly currentVersion: number,
    readonly taskStatus: string,
    opts: { field?: string; issues?: DomainError["issues"] } = {},
  ) {
    super("conflict", message, { code: error, ...opts });
  }
}

/** Who acts: the request's principal, a person or an API key (tenancy/actor.ts names them). */
export type Reviewer = Pick<Auth, "tenantId" | "keyId" | "keyName" | "person">;

/** A stored answer: what the route sends (status + body). */
export interface Answer {
  status: number;
  body: unknown;
}

/** The decision's `by` (a person's e-mail, a key's name) and the id behind it. */
function decidedBy(who: Reviewer): { by: string; byId: string } {
  const a = actorOf(who);
  return { by: byText(a), byId: a.id };
}

const parse = (s: string | null): unknown => (s == null ? null : JSON.parse(s));

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

function detail(t: TaskRow, decisions: DecisionRow[]): HumanReviewTask {
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
    decision: t.status === "approved" || t.status === "rejected" ? { status: t.status, by: t.decidedBy, at: t.decidedAt, reason: t.reason, actor: storedActor(t.decidedBy, t.decidedById) } : null,
  };
}

const notFound = (id: string) => NotFound(`human review task ${id} not found`, { field: "id" });

async function find(ctx: AutomationContext, tenantId: string, id: string): Promise<TaskRow> {
  const t = await ctx.storage.humanReview.get(tenantId, id);
  if (!t) throw notFound(id);
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

export async function listTasks(ctx: AutomationContext, tenantId: string, q: ListQuery): Promise<HumanReviewList> {
  const rows = await ctx.storage.humanReview.list({
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

export async function getTask(ctx: AutomationContext, tenantId: string, id: string): Promise<HumanReviewTask> {
  const t = await find(ctx, tenantId, id);
  return detail(t, await ctx.storage.humanReview.decisions(t.id));
}

/** A request's identity for its idempotency key: sha256 of its JSON with sorted keys. */
function fingerprint(request: unknown): string {
  const sorted = (v: unknown): unknown =>
    v && typeof v === "object" && !Array.isArray(v)
      ? Object.fromEntries(Object.keys(v).sort().map((k) => [k, sorted((v as Record<string, unknown>)[k])]))
      : Array.isArray(v) ? v.map(sorted) : v;
  return new Bun.CryptoHasher("sha256").update(JSON.stringify(sorted(request))).digest("hex");
}

/**
 * One reviewer action: a known idempotency key replays its first answer when the request is the same
 * (action, caller, body), and is refused (409 idempotency_key_reused) for another one, so a stale page
 * that reused a key is never told its different request succeeded; otherwise the task must be
 * pending at `expectedVersion`. The store decides both inside its transaction, with `plan`'s writes.
 */
async function mutate(
  ctx: AutomationContext,
  who: Reviewer,
  id: string,
  action: { name: "field" | "approve" | "reject"; body: { expectedVersion: number; idempotencyKey?: string } },
  plan: (t: TaskRow, decisions: DecisionRow[]) => TaskWrite,
): Promise<Answer> {
  const at = ctx.clock.now().toISOString();
  const { idempotencyKey: key, ...body } = action.body;
  const { expectedVersion } = body;
  const request = fingerprint({ action: action.name, by: actorOf(who).id, body });
  const r: TaskActResult = await ctx.storage.humanReview.act(who.tenantId, id, { expectedVersion, key, request, at }, plan, detail);
  switch (r.kind) {
    case "done":
      return { status: 200, body: r.body };
    case "replay":
      return { status: r.status, body: r.body };
    case "key_reused":
      throw new TaskConflict(
        `idempotencyKey was already used for another request on task ${id}; a new action needs a new key`,
        "idempotency_key_reused",
        r.version,
        r.status,
        { field: "idempotencyKey" },
      );
    case "not_found":
      throw notFound(id);
    case "not_pending":
      throw new TaskConflict(`task ${id} is ${r.status}`, "task_not_pending", r.version, r.status);
    case "version_conflict":
      throw new TaskConflict(`task ${id} is at version ${r.version}, not ${expectedVersion}; reload it and retry`, "version_conflict", r.version, r.status, { field: "expectedVersion" });
    case "run_not_waiting":
      throw new TaskConflict(`the run of task ${id} is no longer waiting`, "task_not_pending", r.version, r.status);
  }
}

/** Sets (and by default confirms) one field; the pointer must name a field of the task's data. */
export function setField(ctx: AutomationContext, who: Reviewer, id: string, b: FieldBody): Promise<Answer> {
  return mutate(ctx, who, id, { name: "field", body: b }, (t, known) => {
    const hit = lookup(parse(t.data), b.path);
    if (!hit.found) throw Invalid(`the task's data has no field at ${b.path}`, { field: "path", code: "unknown_pointer" });
    if (hit.value !== null && typeof hit.value === "object") throw Invalid(`${b.path} is an object or array; set its scalar fields one by one`, { field: "path", code: "not_a_scalar_field" });
    return {
      field: {
        id: newId("hrd"),
        path: b.path,
        position: known.length,
        originalValue: JSON.stringify(hit.value),
        currentValue: JSON.stringify(b.value),
        confirmed: b.confirmed,
        by: byText(actorOf(who)),
      },
    };
  });
}

/** Approves once every required field is confirmed: the run resumes with the reviewed data as the step's output. */
export async function approve(ctx: AutomationContext, who: Reviewer, id: string, b: ApproveBody): Promise<Answer> {
  const answer = await mutate(ctx, who, id, { name: "approve", body: b }, (t, decisions) => {
    const open = decisions.filter((d) => d.required === 1 && d.confirmed !== 1);
    if (open.length) {
      throw new TaskConflict(`${open.length} required field(s) are not confirmed yet`, "unconfirmed_fields", t.version, t.status, {
        issues: open.map((d) => ({ field: d.path, message: `${d.path} must be confirmed before approval`, code: "unconfirmed_field" })),
      });
    }
    return { decide: { status: "approved", ...decidedBy(who), output: currentData(t, decisions) } };
  });
  runsOf(ctx).queued();
  return answer;
}

/** Rejects: the run ends `rejected` with the reason as its error. */
export async function reject(ctx: AutomationContext, who: Reviewer, id: string, b: RejectBody): Promise<Answer> {
  let runId: string | undefined;
  const answer = await mutate(ctx, who, id, { name: "reject", body: b }, (t) => {
    runId = t.runId;
    return { decide: { status: "rejected", ...decidedBy(who), reason: b.reason } };
  });
  if (runId) runsOf(ctx).finished(runId);
  return answer;
}

export async function fileContent(ctx: AutomationContext, tenantId: string, id: string, fileId: string): Promise<{ file: TaskFile; blob: Blob }> {
  const t = await find(ctx, tenantId, id);
  const file = (JSON.parse(t.files) as TaskFile[]).find((f) => f.fileId === fileId);
  const blob = file ? await openBlob(ctx, file.sha256) : null;
  if (!file || !blob) throw NotFound(`task ${id} has no file ${fileId}`, { field: "fileId" });
  return { file, blob };
}
