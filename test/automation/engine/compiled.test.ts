import { afterAll, expect, test } from "bun:test";
import { chmodSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

const dir = mkdtempSync(join(tmpdir(), "engine-compiled-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const root = join(import.meta.dir, "../../..");

/** Compiles the probe like src/kernel/build.ts does, copies it alone into an empty directory, runs it. */
async function buildAndRun(name: string, extraEntries: string[], args: string[] = []) {
  const bin = join(dir, name);
  const build = Bun.spawnSync(
    [process.execPath, "build", "--compile", "--target", "bun", "--minify-whitespace", "--minify-syntax", "--no-compile-autoload-dotenv", "--no-compile-autoload-bunfig", "test/automation/engine/fixtures/compiled-probe.ts", ...extraEntries, "--outfile", bin],
    { cwd: root, stdout: "pipe", stderr: "pipe" },
  );
  expect(build.exitCode, build.stderr.toString()).toBe(0);
  const empty = join(dir, `${name}-empty`);
  await Bun.write(join(empty, name), Bun.file(bin));
  chmodSync(join(empty, name), 0o755);
  rmSync(bin);
  const proc = Bun.spawn([join(empty, name), ...args], { cwd: empty, stdout: "pipe", stderr: "pipe", env: { PATH: "/usr/bin:/bin" } });
  const [out, err, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited]);
  expect(code, err).toBe(0);
  return { r: JSON.parse(out), err };
}

test("inside a compiled binary copied alone into an empty directory: scripts in sandbox processes (the binary itself), limits and XLSX work", async () => {
  const { r } = await buildAndRun("probe", []);
  expect(r.probe).toEqual({ status: "completed", output: { sum: 6, rows: [{ a: 1, b: "x" }] } });
  expect(r.loop.status).toBe("failed");
  expect(r.loop.error.code).toBe("script_timeout");
  expect(r.alloc.status).toBe("failed");
  expect(r.alloc.error.code).toBe("script_memory_limit");
  expect(r.heavy.status).toBe("failed");
  expect(r.heavy.error.code).toBe("script_timeout");
  // After the heavy script failed, nothing keeps a core busy (a terminated worker thread did: ~2000 ms per 2 s).
  expect(r.burnMs).toBeLessThan(1000);
  expect(r.after).toEqual(r.probe);
}, 90_000);
