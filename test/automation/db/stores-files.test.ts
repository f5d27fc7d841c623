// The files store contract (files, blob pins, upload sessions), run on both backends with the same
// assertions: same rows, same order. And the invariants the store decides inside the database, raced:
// one session per idempotency key, one file per completed session, a pinned file's bytes never
// released by a concurrent delete or sweep.
// SQLite: an in-memory database; PostgreSQL: a fresh database on the test server.
import { afterAll, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { systemClock } from "../../../src/kernel/clock";
import { silentLogger } from "../../../src/kernel/logger";
import type { FileRow, UploadSessionRow } from "../../../src/automation/db/tables/files";
import { createBlobStore } from "../../../src/automation/blobs/fs-blobs";
import { collectGarbage } from "../../../src/automation/files/gc";
import { deleteFile, insertFile, snapshotFile, type FilesContext } from "../../../src/automation/files/service";
import { pgBackend, sqliteBackend, type Backend } from "./backends";

const opened: Backend[] = [];
const dirs: string[] = [];
afterAll(async () => {
  for (const b of opened) await b.close();
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

const T0 = Date.parse("2026-11-25T10:00:00.000Z");
const at = (s: number) => new Date(T0 + s * 1000).toISOString();

async function open(kind: "sqlite" | "postgres"): Promise<Backend> {
  const b = kind === "sqlite" ? await sqliteBackend() : await pgBackend();
  opened.push(b);
  for (const t of ["t1", "t2"]) await b.exec("INSERT INTO tenants (id, slug, name, created_at) VALUES (?, ?, ?, ?)", [t, t, t, at(0)]);
  return b;
}

/** Runs `body` on both backends and returns what each produced, for a cross-backend comparison. */
async function onBoth<T>(body: (b: Backend) => Promise<T>): Promise<{ sqlite: T; postgres: T }> {
  return { sqlite: await body(await open("sqlite")), postgres: await body(await open("postgres")) };
}

const sha = (c: string) => c.repeat(64).slice(0, 64);

const file = (id: string, o: Partial<FileRow> = {}): FileRow => ({
  id,
  tenantId: "t1",
  filename: `${id}.pdf`,
  contentType: "application/pdf",
  size: 3_000_000_000,
  sha256: sha("a"),
  purpose: null,
  createdAt: at(1),
  expiresAt: null,
  ...o,
});

const session = (id: string, o: Partial<UploadSessionRow> = {}): UploadSessionRow => ({
  id,
  tenantId: "t1",
  fileId: `file_of_${id}`,
  filename: "big.bin",
  contentType: "application/octet-stream",
  size: 5_000_000_000,
  purpose: null,
  idempotencyKey: null,
  status: "pending",
  sha256: null,
  createdAt: at(1),
  expiresAt: at(3600),
  completedAt: null,
  stagingKey: null,
  multipartId: null,
  partSize: null,
  ...o,
});

/** The file a completed session makes (what uploads.ts plans). */
const planFile = (s: UploadSessionRow): FileRow => {
  if (s.status !== "uploaded" || !s.sha256) throw new Error(`session ${s.id} is ${s.status}`);
  return file(s.fileId, { filename: s.filename, contentType: s.contentType, size: s.size, sha256: s.sha256, createdAt: at(50) });
};

describe("files store contract on SQLite and PostgreSQL", () => {
  test("files, expiry, snapshots and pins: same rows and order; a blob is in use while anything holds it", async () => {
    const out = await onBoth(async (b) => {
      const fs = b.storage.files;
      await fs.insertFile(file("file_a"));
      await fs.insertFile(file("file_b", { sha256: sha("b"), expiresAt: at(20), purpose: "run-input" }));
      await fs.insertFile(file("file_c", { sha256: sha("c"), expiresAt: at(10), purpose: "run-input" }));
      await fs.insertFile(file("file_d", { tenantId: "t2", sha256: sha("d") }));
      const expired = (await fs.expiredFiles(at(30), 10)).map((f) => f.id);
      const expiredFirst = (await fs.expiredFiles(at(30), 1)).map((f) => f.id);
      const snap = await fs.snapshot("t1", "file_b", "run:r1", at(15));
      const snapExpired = await fs.snapshot("t1", "file_c", "run:r1", at(15));
      const snapOtherTenant = await fs.snapshot("t1", "file_d", "run:r1", at(15));
      await fs.retain({ sha256: sha("e"), owner: "run:r1", tenantId: "t1", createdAt: at(16) });
      await fs.retain({ sha256: sha("e"), owner: "run:r1", tenantId: "t1", createdAt: at(17) }); // again: a no-op
      await fs.removeFile("file_b");
      const inUse = { b: await fs.blobInUse(sha("b")), e: await fs.blobInUse(sha("e")), z: await fs.blobInUse(sha("z")) };
      const referenced = [...(await fs.referencedBlobs())].sort();
      const released = (await fs.releaseOwner("run:r1")).sort();
      const after = { b: await fs.blobReferenced(sha("b")), a: await fs.blobReferenced(sha("a")), refs: await b.count("blob_refs") };
      return { got: await fs.file("t1", "file_a"), other: await fs.file("t2", "file_a"), expired, expiredFirst, snap, snapExpired, snapOtherTenant, inUse, referenced, released, after };
    });
    expect(out.postgres).toEqual(out.sqlite);
    expect(out.sqlite.got).toEqual(file("file_a"));
    expect(out.sqlite.other).toBeUndefined();
    expect(out.sqlite.expired).toEqual(["file_c", "file_b"]);
    expect(out.sqlite.expiredFirst).toEqual(["file_c"]);
    expect(out.sqlite.snap?.id).toBe("file_b");
    expect(out.sqlite.snapExpired).toBeUndefined();
    expect(out.sqlite.snapOtherTenant).toBeUndefined();
    expect(out.sqlite.inUse).toEqual({ b: true, e: true, z: false });
    expect(out.sqlite.referenced).toEqual([sha("a"), sha("b"), sha("c"), sha("d"), sha("e")]);
    expect(out.sqlite.released).toEqual([sha("b"), sha("e")]);
    expect(out.sqlite.after).toEqual({ b: false, a: true, refs: 0 });
  }, 60_000);

  test("upload sessions: receive, stage, complete, abort, sweep lists; same answers on both", async () => {
    const out = await onBoth(async (b) => {
      const fs = b.storage.files;
      await fs.createSession(session("upl_1", { idempotencyKey: "k1", stagingKey: "staging/upl_1" }));
      await fs.createSession(session("upl_2", { createdAt: at(2), expiresAt: at(5), stagingKey: "staging/upl_2", multipartId: "mp", partSize: 8_388_608 }));
      await fs.createSession(session("upl_3", { createdAt: at(3), expiresAt: at(4) }));
      const byKey = await fs.sessionByKey("t1", "k1");
      const wrongTenant = await fs.session("t2", "upl_1");
      const first = await fs.receive("upl_1", sha("1"));
      const second = await fs.receive("upl_1", sha("2"));
      const staged = await fs.staged("upl_2", sha("3"));
      const stagedAgain = await fs.staged("upl_2", sha("4")); // not pending any more: unchanged
      const stale = (await fs.staleSessions(at(10), 10)).map((s) => s.id);
      const keys = [...(await fs.liveStagingKeys())].sort();
      const incomplete = await fs.complete("t1", "upl_3", planFile).then(() => "completed", (e: Error) => e.message);
      const done = await fs.complete("t1", "upl_1", planFile);
      const again = await fs.complete("t1", "upl_1", planFile);
      const missing = await fs.complete("t1", "upl_nope", planFile);
      const afterDone = await fs.receive("upl_1", sha("5"));
      const abortDone = await fs.abort("t1", "upl_1");
      const aborted = await fs.abort("t1", "upl_2");
      const abortedAgain = await fs.abort("t1", "upl_2");
      const abandoned = (await fs.abandonedSessions(at(2), 10)).map((s) => s.id);
      await fs.removeFile("file_of_upl_1");
      const gone = await fs.complete("t1", "upl_1", planFile);
      await fs.removeSession("upl_3");
      return {
        byKey, wrongTenant, first, second, staged, stagedAgain, stale, keys, incomplete, done, again, missing, afterDone, abortDone, aborted, abortedAgain, abandoned, gone,
        left: (await fs.abandonedSessions(at(100), 10)).map((s) => `${s.id}:${s.status}`),
      };
    });
    expect(out.postgres).toEqual(out.sqlite);
    const s = out.sqlite;
    expect(s.byKey?.id).toBe("upl_1");
    expect(s.wrongTenant).toBeUndefined();
    expect(s.first).toMatchObject({ kind: "received", previous: null, session: { status: "uploaded", sha256: sha("1") } });
    expect(s.second).toMatchObject({ kind: "received", previous: sha("1") });
    expect(s.staged).toMatchObject({ status: "uploaded", sha256: sha("3"), partSize: 8_388_608 });
    expect(s.stagedAgain?.sha256).toBe(sha("3"));
    expect(s.stale).toEqual(["upl_3"]);
    expect(s.keys).toEqual(["staging/upl_1", "staging/upl_2"]);
    expect(s.incomplete).toBe("session upl_3 is pending");
    expect(s.done).toEqual({ kind: "fresh", file: planFile({ ...session("upl_1"), status: "uploaded", sha256: sha("2") }) });
    expect(s.again).toEqual({ kind: "again", file: s.done.kind === "fresh" ? s.done.file : undefined! });
    expect(s.missing).toEqual({ kind: "not_found" });
    expect(s.afterDone).toEqual({ kind: "closed", status: "completed" });
    expect(s.abortDone).toMatchObject({ aborted: false, before: { status: "completed", completedAt: at(50) } });
    expect(s.aborted).toMatchObject({ aborted: true, before: { status: "uploaded", sha256: sha("3") } });
    expect(s.abortedAgain).toMatchObject({ aborted: false, before: { status: "aborted", sha256: null } });
    expect(s.abandoned).toEqual(["upl_2"]);
    expect(s.gone).toEqual({ kind: "file_gone" });
    expect(s.left).toEqual(["upl_2:aborted"]);
  }, 60_000);

  for (const kind of ["sqlite", "postgres"] as const) {
    test(`${kind}: 10 racing creates with one idempotency key make one session, all answered with it`, async () => {
      const b = await open(kind);
      const racers = await Promise.all(Array.from({ length: 10 }, (_, i) => b.storage.files.createSession(session(`upl_race_${i}`, { idempotencyKey: "same", fileId: `file_race_${i}` }))));
      expect(racers.filter((r) => r.created)).toHaveLength(1);
      const winner = racers.find((r) => r.created)!.session.id;
      expect(new Set(racers.map((r) => r.session.id))).toEqual(new Set([winner]));
      expect(await b.count("upload_sessions")).toBe(1);
    }, 60_000);

    test(`${kind}: 10 racing completes make one file; the others answer the same file`, async () => {
      const b = await open(kind);
      const fs = b.storage.files;
      await fs.createSession(session("upl_c"));
      await fs.receive("upl_c", sha("f"));
      const racers = await Promise.all(Array.from({ length: 10 }, () => fs.complete("t1", "upl_c", planFile)));
      expect(racers.filter((r) => r.kind === "fresh")).toHaveLength(1);
      expect(racers.filter((r) => r.kind === "again")).toHaveLength(9);
      expect(new Set(racers.map((r) => ("file" in r ? r.file.id : r.kind)))).toEqual(new Set(["file_of_upl_c"]));
      expect(await b.count("files")).toBe(1);
    }, 60_000);

    test(`${kind}: a file pinned by a run while it is deleted and the sweeper runs keeps its bytes`, async () => {
      const b = await open(kind);
      const dir = mkdtempSync(join(tmpdir(), "stores-files-"));
      dirs.push(dir);
      const ctx: FilesContext = { storage: b.storage as FilesContext["storage"], blobs: createBlobStore(join(dir, "blobs")), clock: systemClock, log: silentLogger };
      let pinned = 0;
      for (let i = 0; i < 25; i++) {
        const blob = await ctx.blobs.put(new TextEncoder().encode(`bytes of file ${i}`), { maxBytes: 1024 });
        const f = await insertFile(ctx, "t1", { filename: `f${i}.txt`, contentType: "text/plain", purpose: null }, blob);
        // The pin, the delete and a sweep with no grace period, all at once.
        const [snap] = await Promise.allSettled([snapshotFile(ctx, "t1", f.id, `run:r${i}`), deleteFile(ctx, "t1", f.id), collectGarbage(ctx, { graceMs: 0 })]);
        if (snap.status === "fulfilled") {
          pinned++;
          expect(await ctx.blobs.has(blob.sha256)).toBe(true);
          expect(await ctx.storage.files.blobReferenced(blob.sha256)).toBe(true);
        } else {
          expect((snap.reason as Error).message).toContain("not found");
        }
      }
      // A sweep now deletes nothing a pin holds.
      await collectGarbage(ctx, { graceMs: 0 });
      expect(await b.count("blob_refs")).toBe(pinned);
      for (const sha of await ctx.storage.files.referencedBlobs()) expect(await ctx.blobs.has(sha)).toBe(true);
    }, 60_000);
  }
});
