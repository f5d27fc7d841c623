// The kernel logger's two formats, levels and child fields.
import { describe, expect, test } from "bun:test";
import { createLogger } from "../../src/kernel/logger";

describe("createLogger", () => {
  test("json: one parseable object a line, envelope first, child fields on every line, levels filter", () => {
    const lines: string[] = [];
    const log = createLogger("info", (l) => lines.push(l), "json");
    log.debug("hidden");
    log.info("hello", { a: 1, msg: "clash", skipped: undefined });
    const run = log.child({ runId: "exec_1", requestId: "r-1" });
    run.warn("step failed", { step: "s", requestId: "own" });
    expect(lines).toHaveLength(2);
    const [first, second] = lines.map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(first).toMatchObject({ level: "info", msg: "hello", a: 1, field_msg: "clash" });
    expect("skipped" in first).toBe(false);
    expect(typeof first.time).toBe("string");
    expect(second).toMatchObject({ level: "warn", msg: "step failed", runId: "exec_1", requestId: "own", step: "s" });
  });

  test("text: time, padded level, message, k=v with quoting", () => {
    const lines: string[] = [];
    createLogger("debug", (l) => lines.push(l), "text").child({ tenant: "ten_1" }).debug("request", { route: "/v1/runs/:id", note: "two words" });
    expect(lines[0]).toMatch(/^\d{4}-\d\d-\d\dT[\d:.]+Z debug request tenant=ten_1 route=\/v1\/runs\/:id note="two words"$/);
  });

  test("a field that cannot be serialized does not lose the line", () => {
    const lines: string[] = [];
    const cyclic: Record<string, unknown> = {};
    cyclic.self = cyclic;
    createLogger("info", (l) => lines.push(l), "json").error("odd", { cyclic });
    createLogger("info", (l) => lines.push(l), "text").error("odd", { cyclic });
    expect(JSON.parse(lines[0])).toMatchObject({ level: "error", msg: "odd" });
    expect(lines[1]).toContain("error odd cyclic=");
  });
});
