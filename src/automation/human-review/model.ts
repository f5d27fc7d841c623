// Wire schemas of the human-review task API (valibot) and the types inferred from them.
import * as v from "valibot";
import { INT32_MAX, isoQuery, queryInt, wholeNumber } from "../http/validate";
import type { TaskFile } from "./store";

export type { TaskFile };

// What the task API answers: the server builds these (service.ts) and the client returns them.
export type HumanReviewStatus = "pending" | "approved" | "rejected" | "cancelled";

export interface HumanReviewSummary {
  id: string;
  /** The parked run. */
  executionId: string;
  automationId: string;
  automationName: string | null;
  sourceKind: "workflow_step";
  sourceLabel: string;
  status: HumanReviewStatus;
  requiredCount: number;
  confirmedCount: number;
  /** Pass it as `expectedVersion` to every write. */
  version: number;
  createdAt: string;
  updatedAt: string;
}

export interface HumanReviewDecision {
  id: string;
  /** A JSON pointer into `data`, e.g. `/total`. */
  path: string;
  originalValue: unknown;
  currentValue: unknown;
  required: boolean;
  confirmed: boolean;
  reason: string | null;
  confirmedBy: string | null;
  confirmedAt: string | null;
  version: number;
}

/** A file as the task shows it (`sha256` stays server-side). */
export type HumanReviewFile = Omit<TaskFile, "sha256">;

export interface HumanReviewTask extends HumanReviewSummary {
  /** The step's data with every reviewed value applied. */
  data: unknown;
  decisions: HumanReviewDecision[];
  files: HumanReviewFile[];
  instructions: string | null;
  schema: unknown;
  fieldMetadata: Record<string, unknown>;
  decision: {
    status: "approved" | "rejected";
    /** A person's e-mail, or a key's name (its id when it has none). */
    by: string | null;
    at: string | null;
    reason: string | null;
    /** Who `by` is: {type: "user" | "key", id, name} (decisions recorded before 0202 kept only a key id, which is then both). */
    actor: { type: "user" | "key"; id: string; name: string } | null;
  } | null;
}

export interface HumanReviewList {
  tasks: HumanReviewSummary[];
  nextCursor: string | null;
}

export const ListQuery = v.object({
  automationId: v.optional(v.pipe(v.string(), v.minLength(1), v.maxLength(300))),
  waitingBefore: v.optional(isoQuery),
  cursor: v.optional(v.string()),
  limit: v.optional(queryInt(1, 100), "50"),
});
export type ListQuery = v.InferOutput<typeof ListQuery>;

const version = wholeNumber("expectedVersion", 1, INT32_MAX);
const idempotencyKey = v.pipe(v.string(), v.minLength(1, "idempotencyKey must not be empty"), v.maxLength(200, "idempotencyKey is at most 200 characters"));
const scalar = v.union([v.string(), v.number(), v.boolean(), v.null()], "value must be a scalar (string, number, boolean or null)");

export const FieldBody = v.strictObject({
  path: v.pipe(v.string("path is required"), v.regex(/^\/.*/, "path must be a JSON pointer such as /invoice/total")),
  value: scalar,
  expectedVersion: version,
  idempotencyKey: idempotencyKey,
  confirmed: v.optional(v.boolean(), true),
});
export type FieldBody = v.InferOutput<typeof FieldBody>;

export const ApproveBody = v.strictObject({
  expectedVersion: version,
  idempotencyKey: v.optional(idempotencyKey),
});
export type ApproveBody = v.InferOutput<typeof ApproveBody>;

export const RejectBody = v.strictObject({
  reason: v.pipe(v.string("reason is required"), v.trim(), v.minLength(1, "reason is required"), v.maxLength(5000, "reason is at most 5000 characters")),
  expectedVersion: version,
  idempotencyKey: idempotencyKey,
});
export type RejectBody = v.InferOutput<typeof RejectBody>;
