// The rules of templates: a template is a name over immutable revisions (bytes pinned in the blob
// store), each checked and tokenised when it arrives; DELETE drops the name but never a revision, so
// workflows pinned to a `tmpr_` id keep rendering.
import { Invalid, NotFound } from "../../kernel/errors";
import { newId } from "../../kernel/ids";
import type { BlobInfo } from "../blobs/blobs";
import { checkFilename } from "../files/filename";
import { readText, type Part } from "../files/multipart";
import type { AutomationContext } from "../context";
import { type FilesContext, findFile, openBlob, putBytes, releaseBlob, retainBlob } from "../files/service";
import { OffThreadError } from "../offthread/pool";
import { runOffThread } from "../offthread/run";
import { DOCX_TYPE } from "./docx";
import { DEFAULT_RENDER, GRAMMARS, type RenderOptions, TemplateBroken, type TemplateFormat, type Token } from "./grammar";
import { TEMPLATE_MAX_BYTES, type TemplateView } from "./model";
import type { RevisionRow, TemplateRow } from "./store";
import type { Outcome } from "./work";
import { XLSX_TYPE } from "./xlsx";

/** What the templates feature needs: the files context and the storage (its own store). */
export type TemplatesContext = FilesContext & Pick<AutomationContext, "storage">;

const MIME: Record<TemplateFormat, string> = { docx: DOCX_TYPE, xlsx: XLSX_TYPE };

/** A template file's bytes as they arrived, before a revision exists. */
interface Incoming {
  filename: string;
  blob: BlobInfo;
  /** Whether we stored the bytes for this request (and must release them on refusal). */
  ownBytes: boolean;
}

function formatOf(filename: string): TemplateFormat {
  const ext = /\.([a-z]+)$/i.exec(filename)?.[1]?.toLowerCase();
  if (ext === "docx" || ext === "xlsx") return ext;
  throw Invalid(`template files must be .docx or .xlsx (got ${filename})`, { field: "file", code: "unsupported_format" });
}

/**
 * A ceiling for reading or filling one template on a worker thread (there is no smaller limit: a
 * 50 MB workbook legitimately takes seconds). Past it the thread is stopped and the template is
 * refused as broken.
 */
export const TEMPLATE_WORK_MS = 5 * 60_000;

/**
 * Runs template work off the main thread (docxtemplater and exceljs need tens of milliseconds to
 * seconds of CPU per document), turning a broken template back into a TemplateBroken.
 */
async function offThread<T>(work: () => Promise<Outcome<T>>, doing: string): Promise<T> {
  let r: Outcome<T>;
  try {
    r = await work();
  } catch (err) {
    if (err instanceof OffThreadError && err.reason === "deadline") throw new TemplateBroken([{ tag: null, message: `${doing} took longer than ${TEMPLATE_WORK_MS / 1000} s` }]);
    throw err;
  }
  if (!r.ok) throw new TemplateBroken(r.issues);
  return r.value;
}

export function inspect(format: TemplateFormat, bytes: Uint8Array): Promise<Token[]> {
  return offThread(() => runOffThread("template.inspect", { format, bytes }, { deadlineMs: TEMPLATE_WORK_MS }), "reading the template");
}

async function bytesOf(ctx: FilesContext, sha256: string): Promise<Uint8Array> {
  const blob = await openBlob(ctx, sha256);
  if (!blob) throw NotFound("the template's bytes are missing from the blob store", { code: "content_missing" });
  return new Uint8Array(await blob.arrayBuffer());
}

/** Checks the file and builds its revision row (not yet stored). */
async function revisionFor(ctx: FilesContext, tenantId: string, templateId: string, input: Incoming, field: string): Promise<Omit<RevisionRow, "number">> {
  const format = formatOf(input.filename);
  if (input.blob.size > TEMPLATE_MAX_BYTES) throw Invalid(`template files are at most ${TEMPLATE_MAX_BYTES} bytes`, { field, code: "too_large" });
  let tokens: Token[];
  try {
    tokens = await inspect(format, await bytesOf(ctx, input.blob.sha256));
  } catch (err) {
    if (err instanceof TemplateBroken) throw err.toDomain(field);
    throw err;
  }
  return {
    id: newId("tmpr"),
    templateId,
    tenantId,
    filename: input.filename,
    format,
    mimeType: MIME[format],
    size: input.blob.size,
    sha256: input.blob.sha256,
    tokens: JSON.stringify(tokens),
    createdAt: ctx.clock.now().toISOString(),
  };
}

