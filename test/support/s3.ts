// Starts s3rver (test/support/s3rver-main.ts) in a child process on loopback with an empty bucket, and
// the environment a server needs to use it. stop() kills it and removes its directory.
// startPlainS3rver runs s3rver as shipped, under Node, as a developer runs it locally: none of the
// launcher's fixes, so tests see what such a server cannot do (page a listing, under Node 20).
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

export interface TestS3 {
  endpoint: string;
  bucket: string;
  /** s3rver's directory (tests look at multipart leftovers in it). */
  dir: string;
  /** AWS_* variables for a child process or openBlobStore. */
  env: Record<string, string>;
  stop(): Promise<void>;
}

export const S3_TEST_KEY = { AWS_ACCESS_KEY_ID: "S3RVER", AWS_SECRET_ACCESS_KEY: "S3RVER", AWS_REGION: "us-east-1" };

/** `cors`: the bucket's `<CORSConfiguration>` XML (none: CORS is off, as on a new S3 bucket). */
export async function startS3(bucket = "blobs", opts: { cors?: string } = {}): Promise<TestS3> {
  const dir = mkdtempSync(join(tmpdir(), "s3rver-"));
  const args = [process.execPath, join(import.meta.dir, "s3rver-main.ts"), dir, bucket, ...(opts.cors ? [opts.cors] : [])];
  const proc = Bun.spawn(args, { stdin: "pipe", stdout: "pipe", stderr: "ignore" });
  const reader = proc.stdout.getReader();
  let text = "";
  while (!text.includes("\n")) {
    const { done, value } = await reader.read();
    if (done) {
      rmSync(dir, { recursive: true, force: true });
      throw new Error(`s3rver exited before listening (code ${await proc.exited})`);
    }
    text += new TextDecoder().decode(value);
  }
  reader.releaseLock();
  const { endpoint } = JSON.parse(text.split("\n")[0]) as { endpoint: string };
  return {
    endpoint,
    bucket,
    dir,
    env: { ...S3_TEST_KEY, AWS_ENDPOINT_URL: endpoint },
    async stop() {
      proc.kill("SIGTERM");
      const timer = setTimeout(() => proc.kill("SIGKILL"), 3000);
      await proc.exited;
      clearTimeout(timer);
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** Node, for s3rver as shipped; null when the machine has none (the tests that need it skip). */
export const nodeBin: string | null = Bun.which("node");

/**
 * s3rver 3.7.1's own CLI under Node (`node node_modules/s3rver/bin/s3rver.js`), unpatched, with an empty
 * bucket. `nodeOptions` is its NODE_OPTIONS (none by default, whatever the test's environment holds).
 */
export async function startPlainS3rver(bucket = "blobs", opts: { nodeOptions?: string } = {}): Promise<TestS3> {
  if (!nodeBin) throw new Error("node is not installed");
  const dir = mkdtempSync(join(tmpdir(), "s3rver-plain-"));
  const cli = join(import.meta.dir, "../../node_modules/s3rver/bin/s3rver.js");
  const proc = Bun.spawn([nodeBin, cli, "-d", dir, "-a", "127.0.0.1", "-p", "0", "-s", "--configure-bucket", bucket], {
    stdout: "pipe",
    stderr: "pipe",
    // As shipped: no --openssl-legacy-provider (unless asked), which gives Node 20 back the DES its listings page with.
    env: { ...process.env, NODE_OPTIONS: opts.nodeOptions },
  });
  const reader = proc.stdout.getReader();
  let text = "";
  let m: RegExpExecArray | null = null;
  while (!(m = /S3rver listening on ([\d.]+):(\d+)/.exec(text))) {
    const { done, value } = await reader.read();
    if (done) {
      rmSync(dir, { recursive: true, force: true });
      throw new Error(`plain s3rver exited before listening (code ${await proc.exited}): ${text}${await new Response(proc.stderr).text()}`);
    }
    text += new TextDecoder().decode(value);
  }
  reader.releaseLock();
  const endpoint = `http://${m[1]}:${m[2]}`;
  return {
    endpoint,
    bucket,
    dir,
    env: { ...S3_TEST_KEY, AWS_ENDPOINT_URL: endpoint },
    async stop() {
      proc.kill("SIGTERM");
      const timer = setTimeout(() => proc.kill("SIGKILL"), 3000);
      await proc.exited;
      clearTimeout(timer);
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
