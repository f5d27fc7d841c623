import { describe, expect, test } from "bun:test";
import type { StepRecord } from "../../../src/automation/engine/contract";
import { execute } from "../../../src/automation/engine/execute";
import { gatedServer, loopbackPerTest, MemoryJournal, run, testServices, workflow } from "./support";

const server = loopbackPerTest();

describe("step if", () => {
  test("a falsy if skips the step (journaled as skipped); truthy runs it", async () => {
    const r = await run(
      `name: t
steps:
  - {name: yes, type: transform.set, if: "{{ input.go }}", with: {fields: {ran: true}}}
  - {name: no, type: transform.set, if: "{{ input.stop }}", with: {fields: {ran: true}}}
  - {name: lit, type: transform.set, if: false, with: {fields: {ran: true}}}
  - {name: str, type: transform.set, if: "false", with: {fields: {ran: true}}}
`,
      { go: 1, stop: 0 },
    );
    expect(r.status).toBe("completed");
    expect(r.output).toEqual({ yes: { ran: true }, no: null, lit: null, str: null });
    expect(r.journal.finished.map((f) => [f.path, f.status])).toEqual([
      ["yes", "completed"],
      ["no", "skipped"],
      ["lit", "skipped"],
      ["str", "skipped"],
    ]);
    expect(r.journal.started.map((s) => s.path)).toEqual(["yes"]);
  });
});

describe("journal", () => {
  test("every step is started and finished in order with attempt, timestamps and output", async () => {
    const r = await run(`name: t
steps:
  - {name: a, type: transform.set, with: {fields: {x: 1}}}
  - {name: b, type: transform.set, with: {fields: {y: "{{ steps.a.output.x }}"}}}
`);
    expect(r.journal.started).toEqual([
      { path: "a", attempt: 1 },
      { path: "b", attempt: 1 },
    ]);
    const b = r.journal.record("b");
    expect(b).toMatchObject({ name: "b", type: "transform.set", status: "completed", attempt: 1, output: { y: 1 } });
    expect(Date.parse(b.completedAt)).toBeGreaterThanOrEqual(Date.parse(b.startedAt));
  });

  test("the engine waits for stepFinished before the next step starts", async () => {
    const order: string[] = [];
    const journal = new MemoryJournal();
    journal.stepStarted = (s) => void order.push(`start ${s.path}`);
    journal.stepFinished = async (s) => {
      await Bun.sleep(20);
      order.push(`durable ${s.path}`);
    };
    await run("name: t\nsteps:\n  - {name: a, type: transform.set, with: {fields: {}}}\n  - {name: b, type: transform.set, with: {fields: {}}}\n", {}, { journal });
    expect(order).toEqual(["start a", "durable a", "start b", "durable b"]);
  });

  test("resume: completed steps are not executed again and their recorded output is reused", async () => {
    const api = server(() => Response.json({ n: 1 }));
    const yaml = `name: t
steps:
  - {name: first, type: action.http, with: {url: "${api.url}/first"}}
  - {name: skipped, type: action.http, if: false, with: {url: "${api.url}/skipped"}}
  - {name: second, type: action.http, with: {url: "${api.url}/second?prev={{ steps.first.output.body.n }}"}}
output: {first: "{{ steps.first.output.body }}", second: "{{ steps.second.output.status }}"}
`;
    const previous: StepRecord[] = [
      { path: "first", name: "first", type: "action.http", status: "completed", attempt: 1, output: { status: 200, ok: true, headers: {}, body: { n: 7 } }, startedAt: "2026-01-01T00:00:00.000Z", completedAt: "2026-01-01T00:00:01.000Z" },
      { path: "skipped", name: "skipped", type: "action.http", status: "skipped", attempt: 0, startedAt: "2026-01-01T00:00:01.000Z", completedAt: "2026-01-01T00:00:01.000Z" },
    ];
    const journal = new MemoryJournal(previous);
    const r = await run(yaml, {}, { journal, services: testServices({ httpAllowHosts: [api.host] }) });
    expect(r.status).toBe("completed");
    expect(api.hits.map((h) => h.path)).toEqual(["/second?prev=7"]);
    expect(r.output).toEqual({ first: { n: 7 }, second: 200 });
    expect(journal.started.map((s) => s.path)).toEqual(["second"]);
    expect(journal.finished.map((s) => s.path)).toEqual(["second"]);
  });

  test("resume inside loops: finished iterations' steps are reused, the rest run", async () => {
    const api = server(() => Response.json({ ok: true }));
    const yaml = `name: t
inputs: [{name: ids, type: array}]
steps:
  - name: loop
    type: control.foreach
    items: "{{ input.ids }}"
    steps:
      - {name: call, type: action.http, with: {url: "${api.url}/item/{{ item }}"}}
`;
    const done = (i: number): StepRecord => ({ path: `loop[${i}].call`, name: "call", type: "action.http", status: "completed", attempt: 1, output: { body: `old-${i}` }, startedAt: "2026-01-01T00:00:00.000Z", completedAt: "2026-01-01T00:00:00.000Z" });
    const r = await run(yaml, { ids: ["a", "b", "c", "d"] }, { journal: new MemoryJournal([done(0), done(1)]), services: testServices({ httpAllowHosts: [api.host] }) });
    expect(r.status).toBe("completed");
    expect(api.hits.map((h) => h.path)).toEqual(["/item/c", "/item/d"]);
    const out = (r.output as { loop: { body: unknown }[] }).loop;
    expect(out.map((o) => o.body)).toEqual(["old-0", "old-1", { ok: true }, { ok: true }]);
  });

  test("a failed record from an earlier attempt is executed again", async () => {
    const api = server();
    const failed: StepRecord = { path: "a", name: "a", type: "action.http", status: "failed", attempt: 1, error: { message: "x" }, startedAt: "2026-01-01T00:00:00.000Z", completedAt: "2026-01-01T00:00:00.000Z" };
    const r = await run(`name: t\nsteps: [{name: a, type: action.http, with: {url: "${api.url}/a"}}]\n`, {}, { journal: new MemoryJournal([failed]), services: testServices({ httpAllowHosts: [api.host] }) });
    expect(r.status).toBe("completed");
    expect(api.count("/a")).toBe(1);
  });
});

