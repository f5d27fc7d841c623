// transform.text-chunker: cuts `text` into chunks of at most `chunkSize` characters, each starting
// `overlap` characters before the previous one ended. A cut prefers, within the last 20 % of the chunk,
// a paragraph break, then a line break, then a sentence end, then whitespace.
// Output {chunks: [{index, text, start, end}], count}.
import * as v from "valibot";
import { defineKind } from "../kind";

export const schema = v.pipe(
  v.strictObject({
    text: v.string(),
    chunkSize: v.optional(v.pipe(v.number(), v.integer(), v.minValue(1), v.maxValue(1_000_000)), 1000),
    overlap: v.optional(v.pipe(v.number(), v.integer(), v.minValue(0)), 0),
  }),
  v.check((c) => c.overlap < c.chunkSize, "overlap must be smaller than chunkSize"),
);

function cutPoint(text: string, start: number, end: number): number {
  if (end >= text.length) return text.length;
  const floor = start + Math.floor((end - start) * 0.8);
  const window = text.slice(floor, end);
  for (const sep of ["\n\n", "\n", ". ", "! ", "? ", " "]) {
    const at = window.lastIndexOf(sep);
    if (at >= 0) return floor + at + sep.length;
  }
  return end;
}

export function chunkText(text: string, chunkSize: number, overlap: number) {
  const chunks: { index: number; text: string; start: number; end: number }[] = [];
  let start = 0;
  while (start < text.length) {
    const end = cutPoint(text, start, start + chunkSize);
    chunks.push({ index: chunks.length, text: text.slice(start, end), start, end });
    if (end >= text.length) break;
    start = Math.max(end - overlap, start + 1);
  }
  return chunks;
}

export default defineKind({
  type: "transform.text-chunker",
  configAt: "with",
  schema,
  async run({ text, chunkSize, overlap }) {
    const chunks = chunkText(text, chunkSize, overlap);
    return { chunks, count: chunks.length };
  },
});
