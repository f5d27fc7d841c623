// Dataset examples: CRUD with unique names per automation, PATCH semantics, input/expected file folders
// (bytes in the blob store, pinned under `example:<id>`), and `createExample` for other features
// (a reviewed run promoted to an example copies its files by content address).
import { Conflict, Invalid, NotFound } from "../../kernel/errors";
import { checkPath, EXAMPLE_FILE_MAX_BYTES } from "./paths";
import { newId } from "../../kernel/ids";
import { findAutomation } from "../automations/service";
import type { AutomationContext } from "../context";
import type { AutomationRow } from "../automations/store";
import { type ExampleFileRow, type ExampleRow, examplePin, type Folder } from "./store";
import { openBlob, putBytes, releaseBlob, releaseOwner } from "../files/service";
import type { Part } from "../files/multipart";
import type { ExampleBody, ExampleView } from "./model";

export { checkPath, EXAMPLE_FILE_MAX_BYTES } from "./paths";

export const pinOwner = examplePin;
const json = (val: unknown) => (val === undefined || val === null ? null : JSON.stringify(val));
const parse = <T>(s: string | null): T | null => (s === null ? null : (JSON.parse(s) as T));

export function automationOf(ctx: AutomationContext, tenantId: string, ref: string): Promise<AutomationRow> {
  return findAutomation(ctx.storage.automations, tenantId, ref);
}

export async function exampleView(ctx: AutomationContext, r: ExampleRow, include: "full" | "metadata" = "full"): Promise<ExampleView> {
  const base = `/v1/automations/${r.automationId}/examples/${r.id}/expected/`;
  const expectedFiles = (await ctx.storage.datasets.files(r.id, "expected")).map((f) => ({ name: f.path, url: base + f.path.split("/").map(encodeURIComponent).join("/") }));
  return {
    id: r.id,
    name: r.name,
    automationId: r.automationId,
    automationType: r.automationType,
    ...(include === "full" ? { input: parse<Record<string, unknown>>(r.input), expected: parse<unknown>(r.expected) } : {}),
    expectedFiles,
    metadata: parse(r.metadata),
    annotation: r.annotation,
    rowOrder: r.rowOrder,
    overrides: parse(r.overrides),
    latestRunId: r.latestRunId,
    createdAt: r.createdAt,
    updatedAt: r.updatedAt,
  };
}

export async function findExample(ctx: AutomationContext, tenantId: string, automationRef: string, exampleId: string): Promise<ExampleRow> {
  const a = await automationOf(ctx, tenantId, automationRef);
  const r = await ctx.storage.datasets.get(tenantId, a.id, exampleId);
  if (!r) throw NotFound(`example ${exampleId} not found`, { field: "exampleId" });
  return r;
}

const nameTaken = (name: string) => Conflict(`an example named "${name}" already exists for this automation`, { field: "name", code: "name_taken" });

/** A file to attach to a new example: bytes already in the blob store (by sha256) or raw bytes. */
export type NewExampleFile = { folder: Folder; path: string; contentType?: string } & ({ sha256: string; size: number } | { bytes: Uint8Array });

/**
 * Creates an example of an automation. `files` are copied into its input/expected folders: stored
 * blobs are pinned for the example (no bytes copied), raw bytes are stored first. Used by the
 * examples API, the dataset import and run promotion.
 */
