// Dataset ZIP: export streams `examples/<name>/{input.json, expected.json, meta.json, input/…, expected/…}`
// (no whole archive in memory); import reads the archive as it arrives, entry by entry, into a staging
// directory (bounded memory), validates everything, and only then writes: all examples in one
// transaction. Zip-slip names, too many entries, too many uncompressed bytes and legacy layouts are
// refused with a 400 naming the entry, and nothing is changed.
import { closeSync, mkdtempSync, openSync, rmSync, writeSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Unzip, UnzipInflate } from "fflate";
import * as v from "valibot";
import { Invalid, TooLarge } from "../../kernel/errors";
import { newId } from "../../kernel/ids";
import type { AutomationContext } from "../context";
import { readText, type Part } from "../files/multipart";
import { openBlob, putBytes, releaseOwner, retainBlob } from "../files/service";
import { type ZipEntry, zipStream } from "../runs/zip";
import { EXAMPLE_NAME } from "./model";
import { fileRefs, inputPathOf } from "./run";
import { automationOf, checkPath, contentTypeOf, EXAMPLE_FILE_MAX_BYTES, exampleStore, pinOwner } from "./service";
import type { ExampleFileRow, ExampleRow, Folder } from "./store";

export interface ImportLimits {
  /** The archive itself. */
  maxArchiveBytes: number;
  maxEntries: number;
  /** All entries together, uncompressed (what a zip bomb inflates to). */
  maxUncompressedBytes: number;
}
export const IMPORT_LIMITS: ImportLimits = { maxArchiveBytes: 500 * 1024 * 1024, maxEntries: 5000, maxUncompressedBytes: 512 * 1024 * 1024 };
const JSON_ENTRY_MAX = 10 * 1024 * 1024;

const enc = new TextEncoder();
const jsonBlob = (val: unknown) => new Blob([enc.encode(`${JSON.stringify(val, null, 2)}\n`)], { type: "application/json" });

/** The dataset (or the examples named) as a streamed ZIP. */
export function exportDataset(ctx: AutomationContext, tenantId: string, ref: string, exampleIds?: string[]): { stream: ReadableStream<Uint8Array>; filename: string } {
  const a = automationOf(ctx, tenantId, ref);
  const store = exampleStore(ctx);
  let rows = store.all(tenantId, a.id);
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
    for (const f of store.files(r.id)) entries.push({ name: `${dir}${f.folder}/${f.path}`, open: () => openBlob(ctx, f.sha256) });
  }
  return { stream: zipStream(entries), filename: `${a.slug}-dataset.zip` };
}

interface Staged {
  name: string;
  input?: unknown;
  expected?: unknown;
  hasExpected: boolean;
  meta?: unknown;
  files: { folder: Folder; path: string; tmp: string; size: number }[];
  legacy?: string;
}

const Meta = v.strictObject({
  rowOrder: v.optional(v.nullable(v.pipe(v.number(), v.integer(), v.minValue(0)))),
  annotation: v.optional(v.nullable(v.pipe(v.string(), v.maxLength(2000)))),
  overrides: v.optional(v.nullable(v.record(v.string(), v.unknown()))),
  metadata: v.optional(v.nullable(v.record(v.string(), v.unknown()))),
});

const refused = (entry: string, why: string) => Invalid(`archive entry ${JSON.stringify(entry.slice(0, 200))}: ${why}`, { field: "file", code: "invalid_archive" });

/** Where an entry belongs, or a refusal naming it. */
function classify(name: string): { example: string; kind: "input.json" | "expected.json" | "meta.json" } | { example: string; folder: Folder; path: string } | null {
  if (name.startsWith("/") || name.startsWith("\\") || /^[a-zA-Z]:/.test(name) || name.includes("\\") || name.includes("\0")) throw refused(name, "absolute or backslash paths are refused");
  if (name.split("/").some((s) => s === "..")) throw refused(name, "paths with .. are refused");
  if (name.endsWith("/")) return null; // a directory entry
  if (name === "manifest.json") throw refused(name, "this is a legacy dataset archive (manifest.json); export the dataset again from this server");
  const m = /^examples\/([^/]+)\/(.+)$/.exec(name);
  if (!m) throw refused(name, "entries must be under examples/<name>/");
  const [, example, rest] = m;
  if (!EXAMPLE_NAME.test(example) || example.length > 128) throw refused(name, "the example folder is not a valid example name");
  if (rest === "input.json" || rest === "expected.json" || rest === "meta.json") return { example, kind: rest };
  const f = /^(input|expected)\/(.+)$/.exec(rest);
  if (!f) throw refused(name, "expected input.json, expected.json, meta.json, input/… or expected/…");
  try {
    return { example, folder: f[1] as Folder, path: checkPath(f[2]) };
  } catch (err) {
    throw refused(name, (err as Error).message);
  }
}

/**
 * Reads the archive stream into `dir`: JSON documents in memory (small), files on disk. Throws a 400
 * or 413 naming the first problem; the caller removes `dir`.
 */
