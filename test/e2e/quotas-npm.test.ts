// The npm package: `npm pack` ships the shim and the compiled binary, and the shim, installed the way
// npm installs a bin (a symlink into the package), runs the binary with arguments and exit codes.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { chmodSync, copyFileSync, mkdirSync, mkdtempSync, rmSync, symlinkSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import pkg from "../../package.json";
import { ensureBuilt, root } from "./support";

let dir: string;
beforeAll(async () => {
  await ensureBuilt("quotas");
  dir = mkdtempSync(join(tmpdir(), "quotas-npm-"));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

async function sh(cmd: string[], env: Record<string, string> = {}, cwd = dir) {
  const p = Bun.spawn(cmd, { cwd, env: { ...process.env, ...env }, stdout: "pipe", stderr: "pipe" });
  const [stdout, stderr, code] = await Promise.all([new Response(p.stdout).text(), new Response(p.stderr).text(), p.exited]);
  return { stdout, stderr, code };
}

test("the npm package ships bin/quotas.js and dist/quotas (executable); the installed shim runs the binary", async () => {
  // --dry-run lists exactly what the tarball holds without gzipping 100 MB on every test run.
  const pack = await sh(["npm", "pack", "--dry-run", "--json"], {}, root);
  expect(pack.code).toBe(0);
  const [info] = JSON.parse(pack.stdout) as { files: { path: string; mode: number }[] }[];
  const files = Object.fromEntries(info.files.map((f) => [f.path, f.mode]));
  expect(files["bin/quotas.js"] & 0o111).not.toBe(0);
  expect(files["dist/quotas"] & 0o111).not.toBe(0);

  // What `npm install -g` does, minus fetching dependencies (the binary needs none): put the packed
  // files into lib/node_modules/<name> and link bin/quotas to the "bin" entry.
  const prefix = join(dir, "prefix");
  const pkgDir = join(prefix, "lib/node_modules", pkg.name);
  for (const f of info.files) {
    mkdirSync(dirname(join(pkgDir, f.path)), { recursive: true });
    copyFileSync(join(root, f.path), join(pkgDir, f.path));
    chmodSync(join(pkgDir, f.path), f.mode);
  }
  mkdirSync(join(prefix, "bin"));
  symlinkSync(join(pkgDir, pkg.bin.quotas), join(prefix, "bin/quotas"));

  const home = join(dir, "home");
  mkdirSync(home);
  const env = { HOME: home, XDG_CONFIG_HOME: join(home, ".config"), XDG_CACHE_HOME: join(home, ".cache"), XDG_DATA_HOME: join(home, ".local/share") };
  expect(await sh([join(prefix, "bin/quotas"), "--version"], env)).toEqual({ stdout: `${pkg.version}\n`, stderr: "", code: 0 });
  const bad = await sh([join(prefix, "bin/quotas"), "--provider=nope", "--json"], env);
  expect(bad.code).toBe(2);
  expect(bad.stderr).toContain('unknown provider "nope"');
  const json = await sh([join(prefix, "bin/quotas"), "--json", "--provider=deepseek"], { ...env, DEEPSEEK_API_KEY: "", QUOTAS_TIMEOUT_MS: "500" });
  expect(json.code).toBe(0);
  expect(JSON.parse(json.stdout).providers[0]).toMatchObject({ provider: "deepseek", status: "auth_required" });
}, 120_000);