describe("cancel", () => {
  test("cancel takes effect at the next step boundary: later steps never start", async () => {
    const api = server();
    const controller = new AbortController();
    const journal = new MemoryJournal();
    const finish = journal.stepFinished.bind(journal);
    journal.stepFinished = async (s) => {
      await finish(s);
      if (s.path === "a") controller.abort();
    };
    const r = await run(
      `name: t
steps:
  - {name: a, type: action.http, with: {url: "${api.url}/a"}}
  - {name: b, type: action.http, with: {url: "${api.url}/b"}}
`,
      {},
      { journal, signal: controller.signal, services: testServices({ httpAllowHosts: [api.host] }) },
    );
    expect(r.status).toBe("cancelled");
    expect(r.error?.code).toBe("cancelled");
    expect(api.hits.map((h) => h.path)).toEqual(["/a"]);
    expect(journal.started.map((s) => s.path)).toEqual(["a"]);
    expect(journal.record("a").status).toBe("completed");
  });

  test("a cancel during a step lets that step finish: its side effect completes and is journaled", async () => {
    const { api, reached, release } = gatedServer(server);
    const controller = new AbortController();
    const pending = run(
      `name: t
steps:
  - {name: a, type: action.http, with: {url: "${api.url}/slow"}}
  - {name: b, type: action.http, with: {url: "${api.url}/b"}}
`,
      {},
      { signal: controller.signal, services: testServices({ httpAllowHosts: [api.host] }) },
    );
    await reached;
    controller.abort(); // mid-request: the request must not be torn down
    await Bun.sleep(50);
    release();
    const r = await pending;
    expect(r.status).toBe("cancelled");
    expect(r.journal.record("a")).toMatchObject({ status: "completed", output: { status: 200, body: { ok: true } } });
    expect(api.hits.map((h) => h.path)).toEqual(["/slow"]);
    expect(r.journal.started.map((s) => s.path)).toEqual(["a"]);
  });

  test("a cancel inside control.parallel: a branch in a wait stops at once, the sibling's call in flight still completes", async () => {
    const { api, reached, release } = gatedServer(server);
    const controller = new AbortController();
    const pending = run(
      `name: t
steps:
  - name: par
    type: control.parallel
    branches:
      - name: quick
        steps:
          - {name: tick, type: control.wait, duration: 10000}
          - {name: tock, type: transform.set, with: {fields: {x: 1}}}
      - name: slow
        steps:
          - {name: call, type: action.http, with: {url: "${api.url}/slow"}}
          - {name: after, type: action.http, with: {url: "${api.url}/after"}}
`,
      {},
      { signal: controller.signal, services: testServices({ httpAllowHosts: [api.host] }) },
    );
    await reached;
    controller.abort(); // ends the quick branch's wait (Cancelled) while the slow branch's call is in flight
    await Bun.sleep(30);
    release();
    const r = await pending;
    expect(r.status).toBe("cancelled");
    expect(r.journal.record("par.slow.call").status).toBe("completed");
    expect(api.hits.map((h) => h.path)).toEqual(["/slow"]);
    expect(r.journal.started.map((s) => s.path)).not.toContain("par.slow.after");
  });

  test("an interrupt (shutdown past its grace) aborts the step in flight without journaling it", async () => {
    const stop = new AbortController();
    const interrupt = new AbortController();
    const api = server(async () => {
      await Bun.sleep(3_000);
      return Response.json({ late: true });
    });
    setTimeout(() => {
      stop.abort();
      interrupt.abort();
    }, 100);
    const journal = new MemoryJournal();
    const r = await execute({
      workflow: workflow(`name: t\nsteps: [{name: a, type: action.http, with: {url: "${api.url}/a"}}]\n`),
      input: {},
      journal,
      services: testServices({ httpAllowHosts: [api.host] }),
      signal: stop.signal,
      interrupt: interrupt.signal,
    });
    // Had the step run on, its 200 answer (after 3 s) would have been journaled as completed.
    expect(r.status).toBe("cancelled");
    expect(journal.finished).toEqual([]);
    expect(journal.started.map((s) => s.path)).toEqual(["a"]);
  });

  test("a cancel interrupts control.wait (a pure wait) and stops loops", async () => {
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 30);
    const started = Date.now();
    const r = await run(
      `name: t
steps:
  - name: loop
    type: control.foreach
    items: [1, 2, 3]
    steps: [{name: pause, type: control.wait, duration: 10000}]
`,
      {},
      { signal: controller.signal },
    );
    expect(r.status).toBe("cancelled");
    expect(Date.now() - started).toBeLessThan(5000);
    expect(r.journal.started.map((s) => s.path)).toEqual(["loop", "loop[0].pause"]);
  });

  test("an already-aborted signal runs nothing", async () => {
    const controller = new AbortController();
    controller.abort();
    const r = await run("name: t\nsteps: [{name: a, type: transform.set, with: {fields: {}}}]\n", {}, { signal: controller.signal });
    expect(r.status).toBe("cancelled");
    expect(r.journal.started).toEqual([]);
  });
});

