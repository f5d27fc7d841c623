// POST /v1/automations/validate: the issues creating the workflow (or a version of it) would raise,
// each with its line, and nothing stored.
import { describe, expect, test } from "bun:test";
import { harness, json } from "../app/harness";
import { wf } from "./fixtures";

async function setup() {
  const h = await harness();
  const t = await h.tenant("acme");
  const created = await json(await h.req("POST", "/v1/automations", { key: t.key, body: { yaml: wf("inv", { version: "1.0.0" }) } }));
  const validate = async (body: unknown, key = t.key) => {
    const r = await h.req("POST", "/v1/automations/validate", { key, body });
    return { status: r.status, body: await json(r) };
  };
  const count = async () => (await json(await h.req("GET", "/v1/automations", { key: t.key }))).total as number;
  return { h, t, id: created.id as string, validate, count };
}

// Line 7 names a step kind that does not exist.
const broken = ["name: fresh", "triggerMethods: [{type: api}, {type: manual}]", "inputs:", "  - {name: who, type: string, required: true}", "steps:", "  - name: hi", "    type: transform.nope", "    with: {fields: {x: 1}}", ""].join("\n");

describe("validate", () => {
  test("a valid new workflow: valid, no issues, what it declares; nothing is stored", async () => {
    const { validate, count } = await setup();
    const before = await count();
    const r = await validate({ yaml: wf("fresh", { version: "0.1.0", description: "new" }) });
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ valid: true, issues: [], workflow: { name: "fresh", version: "0.1.0", description: "new", triggers: { api: true, manual: true, cron: false, email: false } } });
    expect(r.body.workflow.inputSchema.required).toEqual(["invoice"]);
    expect(await count()).toBe(before);
  });

  test("a mistake: 200 with valid false and the issue at its line; nothing is stored", async () => {
    const { validate, count } = await setup();
    const before = await count();
    const r = await validate({ yaml: broken });
    expect(r.status).toBe(200);
    expect(r.body.valid).toBe(false);
    expect(r.body.workflow).toBeNull();
    const issue = r.body.issues.find((i: { field: string }) => i.field.startsWith("yaml.steps.0"));
    expect(issue).toMatchObject({ line: 7 });
    expect(issue.message).toContain("transform.nope");
    expect(await count()).toBe(before);
  });

  test("a YAML syntax error names its line", async () => {
    const { validate } = await setup();
    const r = await validate({ yaml: "name: x\nsteps:\n  - name: a\n   type: [\n" });
    expect(r.body.valid).toBe(false);
    expect(r.body.issues[0].line).toBeGreaterThanOrEqual(3);
  });

  test("as a new workflow, a name already taken is an issue on the name's line", async () => {
    const { validate } = await setup();
    const r = await validate({ yaml: `# the invoice flow\n${wf("inv")}` });
    expect(r.body.valid).toBe(false);
    expect(r.body.issues).toEqual([expect.objectContaining({ field: "yaml.name", code: "already_exists", line: 2 })]);
  });

  test("as a version of an automation: its own name passes, another name is name_mismatch", async () => {
    const { validate, id } = await setup();
    expect((await validate({ yaml: wf("inv", { description: "two" }), automation: id })).body).toMatchObject({ valid: true, issues: [] });
    const other = await validate({ yaml: wf("other"), automation: "workflows.inv" });
    expect(other.body.valid).toBe(false);
    expect(other.body.issues[0]).toMatchObject({ field: "yaml.name", code: "name_mismatch", line: 1 });
  });

  test("a version tag that is not bare semver is an issue on its line", async () => {
    const { validate } = await setup();
    const r = await validate({ yaml: wf("fresh", { version: "v2" }) });
    expect(r.body.issues[0]).toMatchObject({ field: "yaml.version", line: 2 });
    expect(r.body.issues[0].message).toContain("semver");
  });

  test("bad requests: the body's shape is a 400 with the field; an unknown automation 404; too large 413", async () => {
    const { validate } = await setup();
    const noYaml = await validate({ automation: "workflows.inv" });
    expect(noYaml.status).toBe(400);
    expect(noYaml.body.issues[0].field).toBe("yaml");
    const extra = await validate({ yaml: "name: x", store: true });
    expect(extra.status).toBe(400);
    expect((await validate({ yaml: wf("inv"), automation: "workflows.nope" })).status).toBe(404);
    const big = await validate({ yaml: `name: big\n# ${"x".repeat(1024 * 1024)}\n` });
    expect(big.status).toBe(413);
  });

  test("automations:read is enough; no key is 401", async () => {
    const { h, t, validate } = await setup();
    const reader = await h.key(t.id, ["automations:read"]);
    expect((await validate({ yaml: wf("fresh") }, reader)).status).toBe(200);
    const runsOnly = await h.key(t.id, ["runs:read"]);
    expect((await validate({ yaml: wf("fresh") }, runsOnly)).status).toBe(403);
    expect((await h.req("POST", "/v1/automations/validate", { body: { yaml: wf("fresh") } })).status).toBe(401);
  });

  test("versions list: expand=message adds each message; without it the shape is unchanged", async () => {
    const { h, t, id } = await setup();
    await h.req("POST", `/v1/automations/${id}/versions`, { key: t.key, body: { yaml: wf("inv", { description: "two" }), version: "1.1.0", message: "say two" } });
    const plain = await json(await h.req("GET", `/v1/automations/${id}/versions`, { key: t.key }));
    expect(plain.data.every((v: object) => !("message" in v))).toBe(true);
    const withMessage = await json(await h.req("GET", `/v1/automations/${id}/versions?expand=message`, { key: t.key }));
    expect(withMessage.data.map((v: { version: string; message: string | null }) => [v.version, v.message])).toEqual([
      ["1.1.0", "say two"],
      ["1.0.0", null],
    ]);
    const one = await json(await h.req("GET", `/v1/automations/${id}/versions/${withMessage.data[0].id}`, { key: t.key }));
    expect(one).toMatchObject({ version: "1.1.0", message: "say two" });
    expect((await h.req("GET", `/v1/automations/${id}/versions?expand=yaml`, { key: t.key })).status).toBe(400);
  });
});

