import { afterAll, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

const dir = mkdtempSync(join(tmpdir(), "engine-compiled-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

test("inside a compiled binary copied alone into an empty directory: scripts, sandbox limits and XLSX work", async () => {
  const bin = join(dir, "probe");
  const build = Bun.spawnSync(
    [process.execPath, "build", "--compile", "--target", "bun", "--minify-whitespace", "--minify-syntax", "--no-compile-autoload-dotenv", "--no-compile-autoload-bunfig", join(import.meta.dir, "fixtures/compiled-probe.ts"), "--outfile", bin],
    { stdout: "pipe", stderr: "pipe" },
  );
  expect(build.exitCode, build.stderr.toString()).toBe(0);
  const empty = join(dir, "empty");
  await Bun.write(join(empty, "probe"), Bun.file(bin));
  const { chmodSync } = await import("node:fs");
  chmodSync(join(empty, "probe"), 0o755);
  rmSync(bin);
  const proc = Bun.spawn([join(empty, "probe")], { cwd: empty, stdout: "pipe", stderr: "pipe", env: { PATH: "/usr/bin:/bin" } });
  const [out, err, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited]);
  expect(code, err).toBe(0);
  const r = JSON.parse(out);
  expect(r.probe).toEqual({ status: "completed", output: { sum: 6, rows: [{ a: 1, b: "x" }] } });
  expect(r.loop.status).toBe("failed");
  expect(r.loop.error.code).toBe("script_timeout");
  expect(r.alloc.status).toBe("failed");
  expect(r.alloc.error.code).toBe("script_memory_limit");
  expect(r.after).toEqual(r.probe);
}, 60_000);
