// The blob sweeper: deletes bytes no row needs (deleted files, expired run-input files, released run
// artifacts, abandoned uploads), temp objects of interrupted puts and staged uploads nobody will
// complete, and aborts their multipart uploads. Everything younger than the grace period stays, so it
// never races a put in flight. Works on both stores; `automation-server blobs gc` runs it once.
import type { AutomationContext } from "../context";
import { sweepExpired, type FilesContext } from "./service";

export const DEFAULT_GC_GRACE_MS = 60 * 60 * 1000;

export interface GcReport {
  /** Blobs looked at, and those deleted (or that would be, in a dry run) with their bytes. */
  scanned: number;
  deleted: number;
  deletedBytes: number;
  /** Temp objects and unowned staged uploads removed. */
  temp: number;
  /** Upload sessions given up (URL expired, never completed), and multipart uploads aborted. */
  sessions: number;
  multiparts: number;
  dryRun: boolean;
}

export async function collectGarbage(ctx: FilesContext, opts: { graceMs?: number; dryRun?: boolean } = {}): Promise<GcReport> {
  const graceMs = opts.graceMs ?? DEFAULT_GC_GRACE_MS;
  const dryRun = opts.dryRun ?? false;
  const files = ctx.storage.files;
  // Rows carry the server clock's times; stored objects carry the storage's (wall clock) times.
  const before = ctx.clock.now().getTime() - graceMs;
  const storedBefore = Date.now() - graceMs;
  const report: GcReport = { scanned: 0, deleted: 0, deletedBytes: 0, temp: 0, sessions: 0, multiparts: 0, dryRun };
  const direct = ctx.blobs.direct;

  // Sessions whose URL expired a grace period ago: no more bytes can come; drop what they staged.
  for (const s of await files.staleSessions(new Date(before).toISOString(), 500)) {
    report.sessions++;
    if (dryRun) continue;
    if (direct && s.stagingKey) {
      if (s.multipartId) {
        await direct.abortMultipart(s.stagingKey, s.multipartId);
        report.multiparts++;
      }
      await direct.discard(s.stagingKey).catch(() => {});
    }
    await files.removeSession(s.id);
  }
  if (!dryRun) await sweepExpired(ctx);

  // Multipart uploads the storage still holds that no live session owns (crashes between create and insert).
  if (direct?.openMultiparts) {
    const live = await files.liveStagingKeys();
    const open = await direct.openMultiparts().catch((err) => {
      ctx.log.warn("cannot list open multipart uploads", { error: (err as Error).message });
      return [];
    });
    for (const m of open) {
      if (live.has(m.key) || m.initiatedMs >= storedBefore) continue;
      if (!dryRun) await direct.abortMultipart(m.key, m.multipartId);
      report.multiparts++;
    }
  }

  if (ctx.blobs.sweepTemp) {
    const live = await files.liveStagingKeys();
    report.temp = await ctx.blobs.sweepTemp(storedBefore, (key) => live.has(key), dryRun);
  }

  const referenced = await files.referencedBlobs();
  for await (const b of ctx.blobs.entries()) {
    report.scanned++;
    if (referenced.has(b.sha256) || b.modifiedMs >= storedBefore) continue;
    // Asked again per blob: a row may have taken the bytes since the snapshot above.
    if (await files.blobReferenced(b.sha256)) continue;
    if (!dryRun) await ctx.blobs.delete(b.sha256);
    report.deleted++;
    report.deletedBytes += b.size;
  }
  return report;
}

/** Runs the sweeper every `gcIntervalMs` (when set); one sweep at a time; errors are logged, not fatal. */
export function startSweeper(ctx: AutomationContext): { stop(): Promise<void> } {
  const every = ctx.config.gcIntervalMs ?? 0;
  if (!every) return { stop: async () => {} };
  let running: Promise<unknown> | undefined;
  const tick = () => {
    if (running) return;
    running = collectGarbage(ctx, { graceMs: ctx.config.gcGraceMs })
      .then((r) => {
        if (r.deleted || r.temp || r.sessions || r.multiparts) ctx.log.info("blob sweep", { ...r });
      })
      .catch((err) => ctx.log.error("blob sweep failed", { error: (err as Error)?.stack ?? String(err) }))
      .finally(() => (running = undefined));
  };
  const timer = setInterval(tick, every);
  timer.unref?.();
  return {
    async stop() {
      clearInterval(timer);
      await running;
    },
  };
}
