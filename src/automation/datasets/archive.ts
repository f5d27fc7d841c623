// Dataset ZIP: export streams `examples/<name>/{input.json, expected.json, meta.json, input/…, expected/…}`
// (no whole archive in memory); import reads the archive as it arrives, entry by entry, into a staging
// directory (bounded memory), validates everything, and only then writes: all examples in one
// transaction. Zip-slip names, too many entries, too many uncompressed bytes and legacy layouts are
// refused with a 400 naming the entry, and nothing is changed.
import { mkdtempSync, rmSync } from "node:fs";
import { open as openFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import * as v from "valibot";
import { INT32_MAX, wholeNumber } from "../http/validate";
import { Conflict, Invalid, TooLarge } from "../../kernel/errors";
import { newId } from "../../kernel/ids";
import type { AutomationContext } from "../context";
import { readText, type Part } from "../files/multipart";
import { openBlob, putBytes, releaseOwner } from "../files/service";
import { type ZipEntry, zipStream } from "../runs/zip";
import { fileRefs, inputPathOf } from "./run";
import { runOffThread } from "../offthread/run";
import { automationOf, contentTypeOf, EXAMPLE_FILE_MAX_BYTES, pinOwner } from "./service";
import type { ImportLimits, Staged } from "./stage";
import type { ExampleFileRow, ExampleRow, Folder } from "./store";

export type { ImportLimits } from "./stage";

/** Inflating and staging one archive on a worker thread; past it the thread is stopped and the import refused. */
const STAGE_DEADLINE_MS = 10 * 60_000;

export const IMPORT_LIMITS: ImportLimits = { maxArchiveBytes: 500 * 1024 * 1024, maxEntries: 5000, maxUncompressedBytes: 512 * 1024 * 1024 };

const enc = new TextEncoder();
const jsonBlob = (val: unknown) => new Blob([enc.encode(`${JSON.stringify(val, null, 2)}\n`)], { type: "application/json" });

/** The dataset (or the examples named) as a streamed ZIP. */
export async function exportDataset(ctx: AutomationContext, tenantId: string, ref: string, exampleIds?: string[]): Promise<{ stream: ReadableStream<Uint8Array>; filename: string }> {
  const a = await automationOf(ctx, tenantId, ref);
  const store = ctx.storage.datasets;
  let rows = await store.all(tenantId, a.id);
  if (exampleIds?.length) {
    const wanted = new Set(exampleIds);
    for (const id of wanted) if (!rows.some((r) => r.id === id)) throw Invalid(`example ${id} is not in this dataset`, { field: "exampleIds", code: "example_not_found" });
    rows = rows.filter((r) => wanted.has(r.id));
  }
  const entries: ZipEntry[] = [];
  for (const r of rows) {
    const dir = `examples/${r.name}/`;
    const parse = (s: string | null) => (s === null ? null : (JSON.parse(s) as unknown));
    entries.push({ name: `${dir}input.json`, open: async () => jsonBlob(parse(r.input) ?? {}) });
    if (r.expected !== null) entries.push({ name: `${dir}expected.json`, open: async () => jsonBlob(parse(r.expected)) });
    entries.push({
      name: `${dir}meta.json`,
      open: async () => jsonBlob({ rowOrder: r.rowOrder, annotation: r.annotation, overrides: parse(r.overrides), metadata: parse(r.metadata) }),
    });
    for (const f of await store.files(r.id)) entries.push({ name: `${dir}${f.folder}/${f.path}`, open: () => openBlob(ctx, f.sha256) });
  }
  return { stream: zipStream(entries), filename: `${a.slug}-dataset.zip` };
}

const Meta = v.strictObject({
  rowOrder: v.optional(v.nullable(wholeNumber("rowOrder", 0, INT32_MAX))),
  annotation: v.optional(v.nullable(v.pipe(v.string(), v.maxLength(2000)))),
  overrides: v.optional(v.nullable(v.record(v.string(), v.unknown()))),
  metadata: v.optional(v.nullable(v.record(v.string(), v.unknown()))),
});

const refused = (entry: string, why: string) => Invalid(`archive entry ${JSON.stringify(entry.slice(0, 200))}: ${why}`, { field: "file", code: "invalid_archive" });

/**
 * The archive part is written to `dir` as it arrives (async writes, bounded by maxArchiveBytes), then
 * inflated and staged by a worker thread (stage.ts): a zip bomb's inflation, its garbage and its disk
 * writes never run on the thread that answers HTTP. Same limits, same refusals.
 */
async function stage(body: ReadableStream<Uint8Array>, dir: string, limits: ImportLimits): Promise<Map<string, Staged>> {
  const archive = join(dir, "archive.zip");
  const out = await openFile(archive, "w");
  let size = 0;
  try {
    for await (const chunk of body) {
      size += chunk.byteLength;
      if (size > limits.maxArchiveBytes) throw TooLarge(`the archive is larger than ${limits.maxArchiveBytes} bytes`, { field: "file", code: "archive_too_large" });
      await out.write(chunk);
    }
  } finally {
    await out.close();
  }
  const staged = await runOffThread("dataset.stage", { archive, dir, limits }, { deadlineMs: STAGE_DEADLINE_MS });
  return new Map(staged.map((s) => [s.name, s]));
}

/** Every example whole: JSON shapes, legacy layout, `$file` references to files in the archive. */
function validate(examples: Map<string, Staged>) {
  const out: { s: Staged; input: Record<string, unknown>; meta: v.InferOutput<typeof Meta> }[] = [];
  for (const s of examples.values()) {
    const at = `examples/${s.name}/`;
    if (s.legacy && s.input === undefined) throw refused(s.legacy, "this is a legacy dataset layout (input/arguments.json, expected/output.json); export the dataset again from this server");
    const input = s.input ?? {};
    if (!input || typeof input !== "object" || Array.isArray(input)) throw refused(`${at}input.json`, "must hold a JSON object");
    const meta = v.safeParse(Meta, s.meta ?? {});
    if (!meta.success) throw refused(`${at}meta.json`, `${v.getDotPath(meta.issues[0]) ?? ""} ${meta.issues[0].message}`.trim());
    for (const { field, path } of fileRefs(input as Record<string, unknown>)) {
      const inFolder = inputPathOf(path);
      if (!inFolder || !s.files.some((f) => f.folder === "input" && f.path === inFolder)) throw refused(`${at}input.json`, `input.${field} refers to ${path}, which is not in the archive`);
    }
    out.push({ s, input: input as Record<string, unknown>, meta: meta.output });
  }
  return out;
}

export type ImportResult =
  | { mode: "append"; created: number; expectedSet: number; skipped: number; issues: { example: string; message: string }[] }
  | { mode: "replace"; created: number; expectedSet: number; deleted: number; filesDeleted: number };

/**
 * The import form: a `file` part (the ZIP, read as it arrives) and an optional `mode` part
 * (`append` default, or `replace`), in either order.
 */
export async function importDataset(
  ctx: AutomationContext,
  tenantId: string,
  ref: string,
  parts: AsyncIterable<Part>,
  limits: ImportLimits = IMPORT_LIMITS,
): Promise<ImportResult> {
  const a = await automationOf(ctx, tenantId, ref);
  const dir = mkdtempSync(join(tmpdir(), "dataset-import-"));
  try {
    let mode: "append" | "replace" = "append";
    let staged: Map<string, Staged> | null = null;
    for await (const part of parts) {
      if (part.name === "mode") {
        const m = (await readText(part, 100)).trim();
        if (m !== "append" && m !== "replace") throw Invalid("mode must be append or replace", { field: "mode", code: "invalid_value" });
        mode = m;
      } else if (part.name === "file") {
        if (staged) throw Invalid("send exactly one `file` part", { field: "file", code: "invalid_value" });
        staged = await stage(part.body, dir, limits);
      } else {
        throw Invalid(`unknown field "${part.name}" (expected file, mode)`, { field: part.name, code: "unrecognized_keys" });
      }
    }
    if (!staged) throw Invalid("the `file` part (the dataset ZIP) is required", { field: "file", code: "required" });
    const items = validate(staged);
    const store = ctx.storage.datasets;
    const existing = new Set((await store.all(tenantId, a.id)).map((r) => r.name));
    const issues: { example: string; message: string }[] = [];
    const toCreate = mode === "replace" ? items : items.filter((i) => {
      if (!existing.has(i.s.name)) return true;
      issues.push({ example: i.s.name, message: `an example named ${i.s.name} already exists; skipped` });
      return false;
    });
    // Bytes go into the content-addressed store first (unreferenced until the commit below).
    const now = ctx.clock.now().toISOString();
    const rows: { row: ExampleRow; files: ExampleFileRow[] }[] = [];
    for (const i of toCreate) {
      const id = newId("ex");
      const files: ExampleFileRow[] = [];
      for (const f of i.s.files) {
        const blob = await putBytes(ctx, Bun.file(f.tmp), EXAMPLE_FILE_MAX_BYTES);
        files.push({ exampleId: id, folder: f.folder, path: f.path, contentType: contentTypeOf(f.path), size: blob.size, sha256: blob.sha256, createdAt: now });
      }
      const j = (x: unknown) => (x === undefined || x === null ? null : JSON.stringify(x));
      rows.push({
        row: {
          id, tenantId, automationId: a.id, automationType: a.type, name: i.s.name, input: JSON.stringify(i.input), expected: i.s.hasExpected ? j(i.s.expected) : null,
          metadata: j(i.meta.metadata), annotation: i.meta.annotation ?? null, rowOrder: i.meta.rowOrder ?? null, overrides: j(i.meta.overrides),
          latestRunId: null, createdAt: now, updatedAt: now,
        },
        files,
      });
    }
    const done = await store.create(tenantId, rows, mode === "replace" ? { automationId: a.id } : undefined);
    // Names were checked against the examples read above: another import took one meanwhile.
    if (done === "name_taken") throw Conflict("another request added an example with one of these names; nothing was imported", { field: "file", code: "name_taken" });
    const { removed: deleted, filesRemoved: filesDeleted } = done;
    for (const id of deleted) await releaseOwner(ctx, pinOwner(id));
    const expectedSet = rows.filter((r) => r.row.expected !== null).length;
    if (mode === "replace") return { mode, created: rows.length, expectedSet, deleted: deleted.length, filesDeleted };
    return { mode, created: rows.length, expectedSet, skipped: issues.length, issues };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
