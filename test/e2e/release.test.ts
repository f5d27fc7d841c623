// `bun run release` as a release manager runs it: bad input fails with one line and leaves no
// dist/release/ behind; the darwin and windows executables are what those systems load (Mach-O for
// the right CPU, PE32+ x86-64), and the archives hold the executable, LICENSE and README under one
// directory, checked by `tar`, `unzip` and `sha256sum -c` themselves.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { version } from "../../package.json";
import { sha256 } from "../../src/kernel/archive";
import { refusedPort, root } from "./support";

let dir: string;
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), "release-"));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

async function releaseCli(args: string[], env: Record<string, string> = {}) {
  const p = Bun.spawn([process.execPath, "run", "release", ...args], { cwd: root, env: { ...process.env, ...env }, stdout: "pipe", stderr: "pipe" });
  const [stdout, stderr, code] = await Promise.all([new Response(p.stdout).text(), new Response(p.stderr).text(), p.exited]);
  // `bun run` echoes the script line and its exit code on stderr: keep what the script printed
  return { stdout, stderr: stderr.split("\n").filter((l) => l && !l.startsWith("$ ") && !l.startsWith("error: script")).join("\n"), code };
}

describe("bad input: one clear line, non-zero exit, no release directory", () => {
  const cases: [string, string[], number, RegExp][] = [
    ["an unknown target", ["--targets", "linux-x64,solaris-sparc"], 2, /^release: unknown target "solaris-sparc"; valid: linux-x64, linux-arm64, linux-x64-musl, linux-arm64-musl, darwin-x64, darwin-arm64, windows-x64$/],
    ["a version that is not semver", ["--version", "v1.2"], 2, /^release: version "v1\.2" is not a semver release number/],
    ["a dirty version string", ["--version", "1.2.3-4-g12175f7-dirty"], 2, /^release: version "1\.2\.3-4-g12175f7-dirty" marks a modified working tree/],
    ["build metadata", ["--version", "1.2.3+build.5"], 2, /^release: version "1\.2\.3\+build\.5" is not a semver release number/],
  ];
  for (const [what, args, code, line] of cases) {
    test(what, async () => {
      const out = join(dir, `bad-${code}-${args[1].replace(/\W/g, "")}`);
      const r = await releaseCli([...args, "--out", out]);
      expect(r.code).toBe(code);
      expect(r.stderr).toMatch(line);
      expect(r.stderr.split("\n")).toHaveLength(1);
      expect(existsSync(out)).toBe(false);
    });
  }

  test("a target runtime that cannot be fetched (registry unreachable, empty Bun cache): fails early, an earlier release stays whole", async () => {
    const out = join(dir, "unreachable");
    mkdirSync(out);
    writeFileSync(join(out, "SHA256SUMS"), "earlier release\n");
    const cache = join(dir, "empty-bun-cache");
    mkdirSync(cache);
    // Bun downloads a target's runtime from the npm registry into its install cache; an empty cache and
    // BUN_COMPILE_TARGET_TARBALL_URL (Bun's override of that download) on a refused port = no registry.
    const started = performance.now();
    const r = await releaseCli(["--targets", "linux-x64,darwin-x64", "--out", out], { BUN_INSTALL_CACHE_DIR: cache, BUN_COMPILE_TARGET_TARBALL_URL: `http://127.0.0.1:${refusedPort()}/bun.tgz` });
    expect(r.code).toBe(1);
    expect(r.stderr).toBe(`release: cannot fetch the Bun runtime for darwin-x64 (bun-darwin-x64): Failed to download 'bun-darwin-x64-v${Bun.version}': ConnectionRefused`);
    expect(performance.now() - started).toBeLessThan(30_000); // before any real build
    expect(readdirSync(out)).toEqual(["SHA256SUMS"]);
    expect(readFileSync(join(out, "SHA256SUMS"), "utf8")).toBe("earlier release\n");
    expect(readdirSync(dir).filter((f) => f.includes(".tmp"))).toEqual([]);
  });
});

test("a release stopped by SIGTERM mid-build removes its temp dir and writes no release", async () => {
  const out = join(dir, "stopped");
  const p = Bun.spawn([process.execPath, "src/kernel/release.ts", "--targets", "linux-x64", "--products", "order-server", "--out", out], { cwd: root, stdout: "pipe", stderr: "pipe" });
  const tmp = `${out}.${p.pid}.tmp`;
  const until = Date.now() + 60_000;
  while (!existsSync(join(tmp, "bin")) && p.exitCode === null && Date.now() < until) await Bun.sleep(20);
  expect(existsSync(tmp)).toBe(true);
  p.kill("SIGTERM");
  expect(await p.exited).toBe(143);
  expect(existsSync(tmp)).toBe(false);
  expect(existsSync(out)).toBe(false);
  await Bun.sleep(5000); // longer than a compile: no compiler child lives on to write into it again
  expect(readdirSync(dir).filter((f) => f.startsWith("stopped"))).toEqual([]);
}, 120_000);

