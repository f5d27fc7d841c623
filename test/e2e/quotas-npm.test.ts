// quotas from npm, for real: `bun run release` builds the npm packages (the main `quotas` and one
// `@quotas/<target>` per platform, here linux-x64, linux-x64-musl and linux-arm64 so npm has to choose
// by os, cpu and libc), `npm publish` puts each on a Verdaccio registry on loopback, and
// `npm install -g quotas` installs it into fresh prefixes: once with install scripts (the command is
// the native executable itself) and once with --ignore-scripts (the Node launcher starts it).
import { afterAll, beforeAll, expect, test } from "bun:test";
import { lstatSync, mkdtempSync, readdirSync, readFileSync, realpathSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { version } from "../../package.json";
import { release } from "../../src/kernel/release";
import { parseTargets } from "../../src/kernel/targets";
import { writeMainPackage } from "../../src/quotas/npm-package";
import { fakeProvider, homeWithCredentials, runEnv, secrets, type Fake } from "../quotas/fakes";
import { npmEnv, type Registry, sh, startRegistry } from "./registry-support";

const targets = parseTargets("linux-x64,linux-x64-musl,linux-arm64");
const versionLine = new RegExp(`^quotas ${version.replaceAll(".", "\\.")} \\(commit [0-9a-f]{12}(-dirty)?, built [0-9TZ:-]+\\)\n$`);

let dir: string;
let registry: Registry;
let npm: Record<string, string>;
let fake: Fake;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "quotas-npm-"));
  const [, reg] = await Promise.all([
    release({ targets, products: ["quotas"], version, out: join(dir, "release"), log: () => {} }),
    startRegistry(join(dir, "registry")),
  ]);
  registry = reg;
  npm = { ...npmEnv(dir), npm_config_userconfig: registry.npmrc, npm_config_registry: `${registry.url}/` };
  // platform packages first: the main package's optional dependencies must resolve once it is there
  for (const pkg of ["quotas-linux-x64", "quotas-linux-x64-musl", "quotas-linux-arm64", "quotas"]) {
    const r = await sh(["npm", "publish", join(dir, "release/npm", pkg)], { env: npm });
    if (r.code !== 0) throw new Error(`npm publish ${pkg} failed:\n${r.stderr}`);
  }
  fake = fakeProvider("deepseek");
}, 600_000);

afterAll(async () => {
  fake?.stop();
  await registry?.proc.kill("SIGKILL");
  rmSync(dir, { recursive: true, force: true });
});

async function install(name: string, flags: string[]) {
  const prefix = join(dir, name);
  const r = await sh(["npm", "install", "-g", "--prefix", prefix, ...flags, "quotas"], { env: npm });
  expect(r.code).toBe(0);
  return { prefix, cmd: join(prefix, "bin/quotas"), modules: join(prefix, "lib/node_modules/quotas") };
}

/** Runs the installed command as a user's shell would: exactly this environment (no npm_* variables). */
async function exec(cmd: string[], env: Record<string, string>) {
  const p = Bun.spawn(cmd, { env, stdin: "ignore", stdout: "pipe", stderr: "pipe" });
  const [stdout, stderr, code] = await Promise.all([new Response(p.stdout).text(), new Response(p.stderr).text(), p.exited]);
  return { stdout, stderr, code };
}

/** The command with a HOME holding fixture credentials, the deepseek API a fake on loopback. */
async function runQuotas(cmd: string, args: string[]) {
  const h = homeWithCredentials();
  try {
    return await exec([cmd, ...args], runEnv(h, [fake]));
  } finally {
    h.cleanup();
  }
}

async function expectWorks(cmd: string) {
  const v = await runQuotas(cmd, ["--version"]);
  expect(v).toMatchObject({ code: 0, stderr: "" });
  expect(v.stdout).toMatch(versionLine);
  const json = await runQuotas(cmd, ["--json", "--no-update-check", "--provider=deepseek"]);
  expect(json.code).toBe(0);
  const [p] = JSON.parse(json.stdout).providers;
  expect(p).toMatchObject({ provider: "deepseek", status: "available" });
  expect(json.stdout).not.toContain(secrets.deepseek);
}

const installedPlatforms = (modules: string) => readdirSync(join(modules, "node_modules/@quotas"));

