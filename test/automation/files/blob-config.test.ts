// --blobs and its S3 companions: what opens which store, and the one-line refusals.
import { expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseFlags } from "../../../src/kernel/config";
import { FatalError, UsageError } from "../../../src/kernel/errors";
import { parseDuration, serveConfig, serveFlags } from "../../../src/automation/config";
import { blobConfig, openBlobStore } from "../../../src/automation/blobs/blob-config";
import { FsBlobStore } from "../../../src/automation/blobs/fs-blobs";
import { parseS3Url, S3BlobStore } from "../../../src/automation/blobs/s3-blobs";
import { testS3, withS3 } from "./stores";

withS3();

const creds = { AWS_ACCESS_KEY_ID: "AK", AWS_SECRET_ACCESS_KEY: "SK" };

test("s3:// URLs: bucket and a prefix ending in /; anything else is not one", () => {
  expect(parseS3Url("s3://my-bucket/some/prefix/")).toEqual({ bucket: "my-bucket", prefix: "some/prefix/" });
  expect(parseS3Url("s3://my-bucket")).toEqual({ bucket: "my-bucket", prefix: "" });
  for (const bad of ["s3://", "s3://UPPER/x", "s3://a/x", "http://bucket/x"]) expect(parseS3Url(bad)).toBeNull();
});

test("flags > environment: --blobs s3://… with endpoint and region; credentials only from the environment", () => {
  const { values } = parseFlags(["--blobs", "s3://bk1/p", "--s3-endpoint", "http://127.0.0.1:9000/", "--s3-redirect"], serveFlags, { AUTOMATION_BLOBS: "/ignored", AWS_REGION: "eu-west-3" });
  const config = serveConfig(values);
  expect(config).toMatchObject({ blobs: "s3://bk1/p", s3Endpoint: "http://127.0.0.1:9000/", s3Region: "eu-west-3", s3Redirect: true, uploadTtlMs: 3_600_000, gcIntervalMs: 3_600_000, gcGraceMs: 3_600_000 });
  const store = openBlobStore(config, "/data", creds) as S3BlobStore;
  expect(store).toBeInstanceOf(S3BlobStore);
  expect(store.opts).toMatchObject({ bucket: "bk1", prefix: "p/", endpoint: "http://127.0.0.1:9000", region: "eu-west-3", accessKeyId: "AK" });
  expect(() => openBlobStore(config, "/data", {})).toThrow(/AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY/);
});

test("no --blobs: the disk store under <data-dir>/blobs; a directory: the disk store there", () => {
  const dir = mkdtempSync(join(tmpdir(), "blob-config-"));
  try {
    const d = openBlobStore({}, dir, creds) as FsBlobStore;
    expect(d).toBeInstanceOf(FsBlobStore);
    expect(d.root).toBe(join(dir, "blobs"));
    expect((openBlobStore({ blobs: join(dir, "elsewhere") }, dir, creds) as FsBlobStore).root).toBe(join(dir, "elsewhere"));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test("bad values are usage errors naming the flag", () => {
  expect(() => blobConfig({ blobs: "s3://No_Such" })).toThrow(UsageError);
  expect(() => blobConfig({ blobs: "s3://ok-bucket", "s3-endpoint": "minio:9000" })).toThrow(/--s3-endpoint/);
  expect(() => parseDuration("soon", "gc-grace")).toThrow(/--gc-grace/);
  expect(() => blobConfig({ "blobs-max-bytes": "8M" })).toThrow(/--blobs-max-bytes/);
  expect(() => blobConfig({ "blobs-max-bytes": "0" })).toThrow(/--blobs-max-bytes/);
  expect(blobConfig({ "blobs-max-bytes": "8388608" }).blobsMaxBytes).toBe(8_388_608);
  expect(parseDuration("90s", "x")).toBe(90_000);
  expect(parseDuration("0", "x")).toBe(0);
  expect(parseDuration("2d", "x")).toBe(172_800_000);
  const { values } = parseFlags(["--upload-ttl", "8d"], serveFlags, {});
  expect(() => serveConfig(values)).toThrow(/--upload-ttl/);
});

test("an S3 store that cannot be used (no such bucket, nothing listening) stops the start with one line", async () => {
  const s3 = await testS3();
  const env = { ...s3.env, AWS_ENDPOINT_URL: s3.endpoint };
  await openBlobStore({ blobs: `s3://${s3.bucket}/ok` }, "/data", env).check?.();
  await expect(openBlobStore({ blobs: "s3://no-such-bucket/x" }, "/data", env).check!()).rejects.toThrow(/cannot use s3:\/\/no-such-bucket\/x\/ at http:\/\/127\.0\.0\.1:\d+: NoSuchBucket/);
  await expect(openBlobStore({ blobs: `s3://${s3.bucket}/ok` }, "/data", { ...env, AWS_ACCESS_KEY_ID: "WRONG" }).check!()).rejects.toThrow(/InvalidAccessKeyId/);
  await expect(openBlobStore({ blobs: "s3://any-bucket/x", s3Endpoint: "http://127.0.0.1:1" }, "/data", creds).check!()).rejects.toThrow(FatalError);
});
