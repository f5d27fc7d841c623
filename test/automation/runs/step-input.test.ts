// A step's input (issue 40: "a failed step opens at its error, with the step's input and output"): the
// values each step ran with are in its record on GET /v1/runs/{id}/steps and in expand=execution, with
// what came from the allow-listed environment (the workflow's secrets) as "[secret]" and the size
// bounded. Runs on the real engine; AUTOMATION_TEST_DB=postgres runs it on PostgreSQL.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { runsOf } from "../../../src/automation/runs/service";
import { STEP_INPUT_MAX_BYTES, STEP_INPUT_STRING_MAX } from "../../../src/automation/engine/step-input";
import { harness, json, type Harness, type Json } from "../app/harness";

const TOKEN = "tok-3f9c2a71d5e8b604";
const VAR = "STEP_INPUT_TEST_TOKEN";

// `leak` copies the token into its output (outputs are kept as produced, see docs/automation/runs.md),
// so `call` receives it once through the env and once through another step: both must be redacted.
const workflow = `
name: step-input
inputs:
  - {name: doc, type: string, required: true}
  - {name: parts, type: array}
steps:
  - {name: leak, type: transform.set, with: {fields: {copy: "{{ env.${VAR} }}"}}}
  - name: bulky
    type: transform.set
    with: {fields: {parts: "{{ input.parts }}"}}
  - name: gate
    type: control.if
    condition: "{{ input.doc != '' }}"
    then:
      - {name: inner, type: transform.set, with: {fields: {x: "{{ input.parts | size }}"}}}
  - name: call
    type: action.http
    with:
      url: "https://billing.example.com/v1/charge"
      method: POST
      headers:
        Authorization: "Bearer {{ env.${VAR} }}"
        X-Encoded: "{{ env.${VAR} | base64_encode }}"
        X-Copied: "was {{ steps.leak.output.copy }}"
      body:
        doc: "{{ input.doc }}"
        note: plain
`;

let h: Harness;
let key = "";
let run: Json;
let steps: Json[];

beforeAll(async () => {
  process.env[VAR] = TOKEN;
  // billing.example.com is not on --http-allow-hosts: the call fails before any network, after rendering.
  h = await harness({ envAllowList: [VAR] });
  key = (await h.tenant("step-input")).key;
  expect((await h.req("POST", "/v1/automations", { key, body: { yaml: workflow } })).status).toBe(201);
  runsOf(h.ctx).startWorkers();
  const parts = Array.from({ length: 24 }, (_, i) => `${i}`.padEnd(3000, "x"));
  const r = await h.req("POST", "/v1/runs?wait_for_completion=30", { key, body: { target: "workflows.step-input", input: { doc: "d".repeat(10_000), parts } } });
  run = await json(r);
  expect(run.execution.status).toBe("failed");
  steps = (await json(await h.req("GET", `/v1/runs/${run.id}/steps`, { key }))).steps;
}, 60_000);

afterAll(() => {
  delete process.env[VAR];
});

describe("step input", () => {
  test("the failed step's record has its error and the values it ran with", () => {
    const call = steps.find((s) => s.name === "call")!;
    expect(call.status).toBe("failed");
    expect(call.error.message).toContain("billing.example.com");
    expect(call.input.url).toBe("https://billing.example.com/v1/charge");
    expect(call.input.method).toBe("POST");
    expect(call.input.body.note).toBe("plain");
    expect(call.output).toBeUndefined();
  });

  test("values from the environment are [secret], whether read directly, through a filter or through another step", async () => {
    const call = steps.find((s) => s.name === "call")!;
    expect(call.input.headers).toEqual({ Authorization: "[secret]", "X-Encoded": "[secret]", "X-Copied": "was [secret]" });
    expect(steps.find((s) => s.name === "leak")!.input).toEqual({ fields: { copy: "[secret]" } });
    // Nowhere in any step's input, nor in the run's expand=execution view of them.
    for (const s of steps) expect(JSON.stringify(s.input ?? null)).not.toContain(TOKEN);
    expect(JSON.stringify(steps.map((s) => s.input))).not.toContain(btoa(TOKEN));
    const detail = await json(await h.req("GET", `/v1/runs/${run.id}?expand=execution`, { key }));
    const inDetail = detail.execution.steps.find((s: Json) => s.name === "call");
    expect(inDetail.input.headers.Authorization).toBe("[secret]");
  });

  test("a control step records its own fields, not the steps nested in it; the nested step records its own", () => {
    expect(steps.find((s) => s.name === "gate")!.input).toEqual({ condition: true });
    expect(steps.find((s) => s.path === "gate.inner")!.input).toEqual({ fields: { x: 24 } });
  });

  test("a long string is cut with a marker; an input over the limit is replaced by a marker with its size", () => {
    const doc = steps.find((s) => s.name === "call")!.input.body.doc as string;
    expect(doc.startsWith("d".repeat(STEP_INPUT_STRING_MAX))).toBe(true);
    expect(doc).toEndWith(`…[truncated: ${10_000 - STEP_INPUT_STRING_MAX} more characters]`);
    const bulky = steps.find((s) => s.name === "bulky")!;
    expect(bulky.status).toBe("completed");
    expect(bulky.output.parts).toHaveLength(24); // the output is the step's own, untouched
    expect(bulky.input["[truncated]"]).toMatch(new RegExp(`over the ${STEP_INPUT_MAX_BYTES}-byte limit`));
    expect(typeof bulky.input.preview).toBe("string");
    for (const s of steps) expect(JSON.stringify(s.input).length).toBeLessThan(STEP_INPUT_MAX_BYTES + 2 * STEP_INPUT_STRING_MAX);
  });
});