function view(t: TemplateRow, r: RevisionRow): TemplateView {
  const format = r.format as TemplateFormat;
  return {
    id: t.id,
    name: t.name,
    description: t.description,
    filename: r.filename,
    format,
    mimeType: r.mimeType,
    size: r.size,
    sha256: r.sha256,
    tokens: JSON.parse(r.tokens) as Token[],
    grammar: GRAMMARS[format],
    currentRevision: { id: r.id, number: r.number, sha256: r.sha256, createdAt: r.createdAt },
    createdAt: t.createdAt,
    updatedAt: t.updatedAt,
  };
}

/** An uploaded file of the tenant as the source of a revision (its bytes are shared, not copied). */
export async function fromFileId(ctx: FilesContext, tenantId: string, fileId: string): Promise<Incoming> {
  const file = await findFile(ctx, tenantId, fileId).catch(() => {
    throw Invalid(`file ${fileId} not found`, { field: "fileId", code: "not_found" });
  });
  return { filename: file.filename, blob: { sha256: file.sha256, size: file.size }, ownBytes: false };
}

/** Multipart `file` (+ `name`, `description` on create) → the incoming bytes and the text fields. */
export async function fromParts(ctx: FilesContext, parts: AsyncIterable<Part>, fields: string[]): Promise<{ incoming: Incoming; text: Record<string, string> }> {
  const text: Record<string, string> = {};
  let incoming: Incoming | null = null;
  try {
    for await (const part of parts) {
      if (part.name === "file") {
        if (incoming) throw Invalid("send exactly one `file` part", { field: "file", code: "invalid_value" });
        if (part.filename === null) throw Invalid("the `file` part must be a file (with a filename)", { field: "file", code: "invalid_value" });
        const filename = checkFilename(part.filename, "file.filename");
        incoming = { filename, blob: await putBytes(ctx, part.body, TEMPLATE_MAX_BYTES), ownBytes: true };
      } else if (fields.includes(part.name)) {
        text[part.name] = await readText(part, 4000);
      } else {
        throw Invalid(`unknown field "${part.name}" (expected file${fields.map((f) => `, ${f}`).join("")})`, { field: part.name, code: "unrecognized_keys" });
      }
    }
    if (!incoming) throw Invalid("the `file` part is required", { field: "file", code: "required" });
    return { incoming, text };
  } catch (err) {
    if (incoming?.ownBytes) await releaseBlob(ctx, incoming.blob.sha256);
    throw err;
  }
}

/** Runs `work` and, when it refuses, lets go of bytes this request stored. */
async function guarded<T>(ctx: FilesContext, input: Incoming, work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (err) {
    if (input.ownBytes) await releaseBlob(ctx, input.blob.sha256);
    throw err;
  }
}

export function createTemplate(ctx: TemplatesContext, tenantId: string, meta: { name: string; description?: string | null }, input: Incoming): Promise<TemplateView> {
  return guarded(ctx, input, async () => {
    const id = newId("tmpl");
    const rev = { ...(await revisionFor(ctx, tenantId, id, input, input.ownBytes ? "file" : "fileId")), number: 1 };
    const now = ctx.clock.now().toISOString();
    const t: TemplateRow = { id, tenantId, name: meta.name, description: meta.description ?? null, currentRevisionId: rev.id, createdAt: now, updatedAt: now, deletedAt: null };
    await retainBlob(ctx, tenantId, rev.sha256, `template:${rev.id}`);
    await ctx.storage.templates.create(t, rev);
    return view(t, rev);
  });
}

async function live(ctx: TemplatesContext, tenantId: string, id: string): Promise<TemplateRow> {
  const t = await ctx.storage.templates.byId(tenantId, id);
  if (!t) throw NotFound(`template ${id} not found`, { field: "id" });
  return t;
}

async function current(ctx: TemplatesContext, t: TemplateRow): Promise<RevisionRow> {
  const r = await ctx.storage.templates.revision(t.tenantId, t.currentRevisionId);
  if (!r) throw NotFound(`template ${t.id} has no revision`, { field: "id" });
  return r;
}

export function replaceTemplate(ctx: TemplatesContext, tenantId: string, id: string, input: Incoming): Promise<TemplateView> {
  return guarded(ctx, input, async () => {
    await live(ctx, tenantId, id);
    const rev = await revisionFor(ctx, tenantId, id, input, input.ownBytes ? "file" : "fileId");
    await retainBlob(ctx, tenantId, rev.sha256, `template:${rev.id}`);
    const stored = await ctx.storage.templates.addRevision(tenantId, id, rev, rev.createdAt);
    if (!stored) throw NotFound(`template ${id} not found`, { field: "id" });
    return view(await live(ctx, tenantId, id), stored);
  });
}

