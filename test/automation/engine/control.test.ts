import { describe, expect, test } from "bun:test";
import { run } from "./support";

describe("control.if", () => {
  const yaml = `name: t
steps:
  - name: check
    type: control.if
    condition: "{{ input.n > 10 }}"
    then: [{name: big, type: transform.set, with: {fields: {size: big}}}]
    else: [{name: small, type: transform.set, with: {fields: {size: small}}}]
output: {result: "{{ steps.check.output.size }}", big: "{{ steps.big.status }}", small: "{{ steps.small.status }}"}
`;
  test("runs then or else; the branch's last output is the step output; branch steps are visible after", async () => {
    expect((await run(yaml, { n: 11 })).output).toEqual({ result: "big", big: "completed", small: null });
    const r = await run(yaml, { n: 1 });
    expect(r.output).toEqual({ result: "small", big: null, small: "completed" });
    expect(r.journal.finished.map((f) => f.path)).toEqual(["check.small", "check"]);
  });

  test("no else and a false condition: output null", async () => {
    const r = await run("name: t\nsteps:\n  - {name: c, type: control.if, condition: false, then: [{name: x, type: transform.set, with: {fields: {}}}]}\n");
    expect(r.output).toEqual({ c: null });
  });
});

describe("control.switch", () => {
  const yaml = `name: t
steps:
  - name: route
    type: control.switch
    on: "{{ input.kind }}"
    cases:
      - {when: invoice, steps: [{name: inv, type: transform.set, with: {fields: {went: invoice}}}]}
      - {when: 2, steps: [{name: two, type: transform.set, with: {fields: {went: two}}}]}
    default: [{name: other, type: transform.set, with: {fields: {went: default}}}]
`;
  test("the matching case runs; numbers and strings compare by value; else default", async () => {
    expect((await run(yaml, { kind: "invoice" })).output).toEqual({ route: { went: "invoice" } });
    expect((await run(yaml, { kind: 2 })).output).toEqual({ route: { went: "two" } });
    expect((await run(yaml, { kind: "2" })).output).toEqual({ route: { went: "two" } });
    const d = await run(yaml, { kind: "receipt" });
    expect(d.output).toEqual({ route: { went: "default" } });
    expect(d.journal.started.map((s) => s.path)).toEqual(["route", "route.other"]);
  });

  test("without on, the first case whose when is truthy runs", async () => {
    const r = await run(
      `name: t
steps:
  - name: s
    type: control.switch
    cases:
      - {when: "{{ input.n > 100 }}", steps: [{name: a, type: transform.set, with: {fields: {v: huge}}}]}
      - {when: "{{ input.n > 10 }}", steps: [{name: b, type: transform.set, with: {fields: {v: big}}}]}
      - {when: true, steps: [{name: c, type: transform.set, with: {fields: {v: any}}}]}
`,
      { n: 50 },
    );
    expect(r.output).toEqual({ s: { v: "big" } });
  });
});