async function stage(body: ReadableStream<Uint8Array>, dir: string, limits: ImportLimits): Promise<Map<string, Staged>> {
  const examples = new Map<string, Staged>();
  let entries = 0;
  let total = 0;
  let archive = 0;
  let failure: Error | null = null;
  const fail = (err: Error) => {
    failure ??= err;
  };
  const open = new Set<number>();
  const close = (fd: number) => {
    if (open.delete(fd)) closeSync(fd);
  };
  const unzip = new Unzip();
  unzip.register(UnzipInflate);
  unzip.onfile = (file) => {
    if (failure) return;
    try {
      if (++entries > limits.maxEntries) throw Invalid(`the archive has more than ${limits.maxEntries} entries`, { field: "file", code: "too_many_entries" });
      const where = classify(file.name);
      if (!where) return;
      if (file.originalSize !== undefined && total + file.originalSize > limits.maxUncompressedBytes) {
        throw refused(file.name, `expands beyond the ${limits.maxUncompressedBytes}-byte limit of an import`);
      }
      const ex = examples.get(where.example) ?? { name: where.example, files: [], hasExpected: false };
      examples.set(where.example, ex);
      let size = 0;
      if ("kind" in where) {
        const chunks: Uint8Array[] = [];
        file.ondata = (err, data, final) => {
          if (failure) return;
          if (err) return fail(refused(file.name, `cannot be inflated (${err.message})`));
          size += data.byteLength;
          total += data.byteLength;
          if (size > JSON_ENTRY_MAX) {
            file.terminate();
            return fail(refused(file.name, `is larger than ${JSON_ENTRY_MAX} bytes`));
          }
          chunks.push(data);
          if (!final) return;
          try {
            const val = JSON.parse(Buffer.concat(chunks).toString("utf8")) as unknown;
            if (where.kind === "input.json") ex.input = val;
            if (where.kind === "expected.json") {
              ex.expected = val;
              ex.hasExpected = true;
            }
            if (where.kind === "meta.json") ex.meta = val;
          } catch (e) {
            fail(refused(file.name, `is not valid JSON (${(e as Error).message})`));
          }
        };
      } else {
        if (where.folder === "input" && where.path === "arguments.json") ex.legacy ??= file.name;
        if (where.folder === "expected" && where.path === "output.json") ex.legacy ??= file.name;
        if (ex.files.some((f) => f.folder === where.folder && f.path === where.path)) throw refused(file.name, "appears twice");
        const tmp = join(dir, String(entries));
        const fd = openSync(tmp, "w");
        open.add(fd);
        ex.files.push({ folder: where.folder, path: where.path, tmp, size: 0 });
        const staged = ex.files.at(-1)!;
        file.ondata = (err, data, final) => {
          try {
            if (failure) return;
            if (err) return fail(refused(file.name, `cannot be inflated (${err.message})`));
            size += data.byteLength;
            total += data.byteLength;
            if (total > limits.maxUncompressedBytes) {
              file.terminate();
              return fail(refused(file.name, `expands beyond the ${limits.maxUncompressedBytes}-byte limit of an import`));
            }
            if (size > EXAMPLE_FILE_MAX_BYTES) {
              file.terminate();
              return fail(refused(file.name, `is larger than ${EXAMPLE_FILE_MAX_BYTES} bytes`));
            }
            writeSync(fd, data);
            staged.size = size;
          } finally {
            if (final || failure) close(fd);
          }
        };
      }
      file.start();
    } catch (err) {
      fail(err as Error);
    }
  };
  const reader = body.getReader();
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      archive += value.byteLength;
      if (archive > limits.maxArchiveBytes) throw TooLarge(`the archive is larger than ${limits.maxArchiveBytes} bytes`, { field: "file", code: "archive_too_large" });
      unzip.push(value, false);
      if (failure) throw failure;
    }
    unzip.push(new Uint8Array(0), true);
    if (failure) throw failure;
  } catch (err) {
    await reader.cancel().catch(() => {});
    throw err;
  } finally {
    for (const fd of [...open]) close(fd);
  }
  if (entries === 0) throw Invalid("the archive is empty or not a ZIP file", { field: "file", code: "invalid_archive" });
  return examples;
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
  const a = automationOf(ctx, tenantId, ref);
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
    const store = exampleStore(ctx);
    const existing = new Set(store.all(tenantId, a.id).map((r) => r.name));
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
    let deleted: ExampleRow[] = [];
    let filesDeleted = 0;
    store.tx(() => {
      if (mode === "replace") {
        deleted = store.all(tenantId, a.id);
        for (const r of deleted) {
          filesDeleted += store.files(r.id).length;
          store.remove(r.id);
        }
      }
      for (const { row, files } of rows) {
        store.insert(row);
        for (const f of files) {
          store.putFile(f);
          retainBlob(ctx, tenantId, f.sha256, pinOwner(row.id));
        }
      }
    });
    for (const r of deleted) await releaseOwner(ctx, pinOwner(r.id));
    const expectedSet = rows.filter((r) => r.row.expected !== null).length;
    if (mode === "replace") return { mode, created: rows.length, expectedSet, deleted: deleted.length, filesDeleted };
    return { mode, created: rows.length, expectedSet, skipped: issues.length, issues };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
