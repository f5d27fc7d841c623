// POST /v1/runs: JSON and multipart bodies, file values, versions, input validation, the
// 200/201/202 rules of wait_for_completion, scopes and tenancy.
import { describe, expect, test } from "bun:test";
import { createVersion } from "../../../src/automation/automations/service";
import { deleteFile, insertFile, putBytes } from "../../../src/automation/files/service";
import { json, runsHarness, twoSteps } from "./support";

const fileWorkflow = `
name: with-file
inputs:
  - {name: doc, type: file, required: true}
  - {name: extra, type: array, required: false}
steps:
  - {name: only, type: transform.set, with: {fields: {echoInput: true}}}
`;

describe("POST /v1/runs", () => {
  test("without a wait: 201 {id, type, finished:false}, and the run is queued", async () => {
    const h = await runsHarness();
    await h.deploy(twoSteps());
    const r = await h.post("/v1/runs", { target: "workflows.two-steps", input: { who: "ada" } });
    expect(r.status).toBe(201);
    const b = await json(r);
    expect(b.id).toMatch(/^exec_/);
    expect(b.type).toBe("workflow");
    expect(b.finished).toBe(false);
    const run = await json(await h.get(`/v1/runs/${b.id}`));
    expect(run.execution.status).toBe("pending");
    expect(run.output).toBeUndefined();
  });

  test("wait_for_completion=0 does not wait: 201", async () => {
    const h = await runsHarness();
    await h.deploy(twoSteps());
    h.startWorkers();
    const r = await h.post("/v1/runs?wait_for_completion=0", { target: "workflows.two-steps", input: { who: "ada" } });
    expect(r.status).toBe(201);
  });

  test("finished within the wait: 200 with the full run, output and declared defaults in the input", async () => {
    const h = await runsHarness();
    await h.deploy(twoSteps());
    h.startWorkers();
    const r = await h.post("/v1/runs?wait_for_completion=10&expand=input", { target: "workflows.two-steps", input: { who: "ada" } });
    expect(r.status).toBe(200);
    const b = await json(r);
    expect(b.finished).toBe(true);
    expect(b.execution.status).toBe("completed");
    expect(b.output).toEqual({ first: { greeting: "hello" }, second: { done: true } });
    expect(b.files).toEqual([]);
    expect(b.error).toBeNull();
    const detail = await json(await h.get(`/v1/runs/${b.id}?expand=input`));
    expect(detail.input.args).toEqual({ who: "ada", times: 1 });
  });

  test("the wait expires first: 202 with the run still in flight", async () => {
    const h = await runsHarness();
    await h.deploy(twoSteps());
    h.engine.hold("second");
    h.startWorkers();
    const r = await h.post("/v1/runs?wait_for_completion=1", { target: "workflows.two-steps", input: { who: "ada" } });
    expect(r.status).toBe(202);
    const b = await json(r);
    expect(b.finished).toBe(false);
    expect(b.execution.status).toBe("running");
    h.engine.open("second");
    expect((await h.settle(b.id)).execution.status).toBe("completed");
  });

  test("wait_for_completion outside 0-600 and bad query values are 400s", async () => {
    const h = await runsHarness();
    await h.deploy(twoSteps());
    for (const q of ["wait_for_completion=601", "wait_for_completion=-1", "wait_for_completion=abc", "waitForCompletion=1e3"]) {
      const r = await h.post(`/v1/runs?${q}`, { target: "workflows.two-steps", input: { who: "ada" } });
      expect(r.status).toBe(400);
      expect((await json(r)).issues[0].field).toBe("waitForCompletion");
    }
  });

  test("input is validated against the workflow's inputs: 400 naming the fields", async () => {
    const h = await runsHarness();
    await h.deploy(twoSteps());
    const r = await h.post("/v1/runs", { target: "workflows.two-steps", input: { times: "many", bogus: 1 } });
    expect(r.status).toBe(400);
    const fields = (await json(r)).issues.map((i: { field: string }) => i.field).sort();
    expect(fields).toEqual(["input.bogus", "input.times", "input.who"]);
  });

  test("unknown target → 404; unknown version → 404; body shape errors → 400; wrong content type → 415", async () => {
    const h = await runsHarness();
    await h.deploy(twoSteps());
    const missing = await h.post("/v1/runs", { target: "workflows.nope", input: {} });
    expect(missing.status).toBe(404);
    expect((await json(missing)).issues[0].field).toBe("target");
    const badVersion = await h.post("/v1/runs?version=9.9.9", { target: "workflows.two-steps", input: { who: "a" } });
    expect(badVersion.status).toBe(404);
    expect((await json(badVersion)).issues[0].field).toBe("version");
    const noTarget = await h.post("/v1/runs", { input: {} });
    expect(noTarget.status).toBe(400);
    expect((await json(noTarget)).issues[0].field).toBe("target");
    const unknownField = await h.post("/v1/runs", { target: "workflows.two-steps", input: { who: "a" }, extra: 1 });
    expect(unknownField.status).toBe(400);
    const malformed = await h.req("POST", "/v1/runs", { key: h.t.key, body: "{nope", headers: { "content-type": "application/json" } });
    expect(malformed.status).toBe(400);
    const text = await h.req("POST", "/v1/runs", { key: h.t.key, body: "target=x", headers: { "content-type": "text/plain" } });
    expect(text.status).toBe(415);
  });

  test("version picks a tag; latest (default) is the current version", async () => {
    const h = await runsHarness();
    const a = await h.deploy(twoSteps());
    await createVersion(h.ctx.storage.automations, h.clock, h.t.id, a.id, { yaml: twoSteps().replace("version: 1.0.0", "version: 1.1.0"), version: "1.1.0", activate: true });
    const old = await json(await h.post("/v1/runs?version=1.0.0", { target: "workflows.two-steps", input: { who: "a" } }));
    const latest = await json(await h.post("/v1/runs?version=latest", { target: a.id, input: { who: "a" } }));
    const byDefault = await json(await h.post("/v1/runs", { target: "workflows.two-steps", input: { who: "a" } }));
    expect((await json(await h.get(`/v1/runs/${old.id}`))).source.version).toBe("1.0.0");
    expect((await json(await h.get(`/v1/runs/${latest.id}`))).source.version).toBe("1.1.0");
    expect((await json(await h.get(`/v1/runs/${byDefault.id}`))).source.version).toBe("1.1.0");
  });

  test("a workflow without the api trigger refuses API runs with 403 api_trigger_disabled", async () => {
    const h = await runsHarness();
    await h.deploy(twoSteps("manual-only", "triggerMethods: [{type: manual}]"));
    const r = await h.post("/v1/runs", { target: "workflows.manual-only", input: { who: "a" } });
    expect(r.status).toBe(403);
    expect((await json(r)).issues[0].code).toBe("api_trigger_disabled");
  });

  test("scopes: runs:read cannot start; runs:write can; no key → 401", async () => {
    const h = await runsHarness();
    await h.deploy(twoSteps());
    const reader = await h.key(h.t.id, ["runs:read"]);
    const writer = await h.key(h.t.id, ["runs:write"]);
    expect((await h.post("/v1/runs", { target: "workflows.two-steps", input: { who: "a" } }, reader)).status).toBe(403);
    const ok = await h.post("/v1/runs", { target: "workflows.two-steps", input: { who: "a" } }, writer);
    expect(ok.status).toBe(201);
    const id = (await json(ok)).id;
    expect((await h.get(`/v1/runs/${id}`, reader)).status).toBe(200);
    expect((await h.req("GET", `/v1/runs/${id}`)).status).toBe(401);
  });

  test("another tenant's run and workflow answer 404 like missing ones", async () => {
    const h = await runsHarness();
    await h.deploy(twoSteps());
    const other = await h.tenant("other-tenant");
    const id = (await json(await h.post("/v1/runs", { target: "workflows.two-steps", input: { who: "a" } }))).id;
    expect((await h.get(`/v1/runs/${id}`, other.key)).status).toBe(404);
    expect((await h.post("/v1/runs", { target: "workflows.two-steps", input: { who: "a" } }, other.key)).status).toBe(404);
    expect((await h.post(`/v1/runs/${id}/cancel`, undefined, other.key)).status).toBe(404);
    expect((await h.get(`/v1/runs/${id}/events`, other.key)).status).toBe(404);
  });

  test("file values: $fileId (snapshotted, readable after the file is deleted), $inline, arrays", async () => {
    const h = await runsHarness();
    await h.deploy(fileWorkflow);
    h.startWorkers();
    const file = await insertFile(h.ctx, h.t.id, { filename: "pool.txt", contentType: "text/plain", purpose: null }, await putBytes(h.ctx, new TextEncoder().encode("pooled bytes")));
    const r = await h.post("/v1/runs?wait_for_completion=10", {
      target: "workflows.with-file",
      input: {},
      files: {
        doc: { $fileId: file.id },
        extra: [{ $inline: { filename: "a.txt", mimeType: "text/plain", base64: Buffer.from("inline A").toString("base64") } }],
      },
    });
    expect(r.status).toBe(200);
    const run = await json(r);
    expect(run.output.only.input.doc).toMatchObject({ $file: "input/doc/pool.txt", filename: "pool.txt", size: 12 });
    expect(run.output.only.input.doc.contentType).toStartWith("text/plain");
    expect(run.output.only.input.extra[0].filename).toBe("a.txt");
    await deleteFile(h.ctx, h.t.id, file.id);
    const detail = await json(await h.get(`/v1/runs/${run.id}?expand=input`));
    expect(detail.input.files.map((f: { name: string }) => f.name).sort()).toEqual(["a.txt", "pool.txt"]);
    const listed = (await json(await h.get(`/v1/runs/${run.id}/artifacts`))).artifacts;
    expect(listed.map((f: { path: string }) => f.path).sort()).toEqual(["input/doc/pool.txt", "input/extra/0/a.txt"]);
    // The snapshot keeps the bytes: a rerun (which reads the snapshot) still completes.
    const rerun = await h.post(`/v1/runs/${run.id}/rerun?wait_for_completion=10`);
    expect(rerun.status).toBe(200);
  });

  test("file values: unknown $fileId → 400; a file given for a non-file input → 400", async () => {
    const h = await runsHarness();
    await h.deploy(fileWorkflow);
    const missing = await h.post("/v1/runs", { target: "workflows.with-file", files: { doc: { $fileId: "file_nope" } } });
    expect(missing.status).toBe(400);
    expect((await json(missing)).issues[0].field).toBe("files.doc");
    const notFile = await h.post("/v1/runs", {
      target: "workflows.with-file",
      files: { doc: { $inline: { filename: "a", mimeType: "text/plain", base64: "YQ==" } }, nope: { $fileId: "file_x" } },
    });
    expect(notFile.status).toBe(400);
    expect((await json(notFile)).issues[0].field).toBe("files.nope");
  });

  test("multipart: target, input as JSON, files.<field> parts", async () => {
    const h = await runsHarness();
    await h.deploy(fileWorkflow);
    h.startWorkers();
    const form = new FormData();
    form.append("target", "workflows.with-file");
    form.append("input", JSON.stringify({}));
    form.append("files.doc", new File(["part bytes"], "part.csv", { type: "text/csv" }));
    form.append("files.extra", new File(["x1"], "x1.txt", { type: "text/plain" }));
    form.append("files.extra", new File(["x2"], "x2.txt", { type: "text/plain" }));
    const r = await h.req("POST", "/v1/runs?wait_for_completion=10", { key: h.t.key, body: form });
    expect(r.status).toBe(200);
    const run = await json(r);
    expect(run.output.only.input.doc).toEqual({ $file: "input/doc/part.csv", filename: "part.csv", contentType: "text/csv", size: 10 });
    expect(run.output.only.input.extra.map((f: { filename: string }) => f.filename)).toEqual(["x1.txt", "x2.txt"]);

    const bad = new FormData();
    bad.append("target", "workflows.with-file");
    bad.append("input", "not json");
    const r2 = await h.req("POST", "/v1/runs", { key: h.t.key, body: bad });
    expect(r2.status).toBe(400);
    expect((await json(r2)).issues[0].field).toBe("input");
  });

  test("X-Eigenpal-Trigger: cli is recorded as the trigger type; the key is trigger.by", async () => {
    const h = await runsHarness();
    await h.deploy(twoSteps());
    const r = await h.req("POST", "/v1/runs", { key: h.t.key, body: { target: "workflows.two-steps", input: { who: "a" } }, headers: { "x-eigenpal-trigger": "cli" } });
    const run = await json(await h.get(`/v1/runs/${(await json(r)).id}`));
    expect(run.trigger.type).toBe("cli");
    expect(run.trigger.by.id).toMatch(/^key_/);
  });

  test("served under /api/v1 too", async () => {
    const h = await runsHarness();
    await h.deploy(twoSteps());
    const r = await h.post("/api/v1/runs", { target: "workflows.two-steps", input: { who: "a" } });
    expect(r.status).toBe(201);
    expect((await h.get(`/api/v1/runs/${(await json(r)).id}`)).status).toBe(200);
  });
});

