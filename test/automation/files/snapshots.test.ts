// What the runs engine relies on: a run's snapshot of an input file keeps the bytes readable after
// the file is deleted or expires, until the run releases it.
import { describe, expect, test } from "bun:test";
import { openBlob, releaseOwner, retainBlob, snapshotFile } from "../../../src/automation/files/service";
import { filesHarness, json, sha256 } from "./support";
import { BLOB_MODES, withS3 } from "./stores";

withS3();

describe.each(BLOB_MODES)("%s blobs", (mode) => {
  describe("file snapshots for runs", () => {
    test("snapshot → delete the file → the API says 404 but the run still reads the bytes", async () => {
      const h = await filesHarness(mode);
      const t = await h.tenant("acme");
      const up = await json(await h.upload(t.key, "invoice bytes", "inv.pdf", { type: "application/pdf" }));
      const snap = await snapshotFile(h.ctx, t.id, up.id, "run:run_1");
      expect(snap).toEqual({ fileId: up.id, filename: "inv.pdf", contentType: "application/pdf", size: 13, sha256: sha256("invoice bytes") });
      expect((await h.req("DELETE", `/v1/files/${up.id}`, { key: t.key })).status).toBe(200);
      expect((await h.req("GET", `/v1/files/${up.id}`, { key: t.key })).status).toBe(404);
      expect(await (await openBlob(h.ctx, snap.sha256))!.text()).toBe("invoice bytes");
      await releaseOwner(h.ctx, "run:run_1");
      expect(await openBlob(h.ctx, snap.sha256)).toBeNull();
    });

    test("an expired run-input file stays readable for the run that snapshotted it", async () => {
      const h = await filesHarness(mode);
      const t = await h.tenant("acme");
      const up = await json(await h.upload(t.key, "short-lived", "s.txt", { purpose: "run-input" }));
      const snap = await snapshotFile(h.ctx, t.id, up.id, "run:run_2");
      h.clock.advance(48 * 3600_000);
      expect((await h.req("GET", `/v1/files/${up.id}`, { key: t.key })).status).toBe(404);
      expect(await (await openBlob(h.ctx, snap.sha256))!.text()).toBe("short-lived");
    });

    test("two owners: releasing one keeps the bytes for the other", async () => {
      const h = await filesHarness(mode);
      const t = await h.tenant("acme");
      const up = await json(await h.upload(t.key, "shared", "s.txt"));
      await snapshotFile(h.ctx, t.id, up.id, "run:a");
      await snapshotFile(h.ctx, t.id, up.id, "run:b");
      await h.req("DELETE", `/v1/files/${up.id}`, { key: t.key });
      await releaseOwner(h.ctx, "run:a");
      expect(await openBlob(h.ctx, sha256("shared"))).not.toBeNull();
      await releaseOwner(h.ctx, "run:b");
      expect(await openBlob(h.ctx, sha256("shared"))).toBeNull();
    });

    test("snapshotting another tenant's or a missing file → 404; retainBlob pins stored bytes", async () => {
      const h = await filesHarness(mode);
      const a = await h.tenant("acme");
      const b = await h.tenant("beta");
      const up = await json(await h.upload(a.key, "a's", "a.txt"));
      await expect(snapshotFile(h.ctx, b.id, up.id, "run:x")).rejects.toMatchObject({ status: 404 });
      await expect(snapshotFile(h.ctx, a.id, "file_missing", "run:x")).rejects.toMatchObject({ status: 404 });
      await retainBlob(h.ctx, a.id, sha256("a's"), "run:y");
      await h.req("DELETE", `/v1/files/${up.id}`, { key: a.key });
      expect(await (await openBlob(h.ctx, sha256("a's")))!.text()).toBe("a's");
    });
  });
});
