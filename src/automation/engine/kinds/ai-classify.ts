// ai.classify {input, labels (≥ 2: names or {name, description}), prompt?, model?} →
// {label, confidence, reason}. The label must be one of the given ones (one repair turn otherwise);
// confidence is the model's own estimate in [0, 1].
import * as v from "valibot";
import { defineKind } from "../kind";
import { askJson, modelField, readInput, userTurn } from "./ai-shared";

const label = v.union([
  v.pipe(v.string(), v.minLength(1)),
  v.strictObject({ name: v.pipe(v.string(), v.minLength(1)), description: v.optional(v.string()) }),
]);

const schema = v.strictObject({
  input: v.unknown(),
  labels: v.pipe(
    v.array(label),
    v.minLength(2, "needs at least 2 labels"),
    v.check((ls) => new Set(ls.map((l) => (typeof l === "string" ? l : l.name))).size === ls.length, "labels must be unique"),
  ),
  prompt: v.optional(v.string()),
  model: modelField,
});

export default defineKind({
  type: "ai.classify",
  configAt: "with",
  schema,
  async run(config, ctx) {
    const input = await readInput(ctx, config.input);
    const labels = config.labels.map((l) => (typeof l === "string" ? { name: l } : l));
    const names = labels.map((l) => l.name);
    const answer = {
      type: "object",
      properties: {
        label: { type: "string", enum: names },
        confidence: { type: "number", minimum: 0, maximum: 1 },
        reason: { type: "string" },
      },
      required: ["label", "confidence", "reason"],
      additionalProperties: false,
    };
    const system = [
      "You classify documents. Choose exactly one label from this list:",
      ...labels.map((l) => `- ${l.name}${l.description ? `: ${l.description}` : ""}`),
      'Answer with a JSON object {"label": one of the labels, "confidence": your confidence from 0 to 1, "reason": one short sentence}.',
    ].join("\n");
    const { value } = await askJson(
      ctx,
      { model: config.model, capability: input.images.length ? "vision" : undefined, system, messages: [userTurn(config.prompt ?? "Classify this document.", input)] },
      { name: "classification", schema: answer },
    );
    const { label: chosen, confidence, reason } = value as { label: string; confidence: number; reason: string };
    return { label: chosen, confidence, reason };
  },
});