describe("run starts answered from memory (both backends)", () => {
  test("the automation a start remembered is checked by the insert: a version pushed since runs, one that turns the API trigger off refuses", async () => {
    const h = await runsHarness();
    const flow = (value: number, extra = "") => `name: mem\n${extra}steps:\n  - {name: a, type: transform.set, with: {fields: {a: ${value}}}}\n`;
    await h.deploy(flow(1));
    h.startWorkers();
    const run = async () => h.post("/v1/runs?wait_for_completion=10", { target: "workflows.mem", input: {} });
    expect((await json(await run())).output).toEqual({ a: { a: 1 } });
    // The start remembered what it read: the next one is answered from memory.
    expect((await h.ctx.storage.automations.findWithCurrent(h.t.id, "workflows.mem", { mayRemember: true }))?.remembered).toBe(true);
    const push = async (yaml: string, version: string) => expect((await h.post("/v1/automations/workflows.mem/versions", { yaml, version })).status).toBe(201);
    await push(flow(2), "1.0.2");
    const second = await json(await run());
    expect(second.output).toEqual({ a: { a: 2 } });
    // One run for that start: the stale insert wrote nothing before the fresh one.
    expect((await json(await h.get(`/v1/runs/${second.id}/events`))).events.filter((e: { type: string }) => e.type === "created")).toHaveLength(1);
    await push(flow(3, "triggerMethods: [{type: manual}]\n"), "1.0.3");
    const refused = await run();
    expect(refused.status).toBe(403);
    expect((await json(refused)).issues[0].code).toBe("api_trigger_disabled");
    await push(flow(4), "1.0.4");
    expect((await json(await run())).output).toEqual({ a: { a: 4 } });
    const runs = (await json(await h.get("/v1/runs?source=workflows.mem&limit=50"))).runs;
    expect(runs).toHaveLength(3);
  });
});
