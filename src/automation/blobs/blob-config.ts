// Which blob store a process uses: `--blobs` (AUTOMATION_BLOBS) is a directory or `s3://bucket/prefix`;
// unset = `<data-dir>/blobs`. S3 credentials come from the AWS_* environment only (never flags: flags
// show in `ps`). Shared by `serve` and the `blobs` subcommands.
import { join } from "node:path";
import type { FlagSpec } from "../../kernel/config";
import { UsageError } from "../../kernel/errors";
import type { BlobStore } from "./blobs";
import { createBlobStore } from "./fs-blobs";
import { parseS3Url, S3BlobStore } from "./s3-blobs";

export const blobFlags = {
  blobs: {
    type: "string",
    env: "AUTOMATION_BLOBS",
    value: "DIR|s3://BUCKET/PREFIX",
    help: "where file bytes live: a directory, or an S3 bucket and prefix (default <data-dir>/blobs)",
  },
  "s3-endpoint": {
    type: "string",
    env: "AWS_ENDPOINT_URL_S3",
    value: "URL",
    help: "S3-compatible endpoint, path-style (default AWS_ENDPOINT_URL, else https://s3.<region>.amazonaws.com)",
  },
  "s3-region": { type: "string", env: "AWS_REGION", value: "REGION", help: "S3 region (default us-east-1)" },
  "blobs-max-bytes": {
    type: "string",
    env: "AUTOMATION_BLOBS_MAX_BYTES",
    value: "BYTES",
    help: "directory blobs: cap on the bytes stored; a write past it fails as a full disk does (507)",
  },
} satisfies Record<string, FlagSpec>;

export interface BlobConfig {
  /** A directory or `s3://bucket/prefix`; undefined = `<dataDir>/blobs`. */
  blobs?: string;
  s3Endpoint?: string;
  s3Region?: string;
  /** Directory blobs only: bytes the store may hold in all (a write past it fails with ENOSPC). */
  blobsMaxBytes?: number;
}

/** Checks the flags without touching the store (so `--help`-time errors are usage errors). */
export function blobConfig(v: { blobs?: string; "s3-endpoint"?: string; "s3-region"?: string; "blobs-max-bytes"?: string }): BlobConfig {
  const blobs = v.blobs?.trim() || undefined;
  if (blobs?.startsWith("s3:") && !parseS3Url(blobs)) {
    throw new UsageError(`--blobs must look like s3://bucket/prefix (a lower-case bucket name; got ${blobs})`);
  }
  const s3Endpoint = v["s3-endpoint"]?.trim() || undefined;
  if (s3Endpoint && !/^https?:\/\/[^\s/]+(\/[^\s]*)?$/.test(s3Endpoint)) throw new UsageError(`--s3-endpoint must be an http(s) URL (got ${s3Endpoint})`);
  const max = v["blobs-max-bytes"]?.trim();
  if (max && !/^[1-9]\d{0,15}$/.test(max)) throw new UsageError(`--blobs-max-bytes must be a positive whole number of bytes (got ${max})`);
  return { blobs, s3Endpoint, s3Region: v["s3-region"]?.trim() || undefined, ...(max ? { blobsMaxBytes: Number(max) } : {}) };
}

/** Opens the configured store; missing S3 credentials are a usage error naming the variables. */
export function openBlobStore(c: BlobConfig, dataDir: string, env: Record<string, string | undefined> = process.env): BlobStore {
  const loc = c.blobs ? parseS3Url(c.blobs) : null;
  if (!loc) return createBlobStore(c.blobs ?? join(dataDir, "blobs"), { maxBytes: c.blobsMaxBytes });
  const accessKeyId = env.AWS_ACCESS_KEY_ID;
  const secretAccessKey = env.AWS_SECRET_ACCESS_KEY;
  if (!accessKeyId || !secretAccessKey) throw new UsageError("--blobs s3://… needs AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY in the environment");
  const region = c.s3Region ?? env.AWS_DEFAULT_REGION ?? "us-east-1";
  const endpoint = (c.s3Endpoint ?? env.AWS_ENDPOINT_URL ?? `https://s3.${region}.amazonaws.com`).replace(/\/+$/, "");
  return new S3BlobStore({ ...loc, endpoint, region, accessKeyId, secretAccessKey, ...(env.AWS_SESSION_TOKEN ? { sessionToken: env.AWS_SESSION_TOKEN } : {}) });
}
