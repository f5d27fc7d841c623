// Wire schemas of the runs API (valibot) and the types inferred from them.
import * as v from "valibot";
import { expandQuery, queryInt } from "../http/validate";
import { STATUSES, type RunStatus } from "./store";

const Json = v.record(v.string(), v.unknown());

export const FileIdRef = v.strictObject({ $fileId: v.pipe(v.string(), v.minLength(1, "$fileId must not be empty")) });
export const InlineRef = v.strictObject({
  $inline: v.strictObject({
    filename: v.pipe(v.string(), v.minLength(1, "filename is required"), v.maxLength(255)),
    mimeType: v.pipe(v.string(), v.regex(/^[\w.+-]+\/[\w.+-]+$/, "mimeType must look like type/subtype")),
    base64: v.pipe(v.string(), v.minLength(1, "base64 is required"), v.regex(/^[A-Za-z0-9+/_-]*={0,2}$/, "base64 is not valid base64")),
  }),
});
export const FileValue = v.union([FileIdRef, InlineRef], "a file must be {\"$fileId\": ...} or {\"$inline\": {filename, mimeType, base64}}");
export type FileValue = v.InferOutput<typeof FileValue>;

export const StartBody = v.strictObject({
  target: v.pipe(v.string("target is required"), v.trim(), v.minLength(1, "target is required"), v.maxLength(300)),
  input: v.optional(Json),
  files: v.optional(v.record(v.string(), v.union([FileValue, v.pipe(v.array(FileValue), v.maxLength(100))]))),
  overrides: v.optional(v.strictObject({ steps: v.optional(v.record(v.string(), Json)) })),
  metadata: v.optional(Json),
});
export type StartBody = v.InferOutput<typeof StartBody>;

export const WaitQuery = v.object({
  version: v.optional(v.pipe(v.string(), v.minLength(1), v.maxLength(100))),
  waitForCompletion: v.optional(queryInt(0, 600)),
});

const Iso = v.pipe(
  v.string(),
  v.check((s) => !Number.isNaN(Date.parse(s)), "must be an ISO-8601 timestamp"),
  v.transform((s) => new Date(s).toISOString()),
);
const commaList = (max = 100) =>
  v.pipe(
    v.string(),
    v.transform((s) => s.split(",").map((x) => x.trim()).filter(Boolean)),
    v.array(v.string()),
    v.maxLength(max, `at most ${max} values`),
  );
const boolish = v.picklist(["true", "false", "1", "0"], "must be true or false");

export const ListQuery = v.object({
  type: v.optional(v.picklist(["workflow", "agent"], "type must be workflow or agent")),
  source: v.optional(v.string()),
  status: v.optional(v.pipe(commaList(), v.array(v.picklist(STATUSES, `status must be among ${STATUSES.join(", ")}`)))),
  trigger: v.optional(v.string()),
  triggeredBy: v.optional(v.string()),
  sourceRef: v.optional(v.string()),
  batchId: v.optional(v.string()),
  exampleId: v.optional(v.string()),
  exampleIdContains: v.optional(v.string()),
  from: v.optional(Iso),
  to: v.optional(Iso),
  createdAfter: v.optional(Iso),
  createdBefore: v.optional(Iso),
  completedAfter: v.optional(Iso),
  completedBefore: v.optional(Iso),
  cursor: v.optional(v.string()),
  offset: v.optional(queryInt(0, 1_000_000_000)),
  limit: v.optional(queryInt(1, 100), "50"),
  ids: v.optional(commaList()),
  experiments: v.optional(v.string()),
  sort: v.optional(
    v.pipe(
      v.string(),
      v.transform((s) => s.replace(/_([a-z])/g, (_, c: string) => c.toUpperCase())),
      v.picklist(["createdAt", "completedAt", "startedAt"], "sort must be createdAt, startedAt or completedAt"),
    ),
    "createdAt",
  ),
  order: v.optional(v.picklist(["asc", "desc"], "order must be asc or desc"), "desc"),
  reviewStatus: v.optional(v.picklist(["open", "closed", "wont_fix"], "reviewStatus must be open, closed or wont_fix")),
  reviewVerdict: v.optional(v.picklist(["correct", "incorrect", "null"], "reviewVerdict must be correct, incorrect or null")),
  hasReview: v.optional(boolish),
  noReview: v.optional(boolish),
  hasCorrections: v.optional(boolish),
  reviewNoteContains: v.optional(v.string()),
  reviewCreatedAfter: v.optional(Iso),
  reviewCreatedBefore: v.optional(Iso),
  reviewUpdatedAfter: v.optional(Iso),
  reviewUpdatedBefore: v.optional(Iso),
  reviewClosedAfter: v.optional(Iso),
  reviewClosedBefore: v.optional(Iso),
  sinceLastClosed: v.optional(boolish),
  /** `sampleRank` on each row: a documented addition, opt-in so the default rows keep the public key set. */
  expand: expandQuery(["sampleRank"]),
  sampleRate: v.optional(
    v.pipe(v.string(), v.regex(/^(0(\.\d+)?|1(\.0+)?|\.\d+)$/, "sampleRate must be a number between 0 and 1"), v.transform(Number)),
  ),
});
export type ListQuery = v.InferOutput<typeof ListQuery>;

