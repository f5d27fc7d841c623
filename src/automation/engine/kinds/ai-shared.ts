// What the ai.* kinds share: the run's model gateway (or the "no model configured" failure naming the
// flag), reading the step input (text, JSON, or a file extracted locally / sent as images to a vision
// model), and asking for JSON with one repair turn when the answer does not parse or validate.
import * as v from "valibot";
import { type ModelContent, ModelCallError, type ModelGateway, type ModelMessage, type ModelRequest, type ModelResponse, NoModelConfigured } from "../../models/contract";
import { extractDocument, type ExtractedPage, sniffType } from "../../models/documents";
import { checkSchema, parseModelJson } from "../../models/schema-check";
import type { FileRef } from "../contract";
import { StepError } from "../errors";
import type { StepContext } from "../kind";

export const MAX_FILE_BYTES = 50 * 1024 * 1024;
/** Text sent to a model is capped; past this a document should go through transform.text-chunker first. */
export const MAX_INPUT_CHARS = 400_000;

export const fileRefSchema = v.looseObject({
  $file: v.pipe(v.string(), v.minLength(1)),
  filename: v.optional(v.string()),
  contentType: v.optional(v.string()),
  size: v.optional(v.number()),
});
export const modelField = v.optional(v.pipe(v.string(), v.minLength(1)));

/** A file reference as templates hand it over: only the id is sure to be there. */
export type FileLike = Pick<FileRef, "$file"> & Partial<FileRef>;

export const isFileRef = (x: unknown): x is FileLike => x !== null && typeof x === "object" && typeof (x as { $file?: unknown }).$file === "string";

function gateway(ctx: StepContext): ModelGateway {
  const models = ctx.services.models;
  if (!models) throw new StepError(new NoModelConfigured().message, "no_model_configured", { retryable: false });
  return models;
}

/** One model call for this step; failures become step errors that say what went wrong. */
export async function ask(ctx: StepContext, req: ModelRequest): Promise<ModelResponse> {
  try {
    return await gateway(ctx).complete({ ...req, step: ctx.path, signal: ctx.signal });
  } catch (err) {
    if (err instanceof NoModelConfigured) throw new StepError(err.message, err.code, { retryable: false });
    if (err instanceof ModelCallError) throw new StepError(`model call failed: ${err.message}`, err.code, { statusCode: err.status });
    throw err;
  }
}

export interface StepInput {
  /** Text for the prompt (extracted document text, the string itself, or JSON). */
  text: string;
  pages?: ExtractedPage[];
  /** Images a vision model must read (image files, scanned PDF pages). */
  images: ModelContent[];
}

export async function fileBytes(ctx: StepContext, ref: FileLike): Promise<Uint8Array> {
  const bytes = await ctx.services.readFile(ref as FileRef);
  if (bytes.byteLength > MAX_FILE_BYTES) throw new StepError(`file ${ref.filename ?? ref.$file} exceeds ${MAX_FILE_BYTES} bytes`, "file_too_large", { retryable: false });
  return bytes;
}

/** Extracts a file locally; images (and scans) come back as vision content. */
export async function readFileInput(ctx: StepContext, ref: FileLike): Promise<StepInput> {
  const bytes = await fileBytes(ctx, ref);
  const type = sniffType(ref.contentType, ref.filename, bytes);
  let doc;
  try {
    doc = await extractDocument(bytes, type);
  } catch (err) {
    throw new StepError(`cannot read ${ref.filename ?? ref.$file}: ${(err as Error).message}`, "unreadable_file", { retryable: false });
  }
  if (doc.kind === "image") {
    return { text: "", images: doc.images.map((i) => ({ type: "image", mimeType: i.mimeType, base64: Buffer.from(i.bytes).toString("base64") })) };
  }
  return { text: doc.pages.map((p) => p.text).join("\n\n"), pages: doc.pages, images: [] };
}

export async function readInput(ctx: StepContext, input: unknown): Promise<StepInput> {
  if (isFileRef(input)) return readFileInput(ctx, input);
  const text = typeof input === "string" ? input : JSON.stringify(input, null, 2);
  if (text.length > MAX_INPUT_CHARS) throw new StepError(`input is ${text.length} characters; at most ${MAX_INPUT_CHARS} go to a model (split it with transform.text-chunker)`, "input_too_large", { retryable: false });
  return { text, images: [] };
}

/** The user turn: the instruction, then the document text and/or its images. */
export function userTurn(instruction: string, input: StepInput): ModelMessage {
  const text = input.text ? `${instruction}\n\n<document>\n${input.text}\n</document>` : instruction;
  if (!input.images.length) return { role: "user", content: text };
  return { role: "user", content: [{ type: "text", text }, ...input.images] };
}

/**
 * Asks for JSON matching `schema`, at temperature 0. An answer that does not parse or `check`s with
 * problems gets one repair turn quoting them; a second bad answer fails the step naming the problems.
 */
export async function askJson(
  ctx: StepContext,
  req: Omit<ModelRequest, "json" | "temperature">,
  json: { name: string; schema: Record<string, unknown> },
  check: (value: unknown) => string[] = (value) => checkSchema(value, json.schema),
): Promise<{ value: unknown; responses: ModelResponse[] }> {
  const responses: ModelResponse[] = [];
  let messages = req.messages;
  let problems: string[] = [];
  for (let turn = 0; turn < 2; turn++) {
    const res = await ask(ctx, { ...req, messages, json, temperature: 0 });
    responses.push(res);
    const parsed = parseModelJson(res.text);
    problems = parsed.ok ? check(parsed.value).slice(0, 20) : [parsed.problem];
    if (parsed.ok && problems.length === 0) return { value: parsed.value, responses };
    messages = [
      ...messages,
      { role: "assistant", content: res.text },
      { role: "user", content: `That answer is invalid:\n- ${problems.join("\n- ")}\nReply with only the corrected JSON object matching the schema.` },
    ];
  }
  throw new StepError(`the model's answer is invalid after one retry: ${problems.join("; ")}`, "invalid_model_output", { retryable: false });
}