export async function createExample(
  ctx: AutomationContext,
  tenantId: string,
  automationRef: string,
  body: ExampleBody,
  files: NewExampleFile[] = [],
): Promise<ExampleView> {
  const a = await automationOf(ctx, tenantId, automationRef);
  const id = newId("ex");
  const name = body.name ?? `example-${id.slice(-8)}`;
  const paths = new Set<string>();
  for (const f of files) {
    const key = `${f.folder}/${checkPath(f.path, "files.path")}`;
    if (paths.has(key)) throw Invalid(`file ${key} is given twice`, { field: "files.path", code: "duplicate_path" });
    paths.add(key);
  }
  const now = ctx.clock.now().toISOString();
  const stored: ExampleFileRow[] = [];
  const put: string[] = [];
  for (const f of files) {
    const blob = "bytes" in f ? await putBytes(ctx, f.bytes, EXAMPLE_FILE_MAX_BYTES) : { sha256: f.sha256, size: f.size };
    if ("bytes" in f) put.push(blob.sha256);
    stored.push({ exampleId: id, folder: f.folder, path: f.path.normalize("NFC"), contentType: f.contentType ?? contentTypeOf(f.path), size: blob.size, sha256: blob.sha256, createdAt: now });
  }
  const row: ExampleRow = {
    id,
    tenantId,
    automationId: a.id,
    automationType: a.type,
    name,
    input: json(body.input ?? {}),
    expected: json(body.expected),
    metadata: json(body.metadata),
    annotation: body.annotation ?? null,
    rowOrder: body.rowOrder ?? null,
    overrides: json(body.overrides),
    latestRunId: null,
    createdAt: now,
    updatedAt: now,
  };
  if ((await ctx.storage.datasets.create(tenantId, [{ row, files: stored }])) === "name_taken") {
    for (const sha of put) await releaseBlob(ctx, sha);
    throw nameTaken(name);
  }
  return exampleView(ctx, row);
}

export async function listExamples(ctx: AutomationContext, tenantId: string, ref: string, q: { limit: number; offset: number; include: "full" | "metadata" }) {
  const a = await automationOf(ctx, tenantId, ref);
  const store = ctx.storage.datasets;
  return {
    data: await Promise.all((await store.list(tenantId, a.id, q.limit, q.offset)).map((r) => exampleView(ctx, r, q.include))),
    total: await store.count(tenantId, a.id),
    limit: q.limit,
    offset: q.offset,
  };
}

export async function updateExample(ctx: AutomationContext, tenantId: string, ref: string, exampleId: string, body: ExampleBody): Promise<ExampleView> {
  const cur = await findExample(ctx, tenantId, ref, exampleId);
  const next: ExampleRow = { ...cur, updatedAt: ctx.clock.now().toISOString() };
  if (body.name !== undefined && body.name !== null) next.name = body.name;
  if (body.input !== undefined) next.input = json(body.input ?? {});
  if (body.expected !== undefined) next.expected = json(body.expected);
  if (body.metadata !== undefined) next.metadata = json(body.metadata);
  if (body.annotation !== undefined) next.annotation = body.annotation;
  if (body.rowOrder !== undefined) next.rowOrder = body.rowOrder;
  if (body.overrides !== undefined) next.overrides = json(body.overrides);
  if ((await ctx.storage.datasets.update(next)) === "name_taken") throw nameTaken(next.name);
  return exampleView(ctx, next);
}

export async function deleteExample(ctx: AutomationContext, tenantId: string, ref: string, exampleId: string): Promise<ExampleView> {
  const cur = await findExample(ctx, tenantId, ref, exampleId);
  const view = await exampleView(ctx, cur);
  await ctx.storage.datasets.remove(cur.id);
  await releaseOwner(ctx, pinOwner(cur.id));
  return view;
}

const TYPES: Record<string, string> = {
  json: "application/json", txt: "text/plain", csv: "text/csv", pdf: "application/pdf", png: "image/png", jpg: "image/jpeg", jpeg: "image/jpeg",
  xml: "application/xml", html: "text/html", md: "text/markdown", yaml: "application/yaml", yml: "application/yaml",
  docx: "application/vnd.openxmlformats-officedocument.wordprocessingml.document", xlsx: "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet",
};
export const contentTypeOf = (path: string) => TYPES[path.split(".").pop()?.toLowerCase() ?? ""] ?? "application/octet-stream";

export async function listFiles(ctx: AutomationContext, tenantId: string, ref: string, exampleId: string, folder: Folder): Promise<{ files: string[] }> {
  const ex = await findExample(ctx, tenantId, ref, exampleId);
  return { files: (await ctx.storage.datasets.files(ex.id, folder)).map((f) => f.path) };
}

/**
 * Multipart `file` parts (one or more) into the folder; each part's filename is its path (it may name
 * a subfolder, `scans/page1.png`). An existing path is replaced. On any refusal nothing is recorded.
 */
