// Every public response compared with the hosted product's OpenAPI (a copy of the reference lives
// beside this test, since CI has no shared folder): a key the reference schema does not name, at any
// depth, fails. Documented additions are opt-in (`expand`) and checked here to stay out by default.
// The stricter sets the official SDKs' smoke battery asserts are checked exactly as well.
import { beforeAll, describe, expect, test } from "bun:test";
import { demoWorkflows } from "../../../src/automation/demo/workflows";
import { harness, json, type Harness, type Json } from "../app/harness";

type Schema = Record<string, unknown>;
const reference = (await Bun.file(new URL("./eigenpal-openapi.json", import.meta.url)).json()) as {
  paths: Record<string, Record<string, { responses: Record<string, { content?: Record<string, { schema: Schema }> }> }>>;
  components: { schemas: Record<string, Schema> };
};

function deref(s: Schema): Schema {
  let cur = s;
  while (typeof cur.$ref === "string") cur = reference.components.schemas[cur.$ref.replace("#/components/schemas/", "")];
  return cur;
}

const kindOf = (v: unknown) => (v === null ? "null" : Array.isArray(v) ? "array" : typeof v);

/** Whether `value` could be an instance of `s` by its JSON type alone (untyped schemas admit anything). */
function typeFits(value: unknown, s: Schema): boolean {
  s = deref(s);
  if (s.anyOf || s.oneOf) return ((s.anyOf ?? s.oneOf) as Schema[]).some((x) => typeFits(value, x));
  if (s.type === undefined) return true;
  const types = Array.isArray(s.type) ? (s.type as string[]) : [s.type as string];
  const k = kindOf(value);
  return types.some((t) => t === k || ((t === "integer" || t === "number") && k === "number"));
}

/** Paths of keys in `value` that `schema` does not name (anyOf: the best-fitting branch). */
function unnamedKeys(value: unknown, schema: Schema, at = ""): string[] {
  const s = deref(schema);
  const variants = (s.anyOf ?? s.oneOf) as Schema[] | undefined;
  if (variants) {
    const fitting = variants.filter((x) => typeFits(value, x));
    if (fitting.length === 0) return [`${at || "<root>"} (type ${kindOf(value)} fits no branch)`];
    return fitting.map((x) => unnamedKeys(value, x, at)).reduce((a, b) => (b.length < a.length ? b : a));
  }
  if (Array.isArray(value)) return s.items ? value.flatMap((x, i) => unnamedKeys(x, s.items as Schema, `${at}[${i}]`)) : [];
  if (value === null || typeof value !== "object") return [];
  const props = (s.properties ?? {}) as Record<string, Schema>;
  const extra = s.additionalProperties;
  // An object schema without named properties is free-form (`output`, `metadata`, step records).
  if (!s.properties && extra === undefined) return [];
  return Object.entries(value).flatMap(([k, v]) => {
    const path = at ? `${at}.${k}` : k;
    if (props[k]) return unnamedKeys(v, props[k], path);
    if (extra && typeof extra === "object") return unnamedKeys(v, extra as Schema, path);
    return extra === true ? [] : [path];
  });
}

/** The reference's JSON schema of `method path` answering `status`. */
function responseSchema(op: string, status: string): Schema {
  const [method, path] = op.split(" ");
  const r = reference.paths[path]?.[method.toLowerCase()]?.responses[status];
  const schema = r?.content?.["application/json"]?.schema;
  if (!schema) throw new Error(`the reference has no JSON ${status} for ${op}`);
  return schema;
}

/** Sends the request, expects `status`, and checks the body against the reference's response schema. */
async function conforms(r: Response, op: string, status = 200): Promise<Json> {
  const body = await json(r);
  expect(r.status, JSON.stringify(body)).toBe(status);
  expect(unnamedKeys(body, responseSchema(op, String(status))), `${op} ${status}`).toEqual([]);
  return body;
}

const component = (name: string) => reference.components.schemas[name];

// The official smoke battery's public sets (what `assertPublicShape` allows).
const AUTOMATION = ["createdAt", "description", "id", "name", "slug", "status", "triggers", "type", "updatedAt", "version"];
const AUTOMATION_DETAIL = [...AUTOMATION, "inputSchema", "outputSchema"].sort();
const VERSION = ["automationId", "createdAt", "id", "isCurrent", "sourceRef", "version"];
const RUN_LIST_ROW = ["error", "eval", "execution", "finished", "id", "source", "timing", "trigger", "type"];
const within = (keys: string[], allowed: string[]) => keys.filter((k) => !allowed.includes(k));

