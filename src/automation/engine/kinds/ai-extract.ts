// ai.extract {input, schema, prompt?, model?}: fields out of a document or text as a JSON object
// validated against the step's JSON Schema (temperature 0, structured output where the provider has
// it, one repair turn on an invalid answer). For object schemas the model may add `_grounding`:
// per field, a verbatim quote of its source; quotes not found in the input are dropped, since an
// invented quote is worse than none.
import * as v from "valibot";
import { checkSchema } from "../../models/schema-check";
import { defineKind } from "../kind";
import { askJson, modelField, readInput, userTurn } from "./ai-shared";

const schema = v.strictObject({
  input: v.unknown(),
  schema: v.pipe(
    v.record(v.string(), v.unknown()),
    v.check((s) => typeof s.type === "string" || Array.isArray(s.type) || "properties" in s || "anyOf" in s, "must be a JSON Schema (with type or properties)"),
  ),
  prompt: v.optional(v.string()),
  model: modelField,
});

const GROUNDING = "_grounding";

/** Whitespace and case differences between a quote and the document do not make it invented. */
const norm = (s: string) => s.replace(/\s+/g, " ").trim().toLowerCase();

export default defineKind({
  type: "ai.extract",
  configAt: "with",
  schema,
  async run(config, ctx) {
    const input = await readInput(ctx, config.input);
    const target = config.schema;
    const isObject = target.type === "object" && typeof target.properties === "object";
    const asked = isObject
      ? {
          ...target,
          properties: {
            ...(target.properties as object),
            [GROUNDING]: {
              type: "object",
              description: "For each extracted field, the exact text of the document it was taken from (verbatim quote).",
              additionalProperties: { type: "string" },
            },
          },
        }
      : target;
    const system = [
      "You extract structured data from documents. Answer with a single JSON object that matches the JSON Schema below; use null for a field the document does not contain; never invent values.",
      isObject ? `Also give "${GROUNDING}": for each field you filled, the verbatim quote from the document it comes from.` : "",
      `JSON Schema:\n${JSON.stringify(target)}`,
    ].filter(Boolean).join("\n");
    const instruction = config.prompt ?? "Extract the fields from this document.";
    const check = (value: unknown) => {
      if (!isObject || value === null || typeof value !== "object" || Array.isArray(value)) return checkSchema(value, target);
      const { [GROUNDING]: _g, ...fields } = value as Record<string, unknown>;
      return checkSchema(fields, target);
    };
    const { value } = await askJson(ctx, { model: config.model, capability: input.images.length ? "vision" : undefined, system, messages: [userTurn(instruction, input)] }, { name: "extraction", schema: asked }, check);
    if (!isObject) return value;
    const { [GROUNDING]: grounding, ...fields } = value as Record<string, unknown>;
    const haystack = norm(input.text);
    const kept: Record<string, string> = {};
    if (grounding && typeof grounding === "object") {
      for (const [field, quote] of Object.entries(grounding as Record<string, unknown>)) {
        // Image inputs have no local text to check against: their quotes are kept as the model gave them.
        if (field in fields && typeof quote === "string" && quote.trim() && (!haystack || haystack.includes(norm(quote)))) kept[field] = quote;
      }
    }
    return Object.keys(kept).length ? { ...fields, [GROUNDING]: kept } : fields;
  },
});