/** The newest live template called `name`, if any. */
export async function findTemplateByName(ctx: TemplatesContext, tenantId: string, name: string): Promise<TemplateView | undefined> {
  const t = await ctx.storage.templates.byName(tenantId, name);
  return t ? view(t, await current(ctx, t)) : undefined;
}

/** A template from bytes the caller holds (demo seeding, tests). */
export async function createTemplateFromBytes(ctx: TemplatesContext, tenantId: string, meta: { name: string; description?: string | null }, filename: string, bytes: Uint8Array): Promise<TemplateView> {
  return createTemplate(ctx, tenantId, meta, { filename, blob: await putBytes(ctx, bytes, TEMPLATE_MAX_BYTES), ownBytes: true });
}

export async function getTemplate(ctx: TemplatesContext, tenantId: string, id: string): Promise<TemplateView> {
  const t = await live(ctx, tenantId, id);
  return view(t, await current(ctx, t));
}

export async function listTemplates(ctx: TemplatesContext, tenantId: string, q: { limit: number; offset: number }): Promise<{ items: TemplateView[]; total: number }> {
  const { rows, total } = await ctx.storage.templates.list(tenantId, q.limit, q.offset);
  const items: TemplateView[] = [];
  for (const t of rows) items.push(view(t, await current(ctx, t)));
  return { items, total };
}

export async function listRevisions(ctx: TemplatesContext, tenantId: string, id: string) {
  const t = await live(ctx, tenantId, id);
  const revisions = (await ctx.storage.templates.revisionsOf(t.id)).map((r) => ({
    id: r.id, number: r.number, filename: r.filename, size: r.size, sha256: r.sha256, current: r.id === t.currentRevisionId, createdAt: r.createdAt,
  }));
  return { templateId: t.id, revisions };
}

export async function deleteTemplate(ctx: TemplatesContext, tenantId: string, id: string): Promise<{ id: string; deleted: true }> {
  if (!(await ctx.storage.templates.softDelete(tenantId, id, ctx.clock.now().toISOString()))) throw NotFound(`template ${id} not found`, { field: "id" });
  return { id, deleted: true };
}

/** A revision of a live template (default its current one) with lazy bytes. */
export async function templateContent(ctx: TemplatesContext, tenantId: string, id: string, revisionId?: string): Promise<{ revision: RevisionRow; blob: Blob }> {
  const t = await live(ctx, tenantId, id);
  const r = revisionId ? await ctx.storage.templates.revision(tenantId, revisionId) : await current(ctx, t);
  if (!r || r.templateId !== t.id) throw NotFound(`revision ${revisionId} of template ${id} not found`, { field: "revisionId" });
  const blob = await openBlob(ctx, r.sha256);
  if (!blob) throw NotFound("the template's bytes are missing from the blob store", { code: "content_missing" });
  return { revision: r, blob };
}

/**
 * The revision a workflow step names: a template's current one (live templates only) or a pinned
 * `tmpr_` id, which keeps working after the template is deleted.
 */
export async function resolveRevision(ctx: TemplatesContext, tenantId: string, ref: { templateId?: string; templateRevisionId?: string }): Promise<RevisionRow> {
  if (ref.templateRevisionId) {
    const r = await ctx.storage.templates.revision(tenantId, ref.templateRevisionId);
    if (!r) throw NotFound(`template revision ${ref.templateRevisionId} not found`, { field: "templateRevisionId" });
    if (ref.templateId && r.templateId !== ref.templateId) throw Invalid(`revision ${r.id} does not belong to template ${ref.templateId}`, { field: "templateRevisionId" });
    return r;
  }
  return current(ctx, await live(ctx, tenantId, ref.templateId ?? ""));
}

export interface Rendered {
  bytes: Uint8Array;
  filename: string;
  contentType: string;
  templateId: string;
  revisionId: string;
}

/** Fills a revision with `data`. A tag the data breaks (e.g. a loop over a non-list) is a TemplateBroken. */
export async function renderRevision(ctx: FilesContext, r: RevisionRow, data: unknown, opts: RenderOptions = DEFAULT_RENDER): Promise<Rendered> {
  const source = await bytesOf(ctx, r.sha256);
  const job = { format: r.format as TemplateFormat, bytes: source, data, opts: { highlightNotFound: opts.highlightNotFound, notFoundText: opts.notFoundText } };
  const bytes = await offThread(() => runOffThread("template.render", job, { deadlineMs: TEMPLATE_WORK_MS }), "filling the template");
  return { bytes, filename: r.filename, contentType: r.mimeType, templateId: r.templateId, revisionId: r.id };
}
