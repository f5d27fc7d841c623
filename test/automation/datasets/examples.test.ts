import { beforeAll, describe, expect, test } from "bun:test";
import { createExample } from "../../../src/automation/datasets/service";
import { json, runsHarness, twoSteps, type RunsHarness } from "../runs/support";
import { BLOB_MODES, withS3 } from "../files/stores";

withS3();

describe.each(BLOB_MODES)("%s blobs", (mode) => {
  let h: RunsHarness;
  let wf: { id: string };
  const base = () => `/v1/automations/${wf.id}/examples`;

  const form = (...files: [string, string][]) => {
    const fd = new FormData();
    for (const [name, text] of files) fd.append("file", new File([text], name, { type: "text/plain" }));
    return fd;
  };

  beforeAll(async () => {
    h = await runsHarness({}, mode);
    wf = await h.deploy(twoSteps("ex-flow"));
  });

  describe("examples CRUD", () => {
    test("create, get, list with include=metadata, by alias", async () => {
      const r = await h.post(base(), { name: "first", input: { who: "ann" }, expected: { first: { greeting: "hello" } }, metadata: { tag: "a" }, rowOrder: 2 });
      expect(r.status).toBe(201);
      const ex = await json(r);
      expect(ex.id).toMatch(/^ex_/);
      expect(ex).toMatchObject({ name: "first", automationId: wf.id, automationType: "workflow", input: { who: "ann" }, rowOrder: 2, latestRunId: null, expectedFiles: [] });
      const got = await json(await h.get(`/v1/automations/workflows.ex-flow/examples/${ex.id}`));
      expect(got.expected).toEqual({ first: { greeting: "hello" } });
      await h.post(base(), { name: "second", input: { who: "bob" }, rowOrder: 1 });
      const list = await json(await h.get(`${base()}?include=metadata&limit=10`));
      expect(list.total).toBe(2);
      expect(list.data.map((e: { name: string }) => e.name)).toEqual(["second", "first"]);
      expect("input" in list.data[0]).toBe(false);
      expect("expected" in list.data[0]).toBe(false);
      const page = await json(await h.get(`${base()}?limit=1&offset=1`));
      expect(page.data.map((e: { name: string }) => e.name)).toEqual(["first"]);
      expect(page.data[0].input).toEqual({ who: "ann" });
    });

    test("names are validated and unique per automation (409)", async () => {
      expect((await h.post(base(), { name: "Bad Name" })).status).toBe(400);
      expect((await h.post(base(), { name: "x".repeat(129) })).status).toBe(400);
      await h.post(base(), { name: "dup" });
      const again = await h.post(base(), { name: "dup" });
      expect(again.status).toBe(409);
      const other = await h.deploy(twoSteps("ex-other"));
      expect((await h.post(`/v1/automations/${other.id}/examples`, { name: "dup" })).status).toBe(201);
    });

    test("PATCH keeps omitted fields, null clears nullable ones, rename conflict is 409", async () => {
      const ex = await json(await h.post(base(), { name: "patchme", input: { who: "x" }, expected: { a: 1 }, annotation: "note", metadata: { m: 1 } }));
      const p = await json(await h.req("PATCH", `${base()}/${ex.id}`, { key: h.t.key, body: { annotation: null, expected: { a: 2 } } }));
      expect(p).toMatchObject({ name: "patchme", input: { who: "x" }, expected: { a: 2 }, annotation: null, metadata: { m: 1 } });
      expect((await h.req("PATCH", `${base()}/${ex.id}`, { key: h.t.key, body: { name: "dup" } })).status).toBe(409);
      expect((await h.req("PATCH", `${base()}/${ex.id}`, { key: h.t.key, body: { bogus: 1 } })).status).toBe(400);
    });

    test("delete, then 404; unknown automation 404; tenant isolation", async () => {
      const ex = await json(await h.post(base(), { name: "gone" }));
      expect((await h.req("DELETE", `${base()}/${ex.id}`, { key: h.t.key })).status).toBe(200);
      expect((await h.get(`${base()}/${ex.id}`)).status).toBe(404);
      expect((await h.get(`/v1/automations/wf_nope/examples`)).status).toBe(404);
      const keep = await json(await h.post(base(), { name: "mine" }));
      const other = await h.tenant("other-ex");
      expect((await h.get(base(), other.key)).status).toBe(404);
      expect((await h.get(`${base()}/${keep.id}`, other.key)).status).toBe(404);
      expect((await h.req("DELETE", `${base()}/${keep.id}`, { key: other.key })).status).toBe(404);
      expect((await h.get(`${base()}/${keep.id}/input`, other.key)).status).toBe(404);
    });

    test("scopes: a read-only key cannot write", async () => {
      const ro = await h.key(h.t.slug, ["automations:read"]);
      expect((await h.get(base(), ro)).status).toBe(200);
      expect((await h.post(base(), { name: "ro" }, ro)).status).toBe(403);
      expect((await h.req("GET", base())).status).toBe(401);
    });
  });

  describe("example files", () => {
    test("upload several, list, bytes, rename within folder, delete", async () => {
      const ex = await json(await h.post(base(), { name: "files" }));
      const up = await h.req("POST", `${base()}/${ex.id}/input`, { key: h.t.key, body: form(["a.txt", "AAA"], ["sub/b.txt", "BBB"]) });
      expect(up.status).toBe(201);
      expect((await json(up)).uploaded).toEqual(["a.txt", "sub/b.txt"]);
      expect((await json(await h.get(`${base()}/${ex.id}/input`))).files).toEqual(["a.txt", "sub/b.txt"]);
      const bytes = await h.get(`${base()}/${ex.id}/input/sub/b.txt`);
      expect(bytes.status).toBe(200);
      expect(await bytes.text()).toBe("BBB");
      const ren = await h.req("PATCH", `${base()}/${ex.id}/input/sub/b.txt`, { key: h.t.key, body: { newFilename: "c.txt" } });
      expect(await json(ren)).toEqual({ ok: true, filename: "c.txt", path: "sub/c.txt" });
      expect((await h.req("PATCH", `${base()}/${ex.id}/input/sub/c.txt`, { key: h.t.key, body: { newFilename: "../x" } })).status).toBe(400);
      await h.req("POST", `${base()}/${ex.id}/input`, { key: h.t.key, body: form(["sub/d.txt", "D"]) });
      expect((await h.req("PATCH", `${base()}/${ex.id}/input/sub/c.txt`, { key: h.t.key, body: { newFilename: "d.txt" } })).status).toBe(409);
      expect((await h.req("DELETE", `${base()}/${ex.id}/input/a.txt`, { key: h.t.key })).status).toBe(200);
      expect((await h.get(`${base()}/${ex.id}/input/a.txt`)).status).toBe(404);
      await h.req("POST", `${base()}/${ex.id}/expected`, { key: h.t.key, body: form(["out.json", "{}"]) });
      const view = await json(await h.get(`${base()}/${ex.id}`));
      expect(view.expectedFiles).toEqual([{ name: "out.json", url: `/v1/automations/${wf.id}/examples/${ex.id}/expected/out.json` }]);
    });

    test("hostile paths are refused and nothing is stored", async () => {
      const ex = await json(await h.post(base(), { name: "paths" }));
      for (const bad of ["/abs.txt", "\\win.txt", "a/../b.txt", "./a.txt", "a//b.txt", "a\\b.txt"]) {
        const r = await h.req("POST", `${base()}/${ex.id}/input`, { key: h.t.key, body: form(["ok.txt", "fine"], [bad, "x"]) });
        expect(r.status).toBe(400);
      }
      expect((await json(await h.get(`${base()}/${ex.id}/input`))).files).toEqual([]);
      expect((await h.req("POST", `${base()}/${ex.id}/input`, { key: h.t.key, body: { not: "multipart" } })).status).toBe(400);
    });

    test("createExample copies files by content address (for promotion)", async () => {
      const view = await createExample(h.ctx, h.t.id, wf.id, { name: "promoted", input: { who: "p", doc: { $file: "input/doc.txt" } } }, [
        { folder: "input", path: "doc.txt", bytes: new TextEncoder().encode("doc bytes") },
        { folder: "expected", path: "out.txt", bytes: new TextEncoder().encode("expected bytes") },
      ]);
      expect(await (await h.get(`${base()}/${view.id}/input/doc.txt`)).text()).toBe("doc bytes");
      expect(await (await h.get(`${base()}/${view.id}/expected/out.txt`)).text()).toBe("expected bytes");
    });
  });

  describe("example run", () => {
    test("starts an evaluation run with the example id, overrides applied, latestRunId set", async () => {
      h.startWorkers();
      const ex = await json(await h.post(base(), { name: "runme", input: { who: "zoe" }, overrides: { steps: { first: { greeting: "overridden" } } } }));
      const r = await h.post(`${base()}/${ex.id}/run`);
      expect(r.status).toBe(201);
      const started = await json(r);
      expect(started).toMatchObject({ type: "workflow", batchId: null, finished: false });
      const run = await h.settle(started.id);
      expect(run.output.first).toEqual({ greeting: "overridden" });
      expect(run.eval.exampleId).toBe(ex.id);
      expect(run.trigger.type).toBe("eval");
      expect((await json(await h.get(`${base()}/${ex.id}`))).latestRunId).toBe(started.id);
      const listed = await json(await h.get(`/v1/runs?example_id=${ex.id}`));
      expect(listed.runs.map((x: { id: string }) => x.id)).toEqual([started.id]);
      const plain = await json(await h.get(`/v1/runs?experiments=false&limit=100`));
      expect(plain.runs.some((x: { id: string }) => x.id === started.id)).toBe(false);
    });

    test("a $file the example does not have is a 400", async () => {
      const ex = await json(await h.post(base(), { name: "missing-file", input: { who: "q", doc: { $file: "input/nope.pdf" } } }));
      expect((await h.post(`${base()}/${ex.id}/run`)).status).toBe(400);
    });
  });
});