let h: Harness;
let key = "";
const get = (path: string) => h.req("GET", path, { key });
const post = (path: string, body?: unknown) => h.req("POST", path, { key, body });
let wfId = "";
let done: Json;
let failed: Json;

beforeAll(async () => {
  h = await harness({ workers: 1 });
  key = (await h.tenant("keysets")).key;
  for (const w of demoWorkflows.filter((w) => ["hello.yaml", "spreadsheet-report.yaml", "invoice-summary.yaml"].includes(w.file))) {
    const r = await post("/v1/automations", { yaml: w.yaml });
    expect(r.status).toBe(201);
    if (w.file === "hello.yaml") wfId = (await json(r)).id;
  }
  const { runsOf } = await import("../../../src/automation/runs/service");
  runsOf(h.ctx).startWorkers();
  done = await json(await post("/v1/runs?wait_for_completion=30", { target: "workflows.spreadsheet-report" }));
  // invoice lines without amounts make the script step throw: a failed run with an error.
  // (with an attachment, so input files show up in expand=input and the artifacts).
  failed = await json(
    await post("/v1/runs?wait_for_completion=30", {
      target: "workflows.invoice-summary",
      input: { invoice: { lines: "nope" }, attachment: { $inline: { filename: "inv.txt", mimeType: "text/plain", base64: btoa("invoice") } } },
    }),
  );
  expect(done.execution.status).toBe("completed");
  expect(failed.execution.status).toBe("failed");
}, 60_000);

describe("automations", () => {
  test("list, detail, triggers, versions name only reference keys; the SDK's public sets exactly", async () => {
    const list = await conforms(await get("/v1/automations?limit=10"), "GET /api/v1/automations");
    for (const a of list.data) expect(within(Object.keys(a), AUTOMATION)).toEqual([]);
    const detail = await conforms(await get(`/v1/automations/${wfId}`), "GET /api/v1/automations/{id}");
    expect(Object.keys(detail).sort()).toEqual(AUTOMATION_DETAIL);
    await conforms(await get(`/v1/automations/workflows.hello/triggers`), "GET /api/v1/automations/{id}/triggers");
    const versions = await conforms(await get(`/v1/automations/${wfId}/versions?limit=5`), "GET /api/v1/automations/{id}/versions");
    expect(Object.keys(versions.data[0]).sort()).toEqual(VERSION);
  });

  test("implementationAvailable only with expand=implementationAvailable", async () => {
    const plain = await json(await get("/v1/automations"));
    expect(plain.data.some((a: Json) => "implementationAvailable" in a)).toBe(false);
    const list = await conforms(await get("/v1/automations?expand=implementationAvailable"), "GET /api/v1/automations");
    expect(list.data.every((a: Json) => a.implementationAvailable === true)).toBe(true);
    const detail = await conforms(await get(`/v1/automations/${wfId}?expand=implementationAvailable`), "GET /api/v1/automations/{id}");
    expect(detail.implementationAvailable).toBe(true);
    expect((await get(`/v1/automations/${wfId}?expand=secrets`)).status).toBe(400);
  });

  test("version create, promote and restore answer AutomationVersion rows", async () => {
    const created = await json(await post(`/v1/automations/${wfId}/versions`, { yaml: demoWorkflows[0].yaml.replace("version: 1.0.0", "version: 1.1.0") }));
    expect(unnamedKeys(created, component("AutomationVersion"))).toEqual([]);
    const versions = (await json(await get(`/v1/automations/${wfId}/versions`))).data as Json[];
    const first = versions.find((v) => v.version === "1.0.0")!;
    expect(unnamedKeys(await json(await post(`/v1/automations/${wfId}/versions/${first.id}/promote`, {})), component("AutomationVersion"))).toEqual([]);
    expect(unnamedKeys(await json(await post(`/v1/automations/${wfId}/versions/${created.id}/restore`, {})), component("AutomationVersion"))).toEqual([]);
  });
});