export const EXPANDS = ["input", "usage", "execution", "debug"] as const;
export const GetQuery = v.object({ expand: expandQuery(EXPANDS) });

export const RerunQuery = v.object({
  version: v.optional(v.pipe(v.string(), v.minLength(1), v.maxLength(100))),
  waitForCompletion: v.optional(queryInt(0, 600)),
});

export const ArtifactsQuery = v.object({
  zip: v.optional(v.picklist(["1", "true"], "zip must be 1")),
  bundle: v.optional(v.picklist(["review"], "bundle must be review")),
  token: v.optional(v.string()),
});

export const TokenBody = v.strictObject({
  expiresIn: v.optional(v.pipe(v.number(), v.integer(), v.minValue(60), v.maxValue(7 * 24 * 3600))),
});

// What the runs API answers (envelope.ts and routes.ts build these; the client returns them). A run
// reply carries more than the fields named here (timing, source, trigger, expand blocks): the index
// signature keeps them reachable without `any`.
export type { RunStatus };

export interface Run {
  id: string;
  type: string;
  finished: boolean;
  execution?: { status: RunStatus; [key: string]: unknown };
  output?: unknown;
  error?: unknown;
  files?: RunArtifact[];
  [key: string]: unknown;
}

export interface RunList {
  runs: Run[];
  nextCursor: string | null;
}

export interface RunEvent {
  type: string;
  timestamp: string;
  status: string | null;
  message: string | null;
  metadata: Record<string, unknown>;
}

export interface RunStep {
  name: string;
  path: string;
  type: string;
  status: string;
  startedAt: string;
  completedAt: string | null;
  durationMs: number | null;
  attempt: number;
  output?: unknown;
  error?: unknown;
  /** The values the step ran with: secrets as "[secret]", strings and size bounded (engine/step-input.ts). */
  input?: unknown;
}

/** `GET /v1/runs/{id}/usage` (envelope.ts usageView): tokens and calls of the run's model steps. */
export interface RunUsage {
  tokens: { input: number; output: number; cacheRead: number; cacheWrite: number };
  creditsCharged: number;
  durationMs: number | null;
  llmCallCount: number;
  [key: string]: unknown;
}

/** A file of a run (input, output or expected), as `GET /v1/runs/{id}/artifacts` lists it. */
export interface RunArtifact {
  name: string;
  role: string;
  path: string;
  stepName?: string;
  contentType: string | null;
  size: number | null;
}

export interface CancelResult {
  id: string;
  type: string;
  finished: boolean;
  execution: { status: RunStatus };
  cancellation: { state: "cancelled" | "requested" | "already_terminal"; wasStatus: RunStatus };
}
