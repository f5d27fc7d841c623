// Staging of a dataset archive: every entry classified (zip-slip, legacy layouts and unknown places
// refused), JSON documents parsed, files inflated into the staging dir, all under the import's limits.
// It runs on a worker thread (offthread-tasks.ts): what a zip bomb costs in CPU, garbage and disk
// writes is paid off the thread that answers HTTP. Nothing here touches the database.
import { closeSync, openSync, readSync, writeSync } from "node:fs";
import { join } from "node:path";
import { Unzip, UnzipInflate } from "fflate";
import { Invalid } from "../../kernel/errors";
import { jsonMayHoldUnstorable, unstorableField } from "../../kernel/text";
import { EXAMPLE_NAME } from "./model";
import { checkPath, EXAMPLE_FILE_MAX_BYTES } from "./paths";
import type { Folder } from "./store";

export interface ImportLimits {
  /** The archive itself. */
  maxArchiveBytes: number;
  maxEntries: number;
  /** All entries together, uncompressed (what a zip bomb inflates to). */
  maxUncompressedBytes: number;
}
const JSON_ENTRY_MAX = 10 * 1024 * 1024;
const SLICE_BYTES = 16 * 1024;

/** One example as staged: JSON documents parsed, files written under the staging dir. */
export interface Staged {
  name: string;
  input?: unknown;
  expected?: unknown;
  hasExpected: boolean;
  meta?: unknown;
  files: { folder: Folder; path: string; tmp: string; size: number }[];
  legacy?: string;
}

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
 * Reads the archive file into `dir`: JSON documents in memory (small), files on disk. Throws a 400
 * naming the first problem; the caller removes `dir`. Runs on a worker thread (offthread-tasks.ts).
 */
export function stageArchive(archivePath: string, dir: string, limits: ImportLimits): Staged[] {
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
            const text = Buffer.concat(chunks).toString("utf8");
            const val = JSON.parse(text) as unknown;
            // Stored as JSON text: PostgreSQL refuses a NUL (`\u0000`) in it (issue 36 part 4).
            const bad = jsonMayHoldUnstorable(text) ? unstorableField(val) : undefined;
            if (bad !== undefined) return fail(refused(file.name, `${bad} contains a NUL character or an unpaired UTF-16 surrogate, which cannot be stored`));
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
  const fd = openSync(archivePath, "r");
  const chunk = new Uint8Array(64 * 1024);
  try {
    for (;;) {
      const n = readSync(fd, chunk);
      if (n === 0) break;
      // Small slices: fflate inflates a whole push even after terminate(), and deflate expands up to
      // ~1032:1, so a slice bounds both the work done past a limit and the memory of one push.
      for (let at = 0; at < n && !failure; at += SLICE_BYTES) unzip.push(chunk.slice(at, Math.min(n, at + SLICE_BYTES)), false);
      if (failure) throw failure;
    }
    unzip.push(new Uint8Array(0), true);
    if (failure) throw failure;
  } finally {
    closeSync(fd);
    for (const f of [...open]) close(f);
  }
  if (entries === 0) throw Invalid("the archive is empty or not a ZIP file", { field: "file", code: "invalid_archive" });
  return [...examples.values()];
}

