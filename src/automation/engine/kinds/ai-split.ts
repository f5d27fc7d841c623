// ai.split {input, sections?: [names or {name, description}], prompt?, model?} → {sections: [{name,
// text, startLine, endLine}]}. The model sees the text with line numbers and answers only where each
// section starts; the text of each section is cut locally, so it is verbatim and costs no output
// tokens. With `sections` the names come from that list; without, the model names them.
import * as v from "valibot";
import { StepError } from "../errors";
import { defineKind } from "../kind";
import { checkSchema as checkAnswer } from "../../models/schema-check";
import { askJson, modelField, readInput, userTurn } from "./ai-shared";

const section = v.union([
  v.pipe(v.string(), v.minLength(1)),
  v.strictObject({ name: v.pipe(v.string(), v.minLength(1)), description: v.optional(v.string()) }),
]);

const schema = v.strictObject({
  input: v.unknown(),
  sections: v.optional(v.pipe(v.array(section), v.minLength(1))),
  prompt: v.optional(v.string()),
  model: modelField,
});

export default defineKind({
  type: "ai.split",
  configAt: "with",
  schema,
  async run(config, ctx) {
    const input = await readInput(ctx, config.input);
    if (input.images.length) throw new StepError("ai.split needs text: run ai.parse on images and scans first", "invalid_input", { retryable: false });
    const lines = input.text.split("\n");
    const known = config.sections?.map((s) => (typeof s === "string" ? { name: s } : s));
    const answer = {
      type: "object",
      properties: {
        sections: {
          type: "array",
          items: {
            type: "object",
            properties: { name: known ? { type: "string", enum: known.map((s) => s.name) } : { type: "string" }, startLine: { type: "integer", minimum: 1, maximum: lines.length } },
            required: ["name", "startLine"],
          },
          minItems: 1,
        },
      },
      required: ["sections"],
    };
    const system = [
      "You split a document into its sections. The document is given with line numbers.",
      known ? `Use only these section names:\n${known.map((s) => `- ${s.name}${s.description ? `: ${s.description}` : ""}`).join("\n")}` : "Name each section briefly.",
      'Answer with JSON {"sections": [{"name", "startLine"}]} in document order; a section runs until the next one starts.',
    ].join("\n");
    const numbered = { ...input, text: lines.map((l, i) => `${i + 1}: ${l}`).join("\n") };
    const ordered = (value: unknown) => {
      const starts = ((value as { sections?: { startLine?: unknown }[] }).sections ?? []).map((s) => s.startLine);
      return starts.every((s, i) => i === 0 || (typeof s === "number" && s > (starts[i - 1] as number))) ? [] : ["$.sections: startLine values must increase"];
    };
    const { value } = await askJson(
      ctx,
      { model: config.model, system, messages: [userTurn(config.prompt ?? "Split this document into sections.", numbered)] },
      { name: "sections", schema: answer },
      (value) => {
        const problems = checkAnswer(value, answer);
        return problems.length ? problems : ordered(value);
      },
    );
    const found = (value as { sections: { name: string; startLine: number }[] }).sections;
    return {
      sections: found.map((s, i) => {
        const end = i + 1 < found.length ? found[i + 1].startLine - 1 : lines.length;
        return { name: s.name, text: lines.slice(s.startLine - 1, end).join("\n").trim(), startLine: s.startLine, endLine: end };
      }),
    };
  },
});
