import { describe, expect, test } from "bun:test";
import { parseWorkflow, type Step, type Workflow, type WorkflowIssue } from "../../../src/automation/workflow";

function ok(yaml: string): Workflow {
  const r = parseWorkflow(yaml);
  if (!r.ok) throw new Error(`expected a valid workflow, got ${JSON.stringify(r.issues)}`);
  return r.workflow;
}

function issues(yaml: string): WorkflowIssue[] {
  const r = parseWorkflow(yaml);
  if (r.ok) throw new Error("expected issues, the workflow parsed");
  return r.issues;
}

function issueAt(list: WorkflowIssue[], field: string): WorkflowIssue {
  const found = list.find((i) => i.field === field);
  if (!found) throw new Error(`no issue at ${field}; got ${JSON.stringify(list)}`);
  return found;
}

const SPEC_EXAMPLE = `name: invoice-summary            # slug, ^[a-z0-9][a-z0-9_-]*$
version: 1.0.0
description: Totals an invoice
triggerMethods: [{type: api}, {type: manual}]
inputs:
  - {name: invoice, type: object, required: true}
  - {name: attachment, type: file, required: false}
steps:
  - name: total
    type: transform.script
    with:
      inputs: {lines: "{{ input.invoice.lines }}"}
      function: |
        function script(lines) { return { total: lines.reduce((s, l) => s + l.amount, 0) } }
  - name: big
    type: control.if
    condition: "{{ steps.total.output.total > 1000 }}"
    then: [{name: flag, type: transform.set, with: {fields: {flag: "review"}}}]
output:
  total: "{{ steps.total.output.total }}"
settings: {timeout: 60000, retries: 0}
`;

describe("parseWorkflow: valid workflows", () => {
  test("the spec's example parses into typed steps, nested steps and settings", () => {
    const wf = ok(SPEC_EXAMPLE);
    expect(wf.name).toBe("invoice-summary");
    expect(wf.version).toBe("1.0.0");
    expect(wf.triggerMethods).toEqual([{ type: "api" }, { type: "manual" }]);
    expect(wf.inputs).toEqual([
      { name: "invoice", type: "object", required: true },
      { name: "attachment", type: "file", required: false },
    ]);
    expect(wf.steps.map((s) => [s.name, s.type, s.line])).toEqual([
      ["total", "transform.script", 9],
      ["big", "control.if", 15],
    ]);
    expect(wf.steps[0].config.inputs).toEqual({ lines: "{{ input.invoice.lines }}" });
    const then = wf.steps[1].children.then as Step[];
    expect(then.map((s) => s.name)).toEqual(["flag"]);
    expect(then[0].config).toEqual({ fields: { flag: "review" } });
    expect(wf.output).toEqual({ total: "{{ steps.total.output.total }}" });
    expect(wf.settings).toEqual({ timeout: 60000, retries: 0 });
  });

  test("defaults: trigger api, no inputs, inputs not required unless said", () => {
    const wf = ok("name: a\nsteps:\n  - {name: s, type: transform.set, with: {fields: {a: 1}}}\ninputs: [{name: x, type: string}]\n");
    expect(wf.triggerMethods).toEqual([{ type: "api" }]);
    expect(wf.inputs).toEqual([{ name: "x", type: "string", required: false }]);
    expect(wf.settings).toEqual({});
  });

  test("common step fields are typed: if, timeout, retry, description", () => {
    const wf = ok(`name: a
steps:
  - name: s
    type: transform.set
    description: sets
    if: "{{ input.go }}"
    timeout: 500
    retry: {mode: automatic, maxAttempts: 3}
    with: {fields: {a: 1}}
  - {name: t, type: transform.set, retry: never, if: false, with: {fields: {}}}
`);
    expect(wf.steps[0]).toMatchObject({ description: "sets", if: "{{ input.go }}", timeout: 500, retry: { mode: "automatic", maxAttempts: 3 } });
    expect(wf.steps[1]).toMatchObject({ retry: "never", if: false });
  });

  test("templates may stand where the schema wants a number or list; they are checked after rendering", () => {
    const wf = ok(`name: a
steps:
  - {name: w, type: control.wait, duration: "{{ input.ms }}"}
  - {name: h, type: action.http, with: {url: "{{ env.BASE }}/x", timeout: "{{ input.t }}"}}
`);
    expect(wf.steps[0].config.duration).toBe("{{ input.ms }}");
  });

  test("every control kind's nested lists are parsed (switch cases, default, parallel branches, loops)", () => {
    const wf = ok(`name: nest
steps:
  - name: sw
    type: control.switch
    on: "{{ input.kind }}"
    cases:
      - when: a
        steps: [{name: a1, type: transform.set, with: {fields: {x: 1}}}]
      - when: b
        steps: [{name: b1, type: transform.set, with: {fields: {x: 2}}}]
    default: [{name: d1, type: transform.set, with: {fields: {x: 3}}}]
  - name: par
    type: control.parallel
    branches:
      - name: left
        steps:
          - name: loop
            type: control.parallel_map
            items: "{{ input.list }}"
            as: row
            indexAs: i
            concurrency: 2
            steps: [{name: inner, type: transform.set, with: {fields: {v: "{{ row }}"}}}]
      - name: right
        steps: [{name: r1, type: control.wait, duration: 1}]
`);
    expect(Object.keys(wf.steps[0].children).sort()).toEqual(["cases.0.steps", "cases.1.steps", "default"]);
    expect(wf.steps[0].children["cases.1.steps"][0].name).toBe("b1");
    const par = wf.steps[1];
    expect(Object.keys(par.children).sort()).toEqual(["branches.0.steps", "branches.1.steps"]);
    const loop = par.children["branches.0.steps"][0];
    expect(loop.children.steps[0].name).toBe("inner");
    expect(loop.config).toMatchObject({ as: "row", indexAs: "i", concurrency: 2 });
  });

  test("transform.script code is not treated as Liquid", () => {
    ok(`name: s
steps:
  - name: js
    type: transform.script
    with:
      function: "function script() { return {{a: 1}}.a }"
`);
  });
});

