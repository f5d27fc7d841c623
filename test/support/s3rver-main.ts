// An S3-compatible server for tests: s3rver (npm) on loopback, in its own process so its work does not
// share the test's event loop. Prints one JSON line {"endpoint": ...} once listening; SIGTERM stops it.
// Usage: bun test/support/s3rver-main.ts DIR BUCKET [CORS_XML]  (a <CORSConfiguration> for the bucket)
//
// s3rver 3.7 lacks three calls the blob store uses; they are added here in front of its router, on
// its own on-disk layout (<dir>/<bucket>/._S3rver_uploads/<uploadId>/{key,<part>}):
//   DELETE /bucket/key?uploadId=…      AbortMultipartUpload (s3rver answers 405)
//   GET    /bucket?uploads             ListMultipartUploads (s3rver answers 501)
//   POST   /bucket/key?uploadId=…      for an unknown id: 404 NoSuchUpload, as S3 does (s3rver: 500)
// A listing that would be truncated fails under Bun as shipped (and under Node 20, whose OpenSSL 3
// refuses DES: test/support/s3.ts startPlainS3rver shows it): s3rver encrypts its ListObjectsV2
// continuation tokens with DES, which Bun's crypto (BoringSSL) does not have. For that cipher only,
// a pass-through stands in (the token is opaque to clients either way).
// And it pages listings in directory order, not key order, so a continuation skipped or repeated keys:
// its directory reads are sorted here.
// Its PUT answers once the bytes went into a write stream, not once they are in the file, and it
// overwrites an object in place: a GET right after a PUT (or during a rewrite of the same content) read
// a truncated object. Its putObject is replaced by one that writes a temp file, waits for it to close
// and renames it into place, as S3's own atomic PUT behaves.
// It also accepts any SigV4 signature (it verifies only V2): signing is tested against Bun's own
// presign in test/automation/files/s3-sign.test.ts.
import { existsSync, readdirSync, readFileSync, rmSync, statSync } from "node:fs";
import { dirname, join } from "node:path";
import crypto from "node:crypto";
import fs from "node:fs";

const passThrough = () => ({ update: (data: string | Buffer) => Buffer.from(data as string), final: () => Buffer.alloc(0) });
const { createCipheriv, createDecipheriv } = crypto;
Object.assign(crypto, {
  createCipheriv: (alg: string, ...rest: unknown[]) => (alg === "des" ? passThrough() : (createCipheriv as (...a: unknown[]) => unknown)(alg, ...rest)),
  createDecipheriv: (alg: string, ...rest: unknown[]) => (alg === "des" ? passThrough() : (createDecipheriv as (...a: unknown[]) => unknown)(alg, ...rest)),
});

const [dir, bucket, cors] = process.argv.slice(2);
if (!dir || !bucket) {
  process.stderr.write("usage: s3rver-main.ts DIR BUCKET\n");
  process.exit(2);
}

type Ctx = { method: string; path: string; query: Record<string, string>; status: number; body: unknown; type: string; set(k: string, v: string): void };
const uploadsDir = (b: string) => join(dir, b, "._S3rver_uploads");
const xmlError = (code: string, message: string) => `<?xml version="1.0" encoding="UTF-8"?>\n<Error><Code>${code}</Code><Message>${message}</Message></Error>`;
const esc = (s: string) => s.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;");

async function shim(ctx: Ctx, next: () => Promise<void>) {
  const [, b, ...rest] = ctx.path.split("/");
  const key = decodeURIComponent(rest.join("/"));
  if (b && key && "uploadId" in ctx.query && (ctx.method === "DELETE" || ctx.method === "POST")) {
    const up = join(uploadsDir(b), ctx.query.uploadId);
    if (!/^[0-9a-f]+$/.test(ctx.query.uploadId) || !existsSync(up)) {
      ctx.status = 404;
      ctx.type = "application/xml";
      ctx.body = xmlError("NoSuchUpload", "The specified upload does not exist.");
      return;
    }
    if (ctx.method === "DELETE") {
      rmSync(up, { recursive: true, force: true });
      ctx.status = 204;
      ctx.body = "";
      return;
    }
  }
  if (b && !key && ctx.method === "GET" && "uploads" in ctx.query) {
    const prefix = ctx.query.prefix ?? "";
    const root = uploadsDir(b);
    const items = existsSync(root)
      ? readdirSync(root)
          .map((id) => ({ id, key: readFileSync(join(root, id, "key"), "utf8"), at: statSync(join(root, id)).mtime.toISOString() }))
          .filter((u) => u.key.startsWith(prefix))
      : [];
    ctx.type = "application/xml";
    ctx.body = `<?xml version="1.0" encoding="UTF-8"?>\n<ListMultipartUploadsResult><Bucket>${esc(b)}</Bucket><IsTruncated>false</IsTruncated>${items
      .map((u) => `<Upload><Key>${esc(u.key)}</Key><UploadId>${u.id}</UploadId><Initiated>${u.at}</Initiated></Upload>`)
      .join("")}</ListMultipartUploadsResult>`;
    return;
  }
  await next();
}

const readdir = fs.readdirSync;
Object.assign(fs, {
  readdirSync: (...args: Parameters<typeof readdir>) => {
    const names = readdir(...args) as unknown[];
    return typeof names[0] === "string" ? (names as string[]).sort() : names;
  },
});
// Loaded only now: fs-extra copies fs's functions when it loads.
const { default: S3rver } = await import("s3rver");
const { default: FilesystemStore } = (await import("s3rver/lib/stores/filesystem")) as { default: { prototype: Record<string, unknown> } };

type StoredObject = { bucket: string; key: string; metadata: unknown; content: Buffer | AsyncIterable<Buffer> };
type Store = { getResourcePath(b: string, k: string, r: string): string; putMetadata(b: string, k: string, m: unknown, md5: string): Promise<void> };
FilesystemStore.prototype.putObject = async function (this: Store, object: StoredObject) {
  const path = this.getResourcePath(object.bucket, object.key, "object");
  fs.mkdirSync(dirname(path), { recursive: true });
  const tmp = `${path}.${process.pid}-${crypto.randomBytes(6).toString("hex")}.part`;
  const md5 = crypto.createHash("md5");
  let size = 0;
  const out = fs.createWriteStream(tmp);
  const closed = new Promise<void>((resolve, reject) => out.on("close", resolve).on("error", reject));
  try {
    for await (const chunk of Buffer.isBuffer(object.content) ? [object.content] : object.content) {
      md5.update(chunk);
      size += chunk.length;
      if (!out.write(chunk)) await new Promise((resolve) => out.once("drain", resolve));
    }
    out.end();
    await closed;
    fs.renameSync(tmp, path);
  } catch (err) {
    out.destroy();
    fs.rmSync(tmp, { force: true });
    throw err;
  }
  const digest = md5.digest("hex");
  await this.putMetadata(object.bucket, object.key, object.metadata, digest);
  return { size, md5: digest };
};

const server = new S3rver({ port: 0, address: "127.0.0.1", silent: true, directory: dir, configureBuckets: [{ name: bucket, ...(cors ? { configs: [cors] } : {}) }] });
(server as unknown as { middleware: unknown[] }).middleware.unshift(shim);
const { address, port } = await server.run();
process.stdout.write(JSON.stringify({ endpoint: `http://${address}:${port}` }) + "\n");
const stop = () => {
  server.close().finally(() => process.exit(0));
};
process.on("SIGTERM", stop);
// The parent holds our stdin: when it dies, however it dies, we go too.
process.stdin.on("end", stop);
process.stdin.on("error", stop);
process.stdin.resume();
