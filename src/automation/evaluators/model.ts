// The evaluator YAML (valibot), its parsed form, and the wire body of PUT …/evaluators.
import * as v from "valibot";
import type { EvalResult } from "./store";

export type { EvalResult };

export const MAX_EVALUATOR_YAML_BYTES = 1024 * 1024;

const unit = (what: string) => v.pipe(v.number(`${what} must be a number`), v.minValue(0, `${what} must be between 0 and 1`), v.maxValue(1, `${what} must be between 0 and 1`));

const ExactDiff = v.strictObject({
  numericTolerance: v.optional(v.pipe(v.number(), v.minValue(0, "numericTolerance must be between 0 and 1e12"), v.maxValue(1e12, "numericTolerance must be between 0 and 1e12")), 1e-6),
  allowExtraFields: v.optional(v.boolean("allowExtraFields must be true or false"), true),
  paths: v.optional(v.pipe(v.array(v.pipe(v.string(), v.regex(/^[A-Za-z0-9_$-]+(\[\])?(\.[A-Za-z0-9_$-]+(\[\])?)*$/, "a path looks like header.id or lineItems[].total"))), v.minLength(1), v.maxLength(200))),
  passThreshold: v.optional(unit("passThreshold"), 1),
});

const CustomScript = v.strictObject({
  script: v.pipe(
    v.string("script is required"),
    v.maxLength(256 * 1024, "script is at most 256 KiB"),
    v.regex(/function\s+scoreScript\s*\(/, "script must define function scoreScript(expected, actual)"),
  ),
  timeoutMs: v.optional(v.pipe(v.number(), v.integer(), v.minValue(1), v.maxValue(30_000, "timeoutMs is at most 30000")), 5_000),
  memoryLimitMb: v.optional(v.pipe(v.number(), v.integer(), v.minValue(1), v.maxValue(50, "memoryLimitMb is at most 50")), 10),
  passThreshold: v.optional(unit("passThreshold"), 0.7),
});

const Label = v.union([
  v.pipe(v.string(), v.minLength(1)),
  v.strictObject({ label: v.pipe(v.string(), v.minLength(1)), score: unit("score") }),
], "a label is a string or {label, score}");

const LlmJudge = v.pipe(
  v.strictObject({
    model: v.optional(v.pipe(v.string(), v.minLength(1), v.maxLength(200))),
    mode: v.optional(v.picklist(["continuous", "discrete"], "mode must be continuous or discrete"), "continuous"),
    labels: v.optional(v.pipe(v.array(Label), v.minLength(2, "labels needs at least 2 entries"), v.maxLength(20))),
    promptExtension: v.pipe(v.string("promptExtension is required"), v.minLength(10, "promptExtension must be at least 10 characters"), v.maxLength(20_000)),
    passThreshold: v.optional(unit("passThreshold"), 0.7),
  }),
  v.forward(
    v.check((c) => c.mode !== "discrete" || !!c.labels, "discrete mode needs labels"),
    ["labels"],
  ),
);

const common = {
  name: v.pipe(v.string("name is required"), v.maxLength(64, "name is at most 64 characters"), v.regex(/^[a-z0-9]+(-[a-z0-9]+)*$/, "name must be kebab-case (a-z, 0-9, -)")),
  description: v.optional(v.pipe(v.string(), v.maxLength(2000))),
  weight: v.optional(v.pipe(v.number("weight must be a number"), v.minValue(0, "weight must be between 0 and 1000000"), v.maxValue(1e6, "weight must be between 0 and 1000000")), 1),
};

export const Evaluator = v.variant(
  "type",
  [
    v.strictObject({ ...common, type: v.literal("exact-diff"), config: v.optional(ExactDiff, {}) }),
    v.strictObject({ ...common, type: v.literal("custom-script"), config: CustomScript }),
    v.strictObject({ ...common, type: v.literal("llm-judge"), config: LlmJudge }),
  ],
  "type must be exact-diff, custom-script or llm-judge",
);
export type Evaluator = v.InferOutput<typeof Evaluator>;

export const EvaluatorConfig = v.pipe(
  v.strictObject({
    passThreshold: v.optional(unit("passThreshold"), 0.7),
    evaluators: v.pipe(v.array(Evaluator, "evaluators must be a list"), v.maxLength(50, "at most 50 evaluators")),
  }),
  v.forward(
    v.check((c) => new Set(c.evaluators.map((e) => e.name)).size === c.evaluators.length, "evaluator names must be unique"),
    ["evaluators"],
  ),
);
export type EvaluatorConfig = v.InferOutput<typeof EvaluatorConfig>;

export const PutBody = v.strictObject({ yaml: v.pipe(v.string("yaml must be a string"), v.minLength(1, "yaml is required")) });

/** What one evaluator says about one run. */
export interface Score {
  score: number | null;
  passed: boolean | null;
  label?: string | null;
  details?: unknown;
  error?: string | null;
}
