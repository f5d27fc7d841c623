// control.human_review {with: data, schema?, fieldMetadata, selection, files, instructions}: parks the
// run on a task (hrt_...) until a person confirms the selected fields and approves (the reviewed data
// becomes this step's output) or rejects (the run ends `rejected`). The run holds no worker while it
// waits: the host commits task + `waiting` status together, then the engine unwinds (Suspended).
import * as v from "valibot";
import { selectFields } from "../review-selection";
import type { FileRef } from "../contract";
import { Cancelled, StepError, Suspended } from "../errors";
import { defineKind } from "../kind";

const confidence = v.union([v.pipe(v.number(), v.minValue(0), v.maxValue(1)), v.picklist(["low", "medium", "high"])], "must be a number 0–1 or low, medium, high");
const pointer = v.pipe(v.string(), v.regex(/^(\/.*)?$/, "must be a JSON pointer such as /invoice/total"));
const fileRef = v.looseObject({ $file: v.string(), filename: v.string(), contentType: v.string(), size: v.number() });

export const schema = v.strictObject({
  data: v.unknown(),
  schema: v.optional(v.record(v.string(), v.unknown())),
  fieldMetadata: v.optional(
    v.record(
      pointer,
      v.strictObject({
        confidence: v.optional(confidence),
        label: v.optional(v.string()),
        description: v.optional(v.string()),
        review: v.optional(v.picklist(["always", "never", "skip"])),
      }),
    ),
    {},
  ),
  selection: v.optional(
    v.strictObject({
      mode: v.optional(v.picklist(["confidence", "explicit", "all"]), "confidence"),
      threshold: v.optional(confidence, 0.8),
      missingConfidence: v.optional(v.picklist(["review", "skip"]), "review"),
      include: v.optional(v.array(pointer), []),
      exclude: v.optional(v.array(pointer), []),
    }),
    {},
  ),
  files: v.optional(
    v.strictObject({
      includeRunInputs: v.optional(v.boolean(), true),
      attachments: v.optional(v.array(v.union([fileRef, v.null()])), []),
    }),
    {},
  ),
  instructions: v.optional(v.pipe(v.string(), v.maxLength(10_000))),
});

export default defineKind({
  type: "control.human_review",
  configAt: "with",
  schema,
  async run(config, ctx) {
    // Evaluation runs replay examples unattended: nobody would ever answer, so the data passes as is.
    if (ctx.evaluation) return config.data;
    const gateway = ctx.services.humanReview;
    if (!gateway) throw new StepError("this server cannot pause runs for human review", "human_review_unavailable", { retryable: false });
    if (config.data === undefined) throw new StepError("data is required", "invalid_config", { retryable: false });
    const sel = config.selection as Required<NonNullable<typeof config.selection>>;
    const { fields, unknown } = selectFields(config.data, config.fieldMetadata ?? {}, sel);
    if (unknown.length) throw new StepError(`no field at ${unknown.join(", ")} in data`, "invalid_config", { retryable: false });
    const files = config.files as { includeRunInputs: boolean; attachments: (FileRef | null)[] };
    const taskId = await gateway.park({
      step: { path: ctx.path, name: ctx.step.name, type: ctx.step.type, attempt: 1, startedAt: ctx.services.clock.now().toISOString() },
      data: config.data,
      fields,
      includeRunInputs: files.includeRunInputs,
      attachments: files.attachments.filter((f): f is FileRef => f !== null),
      instructions: config.instructions,
      meta: { schema: config.schema, fieldMetadata: config.fieldMetadata },
    });
    if (taskId === null) throw new Cancelled();
    throw new Suspended(taskId);
  },
});
