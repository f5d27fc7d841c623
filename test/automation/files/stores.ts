// The blob stores the files, upload, artifact, template and dataset suites run over: the filesystem
// store in a temp dir, and the S3 store against s3rver on loopback (one server per test file, started
// on first use; each store gets its own prefix). Suites loop over BLOB_MODES.
import { beforeAll, setDefaultTimeout } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { BlobStore } from "../../../src/automation/blobs/blobs";
import { createBlobStore } from "../../../src/automation/blobs/fs-blobs";
import { S3BlobStore } from "../../../src/automation/blobs/s3-blobs";
import { newSecret } from "../../../src/kernel/ids";
import { atFileEnd } from "../../support/file-end";
import { S3_TEST_KEY, startS3, type TestS3 } from "../../support/s3";

export const BLOB_MODES = ["fs", "s3"] as const;
export type BlobMode = (typeof BLOB_MODES)[number];

/** A store plus what tests inspect: the stored keys and leftovers of unfinished writes. */
export type TestBlobStore = BlobStore & { list(): Promise<string[]>; tempCount(): Promise<number> };

let s3: Promise<TestS3> | undefined;

/**
 * For suites that use the S3 store: starts s3rver in a hook rather than lazily inside the first test
 * (bun kills the processes a timed-out test spawned), and gives S3 tests a 60 s default timeout.
 */
export function withS3(): void {
  setDefaultTimeout(60_000);
  beforeAll(() => testS3().then(() => {}), 30_000);
}
/** The shared s3rver of this test file, stopped when the file is done. */
export function testS3(): Promise<TestS3> {
  if (!s3) {
    const started = (s3 = startS3());
    atFileEnd(async () => {
      if (s3 === started) s3 = undefined;
      await (await started).stop();
    });
  }
  return s3;
}

export async function testBlobStore(mode: BlobMode): Promise<TestBlobStore> {
  if (mode === "fs") {
    const dir = mkdtempSync(join(tmpdir(), "blobs-test-"));
    atFileEnd(() => rmSync(dir, { recursive: true, force: true }));
    const store = createBlobStore(join(dir, "blobs"));
    return wrap(store, async () => store.list().sort(), async () => store.tempCount());
  }
  const server = await testS3();
  const store = new S3BlobStore({ bucket: server.bucket, prefix: `t-${newSecret(8).toLowerCase()}/`, endpoint: server.endpoint, region: "us-east-1", accessKeyId: S3_TEST_KEY.AWS_ACCESS_KEY_ID, secretAccessKey: S3_TEST_KEY.AWS_SECRET_ACCESS_KEY });
  return wrap(
    store,
    async () => {
      const out: string[] = [];
      for await (const e of store.entries()) out.push(e.sha256);
      return out.sort();
    },
    async () => {
      let n = 0;
      for (const sub of ["tmp/", "uploads/"]) for await (const _ of store.objects(sub)) n++;
      return n;
    },
  );
}

/** The store's own methods plus the two inspections (a new object: FsBlobStore has sync ones of those names). */
function wrap(store: BlobStore, list: () => Promise<string[]>, tempCount: () => Promise<number>): TestBlobStore {
  return {
    kind: store.kind,
    ...(store.direct ? { direct: store.direct } : {}),
    put: store.put.bind(store),
    get: store.get.bind(store),
    has: store.has.bind(store),
    delete: store.delete.bind(store),
    entries: store.entries.bind(store),
    ...(store.sweepTemp ? { sweepTemp: store.sweepTemp.bind(store) } : {}),
    list,
    tempCount,
  };
}
