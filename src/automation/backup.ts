// `automation-server backup --to DIR` and `restore --from DIR --data-dir DIR`. A backup directory holds
// the database snapshot (automation.db, from SQLite's VACUUM INTO: consistent while the server keeps
// writing), every blob that snapshot references (copied after it, so nothing it points at is missing
// unless it was deleted meanwhile), the data dir's key files, and backup.json, written last.
import { chmodSync, copyFileSync, existsSync, mkdirSync, readFileSync, renameSync, rmdirSync, rmSync, writeFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import * as v from "valibot";
import { isEmptyTarget } from "../kernel/backup";
import { isPostgresUrl } from "../kernel/pg";
import { referencedBlobs, restoreDatabase, snapshotDatabase } from "./db/sqlite/backup";
import { type FlagSpec, helpText, parseFlags } from "../kernel/config";
import { FatalError, UsageError } from "../kernel/errors";
import type { BlobStore } from "./blobs/blobs";
import { createBlobStore } from "./blobs/fs-blobs";
import { dataDirFlag } from "./config";
import { blobConfig, blobFlags, openBlobStore } from "./blobs/blob-config";
import { parseS3Url } from "./blobs/s3-blobs";

const DB = "automation.db";
const MANIFEST = "backup.json";
/** Key files of the data dir: without secret-key the stored SMTP passwords and API keys cannot be opened. */
const KEY_FILES = ["signing-secret", "secret-key"];

const Manifest = v.object({
  product: v.literal("automation-server"),
  createdAt: v.string(),
  database: v.literal(DB),
  blobs: v.number(),
  blobBytes: v.number(),
  /** Blobs the snapshot references that were gone from the store when the copy reached them. */
  missing: v.array(v.string()),
  keyFiles: v.array(v.string()),
});
type Manifest = v.InferOutput<typeof Manifest>;

/**
 * The blobs under a filesystem store's root, read-only. Not an FsBlobStore: opening one sweeps its
 * temp folder, which would break the uploads a running server has in flight there.
 */
function fsBlobReader(root: string): Pick<BlobStore, "get"> {
  return {
    async get(sha256) {
      if (!/^[0-9a-f]{64}$/.test(sha256)) return null;
      const file = Bun.file(join(root, sha256.slice(0, 2), sha256.slice(2, 4), sha256));
      return (await file.exists()) ? file : null;
    },
  };
}

/** Copies each blob of `shas` from `from` to `to`, checking its address; returns what was copied and what was gone. */
async function copyBlobs(from: Pick<BlobStore, "get">, to: BlobStore, shas: string[]): Promise<{ copied: number; bytes: number; missing: string[] }> {
  let copied = 0;
  let bytes = 0;
  const missing: string[] = [];
  for (const sha of shas) {
    const blob = await from.get(sha);
    if (!blob) {
      missing.push(sha);
      continue;
    }
    const put = await to.put(blob.stream());
    if (put.sha256 !== sha) throw new FatalError(`blob ${sha} is damaged in the store (its bytes hash to ${put.sha256})`);
    copied++;
    bytes += put.size;
  }
  return { copied, bytes, missing };
}

/** Takes a backup of the data dir `dataDir` (server running or not) into the new directory `to`. */
export async function backupDataDir(dataDir: string, to: string, source: Pick<BlobStore, "get"> = fsBlobReader(join(dataDir, "blobs"))): Promise<Manifest> {
  if (!isEmptyTarget(to)) throw new FatalError(`${to} is not empty: a backup goes into a new or empty directory`);
  mkdirSync(to, { recursive: true });
  snapshotDatabase(join(dataDir, DB), join(to, DB));
  const shas = referencedBlobs(join(to, DB));
  const { copied, bytes, missing } = await copyBlobs(source, createBlobStore(join(to, "blobs")), shas);
  rmSync(join(to, "blobs", "tmp"), { recursive: true, force: true });
  const keyFiles: string[] = [];
  for (const name of KEY_FILES) {
    if (!existsSync(join(dataDir, name))) continue;
    copyFileSync(join(dataDir, name), join(to, name));
    chmodSync(join(to, name), 0o600);
    keyFiles.push(name);
  }
  const manifest: Manifest = { product: "automation-server", createdAt: new Date().toISOString(), database: DB, blobs: copied, blobBytes: bytes, missing, keyFiles };
  writeFileSync(join(to, MANIFEST), JSON.stringify(manifest, null, 2) + "\n");
  return manifest;
}

function readManifest(dir: string): Manifest {
  const file = join(dir, MANIFEST);
  if (!existsSync(file)) throw new FatalError(`${dir} is not a complete automation-server backup (no ${MANIFEST})`);
  const parsed = v.safeParse(Manifest, (() => {
    try {
      return JSON.parse(readFileSync(file, "utf8"));
    } catch {
      return undefined;
    }
  })());
  if (!parsed.success) throw new FatalError(`${file} is not an automation-server backup manifest`);
  return parsed.output;
}

/**
 * Restores the backup directory `from` into `dataDir`, which must not exist or be empty. Everything is
 * laid out in a sibling directory first and renamed into place, so a failed restore leaves no half data dir.
 */
export async function restoreDataDir(from: string, dataDir: string): Promise<Manifest & { restoredBlobs: number }> {
  const manifest = readManifest(from);
  if (!isEmptyTarget(dataDir)) throw new FatalError(`${dataDir} is not empty: restore only into a new or empty data dir (move it away first)`);
  const target = resolve(dataDir);
  const staging = `${target}.${process.pid}.restoring`;
  rmSync(staging, { recursive: true, force: true });
  mkdirSync(staging, { recursive: true });
  try {
    restoreDatabase(join(from, DB), join(staging, DB));
    const shas = referencedBlobs(join(staging, DB)).filter((s) => !manifest.missing.includes(s));
    const { copied, missing } = await copyBlobs(fsBlobReader(join(from, "blobs")), createBlobStore(join(staging, "blobs")), shas);
    if (missing.length) throw new FatalError(`the backup lacks ${missing.length} blob(s) its database refers to (first: ${missing[0]})`);
    for (const name of manifest.keyFiles) {
      copyFileSync(join(from, name), join(staging, name));
      chmodSync(join(staging, name), 0o600);
    }
    mkdirSync(dirname(target), { recursive: true });
    if (existsSync(target)) rmdirSync(target);
    renameSync(staging, target);
    return { ...manifest, restoredBlobs: copied };
  } catch (err) {
    rmSync(staging, { recursive: true, force: true });
    throw err;
  }
}

const backupFlags = {
  to: { type: "string", value: "DIR", help: "directory to write the backup into (new or empty)" },
  ...dataDirFlag,
  db: { type: "string", env: "AUTOMATION_DB", value: "URL", help: "the server's database when not the SQLite file in --data-dir (PostgreSQL: refused, use pg_dump)" },
  ...blobFlags,
  json: { type: "boolean", help: "print the backup manifest as one JSON object" },
  help: { type: "boolean", short: "h", help: "show this help" },
} satisfies Record<string, FlagSpec>;

export async function backupCommand(argv: string[]): Promise<void> {
  const { values, positionals } = parseFlags(argv, backupFlags);
  if (values.help) {
    process.stdout.write(helpText("Usage: automation-server backup --to DIR [--data-dir DIR] [--json]\n\nCopies the database (consistently, while the server keeps running) and the blobs it references.\nOn PostgreSQL (--db / AUTOMATION_DB) use pg_dump instead.", backupFlags));
    return;
  }
  if (positionals.length) throw new UsageError(`unexpected argument "${positionals[0]}"`);
  if (values.db && isPostgresUrl(values.db)) {
    throw new FatalError(
      "backup copies an SQLite data dir; this server's database is PostgreSQL: back it up with pg_dump (e.g. pg_dump --format=custom --file=automation.dump \"$AUTOMATION_DB\") and copy the blob store and key files yourself (docs/automation/postgres.md)",
    );
  }
  if (values.db) throw new UsageError(`--db must be a postgres:// URL (got "${values.db}"); the SQLite database lives in --data-dir`);
  if (!values.to) throw new UsageError("--to DIR is required");
  // The server's blob store: read-only on disk (see fsBlobReader), or the S3 bucket it uses.
  const blobs = blobConfig(values);
  const source = blobs.blobs && parseS3Url(blobs.blobs) ? openBlobStore(blobs, values["data-dir"]) : fsBlobReader(blobs.blobs ?? join(values["data-dir"], "blobs"));
  const m = await backupDataDir(values["data-dir"], values.to, source);
  if (values.json) return void process.stdout.write(JSON.stringify(m) + "\n");
  process.stdout.write(`backed up ${values["data-dir"]} to ${values.to}: database, ${m.blobs} blob(s) (${m.blobBytes} bytes), ${m.keyFiles.join(" and ") || "no key files"}\n`);
  if (m.missing.length) process.stdout.write(`note: ${m.missing.length} blob(s) were deleted after the snapshot was taken and are not in the backup\n`);
}

const restoreFlags = {
  from: { type: "string", value: "DIR", help: "a directory written by automation-server backup" },
  "data-dir": { type: "string", env: "AUTOMATION_DATA_DIR", value: "DIR", help: "the data dir to create (must not exist or be empty)" },
  json: { type: "boolean", help: "print the restored manifest as one JSON object" },
  help: { type: "boolean", short: "h", help: "show this help" },
} satisfies Record<string, FlagSpec>;

export async function restoreCommand(argv: string[]): Promise<void> {
  const { values, positionals } = parseFlags(argv, restoreFlags);
  if (values.help) {
    process.stdout.write(helpText("Usage: automation-server restore --from DIR --data-dir DIR [--json]\n\nRestores a backup into a new (empty) data dir; start the server on it afterwards.", restoreFlags));
    return;
  }
  if (positionals.length) throw new UsageError(`unexpected argument "${positionals[0]}"`);
  if (!values.from) throw new UsageError("--from DIR is required");
  if (!values["data-dir"]) throw new UsageError("--data-dir DIR is required (the data dir to create)");
  const m = await restoreDataDir(values.from, values["data-dir"]);
  if (values.json) return void process.stdout.write(JSON.stringify(m) + "\n");
  process.stdout.write(`restored ${values.from} into ${values["data-dir"]}: database, ${m.restoredBlobs} blob(s), ${m.keyFiles.join(" and ") || "no key files"}\n`);
}
