// Turns the file values of a run request ({"$fileId"}, {"$inline"}, multipart parts) into snapshots
// the run owns (pinned blobs + run_files rows) and `FileRef`s in the run input.
import * as v from "valibot";
import { Invalid, TooLarge } from "../../kernel/errors";
import type { AutomationContext } from "../context";
import type { FileRef } from "../engine/contract";
import { putBytes, retainBlob, snapshotFile } from "../files/service";
import { FileValue } from "./model";
import type { FileRow } from "./store";

/** Inline (base64) and multipart input files together may not exceed this per run. */
export const INLINE_MAX_BYTES = 50 * 1024 * 1024;

export type IncomingFile = FileValue | File;

export const ownerOf = (runId: string) => `run:${runId}`;

const isFileValue = (x: unknown): x is FileValue => v.is(FileValue, x);

/** Input values that look like file references are treated as files too (`input.doc = {"$fileId": ...}`). */
export function splitInputFiles(input: Record<string, unknown>): { input: Record<string, unknown>; files: Record<string, IncomingFile | IncomingFile[]> } {
  const rest: Record<string, unknown> = {};
  const files: Record<string, IncomingFile | IncomingFile[]> = {};
  for (const [k, val] of Object.entries(input)) {
    if (isFileValue(val)) files[k] = val;
    else if (Array.isArray(val) && val.length > 0 && val.every(isFileValue)) files[k] = val as FileValue[];
    else rest[k] = val;
  }
  return { input: rest, files };
}

const safeName = (name: string) => name.replace(/[\\/\x00-\x1f]/g, "_").replace(/^\.+/, "_").slice(0, 200) || "file";

/**
 * Stores/pins every incoming file for `runId`; returns the refs to put in the input and the rows to
 * insert with the run. Paths are `input/<field>/<filename>` (`input/<field>/<i>/<filename>` for lists).
 */
export async function materializeFiles(
  ctx: AutomationContext,
  tenantId: string,
  runId: string,
  incoming: Record<string, IncomingFile | IncomingFile[]>,
): Promise<{ refs: Record<string, FileRef | FileRef[]>; rows: FileRow[] }> {
  const refs: Record<string, FileRef | FileRef[]> = {};
  const rows: FileRow[] = [];
  let inlineBytes = 0;
  const now = ctx.clock.now().toISOString();
  const one = async (field: string, f: IncomingFile, dir: string): Promise<FileRef> => {
    let meta: { name: string; contentType: string; size: number; sha256: string; fileId: string | null };
    if (f instanceof File) {
      inlineBytes += f.size;
      if (inlineBytes > INLINE_MAX_BYTES) throw TooLarge(`input files exceed ${INLINE_MAX_BYTES} bytes; upload them first and pass $fileId`, { field: `files.${field}` });
      const blob = await putBytes(ctx, f);
      await retainBlob(ctx, tenantId, blob.sha256, ownerOf(runId));
      meta = { name: f.name || field, contentType: (f.type || "application/octet-stream").split(";")[0], size: blob.size, sha256: blob.sha256, fileId: null };
    } else if ("$inline" in f) {
      const bytes = Buffer.from(f.$inline.base64, "base64");
      inlineBytes += bytes.byteLength;
      if (inlineBytes > INLINE_MAX_BYTES) throw TooLarge(`input files exceed ${INLINE_MAX_BYTES} bytes; upload them first and pass $fileId`, { field: `files.${field}` });
      const blob = await putBytes(ctx, new Uint8Array(bytes));
      await retainBlob(ctx, tenantId, blob.sha256, ownerOf(runId));
      meta = { name: f.$inline.filename, contentType: f.$inline.mimeType, size: blob.size, sha256: blob.sha256, fileId: null };
    } else {
      try {
        const s = await snapshotFile(ctx, tenantId, f.$fileId, ownerOf(runId));
        meta = { name: s.filename, contentType: s.contentType, size: s.size, sha256: s.sha256, fileId: s.fileId };
      } catch (err) {
        throw Invalid(`file ${f.$fileId} does not exist`, { field: `files.${field}`, code: "file_not_found" });
      }
    }
    const path = `${dir}/${safeName(meta.name)}`;
    rows.push({ runId, path, role: "input", name: meta.name, contentType: meta.contentType, size: meta.size, sha256: meta.sha256, stepName: null, fileId: meta.fileId, createdAt: now });
    return { $file: path, filename: meta.name, contentType: meta.contentType, size: meta.size };
  };
  for (const [field, val] of Object.entries(incoming)) {
    if (!/^[A-Za-z_][\w-]{0,99}$/.test(field)) throw Invalid(`file field name ${JSON.stringify(field)} is not a valid input name`, { field: `files.${field}` });
    if (Array.isArray(val)) {
      const list: FileRef[] = [];
      for (const [i, f] of val.entries()) list.push(await one(field, f, `input/${field}/${i}`));
      refs[field] = list;
    } else {
      refs[field] = await one(field, val, `input/${field}`);
    }
  }
  return { refs, rows };
}
