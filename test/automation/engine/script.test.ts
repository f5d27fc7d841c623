import { describe, expect, test } from "bun:test";
import { existsSync } from "node:fs";
import { sandboxPids } from "../../../src/automation/engine/sandbox/isolate";
import { cpuBurnMs, run } from "./support";

function scriptStep(fn: string, inputs = "{}", extra = "") {
  return `name: t
steps:
  - name: js
    type: transform.script
    with:
      inputs: ${inputs}${extra}
      function: |
${fn
  .split("\n")
  .map((l) => `        ${l}`)
  .join("\n")}
`;
}

describe("transform.script", () => {
  test("the spec example: arguments by parameter name, result as JSON", async () => {
    const r = await run(scriptStep("function script(lines) { return { total: lines.reduce((s, l) => s + l.amount, 0) } }", '{lines: "{{ input.invoice.lines }}"}'), {
      invoice: { lines: [{ amount: 600 }, { amount: 700 }] },
    });
    expect(r.output).toEqual({ js: { total: 1300 } });
  });

  test("parameters match inputs by name whatever the key order; otherwise inputs go in order", async () => {
    expect((await run(scriptStep("function script(b, a) { return a + '-' + b }", "{a: A, b: B}"))).output).toEqual({ js: "A-B" });
    expect((await run(scriptStep("function script(x, y) { return [x, y] }", "{first: 1, second: 2}"))).output).toEqual({ js: [1, 2] });
  });

  test("async functions are awaited; undefined becomes null", async () => {
    expect((await run(scriptStep("async function script(n) { return n * 2 }", "{n: 21}"))).output).toEqual({ js: 42 });
    expect((await run(scriptStep("function script() { }"))).output).toEqual({ js: null });
  });

  test("no file system, network, process, module loading or timers inside the sandbox", async () => {
    const r = await run(
      scriptStep(
        "function script() { return [typeof require, typeof process, typeof fetch, typeof Bun, typeof Deno, typeof std, typeof os, typeof setTimeout, typeof XMLHttpRequest, typeof WebAssembly, typeof import_meta] }",
      ),
    );
    expect(r.output).toEqual({ js: Array(11).fill("undefined") });
    const imp = await run(scriptStep("function script() { return import('fs') }"));
    expect(imp.status).toBe("failed");
  });

  test("an exception fails the step with the script's message", async () => {
    const r = await run(scriptStep("function script() { throw new Error('bad data') }"));
    expect(r.status).toBe("failed");
    expect(r.error).toMatchObject({ code: "script_error", step: "js" });
    expect(r.error?.message).toContain("bad data");
  });

  test("syntax errors and a missing script function are reported", async () => {
    expect((await run(scriptStep("function script( { return 1 }"))).error?.message).toContain("SyntaxError");
    expect((await run(scriptStep("function main() { return 1 }"))).error?.message).toContain("function script");
  });

  test("an endless loop is stopped at the time limit; the run fails cleanly and the next script runs", async () => {
    const r = await run(scriptStep("function script() { while (true) {} }", "{}", "\n      timeoutMs: 200"));
    expect(r.status).toBe("failed");
    expect(r.error).toMatchObject({ code: "script_timeout", step: "js" });
    expect(r.journal.record("js").status).toBe("failed");
    expect((await run(scriptStep("function script() { return 'still fine' }"))).output).toEqual({ js: "still fine" });
  });

  test("the step timeout caps the script's time too", async () => {
    const r = await run(`name: t
steps:
  - name: js
    type: transform.script
    timeout: 150
    with: {function: "function script() { for (;;) {} }"}
`);
    // Whichever fires first, the step timer or the sandbox deadline, the step fails as timed out.
    expect(["step_timeout", "script_timeout"]).toContain(r.error!.code!);
  });

  test("the step timer and the script's own deadline firing together leave no killed process among the idle ones: the next script runs", async () => {
    // When the script's deadline reply was written just before the step's abort killed its process,
    // the reply read after the kill put the killed process back among the idle ones, and the next
    // script written to it failed with EPIPE (seen as kill → reply → write in a traced run; 1 run of
    // this file in 8 under load, twice in CI). The window is under a millisecond, so this repeats the
    // pair rather than forcing it: it catches the old code only now and then.
    for (let i = 0; i < 8; i++) {
      const r = await run(`name: t
steps:
  - name: js
    type: transform.script
    timeout: ${40 + i * 5}
    with: {function: "function script() { for (;;) {} }"}
`);
      expect(["step_timeout", "script_timeout"]).toContain(r.error!.code!);
      expect((await run(scriptStep(`function script() { return ${i} }`))).output).toEqual({ js: i });
    }
  });

  test("an idle sandbox process killed from outside: the next script goes to another process and runs", async () => {
    await run(scriptStep("function script() { return 'warm' }"));
    const idle = sandboxPids();
    expect(idle.length).toBeGreaterThan(0);
    for (const pid of idle) process.kill(pid, "SIGKILL");
    // Written at once, before this process has read the killed ones' exits (EPIPE, or a pipe that closes under the job).
    expect((await run(scriptStep("function script() { return 'elsewhere' }"))).output).toEqual({ js: "elsewhere" });
    expect(sandboxPids().some((pid) => idle.includes(pid))).toBe(false);
  });

  test("a loop over a heavy built-in fails on time and leaves nothing burning CPU; the host's event loop keeps running", async () => {
    let ticks = 0;
    const timer = setInterval(() => ticks++, 10);
    try {
      const r = await run(scriptStep("function script() { const a = []; for (let i = 0; i < 200000; i++) a.push('item' + i); while (true) a.join(',') }", "{}", "\n      timeoutMs: 200"));
      expect(r.status).toBe("failed");
      // The whole error, so a failure shows its message.
      expect(r.error).toMatchObject({ code: "script_timeout" });
      expect(ticks).toBeGreaterThan(0);
    } finally {
      clearInterval(timer);
    }
    // A terminated worker thread kept spinning here at a full core (about 2000 ms of CPU per 2 s);
    // a killed sandbox process uses none. Idle sandbox processes and this process use a few ms.
    expect(await cpuBurnMs(2000)).toBeLessThan(1000);
    expect((await run(scriptStep("function script() { return 'next' }"))).output).toEqual({ js: "next" });
  });

  test("a single built-in call far past the deadline (QuickJS cannot interrupt it): the sandbox process is killed and replaced", async () => {
    await run(scriptStep("function script() { return 'warm' }")); // at least one idle sandbox process
    const before = sandboxPids();
    const r = await run(scriptStep("function script() { const a = Array.from(new Uint32Array(2000000).keys()); a.sort(); return 'sorted' }", "{}", "\n      timeoutMs: 50\n      memoryMb: 256"));
    expect(r.status).toBe("failed");
    expect(r.error?.code).toBe("script_timeout");
    expect(await cpuBurnMs(1000)).toBeLessThan(500);
    // The process that ran it is gone (SIGKILLed: QuickJS cannot interrupt a single long built-in call).
    expect(before.filter((pid) => !existsSync(`/proc/${pid}`))).toHaveLength(1);
    expect((await run(scriptStep("function script() { return 'fresh' }"))).output).toEqual({ js: "fresh" });
  });

  test("a cancel lets the running script finish (its result is journaled), then the run stops", async () => {
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 50);
    const r = await run(
      `name: t
steps:
  - name: js
    type: transform.script
    with:
      function: |
        function script() { const end = Date.now() + 400; let n = 0; while (Date.now() < end) n++; return "finished" }
  - {name: after, type: transform.set, with: {fields: {x: 1}}}
`,
      {},
      { signal: controller.signal },
    );
    expect(r.status).toBe("cancelled");
    expect(r.journal.record("js")).toMatchObject({ status: "completed", output: "finished" });
    expect(r.journal.started.map((s) => s.path)).toEqual(["js"]);
  });

  test("scripts run side by side in sandbox processes", async () => {
    const r = await run(`name: t
steps:
  - name: pm
    type: control.parallel_map
    items: [1, 2, 3, 4]
    concurrency: 4
    steps:
      - name: js
        type: transform.script
        with: {inputs: {n: "{{ item }}"}, function: "function script(n) { let x = 0; for (let i = 0; i < 1e5; i++) x += i % n; return n * 10 }"}
`);
    expect(r.output).toEqual({ pm: [10, 20, 30, 40] });
  });

  test("unbounded allocation is stopped at the memory limit; the host is unaffected", async () => {
    const before = process.memoryUsage().rss;
    for (const fn of [
      "function script() { const a = []; while (true) a.push(new Array(100000).fill(1)) }",
      "function script() { const a = []; while (true) a.push({ n: a.length, s: 'x' + a.length }) }",
      "function script() { let s = 'x'; while (true) s += s }",
    ]) {
      const r = await run(scriptStep(fn, "{}", "\n      memoryMb: 16\n      timeoutMs: 20000"));
      expect(r.status).toBe("failed");
      expect(["script_memory_limit", "script_error"]).toContain(r.error!.code!);
      expect(r.error?.message).toMatch(/memory|too long/);
    }
    // The sandbox heap is capped at 16 MiB + a 16 MiB baseline, so the host grew by far less than the scripts asked for.
    expect(process.memoryUsage().rss - before).toBeLessThan(512 * 1024 * 1024);
    expect((await run(scriptStep("function script() { return [1, 2, 3].map((x) => x * 2) }", "{}", "\n      memoryMb: 16"))).output).toEqual({ js: [2, 4, 6] });
  });

  test("deep recursion is a clean failure", async () => {
    const r = await run(scriptStep("function f(n) { return f(n + 1) + 1 }\nfunction script() { return f(0) }"));
    expect(r.status).toBe("failed");
    expect(r.error?.message).toContain("stack");
  });

  test("scripts cannot see each other's globals", async () => {
    await run(scriptStep("function script() { globalThis.leak = 'secret'; return 1 }"));
    expect((await run(scriptStep("function script() { return typeof leak }"))).output).toEqual({ js: "undefined" });
  });

  test("the code is not a Liquid template", async () => {
    expect((await run(scriptStep("function script() { return '{{ input.x }}' }"), { x: 5 })).output).toEqual({ js: "{{ input.x }}" });
  });
});