describe("step kinds", () => {
  test("GET /v1/step-kinds lists the kinds YAML may use with their config keys, from the parser's schemas", async () => {
    const { h, t, validate } = await setup();
    const r = await h.req("GET", "/v1/step-kinds", { key: await h.key(t.id, ["automations:read"]) });
    expect(r.status).toBe(200);
    const { data } = await json(r);
    const http = data.find((k: { type: string }) => k.type === "action.http");
    expect(http.configAt).toBe("with");
    expect(http.keys).toContainEqual({ name: "url", required: true });
    expect(http.keys).toContainEqual({ name: "method", required: false });
    expect(data.find((k: { type: string }) => k.type === "control.if").configAt).toBe("step");
    // every listed kind is one the parser accepts
    for (const k of data as { type: string }[]) {
      const issues = (await validate({ yaml: `name: k\nsteps:\n  - name: s\n    type: ${k.type}\n` })).body.issues as { message: string }[];
      expect(issues.some((i) => i.message.includes("unknown step type"))).toBe(false);
    }
    expect((await h.req("GET", "/v1/step-kinds", { key: await h.key(t.id, ["runs:read"]) })).status).toBe(403);
  });
});

describe("input enums", () => {
  const yaml = (inputs: string) =>
    ["name: pick", "triggerMethods: [{type: api}, {type: manual}]", "inputs:", inputs, "steps:", "  - name: s", "    type: transform.set", '    with: {fields: {got: "{{ input.size }}"}}', ""].join("\n");

  test("an input's enum reaches its JSON Schema, and a run with another value is a 400 naming the values", async () => {
    const { h, t, validate } = await setup();
    const good = yaml("  - {name: size, type: string, enum: [small, large], default: small}");
    const v = await validate({ yaml: good });
    expect(v.body.valid).toBe(true);
    expect(v.body.workflow.inputSchema.properties.size).toMatchObject({ type: "string", enum: ["small", "large"], default: "small" });
    await h.req("POST", "/v1/automations", { key: t.key, body: { yaml: good } });
    const bad = await h.req("POST", "/v1/runs", { key: t.key, body: { target: "workflows.pick", input: { size: "huge" } } });
    expect(bad.status).toBe(400);
    expect((await json(bad)).issues[0]).toMatchObject({ field: "input.size", message: 'input.size must be one of "small", "large"' });
    const ok = await h.req("POST", "/v1/runs", { key: t.key, body: { target: "workflows.pick", input: { size: "large" } } });
    expect(ok.status).toBe(201);
  });

  test("an enum of the wrong type, on a boolean input, or a default outside it is an issue at its line", async () => {
    const { validate } = await setup();
    const wrongType = await validate({ yaml: yaml("  - {name: size, type: integer, enum: [1, two]}") });
    expect(wrongType.body.issues[0]).toMatchObject({ field: "yaml.inputs.0.enum.1", line: 4 });
    const onBool = await validate({ yaml: yaml("  - {name: size, type: boolean, enum: [true]}") });
    expect(onBool.body.valid).toBe(false);
    const outside = await validate({ yaml: yaml("  - {name: size, type: string, enum: [a, b], default: c}") });
    expect(outside.body.issues[0]).toMatchObject({ field: "yaml.inputs.0.default", line: 4 });
  });
});