describe("runs", () => {
  test("start answers 201 (accepted), 200 (finished) and 202 (wait expired) in reference shapes", async () => {
    await conforms(await post("/v1/runs", { target: "workflows.hello" }), "POST /api/v1/runs", 201);
    expect(unnamedKeys(done, responseSchema("POST /api/v1/runs", "200"))).toEqual([]);
    expect(unnamedKeys(failed, responseSchema("POST /api/v1/runs", "200"))).toEqual([]);
    // spreadsheet-report waits 250 ms in a step: a 1 s wait can still expire under load, so accept both.
    const r = await post("/v1/runs?wait_for_completion=1", { target: "workflows.spreadsheet-report" });
    await conforms(r, "POST /api/v1/runs", r.status);
  });

  test("list rows name only reference keys and, by default, exactly the SDK's public set", async () => {
    const list = await conforms(await get("/v1/runs?limit=20"), "GET /api/v1/runs");
    expect(list.runs.length).toBeGreaterThan(1);
    for (const row of list.runs) expect(within(Object.keys(row), RUN_LIST_ROW)).toEqual([]);
    const ranked = await conforms(await get("/v1/runs?limit=20&expand=sampleRank"), "GET /api/v1/runs");
    expect(ranked.runs.every((r: Json) => typeof r.sampleRank === "number")).toBe(true);
  });

  test("detail with every expand, events, steps, trace, usage, artifacts, cancel, rerun", async () => {
    for (const id of [done.id, failed.id]) {
      for (const expand of ["", "?expand=input", "?expand=usage", "?expand=execution", "?expand=debug", "?expand=input,usage,execution,debug"]) {
        await conforms(await get(`/v1/runs/${id}${expand}`), "GET /api/v1/runs/{id}");
      }
      await conforms(await get(`/v1/runs/${id}/events`), "GET /api/v1/runs/{id}/events");
      await conforms(await get(`/v1/runs/${id}/steps`), "GET /api/v1/runs/{id}/steps");
      await conforms(await get(`/v1/runs/${id}/trace`), "GET /api/v1/runs/{id}/trace");
      await conforms(await get(`/v1/runs/${id}/usage`), "GET /api/v1/runs/{id}/usage");
      await conforms(await get(`/v1/runs/${id}/artifacts`), "GET /api/v1/runs/{id}/artifacts");
      await conforms(await post(`/v1/runs/${id}/cancel`), "POST /api/v1/runs/{id}/cancel");
    }
    const artifacts = await json(await get(`/v1/runs/${done.id}/artifacts`));
    expect(artifacts.artifacts.map((a: Json) => a.path)).toContain("hours.xlsx");
    const queued = await json(await post("/v1/runs", { target: "workflows.spreadsheet-report" }));
    await conforms(await post(`/v1/runs/${queued.id}/cancel`), "POST /api/v1/runs/{id}/cancel");
    await conforms(await post(`/v1/runs/${done.id}/rerun`), "POST /api/v1/runs/{id}/rerun", 201);
    await conforms(await post(`/v1/runs/${done.id}/rerun?wait_for_completion=30`), "POST /api/v1/runs/{id}/rerun", 200);
  });
});

