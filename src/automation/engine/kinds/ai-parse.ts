// ai.parse {file, model?, prompt?} → {text, pages: [{page, text}]}. Text PDFs, DOCX, XLSX and text
// files are read locally (no model call, no tokens); images and scanned PDFs are transcribed by a
// vision-capable model, one call per image.
import * as v from "valibot";
import { defineKind } from "../kind";
import { ask, fileRefSchema, modelField, readFileInput } from "./ai-shared";

const schema = v.strictObject({
  file: fileRefSchema,
  model: modelField,
  prompt: v.optional(v.string()),
});

const TRANSCRIBE = "Transcribe all text in this image exactly as written, keeping the reading order and line breaks. Output only the text.";

export default defineKind({
  type: "ai.parse",
  configAt: "with",
  schema,
  async run(config, ctx) {
    const input = await readFileInput(ctx, config.file);
    if (input.pages) return { text: input.text, pages: input.pages };
    const pages = [];
    for (const [i, image] of input.images.entries()) {
      const res = await ask(ctx, { model: config.model, capability: "vision", temperature: 0, messages: [{ role: "user", content: [{ type: "text", text: config.prompt ?? TRANSCRIBE }, image] }] });
      pages.push({ page: i + 1, text: res.text.trim() });
    }
    return { text: pages.map((p) => p.text).join("\n\n"), pages };
  },
});