describe("parseWorkflow: issues name the field and the line", () => {
  test("invalid YAML reports its line", () => {
    const list = issues("name: x\nsteps:\n  - name: a\n    type: [transform.set\n");
    expect(list[0].code).toBe("invalid_yaml");
    expect(list[0].line).toBe(5);
    expect(list[0].message).toContain("line 5");
  });

  test("duplicate keys are invalid YAML", () => {
    const list = issues("name: x\nname: y\nsteps: []\n");
    expect(list[0]).toMatchObject({ code: "invalid_yaml", line: 2 });
  });

  test("name must be a slug, version semver, steps non-empty", () => {
    const list = issues("name: Bad Name\nversion: 1.0\nsteps: []\n");
    expect(issueAt(list, "name")).toMatchObject({ line: 1, code: "invalid_value" });
    expect(issueAt(list, "version").message).toContain("semver");
    expect(issueAt(list, "steps").message).toContain("at least one step");
    expect(issues("name: ok\nversion: '1.0'\nsteps: [{name: a, type: transform.set, with: {fields: {}}}]\n")[0].field).toBe("version");
    ok("name: ok-1_x\nversion: 2.10.3-beta.1\nsteps: [{name: a, type: transform.set, with: {fields: {}}}]\n");
  });

  test("a missing name is reported as required", () => {
    expect(issueAt(issues("steps: [{name: a, type: transform.set, with: {fields: {}}}]\n"), "name")).toMatchObject({ code: "required", message: "is required (line 1)" });
  });

  test("an input default must fit the input type", () => {
    const list = issues("name: x\ninputs:\n  - {name: n, type: integer, default: 1.5}\n  - {name: s, type: string, default: ok}\nsteps: [{name: a, type: transform.set, with: {fields: {}}}]\n");
    expect(issueAt(list, "inputs.0.default")).toMatchObject({ line: 3, message: "default must be an integer (line 3)" });
    expect(list).toHaveLength(1);
  });

  test("a mapping is required at the top", () => {
    expect(issues("- a\n- b\n")[0]).toMatchObject({ field: "<root>", code: "invalid_value" });
  });

  test("an unknown step kind names the line and lists the known kinds", () => {
    const yaml = "name: x\nsteps:\n  - name: a\n    type: transform.set\n    with: {fields: {}}\n  - name: b\n    type: transform.nope\n";
    const issue = issueAt(issues(yaml), "steps.1.type");
    expect(issue).toMatchObject({ code: "unknown_step_type", line: 7 });
    expect(issue.message).toContain("line 7");
    expect(issue.message).toContain("transform.set");
  });

  test("step names are unique across the whole workflow, nested ones included", () => {
    const yaml = `name: x
steps:
  - name: a
    type: control.if
    condition: true
    then:
      - name: b
        type: transform.set
        with: {fields: {}}
  - name: b
    type: transform.set
    with: {fields: {}}
`;
    const issue = issueAt(issues(yaml), "steps.1.name");
    expect(issue).toMatchObject({ code: "duplicate_name", line: 10 });
    expect(issue.message).toContain("steps.0.then.0");
  });

  test("a kind's config is validated by its schema, deep in nesting, with line numbers", () => {
    const yaml = `name: x
steps:
  - name: loop
    type: control.foreach
    items: "{{ input.list }}"
    steps:
      - name: inner
        type: control.if
        condition: true
        then:
          - name: req
            type: action.http
            with:
              url: not-a-url
              method: FETCH
`;
    const list = issues(yaml);
    expect(issueAt(list, "steps.0.steps.0.then.0.with.url")).toMatchObject({ line: 14, code: "invalid_value" });
    expect(issueAt(list, "steps.0.steps.0.then.0.with.method").line).toBe(15);
  });

  test("unknown fields in with, at step level and at top level are rejected", () => {
    const yaml = `name: x
colour: red
steps:
  - name: a
    type: transform.set
    with: {fields: {}, extra: 1}
    url: x
  - name: w
    type: control.wait
    duration: 5
    bogus: true
`;
    const list = issues(yaml);
    expect(issueAt(list, "colour")).toMatchObject({ code: "unknown_field", line: 2 });
    expect(issueAt(list, "steps.0.with.extra")).toMatchObject({ code: "unknown_field", line: 6 });
    expect(issueAt(list, "steps.0.url")).toMatchObject({ code: "unknown_field", line: 7 });
    expect(issueAt(list, "steps.1.bogus")).toMatchObject({ code: "unknown_field", line: 11 });
  });

  test("common fields: timeout, retry and if are validated", () => {
    const yaml = `name: x
steps:
  - name: a
    type: transform.set
    timeout: -5
    retry: {mode: sometimes}
    if: [1]
    with: {fields: {}}
`;
    const list = issues(yaml);
    expect(issueAt(list, "steps.0.timeout").line).toBe(5);
    expect(issueAt(list, "steps.0.retry").message).toContain("never");
    expect(issueAt(list, "steps.0.if").line).toBe(7);
  });

  test("invalid Liquid is reported where it is: with, if, condition and output", () => {
    const yaml = `name: x
steps:
  - name: a
    type: transform.set
    if: "{{ input.x | nosuchfilter }}"
    with:
      fields:
        y: "{{ input.y "
  - name: b
    type: control.if
    condition: "{% if %}"
    then: [{name: c, type: transform.set, with: {fields: {}}}]
output:
  z: "{{ }}"
`;
    const list = issues(yaml);
    expect(issueAt(list, "steps.0.if")).toMatchObject({ code: "invalid_template", line: 5 });
    expect(issueAt(list, "steps.0.if").message).toContain("nosuchfilter");
    expect(issueAt(list, "steps.0.with.fields.y")).toMatchObject({ code: "invalid_template", line: 8 });
    expect(issueAt(list, "steps.1.condition")).toMatchObject({ code: "invalid_template", line: 11 });
    expect(issueAt(list, "output.z")).toMatchObject({ code: "invalid_template", line: 14 });
  });

  test("inputs: name, type (the seven types) and duplicates", () => {
    const yaml = `name: x
inputs:
  - {name: a, type: string}
  - {name: b, type: date}
  - {name: a, type: number}
  - {type: file}
steps: [{name: s, type: transform.set, with: {fields: {}}}]
`;
    const list = issues(yaml);
    expect(issueAt(list, "inputs.1.type")).toMatchObject({ line: 4 });
    expect(issueAt(list, "inputs.1.type").message).toContain("integer");
    expect(issueAt(list, "inputs.2.name")).toMatchObject({ code: "duplicate_name", line: 5 });
    expect(issueAt(list, "inputs.3.name").line).toBe(6);
    ok(`name: x
inputs:
${["string", "number", "integer", "boolean", "object", "array", "file"].map((t, i) => `  - {name: i${i}, type: ${t}}`).join("\n")}
steps: [{name: s, type: transform.set, with: {fields: {}}}]
`);
  });

  test("triggerMethods and settings are validated", () => {
    const list = issues("name: x\ntriggerMethods: [{type: carrier-pigeon}]\nsettings: {timeout: 0, verbose: true}\nsteps: [{name: s, type: transform.set, with: {fields: {}}}]\n");
    expect(issueAt(list, "triggerMethods.0.type").line).toBe(2);
    expect(issueAt(list, "settings.timeout").line).toBe(3);
    expect(issueAt(list, "settings.verbose").code).toBe("unknown_field");
  });

  test("control kinds: required fields, step lists, loop variable names", () => {
    const yaml = `name: x
steps:
  - {name: a, type: control.if, then: [{name: a1, type: transform.set, with: {fields: {}}}]}
  - {name: b, type: control.foreach, items: [1], as: input, steps: [{name: b1, type: transform.set, with: {fields: {}}}]}
  - {name: c, type: control.parallel, branches: [{name: l, steps: [{name: c1, type: nope}]}]}
  - {name: d, type: control.fail, statusCode: 302}
  - {name: e, type: control.switch, cases: []}
`;
    const list = issues(yaml);
    expect(issueAt(list, "steps.0.condition").line).toBe(3);
    expect(issueAt(list, "steps.1.as").message).toContain("shadow");
    expect(issueAt(list, "steps.2.branches.0.steps.0.type").code).toBe("unknown_step_type");
    expect(issueAt(list, "steps.3.statusCode").line).toBe(6);
    expect(issueAt(list, "steps.4.cases").line).toBe(7);
  });

  test("every issue of a bad file is reported at once", () => {
    const list = issues("name: BAD\nsteps:\n  - {name: a, type: nope}\n  - {name: a, type: transform.set, with: {fields: {}}}\n");
    expect(list.map((i) => i.field).sort()).toEqual(["name", "steps.0.type", "steps.1.name"]);
  });
});