export async function uploadFiles(ctx: AutomationContext, tenantId: string, ref: string, exampleId: string, folder: Folder, parts: AsyncIterable<Part>): Promise<{ uploaded: string[] }> {
  const ex = await findExample(ctx, tenantId, ref, exampleId);
  const now = ctx.clock.now().toISOString();
  const rows: ExampleFileRow[] = [];
  const put: string[] = [];
  try {
    for await (const part of parts) {
      if (part.name !== "file" && part.name !== "files") throw Invalid(`unknown field "${part.name}" (expected file)`, { field: part.name, code: "unrecognized_keys" });
      if (part.filename === null) throw Invalid("each `file` part must be a file (with a filename)", { field: "file", code: "invalid_value" });
      const path = checkPath(part.filename, "file");
      if (rows.some((r) => r.path === path)) throw Invalid(`file ${path} is given twice`, { field: "file", code: "duplicate_path" });
      const blob = await putBytes(ctx, part.body, EXAMPLE_FILE_MAX_BYTES);
      put.push(blob.sha256);
      const type = part.contentType && part.contentType !== "application/octet-stream" ? part.contentType.split(";")[0].trim() : contentTypeOf(path);
      rows.push({ exampleId: ex.id, folder, path, contentType: type, size: blob.size, sha256: blob.sha256, createdAt: now });
    }
    if (rows.length === 0) throw Invalid("at least one `file` part is required", { field: "file", code: "required" });
  } catch (err) {
    for (const sha of put) await releaseBlob(ctx, sha);
    throw err;
  }
  const replaced = await ctx.storage.datasets.putFiles(tenantId, rows);
  for (const sha of replaced) await unpinIfUnused(ctx, ex.id, sha);
  return { uploaded: rows.map((r) => r.path) };
}

async function unpinIfUnused(ctx: AutomationContext, exampleId: string, sha256: string): Promise<void> {
  if (await ctx.storage.datasets.unpinIfUnused(exampleId, sha256)) await releaseBlob(ctx, sha256);
}

async function fileOf(ctx: AutomationContext, ex: ExampleRow, folder: Folder, path: string): Promise<ExampleFileRow> {
  const f = await ctx.storage.datasets.file(ex.id, folder, path);
  if (!f) throw NotFound(`example ${ex.id} has no ${folder} file ${path}`, { field: "path" });
  return f;
}

export async function fileBytes(ctx: AutomationContext, tenantId: string, ref: string, exampleId: string, folder: Folder, path: string): Promise<{ file: ExampleFileRow; blob: Blob }> {
  const f = await fileOf(ctx, await findExample(ctx, tenantId, ref, exampleId), folder, path);
  const blob = await openBlob(ctx, f.sha256);
  if (!blob) throw NotFound(`the bytes of ${folder}/${path} are missing`, { field: "path", code: "content_missing" });
  return { file: f, blob };
}

/** Renames within the same parent folder: `newFilename` is a basename. */
export async function renameFile(ctx: AutomationContext, tenantId: string, ref: string, exampleId: string, folder: Folder, path: string, newFilename: string) {
  const ex = await findExample(ctx, tenantId, ref, exampleId);
  await fileOf(ctx, ex, folder, path);
  if (newFilename.includes("/")) throw Invalid("newFilename is a name, not a path: the parent folder is kept", { field: "newFilename", code: "invalid_path" });
  const parent = path.includes("/") ? path.slice(0, path.lastIndexOf("/") + 1) : "";
  const to = checkPath(parent + newFilename, "newFilename");
  if (to !== path && (await ctx.storage.datasets.renameFile(ex.id, folder, path, to)) === "exists") {
    throw Conflict(`${folder}/${to} already exists`, { field: "newFilename", code: "file_exists" });
  }
  return { ok: true as const, filename: to.split("/").pop()!, path: to };
}

export async function removeFile(ctx: AutomationContext, tenantId: string, ref: string, exampleId: string, folder: Folder, path: string): Promise<{ ok: true; path: string }> {
  const ex = await findExample(ctx, tenantId, ref, exampleId);
  const f = await fileOf(ctx, ex, folder, path);
  await ctx.storage.datasets.removeFile(ex.id, folder, path);
  await unpinIfUnused(ctx, ex.id, f.sha256);
  return { ok: true, path };
}