describe("loops", () => {
  test("control.foreach binds item/index, collects per-iteration outputs in order, paths loop[i].step", async () => {
    const r = await run(
      `name: t
steps:
  - name: loop
    type: control.foreach
    items: "{{ input.list }}"
    steps:
      - {name: double, type: transform.set, with: {fields: {v: "{{ item | times: 2 }}", i: "{{ index }}"}}}
      - {name: label, type: transform.set, with: {fields: {text: "#{{ index }}={{ steps.double.output.v }}"}}}
`,
      { list: [1, 2, 3] },
    );
    expect(r.output).toEqual({ loop: [{ text: "#0=2" }, { text: "#1=4" }, { text: "#2=6" }] });
    expect(r.journal.started.map((s) => s.path)).toEqual(["loop", "loop[0].double", "loop[0].label", "loop[1].double", "loop[1].label", "loop[2].double", "loop[2].label"]);
    expect(r.journal.record("loop[1].double").output).toEqual({ v: 4, i: 1 });
  });

  test("custom as/indexAs names; an empty list gives []", async () => {
    const yaml = `name: t
steps:
  - name: loop
    type: control.foreach
    items: "{{ input.list }}"
    as: row
    indexAs: n
    steps: [{name: s, type: transform.set, with: {fields: {name: "{{ row.name }}", n: "{{ n }}"}}}]
`;
    expect((await run(yaml, { list: [{ name: "a" }, { name: "b" }] })).output).toEqual({ loop: [{ name: "a", n: 0 }, { name: "b", n: 1 }] });
    expect((await run(yaml, { list: [] })).output).toEqual({ loop: [] });
  });

  test("items that are not a list fail the step", async () => {
    const r = await run("name: t\nsteps:\n  - {name: l, type: control.foreach, items: '{{ input.x }}', steps: [{name: s, type: transform.set, with: {fields: {}}}]}\n", { x: "abc" });
    expect(r.status).toBe("failed");
    expect(r.error?.message).toContain("items must be an array");
  });

  test("control.parallel_map runs at most `concurrency` iterations at a time and keeps order", async () => {
    let active = 0;
    let peak = 0;
    const server = Bun.serve({
      hostname: "127.0.0.1",
      port: 0,
      async fetch(req) {
        active++;
        peak = Math.max(peak, active);
        await Bun.sleep(25);
        active--;
        return Response.json({ n: Number(new URL(req.url).searchParams.get("n")) });
      },
    });
    try {
      const { testServices } = await import("./support");
      const r = await run(
        `name: t
steps:
  - name: pm
    type: control.parallel_map
    items: "{{ input.list }}"
    concurrency: 3
    steps: [{name: get, type: action.http, with: {url: "http://127.0.0.1:${server.port}/?n={{ item }}"}}]
output: "{{ steps.pm.output }}"
`,
        { list: [1, 2, 3, 4, 5, 6, 7, 8, 9] },
        { services: testServices({ httpAllowHosts: ["127.0.0.1"] }) },
      );
      expect(r.status).toBe("completed");
      expect((r.output as { body: { n: number } }[]).map((o) => o.body.n)).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9]);
      expect(peak).toBe(3);
    } finally {
      server.stop(true);
    }
  });

  test("a failing iteration fails the loop and the run, naming the inner step path; others stop", async () => {
    const r = await run(
      `name: t
steps:
  - name: pm
    type: control.parallel_map
    items: [1, 2, 3, 4, 5, 6]
    concurrency: 2
    steps:
      - {name: check, type: control.fail, condition: "{{ item == 2 }}", message: "item {{ item }} is bad", statusCode: 409}
      - {name: pause, type: control.wait, duration: 30}
`,
    );
    expect(r.status).toBe("failed");
    expect(r.error).toMatchObject({ step: "pm[1].check", message: "item 2 is bad", statusCode: 409, code: "workflow_failed" });
    expect(r.journal.record("pm")).toMatchObject({ status: "failed", error: { message: "step pm[1].check failed: item 2 is bad" } });
    expect(r.journal.started.some((s) => s.path.startsWith("pm[5]"))).toBe(false);
  });
});

describe("control.parallel", () => {
  test("branches run concurrently; output keyed by branch; steps visible after", async () => {
    const r = await run(`name: t
steps:
  - name: par
    type: control.parallel
    branches:
      - name: left
        steps:
          - {name: lwait, type: control.wait, duration: 150}
          - {name: l, type: transform.set, with: {fields: {side: left}}}
      - name: right
        steps:
          - {name: rwait, type: control.wait, duration: 150}
          - {name: r, type: transform.set, with: {fields: {side: right}}}
output: {par: "{{ steps.par.output }}", l: "{{ steps.l.output.side }}"}
`);
    expect(r.output).toEqual({ par: { left: { side: "left" }, right: { side: "right" } }, l: "left" });
    // Both waits were running at once: each started before the other finished.
    const log = r.journal.log;
    expect(log.indexOf("start par.right.rwait")).toBeLessThan(log.indexOf("finish par.left.lwait"));
    expect(log.indexOf("start par.left.lwait")).toBeLessThan(log.indexOf("finish par.right.rwait"));
    expect(r.journal.finished.map((f) => f.path)).toContain("par.left.lwait");
    expect(r.journal.finished.map((f) => f.path)).toContain("par.right.r");
  });

  test("a failing branch fails the run; the other branch stops at its next step boundary", async () => {
    const r = await run(`name: t
steps:
  - name: par
    type: control.parallel
    branches:
      - name: bad
        steps: [{name: boom, type: control.fail, message: broken, statusCode: 500}]
      - name: slow
        steps:
          - {name: w1, type: control.wait, duration: 40}
          - {name: w2, type: control.wait, duration: 40}
`);
    expect(r.status).toBe("failed");
    expect(r.error).toMatchObject({ step: "par.bad.boom", statusCode: 500 });
    expect(r.journal.started.map((s) => s.path)).not.toContain("par.slow.w2");
  });
});

