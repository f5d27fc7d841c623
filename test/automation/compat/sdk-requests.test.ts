// Requests exactly as the official SDKs send them (typed targets built from `{type, id}` objects,
// snake_case query parameters, upload-then-`$fileId` runs), through app.handle() over an in-memory
// database: typed targets naming an id, run ids, and input snapshots listed as artifacts.
import { describe, expect, test } from "bun:test";
import { unzipSync } from "fflate";
import { addAgent, agentDeps } from "../../../src/automation/agents/service";
import { newId } from "../../../src/kernel/ids";
import { manifest, testRepo } from "../agents/git-repo";
import { json, runsHarness, twoSteps } from "../runs/support";
import { withoutForeignKeys } from "../app/sql";

const withDoc = `
name: with-doc
inputs:
  - {name: doc, type: file, required: true}
steps:
  - {name: summary, type: transform.set, with: {fields: {fileName: summary.txt, fileText: "total 42"}}}
`;

async function upload(h: Awaited<ReturnType<typeof runsHarness>>, name: string, text: string): Promise<string> {
  const form = new FormData();
  form.set("file", new File([text], name, { type: "text/plain" }));
  const r = await h.req("POST", "/v1/files", { key: h.t.key, body: form });
  expect(r.status).toBe(200);
  return (await json(r)).id;
}

describe("typed targets whose name is an automation id (SDK `{type: 'workflow', id}`)", () => {
  test("POST /v1/runs with target workflows.<wf_ id> runs that workflow, with and without version", async () => {
    const h = await runsHarness();
    const wf = await h.deploy(twoSteps());
    h.startWorkers();
    for (const path of ["/v1/runs?wait_for_completion=10", "/v1/runs?wait_for_completion=10&version=1.0.0"]) {
      const r = await h.post(path, { target: `workflows.${wf.id}`, input: { who: "ada" } });
      expect(r.status).toBe(200);
      const run = await json(r);
      expect(run.source.id).toBe(wf.id);
      expect(run.source.slug).toBe("two-steps");
      expect(run.execution.status).toBe("completed");
    }
  });

  test("the same target works as a multipart field", async () => {
    const h = await runsHarness();
    const wf = await h.deploy(twoSteps());
    const form = new FormData();
    form.set("target", `workflows.${wf.id}`);
    form.set("input", JSON.stringify({ who: "ada" }));
    const r = await h.req("POST", "/v1/runs", { key: h.t.key, body: form });
    expect(r.status).toBe(201);
    expect((await json(r)).source.id).toBe(wf.id);
  });

  test("a typed target of the wrong type, another tenant's id or an unknown id is 404", async () => {
    const h = await runsHarness();
    const wf = await h.deploy(twoSteps());
    const other = await h.tenant("other-compat");
    const wrongType = await h.post("/v1/runs", { target: `agents.${wf.id}`, input: { who: "a" } });
    expect(wrongType.status).toBe(404);
    expect((await h.post("/v1/runs", { target: `workflows.${wf.id}`, input: { who: "a" } }, other.key)).status).toBe(404);
    expect((await h.post("/v1/runs", { target: "workflows.wf_definitely_missing", input: { who: "a" } })).status).toBe(404);
    expect((await h.get(`/v1/automations/agents.${wf.id}`)).status).toBe(404);
    expect((await h.get(`/v1/automations/workflows.${wf.id}`, other.key)).status).toBe(404);
  });

  test("every /v1/automations/{id} route accepts workflows.<wf_ id> like the id", async () => {
    const h = await runsHarness();
    const wf = await h.deploy(twoSteps());
    const ref = `workflows.${wf.id}`;
    const byId = await json(await h.get(`/v1/automations/${wf.id}`));
    const byTyped = await h.get(`/v1/automations/${ref}`);
    expect(byTyped.status).toBe(200);
    expect(await json(byTyped)).toEqual(byId);
    expect((await json(await h.get(`/v1/automations/${ref}/triggers`))).automationId).toBe(wf.id);
    const versions = await json(await h.get(`/v1/automations/${ref}/versions?limit=5`));
    expect(versions.data.map((v: { automationId: string }) => v.automationId)).toEqual([wf.id]);
    const created = await h.post(`/v1/automations/${ref}/versions`, { yaml: twoSteps("two-steps").replace("1.0.0", "1.1.0") });
    expect(created.status).toBe(201);
    const v110 = await json(created);
    expect(v110.automationId).toBe(wf.id);
    const v100 = versions.data[0].id as string;
    expect((await h.post(`/v1/automations/${ref}/versions/${v100}/promote`, {})).status).toBe(200);
    expect((await json(await h.get(`/v1/automations/${wf.id}`))).version).toBe("1.0.0");
    const restored = await h.post(`/v1/automations/${ref}/versions/${v110.id}/restore`, {});
    expect(restored.status).toBe(201);
    expect((await json(restored)).sourceRef).toBe(v110.id);
  });

  test("agents.<agt_ id> (SDK `{type: 'agent', id}`) reaches the agent's routes and runs; workflows.<agt_ id> does not", async () => {
    const h = await runsHarness();
    await h.deploy(twoSteps("lookup"));
    const repo = testRepo("invoice-agent");
    repo.commit({ "agent.yaml": manifest({ tools: ["workflows.lookup"] }) });
    repo.tag("v1.0.0");
    const agt = (await addAgent(agentDeps(h.ctx), h.t.id, { repo: repo.dir })).agent.id;
    const ref = `agents.${agt}`;
    expect((await json(await h.get(`/v1/automations/${ref}`))).id).toBe(agt);
    expect((await json(await h.get(`/v1/automations/${ref}/versions`))).data.map((v: { version: string }) => v.version)).toEqual(["1.0.0"]);
    expect((await json(await h.get(`/v1/automations/${ref}/triggers`))).automationId).toBe(agt);
    expect((await h.post(`/v1/automations/${ref}/sync`, {})).status).toBe(200);
    const started = await h.post("/v1/runs?version=1.0.0", { target: ref, input: { question: "total?" } });
    expect(started.status).toBe(201);
    expect((await json(started)).source.id).toBe(agt);
    expect((await h.get(`/v1/automations/workflows.${agt}`)).status).toBe(404);
    expect((await h.post("/v1/runs", { target: `workflows.${agt}`, input: { question: "x" } })).status).toBe(404);
  });

  test("GET /v1/runs?source=workflows.<wf_ id> lists that workflow's runs (snake_case paging as sent)", async () => {
    const h = await runsHarness();
    const wf = await h.deploy(twoSteps());
    await h.deploy(twoSteps("another"));
    const a = (await json(await h.post("/v1/runs", { target: `workflows.${wf.id}`, input: { who: "a" } }))).id;
    await h.post("/v1/runs", { target: "workflows.another", input: { who: "b" } });
    const list = await json(await h.get(`/v1/runs?type=workflow&source=workflows.${wf.id}&limit=3`));
    expect(list.runs.map((r: { id: string }) => r.id)).toEqual([a]);
    const none = await json(await h.get(`/v1/runs?source=agents.${wf.id}`));
    expect(none.runs).toEqual([]);
  });
});

