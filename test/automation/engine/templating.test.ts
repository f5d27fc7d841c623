import { describe, expect, test } from "bun:test";
import { run, testServices } from "./support";

describe("templates", () => {
  test("an evaluation run reads eval (example, experiment, trial), also inside a loop; other runs have none", async () => {
    const yaml = `name: t
steps:
  - name: s
    type: transform.set
    with: {fields: {trial: "{{ eval.trial }}", example: "{{ eval.exampleId }}", experiment: "{{ eval.experimentId }}", text: "t{{ eval.trial }}"}}
  - name: each
    type: control.foreach
    items: [1, 2]
    steps:
      - {name: inner, type: transform.set, with: {fields: {trial: "{{ eval.trial }}", item: "{{ item }}"}}}
`;
    const r = await run(yaml, {}, { evaluation: true, eval: { exampleId: "ex_1", experimentId: "exp_1", trial: 3 } });
    expect(r.status).toBe("completed");
    expect((r.output as Record<string, unknown>).s).toEqual({ trial: 3, example: "ex_1", experiment: "exp_1", text: "t3" });
    expect(r.journal.record("each[1].inner").output).toEqual({ trial: 3, item: 2 });
    const plain = await run(yaml);
    expect((plain.output as Record<string, unknown>).s).toEqual({ trial: null, example: null, experiment: null, text: "t" });
  });

  test("a value that is exactly one {{ expr }} keeps its JSON type; mixed text renders to a string", async () => {
    const r = await run(
      `name: t
steps:
  - name: s
    type: transform.set
    with:
      fields:
        num: "{{ input.n }}"
        obj: "{{ input.o }}"
        arr: "{{ input.a }}"
        bool: "{{ input.n > 2 }}"
        nothing: "{{ input.missing }}"
        text: "n={{ input.n }} o={{ input.o }}"
        filtered: "{{ input.a | size }}"
        upper: "{{ input.s | upcase }}"
        spaced: "  {{ input.n }}  "
`,
      { n: 3, o: { k: [1, 2] }, a: [1, 2, 3], s: "abc" },
    );
    expect(r.status).toBe("completed");
    expect(r.output).toEqual({
      s: {
        num: 3,
        obj: { k: [1, 2] },
        arr: [1, 2, 3],
        bool: true,
        nothing: null,
        text: 'n=3 o={"k":[1,2]}',
        filtered: 3,
        upper: "ABC",
        spaced: 3,
      },
    });
  });

  test("declared input defaults fill absent inputs", async () => {
    const r = await run(`name: t
inputs: [{name: greeting, type: string, default: hello}, {name: who, type: string}]
steps: [{name: s, type: transform.set, with: {fields: {text: "{{ input.greeting }} {{ input.who }}"}}}]
output: "{{ steps.s.output.text }}"
`, { who: "ann" });
    expect(r.output).toBe("hello ann");
  });

  test("steps.<name>.output and .status are visible to later steps", async () => {
    const r = await run(`name: t
steps:
  - {name: a, type: transform.set, with: {fields: {x: 41}}}
  - {name: b, type: transform.set, if: false, with: {fields: {}}}
  - {name: c, type: transform.set, with: {fields: {y: "{{ steps.a.output.x | plus: 1 }}", sa: "{{ steps.a.status }}", sb: "{{ steps.b.status }}"}}}
output: "{{ steps.c.output }}"
`);
    expect(r.output).toEqual({ y: 42, sa: "completed", sb: "skipped" });
  });

  test("env exposes only what the operator allow-listed (services.env)", async () => {
    process.env.ENGINE_TEST_SECRET = "do-not-leak";
    const services = testServices({ env: { REGION: "eu-1" } });
    const r = await run(
      `name: t
steps: [{name: s, type: transform.set, with: {fields: {region: "{{ env.REGION }}", secret: "{{ env.ENGINE_TEST_SECRET }}", home: "{{ env.HOME }}"}}}]
output: "{{ steps.s.output }}"
`,
      {},
      { services },
    );
    expect(r.output).toEqual({ region: "eu-1", secret: null, home: null });
  });

  test("the output mapping renders against the final scope; without one, outputs by step name", async () => {
    const mapped = await run(`name: t
steps: [{name: a, type: transform.set, with: {fields: {v: 2}}}]
output:
  doubled: "{{ steps.a.output.v | times: 2 }}"
  label: "v is {{ steps.a.output.v }}"
  fixed: [1, "x"]
`);
    expect(mapped.output).toEqual({ doubled: 4, label: "v is 2", fixed: [1, "x"] });
    const unmapped = await run(`name: t
steps:
  - {name: a, type: transform.set, with: {fields: {v: 1}}}
  - {name: b, type: transform.set, if: false, with: {fields: {v: 2}}}
`);
    expect(unmapped.output).toEqual({ a: { v: 1 }, b: null });
  });

  test("a rendered value that breaks the kind's schema fails the step with the field named", async () => {
    const r = await run(`name: t
steps: [{name: w, type: control.wait, duration: "{{ input.ms }}"}]
`, { ms: "soon" });
    expect(r.status).toBe("failed");
    expect(r.error?.code).toBe("invalid_config");
    expect(r.error?.step).toBe("w");
    expect(r.error?.message).toContain("duration");
  });

  test("templates cannot read files: include/render fail the step cleanly", async () => {
    for (const tag of ["{% include '/etc/passwd' %}", "{% render '/etc/hostname' %}"]) {
      const r = await run(`name: t
steps: [{name: s, type: transform.set, with: {fields: {x: "before ${tag}"}}}]
`);
      expect(r.status).toBe("failed");
      expect(r.error?.code).toBe("template_error");
      expect(r.error?.message).not.toContain("root:");
      expect(r.journal.record("s").status).toBe("failed");
    }
  });

  test("a runaway template loop is stopped by the render limit", async () => {
    const r = await run(`name: t
steps: [{name: s, type: transform.set, with: {fields: {x: "{% for i in (1..100000000) %}{{ i }}{% endfor %}"}}}]
`);
    expect(r.status).toBe("failed");
    expect(r.error?.code).toBe("template_error");
  });
});
