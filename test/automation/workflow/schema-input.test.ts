import { describe, expect, test } from "bun:test";
import { applyInputDefaults, inputJsonSchema, outputJsonSchema, parseWorkflow, validateRunInput, type Workflow } from "../../../src/automation/workflow";

function wf(yaml: string): Workflow {
  const r = parseWorkflow(yaml);
  if (!r.ok) throw new Error(JSON.stringify(r.issues));
  return r.workflow;
}

const ALL_TYPES = wf(`name: types
inputs:
  - {name: s, type: string, required: true, description: a text}
  - {name: n, type: number}
  - {name: i, type: integer}
  - {name: b, type: boolean}
  - {name: o, type: object}
  - {name: a, type: array}
  - {name: f, type: file}
  - {name: d, type: string, required: true, default: hello}
steps: [{name: x, type: transform.set, with: {fields: {}}}]
output:
  total: "{{ steps.x.output }}"
  label: fixed
  count: 3
  nested: {ok: true}
`);

describe("inputJsonSchema / outputJsonSchema", () => {
  test("inputs become properties with JSON types, required and defaults", () => {
    const s = inputJsonSchema(ALL_TYPES);
    expect(s.type).toBe("object");
    expect(s.required).toEqual(["s", "d"]);
    expect(s.additionalProperties).toBe(false);
    const p = s.properties as Record<string, Record<string, unknown>>;
    expect(p.s).toEqual({ type: "string", description: "a text" });
    expect(p.n.type).toBe("number");
    expect(p.i.type).toBe("integer");
    expect(p.b.type).toBe("boolean");
    expect(p.o.type).toBe("object");
    expect(p.a.type).toBe("array");
    expect(p.f).toMatchObject({ type: "object", format: "file" });
    expect(p.d.default).toBe("hello");
  });

  test("the output mapping gives property types for literals and open schemas for templates", () => {
    const s = outputJsonSchema(ALL_TYPES);
    expect(s.type).toBe("object");
    expect(s.properties).toEqual({
      total: {},
      label: { type: "string" },
      count: { type: "integer" },
      nested: { type: "object", properties: { ok: { type: "boolean" } }, required: ["ok"] },
    });
  });

  test("without a mapping the output is keyed by top-level step names", () => {
    const s = outputJsonSchema(wf("name: a\nsteps: [{name: one, type: transform.set, with: {fields: {}}}, {name: two, type: control.wait, duration: 1}]\n"));
    expect(Object.keys(s.properties as object)).toEqual(["one", "two"]);
  });
});

describe("validateRunInput", () => {
  const good = { s: "x", n: 1.5, i: 2, b: false, o: { k: 1 }, a: [1], f: { $fileId: "file_1" } };

  test("a valid input has no issues; defaults cover required inputs", () => {
    expect(validateRunInput(ALL_TYPES, good)).toEqual([]);
    expect(applyInputDefaults(ALL_TYPES, good).d).toBe("hello");
  });

  test("missing required inputs are named", () => {
    expect(validateRunInput(ALL_TYPES, { n: 1 })).toEqual([{ field: "input.s", message: "input.s is required", code: "required" }]);
    expect(validateRunInput(ALL_TYPES, { s: null }).map((i) => i.field)).toEqual(["input.s"]);
  });

  test("each type is enforced", () => {
    const bad = { s: 1, n: "1", i: 1.5, b: "true", o: [1], a: { x: 1 }, f: "file_1" };
    const issues = validateRunInput(ALL_TYPES, bad);
    expect(issues.map((i) => i.field)).toEqual(["input.s", "input.n", "input.i", "input.b", "input.o", "input.a", "input.f"]);
    expect(issues.every((i) => i.code === "invalid_type")).toBe(true);
    expect(issues[2].message).toBe("input.i must be an integer");
    expect(issues[6].message).toContain("$fileId");
  });

  test("file inputs accept $fileId, $inline and resolved $file references", () => {
    for (const f of [{ $fileId: "file_1" }, { $inline: { filename: "a.txt", mimeType: "text/plain", base64: "YQ==" } }, { $file: "file_1", filename: "a", contentType: "x", size: 1 }]) {
      expect(validateRunInput(ALL_TYPES, { s: "x", f })).toEqual([]);
    }
  });

  test("unknown keys are rejected unless allowed; input must be an object", () => {
    expect(validateRunInput(ALL_TYPES, { s: "x", extra: 1 })).toEqual([
      { field: "input.extra", message: "input.extra is not an input of workflow types", code: "unknown_field" },
    ]);
    expect(validateRunInput(ALL_TYPES, { s: "x", extra: 1 }, { allowUnknown: true })).toEqual([]);
    expect(validateRunInput(ALL_TYPES, [1])[0].field).toBe("input");
  });
});