test("npm install -g with install scripts: only this platform's package, and the command is the executable itself", async () => {
  const { cmd, modules } = await install("with-scripts", ["--allow-scripts=quotas"]);
  expect(installedPlatforms(modules)).toEqual(["linux-x64"]);
  // prefix/bin/quotas -> the package's bin/quotas, which the postinstall made a link of the executable
  expect(lstatSync(cmd).isSymbolicLink()).toBe(true);
  const target = realpathSync(cmd);
  expect(readFileSync(target).subarray(0, 4)).toEqual(Buffer.from([0x7f, 0x45, 0x4c, 0x46])); // ELF, not a script
  expect(statSync(target).ino).toBe(statSync(join(modules, "node_modules/@quotas/linux-x64/bin/quotas")).ino);
  await expectWorks(cmd);
}, 180_000);

test("npm install -g --ignore-scripts: the Node launcher finds and runs the executable", async () => {
  const { cmd, modules } = await install("no-scripts", ["--ignore-scripts"]);
  expect(installedPlatforms(modules)).toEqual(["linux-x64"]);
  expect(readFileSync(realpathSync(cmd), "utf8").startsWith("#!/usr/bin/env node\n")).toBe(true);
  await expectWorks(cmd);
  // without its platform package, the launcher says what is missing in one line
  rmSync(join(modules, "node_modules/@quotas/linux-x64"), { recursive: true });
  const broken = await runQuotas(cmd, ["--version"]);
  expect(broken.code).toBe(1);
  expect(broken.stderr).toBe("quotas: no quotas executable for linux-x64: none of @quotas/linux-x64, @quotas/linux-x64-musl is installed (were optional dependencies omitted? reinstall without --omit=optional / --no-optional)\n");
}, 180_000);

test("quotas --check-update asks the registry of the user's ~/.npmrc, and sees a release published meanwhile", async () => {
  const { cmd } = await install("check-update", ["--allow-scripts=quotas"]);
  const check = async () => {
    const h = homeWithCredentials();
    try {
      // the registry comes from the user's npmrc alone: no npm_config_registry in the environment
      h.write(".npmrc", `registry=${registry.url}/\n`);
      const { npm_config_registry: _, ...env } = runEnv(h, []);
      return await exec([cmd, "--check-update"], env);
    } finally {
      h.cleanup();
    }
  };
  expect(await check()).toEqual({ stdout: `quotas ${version} is up to date (latest ${version})\n`, stderr: "", code: 0 });

  const [major, minor, patch] = version.split(".").map(Number);
  const next = `${major}.${minor}.${patch + 1}`;
  const nextDir = writeMainPackage(targets, join(dir, "next"), next);
  const pub = await sh(["npm", "publish", nextDir], { env: npm });
  expect(pub.code).toBe(0);
  expect(await check()).toEqual({ stdout: `quotas ${next} is available (installed ${version}): npm install -g quotas\n`, stderr: "", code: 0 });
}, 180_000);

test("every package of a release carries the same version", () => {
  const root = join(dir, "release/npm");
  const manifests = readdirSync(root).map((d) => JSON.parse(readFileSync(join(root, d, "package.json"), "utf8")));
  expect(manifests.map((m) => m.version)).toEqual(manifests.map(() => version));
  const main = manifests.find((m) => m.name === "quotas");
  expect(main.optionalDependencies).toEqual({ "@quotas/linux-x64": version, "@quotas/linux-x64-musl": version, "@quotas/linux-arm64": version });
  expect(manifests.find((m) => m.name === "@quotas/linux-x64-musl")).toMatchObject({ os: ["linux"], cpu: ["x64"], libc: ["musl"], files: ["bin/quotas"] });
  // each holds the executable for its machine: ELF for x86-64 (62) or AArch64 (183), loaded by its libc
  for (const [dirName, machine, loader] of [
    ["quotas-linux-x64", 62, "/lib64/ld-linux-x86-64.so.2"],
    ["quotas-linux-x64-musl", 62, "/lib/ld-musl-x86_64.so.1"],
    ["quotas-linux-arm64", 183, "/lib/ld-linux-aarch64.so.1"],
  ] as const) {
    const exe = readFileSync(join(root, dirName, "bin/quotas"));
    expect(exe.readUInt32BE(0)).toBe(0x7f454c46);
    expect(exe.readUInt16LE(18)).toBe(machine);
    expect(exe.indexOf(`${loader}\0`)).toBeGreaterThan(0);
    expect(exe.indexOf(`${loader}\0`)).toBeLessThan(4096); // PT_INTERP, near the start
  }
});