describe("list inputs", () => {
  const yaml = (inputs: string) =>
    ["name: many", "triggerMethods: [{type: api}, {type: manual}]", "inputs:", inputs, "steps:", "  - name: s", "    type: transform.set", '    with: {fields: {n: "{{ input.docs | size }}"}}', "output:", '  n: "{{ steps.s.output.n }}"', ""].join("\n");

  test("items: file makes a list of files: in the JSON Schema, and a run takes several uploaded files", async () => {
    const { h, t, validate } = await setup();
    const good = yaml("  - {name: docs, type: array, items: file, required: true}");
    const v = await validate({ yaml: good });
    expect(v.body.valid).toBe(true);
    expect(v.body.workflow.inputSchema.properties.docs).toMatchObject({ type: "array", items: { type: "object", format: "file" } });
    await h.req("POST", "/v1/automations", { key: t.key, body: { yaml: good } });
    const ids: string[] = [];
    for (const name of ["a.txt", "b.txt"]) {
      const form = new FormData();
      form.append("file", new Blob([name]), name);
      ids.push((await json(await h.req("POST", "/v1/files", { key: t.key, body: form }))).id);
    }
    const ok = await h.req("POST", "/v1/runs", { key: t.key, body: { target: "workflows.many", input: { docs: ids.map(($fileId) => ({ $fileId })) } } });
    expect(ok.status).toBe(201);
    const bad = await h.req("POST", "/v1/runs", { key: t.key, body: { target: "workflows.many", input: { docs: [1, 2] } } });
    expect(bad.status).toBe(400);
    expect((await json(bad)).issues[0]).toMatchObject({ field: "input.docs", message: "input.docs must be a list of files (element 0 is not one)" });
  });

  test("items on an input that is not an array is an issue at its line", async () => {
    const { validate } = await setup();
    const r = await validate({ yaml: yaml("  - {name: docs, type: file, items: file}") });
    expect(r.body.issues[0]).toMatchObject({ field: "yaml.inputs.0.items", line: 4 });
    const wrong = await validate({ yaml: yaml("  - {name: docs, type: array, items: folder}") });
    expect(wrong.body.issues[0].field).toBe("yaml.inputs.0.items");
  });
});