describe("run ids", () => {
  test("new runs are exec_…; reruns and every run route take them", async () => {
    const h = await runsHarness();
    await h.deploy(twoSteps());
    h.startWorkers();
    const run = await json(await h.post("/v1/runs?wait_for_completion=10", { target: "workflows.two-steps", input: { who: "a" } }));
    expect(run.id).toStartWith("exec_");
    for (const sub of ["", "/events", "/steps", "/trace", "/usage", "/artifacts"]) expect((await h.get(`/v1/runs/${run.id}${sub}`)).status).toBe(200);
    const rerun = await json(await h.post(`/v1/runs/${run.id}/rerun?wait_for_completion=10`));
    expect(rerun.id).toStartWith("exec_");
    expect(rerun.execution.retry.previousRunId).toBe(run.id);
  });

  test("a run stored with a legacy run_… id is still read, listed, rerun and cancelled by that id", async () => {
    const h = await runsHarness();
    await h.deploy(twoSteps());
    h.startWorkers();
    const fresh = await json(await h.post("/v1/runs?wait_for_completion=10", { target: "workflows.two-steps", input: { who: "a" } }));
    // A database written before the switch: the same row under an old-style id.
    const legacy = newId("run");
    await withoutForeignKeys(h.ctx, [
      ...["run_steps", "run_events", "run_files"].map((t): [string, string, string] => [`UPDATE ${t} SET run_id = ? WHERE run_id = ?`, legacy, fresh.id]),
      ["UPDATE runs SET id = ? WHERE id = ?", legacy, fresh.id],
    ]);
    const got = await json(await h.get(`/v1/runs/${legacy}`));
    expect(got.id).toBe(legacy);
    expect(got.execution.status).toBe("completed");
    expect((await json(await h.get(`/v1/runs?ids=${legacy}`))).runs.map((r: { id: string }) => r.id)).toEqual([legacy]);
    expect((await json(await h.get(`/v1/runs/${legacy}/steps`))).steps.length).toBe(2);
    const rerun = await json(await h.post(`/v1/runs/${legacy}/rerun?wait_for_completion=10`));
    expect(rerun.id).toStartWith("exec_");
    expect(rerun.execution.retry.previousRunId).toBe(legacy);
    expect((await h.post(`/v1/runs/${legacy}/cancel`)).status).toBe(200);
    expect((await h.get("/v1/runs/exec_definitely_does_not_exist_xxx")).status).toBe(404);
  });
});

