// valibot schemas for the parts of a workflow the parser owns (top level, inputs, common step
// fields). Each step kind's own config schema lives beside the kind in engine/kinds/.
import * as v from "valibot";
import { inputTypes, itemTypes } from "../engine/workflow-types";

export const SLUG = /^[a-z0-9][a-z0-9_-]*$/;
const SEMVER = /^(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)(?:-[0-9A-Za-z-]+(?:\.[0-9A-Za-z-]+)*)?(?:\+[0-9A-Za-z-]+(?:\.[0-9A-Za-z-]+)*)?$/;
const int = (min: number, max: number) => v.pipe(v.number(), v.integer(), v.minValue(min), v.maxValue(max));

export const inputSchema = v.strictObject({
  name: v.pipe(v.string(), v.regex(/^[A-Za-z_][A-Za-z0-9_-]*$/, "must be an identifier (letters, digits, _ and -)")),
  type: v.picklist(inputTypes, `must be one of ${inputTypes.join(", ")}`),
  required: v.optional(v.boolean(), false),
  description: v.optional(v.string()),
  default: v.optional(v.unknown()),
  /** The allowed values of a string, number or integer input (a select in the console's run form). */
  enum: v.optional(
    v.pipe(v.array(v.union([v.string(), v.number()], "must be strings or numbers"), "must be a list of the allowed values"), v.minLength(1, "must list at least one value")),
  ),
  /** The elements' type of an `array` input (`items: file`: a list of files). */
  items: v.optional(v.picklist(itemTypes, `must be one of ${itemTypes.join(", ")}`)),
});

export const workflowSchema = v.strictObject({
  name: v.pipe(
    v.string("must be a string"),
    v.maxLength(100),
    v.regex(SLUG, "must be a slug: lowercase letters, digits, - and _, starting with a letter or digit"),
  ),
  version: v.optional(v.pipe(v.string("must be a semver string such as 1.0.0 (quote it)"), v.regex(SEMVER, "must be a semver version such as 1.0.0"))),
  description: v.optional(v.string()),
  /** Model for this workflow's AI steps that name none (catalog id); the server default otherwise. */
  defaultModel: v.optional(v.pipe(v.string(), v.minLength(1))),
  triggerMethods: v.optional(
    v.array(v.looseObject({ type: v.picklist(["api", "manual", "email", "cron"], "must be api, manual, email or cron") })),
    [{ type: "api" }],
  ),
  inputs: v.optional(
    v.pipe(
      v.array(v.unknown()),
      v.maxLength(200),
    ),
    [],
  ),
  steps: v.pipe(v.array(v.unknown(), "must be a list of steps"), v.minLength(1, "a workflow needs at least one step")),
  output: v.optional(v.unknown()),
  settings: v.optional(
    v.strictObject({ timeout: v.optional(int(1, 86_400_000)), retries: v.optional(int(0, 10)) }),
    {},
  ),
});

export const retrySchema = v.union(
  [v.literal("never"), v.strictObject({ mode: v.literal("automatic"), maxAttempts: int(1, 10), delayMs: v.optional(int(0, 60_000)) })],
  'must be "never" or {mode: automatic, maxAttempts: 1-10}',
);

export const STEP_NAME = /^[A-Za-z_][A-Za-z0-9_-]*$/;

export const commonStepSchema = v.object({
  name: v.pipe(v.string("must be a string"), v.maxLength(100), v.regex(STEP_NAME, "must start with a letter or _ and contain only letters, digits, _ and -")),
  type: v.string("must be a string"),
  description: v.optional(v.string()),
  if: v.optional(v.union([v.string(), v.boolean()], "must be a template string or a boolean")),
  timeout: v.optional(int(1, 86_400_000)),
  retry: v.optional(retrySchema),
});

export const COMMON_STEP_FIELDS = ["name", "type", "description", "if", "timeout", "retry"];
