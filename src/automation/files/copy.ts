// `blobs copy`: every blob of one store into another (a disk deployment onto S3, or back). Resumable:
// blobs the destination already lists are skipped (a key there is a content address, written only
// after hashing). Each copied blob is re-hashed by the destination's put while it streams, and the
// copy counts as verified only when that hash and size equal the source's.
import type { BlobStore } from "../blobs/blobs";

export interface CopyProgress {
  total: number;
  done: number;
  bytes: number;
}

export interface CopyReport {
  /** Blobs in the source. */
  total: number;
  copied: number;
  /** Already in the destination (an earlier, interrupted run). */
  skipped: number;
  /** Copied and re-hashed equal, plus skipped ones present with the same size. */
  verified: number;
  bytes: number;
  /** Blobs that could not be copied or did not verify (sha256 → reason). */
  failed: { sha256: string; error: string }[];
}

export async function copyBlobs(
  from: BlobStore,
  to: BlobStore,
  opts: { concurrency?: number; onProgress?: (p: CopyProgress) => void } = {},
): Promise<CopyReport> {
  const present = new Map<string, number>();
  for await (const e of to.entries()) present.set(e.sha256, e.size);
  const source = [];
  for await (const e of from.entries()) source.push(e);
  const report: CopyReport = { total: source.length, copied: 0, skipped: 0, verified: 0, bytes: 0, failed: [] };
  let done = 0;
  const tick = () => opts.onProgress?.({ total: source.length, done, bytes: report.bytes });
  const queue = [...source];
  const worker = async () => {
    for (let e = queue.shift(); e; e = queue.shift()) {
      try {
        const there = present.get(e.sha256);
        if (there !== undefined) {
          report.skipped++;
          if (there === e.size) report.verified++;
          else report.failed.push({ sha256: e.sha256, error: `destination holds ${there} bytes, source ${e.size}` });
        } else {
          const blob = await from.get(e.sha256);
          if (!blob) throw new Error("deleted from the source while copying");
          const info = await to.put(blob.stream());
          report.copied++;
          report.bytes += info.size;
          if (info.sha256 === e.sha256 && info.size === e.size) report.verified++;
          else report.failed.push({ sha256: e.sha256, error: `copied bytes hash to ${info.sha256} (${info.size} bytes)` });
        }
      } catch (err) {
        report.failed.push({ sha256: e.sha256, error: (err as Error).message });
      }
      done++;
      tick();
    }
  };
  tick();
  await Promise.all(Array.from({ length: Math.max(1, opts.concurrency ?? 4) }, worker));
  return report;
}
