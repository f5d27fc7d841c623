// The npm package, installed for real: the package directory as `bun run build` writes it (its own
// manifest, not the repository's package.json), `npm pack`, then `npm install -g` of the tarball into a
// temporary prefix, offline (the package has no runtime dependencies: the executable bundles everything). The
// installed `quotas` is the compiled executable itself, so a prompt pays no node start-up.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { lstatSync, mkdirSync, mkdtempSync, readlinkSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import pkg from "../../src/quotas/manifest.json";
import { writeNpmPackage } from "../../src/quotas/npm-package";
import { ensureBuilt } from "./support";

let dir: string;
let packageDir: string;
beforeAll(async () => {
  const binary = await ensureBuilt("quotas");
  dir = mkdtempSync(join(tmpdir(), "quotas-npm-"));
  packageDir = writeNpmPackage(binary, join(dir, "package"));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

async function sh(cmd: string[], env: Record<string, string> = {}, cwd = dir) {
  const p = Bun.spawn(cmd, { cwd, env: { ...process.env, ...env }, stdout: "pipe", stderr: "pipe" });
  const [stdout, stderr, code] = await Promise.all([new Response(p.stdout).text(), new Response(p.stderr).text(), p.exited]);
  return { stdout, stderr, code };
}

test("npm pack + npm install -g (offline) give a working `quotas` command", async () => {
  const pack = await sh(["npm", "pack", "--json", "--pack-destination", dir], {}, packageDir);
  expect(pack.code).toBe(0);
  const [info] = JSON.parse(pack.stdout) as { filename: string; files: { path: string; mode: number }[] }[];
  expect(info.files.map((f) => f.path).sort()).toEqual(["README.md", "bin/quotas", "package.json"]);
  expect(info).toMatchObject({ name: "quotas", version: pkg.version });

  const prefix = join(dir, "prefix");
  const npmEnv = { npm_config_update_notifier: "false", npm_config_fund: "false", npm_config_audit: "false" };
  const install = await sh(["npm", "install", "-g", "--offline", "--prefix", prefix, join(dir, info.filename)], npmEnv);
  expect(install.code).toBe(0);
  const cmd = join(prefix, "bin/quotas");
  // the command is the executable itself, not a node shim in front of it
  expect(lstatSync(cmd).isSymbolicLink()).toBe(true);
  expect(resolve(join(prefix, "bin"), readlinkSync(cmd))).toBe(join(prefix, "lib/node_modules", pkg.name, "bin/quotas"));

  const home = join(dir, "home");
  mkdirSync(home);
  const env = {
    HOME: home, XDG_CONFIG_HOME: join(home, ".config"), XDG_CACHE_HOME: join(home, ".cache"), XDG_DATA_HOME: join(home, ".local/share"),
    npm_config_registry: "http://127.0.0.1:9",
  };
  expect(await sh([cmd, "--version"], env)).toEqual({ stdout: `${pkg.version}\n`, stderr: "", code: 0 });
  const bad = await sh([cmd, "--provider=nope", "--json"], env);
  expect(bad.code).toBe(2);
  expect(bad.stderr).toContain('unknown provider "nope"');
  const json = await sh([cmd, "--json", "--no-update-check", "--provider=deepseek"], { ...env, DEEPSEEK_API_KEY: "", QUOTAS_TIMEOUT_MS: "500" });
  expect(json.code).toBe(0);
  expect(JSON.parse(json.stdout).providers[0]).toMatchObject({ provider: "deepseek", status: "auth_required" });
}, 120_000);
