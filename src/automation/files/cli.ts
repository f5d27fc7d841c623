// `automation-server blobs gc [--dry-run]` and `blobs copy --to DIR|s3://…`: maintenance of the blob
// store the server is configured with (--blobs / AUTOMATION_BLOBS, default <data-dir>/blobs).
import pc from "picocolors";
import { systemClock } from "../../kernel/clock";
import { helpText, parseFlags } from "../../kernel/config";
import { UsageError } from "../../kernel/errors";
import { createLogger } from "../../kernel/logger";
import { openAdminStorage, printJson } from "../admin";
import { parseDuration, storageFlags } from "../config";
import { blobConfig, blobFlags, openBlobStore } from "../blobs/blob-config";
import { copyBlobs, type CopyProgress } from "./copy";
import { collectGarbage, DEFAULT_GC_GRACE_MS } from "./gc";

const common = {
  "data-dir": storageFlags["data-dir"],
  ...blobFlags,
  json: { type: "boolean", help: "print one JSON object" },
  help: { type: "boolean", short: "h", help: "show this help" },
} as const;

const gcFlags = {
  ...storageFlags,
  "dry-run": { type: "boolean", help: "report what would be deleted, delete nothing" },
  grace: { type: "string", default: "1h", value: "DURATION", help: "leave blobs, temp objects and expired uploads younger than this" },
  ...common,
} as const;

const copyFlags = {
  to: { type: "string", value: "DIR|s3://BUCKET/PREFIX", help: "destination store (S3 credentials from AWS_* as for --blobs)" },
  concurrency: { type: "number", default: 4, value: "N", help: "blobs copied at a time" },
  ...common,
} as const;

const USAGE = `Usage: automation-server blobs gc [--dry-run] [--grace DURATION] [--data-dir DIR] [--blobs DIR|s3://…] [--json]
       automation-server blobs copy --to DIR|s3://BUCKET/PREFIX [--data-dir DIR] [--blobs DIR|s3://…] [--json]`;

export async function blobsCommand(argv: string[]): Promise<void> {
  const [sub, ...rest] = argv;
  if (sub === "gc") return gcCommand(rest);
  if (sub === "copy") return copyCommand(rest);
  if (sub === "--help" || sub === "-h") return void process.stdout.write(`${USAGE}\n\nEach subcommand takes --help.\n`);
  throw new UsageError(sub ? `unknown command "blobs ${sub}"` : "missing subcommand: blobs gc | blobs copy");
}

async function gcCommand(argv: string[]): Promise<void> {
  const { values, positionals } = parseFlags(argv, gcFlags);
  if (values.help) {
    const text = "Usage: automation-server blobs gc [--dry-run] [--grace DURATION]\n\nDeletes blobs no row references, leftovers of interrupted uploads and abandoned multipart uploads, older than the grace period (what the server's --gc-interval sweeper does).";
    return void process.stdout.write(helpText(text, gcFlags));
  }
  if (positionals.length) throw new UsageError(`unexpected argument "${positionals[0]}"`);
  const graceMs = values.grace ? parseDuration(values.grace, "grace") : DEFAULT_GC_GRACE_MS;
  const blobs = openBlobStore(blobConfig(values), values["data-dir"]);
  await blobs.check?.();
  const db = await openAdminStorage(values);
  try {
    const r = await collectGarbage({ storage: db.storage, blobs, clock: systemClock, log: createLogger() }, { graceMs, dryRun: values["dry-run"] ?? false });
    if (values.json) return printJson(r);
    const verb = r.dryRun ? "would delete" : "deleted";
    process.stdout.write(
      `${verb} ${r.deleted} of ${r.scanned} blob(s) (${mib(r.deletedBytes)}), ${r.temp} temp object(s), ${r.sessions} abandoned upload(s), ${r.multiparts} multipart upload(s)\n`,
    );
  } finally {
    await db.close();
  }
}

async function copyCommand(argv: string[]): Promise<void> {
  const { values, positionals } = parseFlags(argv, copyFlags);
  if (values.help) {
    const text =
      "Usage: automation-server blobs copy --to DIR|s3://BUCKET/PREFIX\n\nCopies every blob of this deployment's store to another one, re-hashing each; run it again to resume. Then start the server with --blobs set to the destination.";
    return void process.stdout.write(helpText(text, copyFlags));
  }
  if (positionals.length) throw new UsageError(`unexpected argument "${positionals[0]}"`);
  if (!values.to) throw new UsageError("blobs copy needs --to DIR or --to s3://bucket/prefix");
  const config = blobConfig(values);
  const from = openBlobStore(config, values["data-dir"]);
  const to = openBlobStore({ ...config, ...blobConfig({ ...values, blobs: values.to }) }, values["data-dir"]);
  await from.check?.();
  await to.check?.();
  const bar = !values.json && process.stderr.isTTY;
  let last = 0;
  const progress = (p: CopyProgress) => {
    const now = Date.now();
    // A bar in a terminal; else a line every 2 s (logs); never with --json.
    if (values.json || (p.done < p.total && now - last < (bar ? 100 : 2000))) return;
    last = now;
    if (bar) {
      const width = 30;
      const filled = p.total ? Math.round((p.done / p.total) * width) : width;
      process.stderr.write(`\r${pc.cyan("█".repeat(filled))}${pc.dim("░".repeat(width - filled))} ${p.done}/${p.total} blobs, ${mib(p.bytes)} `);
    } else {
      process.stderr.write(`copied ${p.done}/${p.total} blobs, ${mib(p.bytes)}\n`);
    }
  };
  const r = await copyBlobs(from, to, { concurrency: values.concurrency, onProgress: progress });
  if (bar) process.stderr.write("\n");
  if (values.json) printJson(r);
  else {
    process.stdout.write(`${r.verified} of ${r.total} blob(s) verified in ${values.to}: ${r.copied} copied (${mib(r.bytes)}), ${r.skipped} already there\n`);
    for (const f of r.failed.slice(0, 20)) process.stdout.write(`  failed ${f.sha256}: ${f.error}\n`);
  }
  if (r.failed.length) throw new UsageError(`${r.failed.length} blob(s) did not copy; run blobs copy again to retry them`);
}

const mib = (bytes: number) => `${(bytes / 1024 / 1024).toFixed(1)} MiB`;