describe("input files as artifacts (upload, run with $fileId, list, download)", () => {
  test("the input snapshot is listed with role input and served; outputs carry role output", async () => {
    const h = await runsHarness();
    await h.deploy(withDoc);
    h.startWorkers();
    const fileId = await upload(h, "contract.txt", "the contract");
    const started = await json(await h.post("/v1/runs", { target: "workflows.with-doc", input: { doc: { $fileId: fileId } } }));
    // Listed from the start, before the run has produced anything.
    const early = await json(await h.get(`/v1/runs/${started.id}/artifacts`));
    expect(early.artifacts).toEqual([{ name: "contract.txt", role: "input", path: "input/doc/contract.txt", contentType: expect.stringMatching(/^text\/plain/), size: 12 }]);
    const dl = await h.get(`/v1/runs/${started.id}/artifacts/${encodeURIComponent(early.artifacts[0].path)}`);
    expect(dl.status).toBe(200);
    expect(await dl.text()).toBe("the contract");
    const plain = await h.get(`/v1/runs/${started.id}/artifacts/input/doc/contract.txt`);
    expect(await plain.text()).toBe("the contract");

    await h.settle(started.id);
    const all = (await json(await h.get(`/v1/runs/${started.id}/artifacts`))).artifacts as { path: string; role: string }[];
    expect(all.map((a) => [a.role, a.path])).toEqual([["input", "input/doc/contract.txt"], ["output", "summary.txt"]]);
    // The run's own `files` and the ZIP stay output-only, as the reference says.
    const run = await json(await h.get(`/v1/runs/${started.id}`));
    expect(run.files.map((f: { path: string }) => f.path)).toEqual(["summary.txt"]);
    const zip = unzipSync(new Uint8Array(await (await h.get(`/v1/runs/${started.id}/artifacts?zip=1`)).arrayBuffer()));
    expect(Object.keys(zip)).toEqual(["summary.txt"]);
  });

  test("a download as the SDKs send it (X-Eigenpal-Sdk, path URL-encoded) answers octet-stream; others get the stored type", async () => {
    const h = await runsHarness();
    await h.deploy(withDoc);
    const fileId = await upload(h, "contract.txt", "the contract");
    const run = await json(await h.post("/v1/runs", { target: "workflows.with-doc", input: { doc: { $fileId: fileId } } }));
    const path = `/v1/runs/${run.id}/artifacts/${encodeURIComponent("input/doc/contract.txt")}`;
    const sdk = await h.req("GET", path, { key: h.t.key, headers: { accept: "*/*", "x-eigenpal-sdk": "typescript" } });
    expect(sdk.headers.get("content-type")).toBe("application/octet-stream");
    expect(await sdk.text()).toBe("the contract");
    const plain = await h.req("GET", path, { key: h.t.key, headers: { accept: "*/*" } });
    expect(plain.headers.get("content-type")).toStartWith("text/plain");
  });

  test("a CSV experiment export to the SDK is octet-stream (its guard refuses text/csv); JSON stays JSON", async () => {
    const h = await runsHarness();
    const wf = await h.deploy(twoSteps());
    h.startWorkers();
    const t = `/v1/automations/workflows.${wf.id}`;
    const ex = await json(await h.post(`${t}/examples`, { name: "ada", input: { who: "ada" } }));
    const exp = await json(await h.post(`${t}/experiments`, { examples: [ex.id] }));
    expect(exp.id).toBeString();
    const sdk = { key: h.t.key, headers: { "x-eigenpal-sdk": "typescript" } };
    const csv = await h.req("GET", `${t}/experiments/${exp.id}/export?format=csv`, sdk);
    expect(csv.status).toBe(200);
    expect(csv.headers.get("content-type")).toBe("application/octet-stream");
    expect((await csv.text()).split("\n")[0]).toContain(",");
    expect((await h.req("GET", `${t}/experiments/${exp.id}/export?format=csv`, { key: h.t.key })).headers.get("content-type")).toStartWith("text/csv");
    expect((await h.req("GET", `${t}/experiments/${exp.id}/export?format=json`, sdk)).headers.get("content-type")).toStartWith("application/json");
  });

  test("multipart files.<field> and $inline inputs are listed too", async () => {
    const h = await runsHarness();
    await h.deploy(withDoc);
    const form = new FormData();
    form.set("target", "workflows.with-doc");
    form.set("files.doc", new File(["multipart bytes"], "scan.txt", { type: "text/plain" }));
    const a = await json(await h.req("POST", "/v1/runs", { key: h.t.key, body: form }));
    expect((await json(await h.get(`/v1/runs/${a.id}/artifacts`))).artifacts).toMatchObject([{ role: "input", path: "input/doc/scan.txt", size: 15 }]);
    const b = await json(
      await h.post("/v1/runs", { target: "workflows.with-doc", files: { doc: { $inline: { filename: "n.txt", mimeType: "text/plain", base64: btoa("inline") } } } }),
    );
    const listed = (await json(await h.get(`/v1/runs/${b.id}/artifacts`))).artifacts;
    expect(listed).toMatchObject([{ role: "input", path: "input/doc/n.txt", name: "n.txt" }]);
    expect(await (await h.get(`/v1/runs/${b.id}/artifacts/input/doc/n.txt`)).text()).toBe("inline");
  });
});