describe("timeout", () => {
  test("a step over its timeout fails with step_timeout", async () => {
    const r = await run("name: t\nsteps:\n  - {name: slow, type: control.wait, duration: 10000, timeout: 50}\n  - {name: after, type: transform.set, with: {fields: {}}}\n");
    expect(r.status).toBe("failed");
    expect(r.error).toMatchObject({ code: "step_timeout", step: "slow" });
    expect(r.error?.message).toContain("50 ms");
    expect(r.journal.record("slow").status).toBe("failed");
    expect(r.journal.started.map((s) => s.path)).toEqual(["slow"]);
  });

  test("a control step's timeout stops its children", async () => {
    const r = await run(`name: t
steps:
  - name: loop
    type: control.foreach
    timeout: 80
    items: [1, 2, 3, 4, 5]
    steps: [{name: pause, type: control.wait, duration: 50}]
`);
    expect(r.status).toBe("failed");
    expect(r.error).toMatchObject({ code: "step_timeout", step: "loop" });
    expect(r.journal.started.filter((s) => s.path.startsWith("loop[")).length).toBeLessThan(5);
  });

  test("settings.timeout bounds the whole run", async () => {
    const r = await run("name: t\nsettings: {timeout: 60}\nsteps:\n  - {name: a, type: control.wait, duration: 40}\n  - {name: b, type: control.wait, duration: 40}\n  - {name: c, type: control.wait, duration: 40}\n");
    expect(r.status).toBe("failed");
    expect(r.error?.code).toBe("run_timeout");
    expect(r.journal.started.map((s) => s.path)).not.toContain("c");
  });
});