describe("control.wait and control.fail", () => {
  test("wait pauses for duration ms", async () => {
    const t = Date.now();
    const r = await run("name: t\nsteps: [{name: w, type: control.wait, duration: 60}]\n");
    expect(Date.now() - t).toBeGreaterThanOrEqual(55);
    expect(r.output).toEqual({ w: { waitedMs: 60 } });
  });

  test("fail with a true condition fails the run with its status code and message; default 422", async () => {
    const r = await run("name: t\nsteps:\n  - {name: f, type: control.fail, condition: '{{ input.bad }}', message: 'bad input {{ input.bad }}'}\n  - {name: after, type: transform.set, with: {fields: {}}}\n", { bad: "x" });
    expect(r.status).toBe("failed");
    expect(r.error).toEqual({ message: "bad input x", code: "workflow_failed", step: "f", statusCode: 422 });
    expect(r.journal.started.map((s) => s.path)).toEqual(["f"]);
  });

  test("fail with a false condition continues; without a condition it always fails", async () => {
    expect((await run("name: t\nsteps: [{name: f, type: control.fail, condition: '{{ input.bad }}', statusCode: 400}]\n", { bad: false })).output).toEqual({ f: { failed: false } });
    expect((await run("name: t\nsteps: [{name: f, type: control.fail, statusCode: 503}]\n")).error).toMatchObject({ statusCode: 503, message: "workflow failed" });
  });
});

describe("nesting", () => {
  test("foreach inside parallel inside if, with paths through every level", async () => {
    const r = await run(
      `name: t
steps:
  - name: gate
    type: control.if
    condition: "{{ input.go }}"
    then:
      - name: par
        type: control.parallel
        branches:
          - name: evens
            steps:
              - name: loop
                type: control.foreach
                items: "{{ input.evens }}"
                steps: [{name: sq, type: transform.set, with: {fields: {v: "{{ item | times: item }}"}}}]
          - name: odds
            steps:
              - name: loop2
                type: control.foreach
                items: "{{ input.odds }}"
                as: o
                steps:
                  - name: inner_if
                    type: control.if
                    condition: "{{ o > 2 }}"
                    then: [{name: big, type: transform.set, with: {fields: {v: "{{ o }}"}}}]
output: "{{ steps.gate.output }}"
`,
      { go: true, evens: [2, 4], odds: [1, 3] },
    );
    expect(r.status).toBe("completed");
    expect(r.output).toEqual({ evens: [{ v: 4 }, { v: 16 }], odds: [null, { v: 3 }] });
    const paths = r.journal.finished.map((f) => f.path);
    for (const p of ["gate.par.evens.loop[0].sq", "gate.par.evens.loop[1].sq", "gate.par.odds.loop2[1].inner_if.big", "gate.par.odds.loop2[0].inner_if", "gate.par", "gate"]) expect(paths).toContain(p);
    expect(r.journal.record("gate.par.odds.loop2[0].inner_if").output).toBeNull();
  });

  test("a failure deep inside the nesting fails every enclosing step and names the innermost path", async () => {
    const r = await run(`name: t
steps:
  - name: gate
    type: control.if
    condition: true
    then:
      - name: par
        type: control.parallel
        branches:
          - name: only
            steps:
              - name: loop
                type: control.foreach
                items: [1, 2]
                steps: [{name: boom, type: control.fail, condition: "{{ item == 2 }}", message: nope}]
`);
    expect(r.error).toMatchObject({ step: "gate.par.only.loop[1].boom", message: "nope" });
    for (const p of ["gate.par.only.loop[1].boom", "gate.par.only.loop", "gate.par", "gate"]) expect(r.journal.record(p).status).toBe("failed");
    expect(r.journal.record("gate.par.only.loop[0].boom").status).toBe("completed");
  });
});
