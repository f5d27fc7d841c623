// The filesystem BlobStore: bytes live at <root>/ab/cd/<sha256>. A put streams into <root>/tmp/ while
// hashing, then renames into place, so a reader never sees a half-written blob and a crash leaves only
// a temp file (swept when the store opens). Nothing is ever held in memory beyond one chunk.
import { existsSync, mkdirSync, readdirSync, renameSync, rmSync, statSync, unlinkSync } from "node:fs";
import { open } from "node:fs/promises";
import { join } from "node:path";
import { TooLarge } from "../../kernel/errors";
import { newSecret } from "../../kernel/ids";
import type { BlobEntry, BlobInfo, BlobStore } from "./blobs";

const SHA256 = /^[0-9a-f]{64}$/;
/** Chunks smaller than this are gathered before a write, so tiny network reads do not cost a syscall each. */
const WRITE_BATCH = 256 * 1024;

export class FsBlobStore implements BlobStore {
  readonly kind = "fs" as const;
  private readonly tmp: string;
  /** With a cap: bytes of stored blobs plus bytes written by puts in flight. */
  private used = 0;

  constructor(
    readonly root: string,
    private readonly maxBytes?: number,
  ) {
    this.tmp = join(root, "tmp");
    mkdirSync(this.tmp, { recursive: true });
    // Leftovers of puts interrupted by a crash: never referenced, safe to drop at open.
    for (const name of readdirSync(this.tmp)) rmSync(join(this.tmp, name), { force: true });
    if (maxBytes !== undefined) for (const sha256 of this.list()) this.used += statSync(this.pathOf(sha256)).size;
  }

  /** Counts `n` more bytes against the cap; past it, fails exactly as a full filesystem does. */
  private reserve(n: number): void {
    if (this.maxBytes === undefined) return;
    if (this.used + n > this.maxBytes) {
      throw Object.assign(new Error(`ENOSPC: no space left on device (blob store cap of ${this.maxBytes} bytes)`), { code: "ENOSPC" });
    }
    this.used += n;
  }

  /** Where a blob lives; throws on anything that is not a sha256 hex (no path tricks through keys). */
  pathOf(sha256: string): string {
    if (!SHA256.test(sha256)) throw new Error(`not a sha256 blob key: ${sha256.slice(0, 80)}`);
    return join(this.root, sha256.slice(0, 2), sha256.slice(2, 4), sha256);
  }

  async put(data: ReadableStream<Uint8Array> | Uint8Array | Blob, opts: { maxBytes?: number } = {}): Promise<BlobInfo> {
    const stream = data instanceof ReadableStream ? data : data instanceof Blob ? data.stream() : new Blob([data]).stream();
    const maxBytes = opts.maxBytes ?? Number.POSITIVE_INFINITY;
    const tmpPath = join(this.tmp, `${Date.now()}-${newSecret(9)}`);
    const hasher = new Bun.CryptoHasher("sha256");
    const fh = await open(tmpPath, "wx");
    const reader = stream.getReader();
    let size = 0;
    let pending: Uint8Array[] = [];
    let pendingBytes = 0;
    let reserved = 0;
    const flush = async () => {
      if (pendingBytes === 0) return;
      this.reserve(pendingBytes);
      reserved += pendingBytes;
      const buf = pending.length === 1 ? pending[0] : Buffer.concat(pending, pendingBytes);
      pending = [];
      pendingBytes = 0;
      let off = 0;
      while (off < buf.byteLength) {
        const { bytesWritten } = await fh.write(buf, off, buf.byteLength - off);
        off += bytesWritten;
      }
    };
    try {
      for (;;) {
        const { done, value } = await reader.read();
        if (done) break;
        if (!value || value.byteLength === 0) continue;
        size += value.byteLength;
        if (size > maxBytes) {
          await reader.cancel().catch(() => {});
          throw TooLarge(`file is larger than ${maxBytes} bytes`, { code: "file_too_large" });
        }
        hasher.update(value);
        // Web streams hand out a fresh chunk per read, so holding on to it until the flush is safe.
        pending.push(value);
        pendingBytes += value.byteLength;
        if (pendingBytes >= WRITE_BATCH) await flush();
      }
      await flush();
      await fh.sync();
    } catch (err) {
      this.used -= reserved;
      await fh.close().catch(() => {});
      rmSync(tmpPath, { force: true });
      reader.releaseLock();
      throw err;
    }
    await fh.close();
    const sha256 = hasher.digest("hex");
    const final = this.pathOf(sha256);
    mkdirSync(join(final, ".."), { recursive: true });
    // The same bytes stored already: they count once.
    if (this.maxBytes !== undefined && existsSync(final)) this.used -= reserved;
    // Same content → same name: replacing an existing blob with identical bytes is harmless and atomic.
    renameSync(tmpPath, final);
    return { sha256, size };
  }

  async get(sha256: string): Promise<Blob | null> {
    if (!SHA256.test(sha256)) return null;
    const path = this.pathOf(sha256);
    if (!existsSync(path)) return null;
    return Bun.file(path);
  }

  async has(sha256: string): Promise<boolean> {
    return SHA256.test(sha256) && existsSync(this.pathOf(sha256));
  }

  /** Removes at call time (synchronously), so a caller's reference check and the unlink cannot interleave. */
  delete(sha256: string): Promise<void> {
    if (!SHA256.test(sha256)) return Promise.resolve();
    try {
      const path = this.pathOf(sha256);
      if (this.maxBytes !== undefined) this.used -= statSync(path).size;
      unlinkSync(path);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== "ENOENT") return Promise.reject(err);
    }
    return Promise.resolve();
  }

  /** Number of temp files in flight or left over (tests assert nothing half-written stays). */
  tempCount(): number {
    return readdirSync(this.tmp).length;
  }

  async *entries(): AsyncIterable<BlobEntry> {
    for (const sha256 of this.list()) {
      try {
        const st = statSync(this.pathOf(sha256));
        yield { sha256, size: st.size, modifiedMs: st.mtimeMs };
      } catch {
        // Deleted while listing.
      }
    }
  }

  /** Temp files older than `beforeMs` (a put that died without its process noticing). */
  async sweepTemp(beforeMs: number, _live: (key: string) => boolean, dryRun: boolean): Promise<number> {
    let n = 0;
    for (const name of readdirSync(this.tmp)) {
      const path = join(this.tmp, name);
      try {
        if (statSync(path).mtimeMs >= beforeMs) continue;
        if (!dryRun) rmSync(path, { force: true });
        n++;
      } catch {
        // Renamed into place meanwhile.
      }
    }
    return n;
  }

  /** Every stored blob key (tests, maintenance). */
  list(): string[] {
    const out: string[] = [];
    for (const a of readdirSync(this.root)) {
      if (a === "tmp" || a.length !== 2) continue;
      for (const b of readdirSync(join(this.root, a))) {
        const dir = join(this.root, a, b);
        if (!statSync(dir).isDirectory()) continue;
        for (const name of readdirSync(dir)) if (SHA256.test(name)) out.push(name);
      }
    }
    return out;
  }
}

/** The blob store under `root` (the server passes `<dataDir>/blobs`). */
export function createBlobStore(root: string, opts: { maxBytes?: number } = {}): FsBlobStore {
  return new FsBlobStore(root, opts.maxBytes);
}