describe("retry", () => {
  test("retry {mode: automatic, maxAttempts} re-runs a failing step until it succeeds", async () => {
    const api = server((_req, hit) => (hit < 3 ? new Response("busy", { status: 503 }) : Response.json({ done: hit })));
    const r = await run(
      `name: t\nsteps: [{name: call, type: action.http, retry: {mode: automatic, maxAttempts: 3}, with: {url: "${api.url}/x"}}]\noutput: "{{ steps.call.output.body }}"\n`,
      {},
      { services: testServices({ httpAllowHosts: [api.host] }) },
    );
    expect(r.status).toBe("completed");
    expect(r.output).toEqual({ done: 3 });
    expect(api.hits.length).toBe(3);
    expect(r.journal.started.map((s) => s.attempt)).toEqual([1, 2, 3]);
    expect(r.journal.record("call")).toMatchObject({ status: "completed", attempt: 3 });
  });

  test("after maxAttempts the step and run fail, recording the last attempt", async () => {
    const api = server(() => new Response("down", { status: 500 }));
    const r = await run(
      `name: t\nsteps: [{name: call, type: action.http, retry: {mode: automatic, maxAttempts: 2}, with: {url: "${api.url}/x"}}]\n`,
      {},
      { services: testServices({ httpAllowHosts: [api.host] }) },
    );
    expect(r.status).toBe("failed");
    expect(r.error).toMatchObject({ code: "http_error", step: "call" });
    expect(api.hits.length).toBe(2);
    expect(r.journal.record("call")).toMatchObject({ status: "failed", attempt: 2 });
  });

  test("retry: never, and settings.retries as the default", async () => {
    const api = server(() => new Response("down", { status: 500 }));
    const services = testServices({ httpAllowHosts: [api.host] });
    await run(`name: t\nsettings: {retries: 2}\nsteps: [{name: c, type: action.http, retry: never, with: {url: "${api.url}/never"}}]\n`, {}, { services });
    expect(api.count("/never")).toBe(1);
    await run(`name: t\nsettings: {retries: 2}\nsteps: [{name: c, type: action.http, with: {url: "${api.url}/default"}}]\n`, {}, { services });
    expect(api.count("/default")).toBe(3);
  });

  test("timeouts are retried too; errors that cannot pass on retry (bad config, 4xx, control.fail) are not", async () => {
    const t = await run("name: t\nsteps: [{name: slow, type: control.wait, duration: 5000, timeout: 20, retry: {mode: automatic, maxAttempts: 2}}]\n");
    expect(t.journal.started.map((s) => s.attempt)).toEqual([1, 2]);
    const api = server(() => new Response("nope", { status: 404 }));
    const r = await run(`name: t\nsteps: [{name: c, type: action.http, retry: {mode: automatic, maxAttempts: 3}, with: {url: "${api.url}/x"}}]\n`, {}, { services: testServices({ httpAllowHosts: [api.host] }) });
    expect(r.status).toBe("failed");
    expect(api.hits.length).toBe(1);
    const f = await run("name: t\nsteps: [{name: f, type: control.fail, retry: {mode: automatic, maxAttempts: 3}, message: no}]\n");
    expect(f.journal.started.length).toBe(1);
  });
});

describe("execute", () => {
  test("a value that is not a parsed workflow fails cleanly", async () => {
    const r = await run({ name: "x" } as unknown as ReturnType<typeof workflow>);
    expect(r.status).toBe("failed");
    expect(r.error?.code).toBe("invalid_workflow");
  });
});
