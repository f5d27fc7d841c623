// Wire schemas of run reviews, corrected files, promotion and review health (valibot).
import * as v from "valibot";
import type { Review, ReviewCorrection, ReviewStatus, ReviewVerdict } from "./store";

export type { Review, ReviewCorrection, ReviewStatus, ReviewVerdict };
import { isoQuery, queryInt } from "../http/validate";

const text = (max: number) => v.pipe(v.string(), v.maxLength(max, `at most ${max} characters`));

export const Correction = v.strictObject({
  id: v.optional(v.pipe(v.string(), v.minLength(1), v.maxLength(100))),
  kind: v.picklist(["field", "file"], "kind must be field or file"),
  path: v.pipe(v.string("path is required"), v.minLength(1, "path is required"), v.maxLength(1000)),
  label: v.optional(v.nullable(text(500))),
  originalValue: v.optional(v.unknown()),
  correctedValue: v.optional(v.unknown()),
  note: v.optional(v.nullable(text(10_000))),
  correctedArtifactPath: v.optional(v.nullable(text(1000))),
});

export const ReviewBody = v.strictObject({
  verdict: v.optional(v.nullable(v.picklist(["correct", "incorrect"], "verdict must be correct, incorrect or null"))),
  status: v.optional(v.picklist(["open", "closed", "wont_fix"], "status must be open, closed or wont_fix")),
  note: v.optional(v.nullable(text(20_000))),
  correctedOutput: v.optional(v.unknown()),
  corrections: v.optional(v.pipe(v.array(Correction), v.maxLength(1000, "at most 1000 corrections"))),
});
export type ReviewBody = v.InferOutput<typeof ReviewBody>;

export const CopyBody = v.strictObject({
  outputFileName: v.pipe(v.string("outputFileName is required"), v.minLength(1, "outputFileName is required")),
  expectedName: v.optional(v.string()),
});

export const RenameBody = v.strictObject({ name: v.string("name is required") });

export const PromoteBody = v.strictObject({
  name: v.optional(v.pipe(v.string(), v.minLength(1), v.maxLength(128))),
  useCorrections: v.optional(v.boolean(), true),
});

const list = v.pipe(
  v.string(),
  v.transform((s) => s.split(",").map((x) => x.trim()).filter(Boolean)),
);

export const HealthQuery = v.object({
  type: v.optional(list),
  status: v.optional(list),
  trigger: v.optional(list),
  triggeredBy: v.optional(list),
  sourceRef: v.optional(v.string()),
  batchId: v.optional(v.string()),
  exampleId: v.optional(v.string()),
  exampleIdContains: v.optional(v.string()),
  from: v.optional(isoQuery),
  to: v.optional(isoQuery),
  completedAfter: v.optional(isoQuery),
  completedBefore: v.optional(isoQuery),
  experiments: v.optional(v.string()),
  bucket: v.optional(v.picklist(["day", "week", "month"], "bucket must be day, week or month"), "day"),
  rollingWindow: v.optional(queryInt(1, 1000), "100"),
  minRollingReviews: v.optional(queryInt(1, 1000), "1"),
});
export type HealthQuery = v.InferOutput<typeof HealthQuery>;