describe("datasets, evaluators, experiments, scores (addressed as workflows.<wf_ id>, as the SDKs do)", () => {
  test("example CRUD and run, evaluator config, an experiment, its runs' scores", async () => {
    const t = `/v1/automations/workflows.${wfId}`;
    const ex = await conforms(
      await post(`${t}/examples`, { name: "ada", input: { name: "Ada" }, expected: { greeting: "Hello, Ada!" } }),
      "POST /api/v1/automations/{id}/examples",
      201,
    );
    await conforms(await get(`${t}/examples`), "GET /api/v1/automations/{id}/examples");
    await conforms(await get(`${t}/examples/${ex.id}`), "GET /api/v1/automations/{id}/examples/{exampleId}");
    await conforms(
      await h.req("PATCH", `${t}/examples/${ex.id}`, { key, body: { metadata: { source: "sdk" } } }),
      "PATCH /api/v1/automations/{id}/examples/{exampleId}",
    );
    const run = await conforms(await post(`${t}/examples/${ex.id}/run`, {}), "POST /api/v1/automations/{id}/examples/{exampleId}/run", 201);
    await conforms(await get(`${t}/evaluators`), "GET /api/v1/automations/{id}/evaluators");
    const exp = await conforms(await post(`${t}/experiments`, { examples: [ex.id] }), "POST /api/v1/automations/{id}/experiments", 202);
    let detail: Json = {};
    for (let i = 0; i < 300 && detail.status !== "completed"; i++) {
      detail = await conforms(await get(`${t}/experiments/${exp.id}`), "GET /api/v1/automations/{id}/experiments/{experimentId}");
      await Bun.sleep(20);
    }
    expect(detail.status).toBe("completed");
    await conforms(await get(`/v1/experiments/${exp.id}`), "GET /api/v1/experiments/{experimentId}");
    const runId = (run.runId ?? run.id) as string;
    for (let i = 0; i < 300 && !(await json(await get(`/v1/runs/${runId}`))).finished; i++) await Bun.sleep(20);
    await conforms(await get(`/v1/runs/${runId}/scores`), "GET /api/v1/runs/{id}/scores");
    await conforms(await h.req("DELETE", `${t}/examples/${ex.id}`, { key }), "DELETE /api/v1/automations/{id}/examples/{exampleId}");
  });

  test("example files, evaluator replace, experiment cancel, dataset import", async () => {
    const t = `/v1/automations/workflows.${wfId}`;
    const ex = await json(await post(`${t}/examples`, { name: "files", input: { name: "F" } }));
    const base = `${t}/examples/${ex.id}`;
    for (const folder of ["input", "expected"] as const) {
      const Folder = folder === "input" ? "Input" : "Expected";
      const form = new FormData();
      form.set("file", new File(["bytes"], "doc.txt", { type: "text/plain" }));
      await conforms(await h.req("POST", `${base}/${folder}`, { key, body: form }), `POST /api/v1/automations/{id}/examples/{exampleId}/${folder}`, 201);
      expect(unnamedKeys(await json(await get(`${base}/${folder}`)), component(`DatasetExample${Folder}FileList`))).toEqual([]);
      const renamed = await h.req("PATCH", `${base}/${folder}/doc.txt`, { key, body: { newFilename: "renamed.txt" } });
      await conforms(renamed, `PATCH /api/v1/automations/{id}/examples/{exampleId}/${folder}/{path}`);
    }
    await conforms(await h.req("PUT", `${t}/evaluators`, { key, body: { yaml: "evaluators:\n  - {name: exact, type: exact-diff}\n" } }), "PUT /api/v1/automations/{id}/evaluators");
    const exp = await json(await post(`${t}/experiments`, { examples: [ex.id] }));
    await conforms(await post(`${t}/experiments/${exp.id}/cancel`), "POST /api/v1/automations/{id}/experiments/{experimentId}/cancel");
    const zip = await get(`${t}/dataset/export`);
    expect(zip.status).toBe(200);
    const form = new FormData();
    form.set("file", new File([await zip.arrayBuffer()], "dataset.zip", { type: "application/zip" }));
    form.set("mode", "replace");
    await conforms(await h.req("POST", `${t}/dataset/import`, { key, body: form }), "POST /api/v1/automations/{id}/dataset/import");
  });
});

describe("files, auth, errors", () => {
  test("upload, get and delete answer File / DeleteFileResponse", async () => {
    const form = new FormData();
    form.set("file", new File(["abc"], "a.txt", { type: "text/plain" }));
    const f = await conforms(await h.req("POST", "/v1/files", { key, body: form }), "POST /api/v1/files");
    await conforms(await get(`/v1/files/${f.id}`), "GET /api/v1/files/{id}");
    await conforms(await h.req("DELETE", `/v1/files/${f.id}`, { key }), "DELETE /api/v1/files/{id}");
  });

  test("auth check and the error envelope", async () => {
    await conforms(await get("/v1/auth/check"), "GET /api/v1/auth/check");
    await conforms(await get("/v1/runs/exec_missing"), "GET /api/v1/runs/{id}", 404);
    await conforms(await get("/v1/automations/workflows.missing"), "GET /api/v1/automations/{id}", 404);
    await conforms(await post("/v1/runs", { target: "" }), "POST /api/v1/runs", 400);
    await conforms(await h.req("GET", "/v1/runs"), "GET /api/v1/runs", 401);
  });

  test("the checker itself flags an unnamed key at depth and accepts free-form objects", () => {
    const run = responseSchema("GET /api/v1/runs/{id}", "200");
    expect(unnamedKeys({ id: "x", type: "workflow", finished: true, timing: { createdAt: "t", extra: 1 } }, run)).toEqual(["timing.extra"]);
    expect(unnamedKeys({ id: "x", output: { anything: { goes: 1 } }, leaked: true }, run)).toEqual(["leaked"]);
  });
});
