import { beforeAll, describe, expect, test } from "bun:test";
import { strToU8, unzipSync, zipSync } from "fflate";
import { importDataset } from "../../../src/automation/datasets/archive";
import { readMultipart } from "../../../src/automation/files/multipart";
import { json, runsHarness, twoSteps, type RunsHarness } from "../runs/support";
import { BLOB_MODES, withS3 } from "../files/stores";

withS3();

describe.each(BLOB_MODES)("%s blobs", (mode) => {
  let h: RunsHarness;
  let a: { id: string };
  let b: { id: string };

  const upload = (wf: string, exId: string, folder: string, name: string, bytes: Uint8Array | string) => {
    const fd = new FormData();
    fd.append("file", new File([bytes], name));
    return h.req("POST", `/v1/automations/${wf}/examples/${exId}/${folder}`, { key: h.t.key, body: fd });
  };

  const importZip = (wf: string, zip: Uint8Array, mode?: string) => {
    const fd = new FormData();
    fd.append("file", new File([zip], "dataset.zip", { type: "application/zip" }));
    if (mode) fd.append("mode", mode);
    return h.req("POST", `/v1/automations/${wf}/dataset/import`, { key: h.t.key, body: fd });
  };

  const exportZip = async (wf: string, query = "") => {
    const r = await h.get(`/v1/automations/${wf}/dataset/export${query}`);
    expect(r.status).toBe(200);
    expect(r.headers.get("content-type")).toBe("application/zip");
    return new Uint8Array(await r.arrayBuffer());
  };

  const comparable = (e: Record<string, unknown>) => {
    const { id, automationId, createdAt, updatedAt, latestRunId, expectedFiles, ...rest } = e;
    return { ...rest, expectedFiles: (expectedFiles as { name: string }[]).map((f) => f.name) };
  };

  const blobCount = async () => {
    let n = 0;
    for await (const _ of h.ctx.blobs.entries()) n++;
    return n;
  };

  beforeAll(async () => {
    h = await runsHarness({}, mode);
    a = await h.deploy(twoSteps("ds-a"));
    b = await h.deploy(twoSteps("ds-b"));
    const one = await json(await h.post(`/v1/automations/${a.id}/examples`, {
      name: "invoice-1", input: { who: "ann", doc: { $file: "input/scan.pdf" } }, expected: { total: 12.5, lines: [1, 2] },
      metadata: { source: "mail" }, annotation: "tricky one", rowOrder: 3, overrides: { steps: { first: { greeting: "hi" } } },
    }));
    await upload(a.id, one.id, "input", "scan.pdf", new Uint8Array([37, 80, 68, 70, 0, 1, 2, 255]));
    await upload(a.id, one.id, "expected", "sub/out.txt", "expected text");
    await h.post(`/v1/automations/${a.id}/examples`, { name: "plain", input: { who: "bob" } });
    await h.post(`/v1/automations/${b.id}/examples`, { name: "old-one", input: { who: "x" } });
  });

  describe("dataset export/import", () => {
    test("export → import (replace) into another automation gives identical examples and bytes", async () => {
      const zip = await exportZip(a.id);
      const names = Object.keys(unzipSync(zip)).sort();
      expect(names).toEqual([
        "examples/invoice-1/expected.json", "examples/invoice-1/expected/sub/out.txt", "examples/invoice-1/input.json", "examples/invoice-1/input/scan.pdf",
        "examples/invoice-1/meta.json", "examples/plain/input.json", "examples/plain/meta.json",
      ]);
      const r = await importZip(b.id, zip, "replace");
      expect(r.status).toBe(200);
      expect(await json(r)).toEqual({ mode: "replace", created: 2, expectedSet: 1, deleted: 1, filesDeleted: 0 });
      const src = (await json(await h.get(`/v1/automations/${a.id}/examples`))).data.map(comparable);
      const dst = await json(await h.get(`/v1/automations/${b.id}/examples`));
      expect(dst.data.map(comparable)).toEqual(src);
      const inv = dst.data.find((e: { name: string }) => e.name === "invoice-1");
      const pdf = new Uint8Array(await (await h.get(`/v1/automations/${b.id}/examples/${inv.id}/input/scan.pdf`)).arrayBuffer());
      expect([...pdf]).toEqual([37, 80, 68, 70, 0, 1, 2, 255]);
      expect(await (await h.get(`/v1/automations/${b.id}/examples/${inv.id}/expected/sub/out.txt`)).text()).toBe("expected text");
    });

    test("example_ids selects; append skips existing names", async () => {
      const list = await json(await h.get(`/v1/automations/${a.id}/examples`));
      const plain = list.data.find((e: { name: string }) => e.name === "plain");
      const zip = await exportZip(a.id, `?example_ids=${plain.id}`);
      expect(Object.keys(unzipSync(zip)).sort()).toEqual(["examples/plain/input.json", "examples/plain/meta.json"]);
      expect((await h.get(`/v1/automations/${a.id}/dataset/export?example_ids=ex_nope`)).status).toBe(400);
      const r = await json(await importZip(b.id, await exportZip(a.id), "append"));
      expect(r).toMatchObject({ mode: "append", created: 0, expectedSet: 0, skipped: 2 });
      expect(r.issues).toHaveLength(2);
    });

    const refusedWithNothingWritten = async (zip: Uint8Array, naming: string) => {
      const before = await json(await h.get(`/v1/automations/${b.id}/examples`));
      const blobs = await blobCount();
      const r = await importZip(b.id, zip, "replace");
      expect(r.status).toBe(400);
      const body = await json(r);
      expect(body.issues[0].message).toContain(naming);
      expect(await json(await h.get(`/v1/automations/${b.id}/examples`))).toEqual(before);
      expect(await blobCount()).toBe(blobs);
    };

    test("zip-slip, absolute and unknown entries are refused, nothing written", async () => {
      await refusedWithNothingWritten(zipSync({ "examples/ok/input.json": strToU8("{}"), "examples/ok/input/../../../evil.txt": strToU8("x") }), "..");
      await refusedWithNothingWritten(zipSync({ "/etc/passwd": strToU8("x") }), "/etc/passwd");
      await refusedWithNothingWritten(zipSync({ "examples/ok/input.json": strToU8("{}"), "examples/ok/notes.txt": strToU8("x") }), "notes.txt");
      await refusedWithNothingWritten(zipSync({ "examples/ok/input.json": strToU8("[1]") }), "input.json");
      await refusedWithNothingWritten(zipSync({ "examples/ok/input.json": strToU8('{"doc": {"$file": "input/missing.pdf"}}') }), "missing.pdf");
      await refusedWithNothingWritten(zipSync({ "examples/ok/meta.json": strToU8('{"rowOrder": "x"}') }), "meta.json");
    });

    test("legacy layouts are refused", async () => {
      await refusedWithNothingWritten(zipSync({ "manifest.json": strToU8("{}"), "examples/a/input.json": strToU8("{}") }), "legacy");
      await refusedWithNothingWritten(zipSync({ "examples/a/input/arguments.json": strToU8("{}"), "examples/a/expected/output.json": strToU8("{}") }), "legacy");
    });

    test("10 000 entries are refused", async () => {
      const files: Record<string, Uint8Array> = {};
      for (let i = 0; i < 10_000; i++) files[`examples/e${i}/input.json`] = strToU8("{}");
      await refusedWithNothingWritten(zipSync(files, { level: 0 }), "5000");
    });

    test("a 1 GB-expanding entry is refused from its header, before inflating", async () => {
      const zip = zipSync({ "examples/bomb/input/big.bin": new Uint8Array(1024 * 1024) }, { level: 9 });
      // Declare 1 GiB uncompressed in the local header (offset 22) and the central directory (offset 24).
      const view = new DataView(zip.buffer, zip.byteOffset, zip.byteLength);
      view.setUint32(22, 1024 ** 3, true);
      const cd = zip.findLastIndex((_, i) => i <= zip.length - 4 && view.getUint32(i, true) === 0x02014b50);
      view.setUint32(cd + 24, 1024 ** 3, true);
      await refusedWithNothingWritten(zip, "expands beyond");
    });

    test("an entry whose header lies is stopped once its inflated bytes pass the limit", async () => {
      const zip = zipSync({ "examples/liar/input/big.bin": new Uint8Array(4 * 1024 * 1024) }, { level: 9 });
      const view = new DataView(zip.buffer, zip.byteOffset, zip.byteLength);
      view.setUint32(22, 10, true); // claims 10 bytes
      const fd = new FormData();
      fd.append("file", new File([zip], "d.zip"));
      const req = new Request("http://x", { method: "POST", body: fd });
      const boundary = /boundary=(.+)$/.exec(req.headers.get("content-type")!)![1];
      const limits = { maxArchiveBytes: 1024 * 1024, maxEntries: 10, maxUncompressedBytes: 1024 * 1024 };
      await expect(importDataset(h.ctx, h.t.id, b.id, readMultipart(req.body!, boundary, 5), limits)).rejects.toThrow("expands beyond");
    });

    test("not a zip, no file part, bad mode, other tenant", async () => {
      expect((await importZip(b.id, strToU8("not a zip at all"))).status).toBe(400);
      const fd = new FormData();
      fd.append("mode", "replace");
      expect((await h.req("POST", `/v1/automations/${b.id}/dataset/import`, { key: h.t.key, body: fd })).status).toBe(400);
      expect((await importZip(b.id, zipSync({ "examples/a/input.json": strToU8("{}") }), "merge")).status).toBe(400);
      const other = await h.tenant("ds-other");
      expect((await h.get(`/v1/automations/${a.id}/dataset/export`, other.key)).status).toBe(404);
    });
  });
});
