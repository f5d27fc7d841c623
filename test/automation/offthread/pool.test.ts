// The worker-thread pool through its public surface: results and errors come back as the task made
// them, a job past its deadline stops its thread (and the next job gets a fresh one).
import { afterAll, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { DomainError } from "../../../src/kernel/errors";
import { OffThreadError, resetOffThreadPool } from "../../../src/automation/offthread/pool";
import { runOffThread } from "../../../src/automation/offthread/run";
import { OFFTHREAD_YAML_CHARS, prepareWorkflow, prepareYaml } from "../../../src/automation/workflow/offthread";
import { parseFully, parseWorkflow } from "../../../src/automation/workflow/parse";
import { readPlain, readYaml } from "../../../src/automation/workflow/source";

const dir = mkdtempSync(join(tmpdir(), "offthread-"));
afterAll(() => {
  resetOffThreadPool();
  rmSync(dir, { recursive: true, force: true });
});

const HEAVY = "{% for i in (1..3000) %}{% for j in (1..3000) %}{{ i }}{% endfor %}{% endfor %}";

describe("runOffThread", () => {
  test("renders a template on a thread", async () => {
    expect(await runOffThread("liquid.render", { source: "Hello {{ who }}!", data: { who: "thread" } }, { deadlineMs: 10_000 })).toBe("Hello thread!");
  });

  test("a task's DomainError keeps its kind, field and code", async () => {
    const archive = join(dir, "not.zip");
    writeFileSync(archive, "this is not a zip");
    const err = await runOffThread("dataset.stage", { archive, dir, limits: { maxArchiveBytes: 1e6, maxEntries: 10, maxUncompressedBytes: 1e6 } }, { deadlineMs: 10_000 }).catch((e) => e);
    expect(err).toBeInstanceOf(DomainError);
    expect((err as DomainError).status).toBe(400);
    expect((err as DomainError).code).toBe("invalid_archive");
  });

  test("Liquid's own limit ends a runaway template with its message", async () => {
    const err = (await runOffThread("liquid.render", { source: HEAVY, data: {} }, { deadlineMs: 20_000 }).catch((e) => e)) as Error;
    expect(err.message).toContain("template render limit exceeded");
  });

  test("past the deadline the thread is stopped; the pool goes on with a new one", async () => {
    resetOffThreadPool(1);
    const started = performance.now();
    const err = await runOffThread("liquid.render", { source: HEAVY, data: {} }, { deadlineMs: 300 }).catch((e) => e);
    expect(err).toBeInstanceOf(OffThreadError);
    expect((err as OffThreadError).reason).toBe("deadline");
    expect(performance.now() - started).toBeLessThan(1500);
    expect(await runOffThread("liquid.render", { source: "{{ 1 | plus: 1 }} ok", data: {} }, { deadlineMs: 10_000 })).toBe("2 ok");
  });
});

describe("large YAML parsed on a thread", () => {
  const big = (extra: string) => {
    let y = "name: big\nsteps:\n";
    for (let i = 0; y.length < 2 * OFFTHREAD_YAML_CHARS; i++) y += `  - name: s${i}\n    type: transform.set\n    with: {fields: {x: "{{ input.a }} ${i}"}}\n`;
    return y + extra;
  };

  test("a workflow prepared off the thread parses to exactly what the inline parse gives, issues and lines included", async () => {
    for (const yaml of [big(""), big("  - name: s0\n    type: transform.nope\n    bogus: 1\n"), big("output: {x: \"{{ oops\"}\n")]) {
      const inline = parseFully(yaml);
      const done = await runOffThread("workflow.parse", { yaml, internal: false }, { deadlineMs: 30_000 });
      expect(done).toEqual(inline);
      await prepareWorkflow(yaml);
      expect(parseWorkflow(yaml)).toEqual(inline);
    }
    expect(parseFully(big("  - name: s0\n    type: transform.nope\n")).ok).toBe(false);
  });

  test("other YAML read off the thread keeps its value and every line", async () => {
    const yaml = `k: [1, 2]\n${Array.from({ length: 2000 }, (_, i) => `key${i}: {v: ${i}}`).join("\n")}\n`;
    expect(yaml.length).toBeGreaterThan(OFFTHREAD_YAML_CHARS);
    await prepareYaml(yaml);
    const off = readYaml(yaml);
    const inline = readPlain(yaml);
    if (!off.ok || !inline.ok) throw new Error("both reads must succeed");
    expect(off.source.value).toEqual(inline.value);
    expect(off.source.lineOf("key1500.v")).toBe(1502);
    expect(off.source.lineOf("")).toBe(1);
  });
});