describe("darwin and windows", () => {
  let out: string;
  let info: { version: string; commit: string; date: string; archives: string[] };
  beforeAll(async () => {
    out = join(dir, "release");
    const r = await releaseCli(["--targets", "darwin-x64,darwin-arm64,windows-x64", "--products", "order-server,quotas", "--out", out]);
    if (r.code !== 0) throw new Error(`release failed:\n${r.stdout}\n${r.stderr}`);
    info = JSON.parse(readFileSync(join(out, "release.json"), "utf8"));
  }, 600_000);

  const machO = (file: string) => {
    const b = readFileSync(file);
    return { magic: b.readUInt32LE(0), cputype: b.readUInt32LE(4) };
  };
  // MH_MAGIC_64, CPU_TYPE_X86_64 / CPU_TYPE_ARM64 (CPU_ARCH_ABI64 | 7 / 12)
  const MH_MAGIC_64 = 0xfeedfacf;

  test("the darwin executables are 64-bit Mach-O for x86_64 and arm64, with the version built in", () => {
    for (const [target, cpu] of [["darwin-x64", 0x01000007], ["darwin-arm64", 0x0100000c]] as const) {
      for (const name of ["order-server", "quotas"]) {
        const file = join(out, "bin", target, name);
        expect(machO(file)).toEqual({ magic: MH_MAGIC_64, cputype: cpu });
        const bytes = readFileSync(file);
        // the values --define injected (what --version prints, which cannot run here)
        expect(bytes.indexOf(info.commit)).toBeGreaterThan(0);
        expect(bytes.indexOf(info.date)).toBeGreaterThan(0);
      }
    }
  });

  test("the windows executables are PE32+ for x86-64", () => {
    for (const name of ["order-server.exe", "quotas.exe"]) {
      const b = readFileSync(join(out, "bin/windows-x64", name));
      expect(b.toString("latin1", 0, 2)).toBe("MZ");
      const pe = b.readUInt32LE(0x3c);
      expect(b.toString("latin1", pe, pe + 4)).toBe("PE\0\0");
      expect(b.readUInt16LE(pe + 4)).toBe(0x8664); // IMAGE_FILE_MACHINE_AMD64
      expect(b.readUInt16LE(pe + 24)).toBe(0x20b); // optional header magic: PE32+
    }
  });

  test("archives: one directory holding the executable, LICENSE and README; SHA256SUMS passes sha256sum -c", async () => {
    const names = [`order-server-${version}-darwin-arm64.tar.gz`, `order-server-${version}-darwin-x64.tar.gz`, `order-server-${version}-windows-x64.zip`];
    expect(readdirSync(out).filter((f) => /\.(tar\.gz|zip)$/.test(f)).sort()).toEqual(names);
    expect(info.archives.sort()).toEqual(names);
    for (const target of ["darwin-arm64", "darwin-x64"]) {
      const top = `order-server-${version}-${target}`;
      const list = Bun.spawnSync(["tar", "-tvzf", join(out, `${top}.tar.gz`)]).stdout.toString().trim().split("\n");
      expect(list.map((l) => l.split(/\s+/).pop())).toEqual([`${top}/order-server`, `${top}/LICENSE`, `${top}/README.md`]);
      expect(list[0]).toStartWith("-rwxr-xr-x");
      const x = join(dir, `x-${target}`);
      mkdirSync(x);
      expect(Bun.spawnSync(["tar", "-xzf", join(out, `${top}.tar.gz`), "-C", x]).exitCode).toBe(0);
      expect(sha256(readFileSync(join(x, top, "order-server")))).toBe(sha256(readFileSync(join(out, "bin", target, "order-server"))));
      expect(readFileSync(join(x, top, "LICENSE"), "utf8")).toBe(readFileSync(join(root, "LICENSE"), "utf8"));
      expect(readFileSync(join(x, top, "README.md"), "utf8")).toContain(`order-server ${version} (${target})`);
    }
    const top = `order-server-${version}-windows-x64`;
    const unzip = Bun.spawnSync(["unzip", "-Z1", join(out, `${top}.zip`)]);
    expect(unzip.stdout.toString().trim().split("\n")).toEqual([`${top}/order-server.exe`, `${top}/LICENSE`, `${top}/README.md`]);
    const exe = Bun.spawnSync(["unzip", "-p", join(out, `${top}.zip`), `${top}/order-server.exe`], { stdout: "pipe" });
    expect(sha256(exe.stdout)).toBe(sha256(readFileSync(join(out, "bin/windows-x64/order-server.exe"))));

    const check = Bun.spawnSync(["sha256sum", "-c", "SHA256SUMS"], { cwd: out });
    expect(check.exitCode).toBe(0);
    expect(check.stdout.toString().trim().split("\n").sort()).toEqual(names.map((n) => `${n}: OK`));
    // and it notices a damaged download
    const copy = join(dir, "damaged");
    mkdirSync(copy);
    writeFileSync(join(copy, "SHA256SUMS"), readFileSync(join(out, "SHA256SUMS")));
    const bytes = readFileSync(join(out, names[0]));
    bytes[bytes.length >> 1] ^= 1;
    writeFileSync(join(copy, names[0]), bytes);
    expect(Bun.spawnSync(["sha256sum", "-c", "--ignore-missing", "SHA256SUMS"], { cwd: copy, stderr: "pipe" }).exitCode).toBe(1);
  });

  test("npm platform packages declare their os and cpu (no libc off Linux) and hold only their executable", () => {
    const pkg = (d: string) => JSON.parse(readFileSync(join(out, "npm", d, "package.json"), "utf8"));
    expect(pkg("quotas-darwin-arm64")).toMatchObject({ name: "@quotas/darwin-arm64", version, os: ["darwin"], cpu: ["arm64"], files: ["bin/quotas"] });
    expect(pkg("quotas-darwin-arm64").libc).toBeUndefined();
    expect(pkg("quotas-windows-x64")).toMatchObject({ name: "@quotas/windows-x64", version, os: ["win32"], cpu: ["x64"], files: ["bin/quotas.exe"] });
    expect(readdirSync(join(out, "npm/quotas-windows-x64/bin"))).toEqual(["quotas.exe"]);
    expect(pkg("quotas").optionalDependencies).toEqual({ "@quotas/darwin-x64": version, "@quotas/darwin-arm64": version, "@quotas/windows-x64": version });
  });
});
