// Rerun (links both ways, version=original pins the source version) and artifacts (list, bytes, ZIP
// streaming, 413 past 32 MiB, signed token download).
import { describe, expect, test } from "bun:test";
import { unzipSync } from "fflate";
import { createVersion } from "../../../src/automation/automations/service";
import { signZipToken } from "../../../src/automation/runs/token";
import { json, runsHarness, twoSteps } from "./support";
import { BLOB_MODES, withS3 } from "../files/stores";
import { sql } from "../app/sql";

const withFiles = `
name: reports
inputs: [{name: who, type: string, required: false}]
steps:
  - {name: summary, type: transform.set, with: {fields: {fileName: summary.txt, fileText: "total 42"}}}
  - {name: data, type: transform.set, with: {fields: {fileName: data.json, fileText: "{\\"a\\":1}"}}}
  - {name: again, type: transform.set, with: {fields: {fileName: summary.txt, fileText: "second summary"}}}
`;

withS3();

describe.each(BLOB_MODES)("%s blobs", (mode) => {
  describe("rerun", () => {
    test("a rerun is a new run with the same input, linked both ways through execution.retry", async () => {
      const h = await runsHarness({}, mode);
      await h.deploy(twoSteps());
      h.startWorkers();
      const first = await json(await h.post("/v1/runs?wait_for_completion=10", { target: "workflows.two-steps", input: { who: "ada" } }));
      const r = await h.post(`/v1/runs/${first.id}/rerun?wait_for_completion=10`);
      expect(r.status).toBe(200);
      const second = await json(r);
      expect(second.id).not.toBe(first.id);
      expect(second.execution.retry).toEqual({ number: 1, previousRunId: first.id, nextRun: null });
      expect(second.trigger.type).toBe("rerun");
      const firstNow = await json(await h.get(`/v1/runs/${first.id}?expand=input`));
      expect(firstNow.execution.retry.nextRun).toEqual({ id: second.id, status: "completed" });
      const secondInput = await json(await h.get(`/v1/runs/${second.id}?expand=input`));
      expect(secondInput.input.args).toEqual(firstNow.input.args);
      const third = await json(await h.post(`/v1/runs/${second.id}/rerun`));
      expect(third.finished).toBe(false);
      expect((await json(await h.get(`/v1/runs/${third.id}`))).execution.retry.number).toBe(2);
    });

    test("rerun without a wait answers 201; reruns follow the current version unless version=original", async () => {
      const h = await runsHarness({}, mode);
      const a = await h.deploy(twoSteps());
      const first = await json(await h.post("/v1/runs", { target: "workflows.two-steps", input: { who: "ada" } }));
      await createVersion(h.ctx.storage.automations, h.clock, h.t.id, a.id, { yaml: twoSteps().replace("version: 1.0.0", "version: 2.0.0"), version: "2.0.0", activate: true });
      const latest = await h.post(`/v1/runs/${first.id}/rerun`);
      expect(latest.status).toBe(201);
      const pinned = await json(await h.post(`/v1/runs/${first.id}/rerun?version=original`));
      const tagged = await json(await h.post(`/v1/runs/${first.id}/rerun?version=1.0.0`));
      expect((await json(await h.get(`/v1/runs/${(await json(latest)).id}`))).source.version).toBe("2.0.0");
      const pinnedRun = await json(await h.get(`/v1/runs/${pinned.id}`));
      expect(pinnedRun.source.version).toBe("1.0.0");
      expect(pinnedRun.source.versionId).toBe((await json(await h.get(`/v1/runs/${first.id}`))).source.versionId);
      expect((await json(await h.get(`/v1/runs/${tagged.id}`))).source.version).toBe("1.0.0");
      // The source run's nextRun points at the newest rerun.
      expect((await json(await h.get(`/v1/runs/${first.id}`))).execution.retry.nextRun.id).toBe(tagged.id);
      expect((await h.post("/v1/runs/run_nope/rerun")).status).toBe(404);
      expect((await h.post(`/v1/runs/${first.id}/rerun?version=7.7.7`)).status).toBe(404);
    });
  });

  describe("artifacts", () => {
    test("list, bytes by path with content type, duplicate names kept under the step's folder", async () => {
      const h = await runsHarness({}, mode);
      await h.deploy(withFiles);
      h.startWorkers();
      const run = await json(await h.post("/v1/runs?wait_for_completion=10", { target: "workflows.reports" }));
      expect(run.files.map((f: { path: string }) => f.path).sort()).toEqual(["again/summary.txt", "data.json", "summary.txt"]);
      const list = await json(await h.get(`/v1/runs/${run.id}/artifacts`));
      const summary = list.artifacts.find((a: { path: string }) => a.path === "summary.txt");
      expect(summary).toEqual({ name: "summary.txt", role: "output", path: "summary.txt", stepName: "summary", contentType: "text/plain", size: 8 });
      const bytes = await h.get(`/v1/runs/${run.id}/artifacts/summary.txt`);
      expect(bytes.status).toBe(200);
      expect(bytes.headers.get("content-type")).toStartWith("text/plain");
      expect(await bytes.text()).toBe("total 42");
      expect(await (await h.get(`/v1/runs/${run.id}/artifacts/again/summary.txt`)).text()).toBe("second summary");
      expect((await h.get(`/v1/runs/${run.id}/artifacts/missing.txt`)).status).toBe(404);
      const other = await h.tenant("other-artifacts");
      expect((await h.get(`/v1/runs/${run.id}/artifacts`, other.key)).status).toBe(404);
      expect((await h.get(`/v1/runs/${run.id}/artifacts/summary.txt`, other.key)).status).toBe(404);
    });

    test("zip=1 streams a ZIP of the output files; bundle=review puts them under output/", async () => {
      const h = await runsHarness({}, mode);
      await h.deploy(withFiles);
      h.startWorkers();
      const run = await json(await h.post("/v1/runs?wait_for_completion=10", { target: "workflows.reports" }));
      const r = await h.get(`/v1/runs/${run.id}/artifacts?zip=1`);
      expect(r.status).toBe(200);
      expect(r.headers.get("content-type")).toBe("application/zip");
      const entries = unzipSync(new Uint8Array(await r.arrayBuffer()));
      expect(Object.keys(entries).sort()).toEqual(["again/summary.txt", "data.json", "summary.txt"]);
      expect(new TextDecoder().decode(entries["data.json"])).toBe('{"a":1}');
      const review = unzipSync(new Uint8Array(await (await h.get(`/v1/runs/${run.id}/artifacts?zip=1&bundle=review`)).arrayBuffer()));
      expect(Object.keys(review).sort()).toEqual(["output/again/summary.txt", "output/data.json", "output/summary.txt"]);
    });

    test("over 32 MiB uncompressed → 413 artifacts_zip_too_large", async () => {
      const h = await runsHarness({}, mode);
      await h.deploy(withFiles);
      h.startWorkers();
      const run = await json(await h.post("/v1/runs?wait_for_completion=10", { target: "workflows.reports" }));
      // A 33 MiB artifact (stored through the blob store like any output).
      const blob = await h.ctx.blobs.put(new Uint8Array(33 * 1024 * 1024));
      await sql(h.ctx, "INSERT INTO run_files (run_id, path, role, name, content_type, size, sha256, created_at) VALUES (?, 'big.bin', 'output', 'big.bin', 'application/octet-stream', ?, ?, ?)", run.id, blob.size, blob.sha256, new Date().toISOString());
      const r = await h.get(`/v1/runs/${run.id}/artifacts?zip=1`);
      expect(r.status).toBe(413);
      expect((await json(r)).issues[0].code).toBe("artifacts_zip_too_large");
      // The list and the single download still work.
      expect((await h.get(`/v1/runs/${run.id}/artifacts/big.bin`)).status).toBe(200);
    });

    test("signed token: ZIP without Bearer; wrong run, tampered, expired or non-zip use refused", async () => {
      const h = await runsHarness({}, mode);
      await h.deploy(withFiles);
      h.startWorkers();
      const run = await json(await h.post("/v1/runs?wait_for_completion=10", { target: "workflows.reports" }));
      const other = await json(await h.post("/v1/runs?wait_for_completion=10", { target: "workflows.reports" }));
      const t = await json(await h.post(`/v1/runs/${run.id}/artifacts/token`, { expiresIn: 600 }));
      expect(t.url).toBe(`http://localhost/v1/runs/${run.id}/artifacts?zip=1&token=${t.token}`);
      const ok = await h.req("GET", `/v1/runs/${run.id}/artifacts?zip=1&token=${t.token}`);
      expect(ok.status).toBe(200);
      expect(Object.keys(unzipSync(new Uint8Array(await ok.arrayBuffer())))).toContain("summary.txt");
      expect((await h.req("GET", `/v1/runs/${other.id}/artifacts?zip=1&token=${t.token}`)).status).toBe(401);
      const tampered = t.token.slice(0, -2) + (t.token.endsWith("AA") ? "BB" : "AA");
      expect((await h.req("GET", `/v1/runs/${run.id}/artifacts?zip=1&token=${tampered}`)).status).toBe(401);
      expect((await h.req("GET", `/v1/runs/${run.id}/artifacts?token=${t.token}`)).status).toBe(400);
      const expired = signZipToken(h.ctx.config.signingSecret, run.id, Date.now() - 1000);
      const ex = await h.req("GET", `/v1/runs/${run.id}/artifacts?zip=1&token=${expired}`);
      expect(ex.status).toBe(401);
      expect((await json(ex)).issues[0].code).toBe("token_expired");
      expect((await h.req("GET", `/v1/runs/${run.id}/artifacts?zip=1`)).status).toBe(401);
      expect((await h.post(`/v1/runs/${run.id}/artifacts/token`, { expiresIn: 5 })).status).toBe(400);
    });
  });
});
