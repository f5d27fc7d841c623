// The quotas npm packages, the way esbuild and Biome ship: the main package `quotas` (the command, a
// launcher and a postinstall) with one optional dependency per platform, `@quotas/<target>`, each
// holding only that platform's executable and declaring its os/cpu/libc so npm installs just the one
// that runs here. Every package carries the same version. `bun run build` writes dist/npm/ for this
// machine's platform; `bun run release` writes them for every target (src/kernel/release.ts).
import { chmodSync, copyFileSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { hostTarget, type Target } from "../kernel/targets";
import manifest from "./manifest.json";

const root = join(import.meta.dir, "../..");
const SCOPE = "@quotas";

export const platformPackageName = (t: Target): string => `${SCOPE}/${t.name}`;
/** The directory name a package is written to (`quotas`, `quotas-linux-x64`). */
export const packageDirName = (t?: Target): string => (t ? `quotas-${t.name}` : "quotas");

function writeJson(path: string, value: unknown) {
  writeFileSync(path, `${JSON.stringify(value, null, 2)}\n`);
}

/** Writes `dir` whole through a temp sibling and a rename, so a reader never sees half of it. */
function writeDir(dir: string, fill: (tmp: string) => void): string {
  const tmp = `${dir}.${process.pid}.tmp`;
  rmSync(tmp, { recursive: true, force: true });
  mkdirSync(tmp, { recursive: true });
  try {
    fill(tmp);
  } catch (err) {
    rmSync(tmp, { recursive: true, force: true });
    throw err;
  }
  rmSync(dir, { recursive: true, force: true });
  renameSync(tmp, dir);
  return dir;
}

const common = (version: string) => ({
  version,
  license: manifest.license,
  repository: (manifest as { repository?: unknown }).repository,
});

/** `@quotas/<target>`: package.json, README.md and bin/quotas(.exe), a copy of `binary`. */
export function writePlatformPackage(t: Target, binary: string, outDir: string, version: string): string {
  return writeDir(outDir, (tmp) => {
    const exe = `bin/quotas${t.exe}`;
    writeJson(join(tmp, "package.json"), {
      name: platformPackageName(t),
      ...common(version),
      description: `The ${t.name} executable of quotas (installed by the \`quotas\` package; not meant to be installed by itself).`,
      os: [t.os],
      cpu: [t.cpu],
      ...(t.libc ? { libc: [t.libc] } : {}),
      files: [exe],
      preferUnplugged: true,
    });
    writeFileSync(join(tmp, "README.md"), `# ${platformPackageName(t)}\n\nThe ${t.name} executable of [quotas](https://www.npmjs.com/package/${manifest.name}). Install \`${manifest.name}\`, not this package: npm picks the platform package that fits the machine.\n`);
    mkdirSync(join(tmp, "bin"));
    copyFileSync(binary, join(tmp, exe));
    chmodSync(join(tmp, exe), 0o755);
  });
}

/**
 * `quotas`: package.json (the manifest, `bin`, the postinstall and one optional dependency per target,
 * all at `version`), README.md (docs/quotas/README.md), bin/quotas (the Node launcher until the
 * postinstall replaces it with the executable), install.cjs and lib/platform.cjs.
 */
export function writeMainPackage(targets: Target[], outDir: string, version: string): string {
  return writeDir(outDir, (tmp) => {
    writeJson(join(tmp, "package.json"), {
      ...manifest,
      ...common(version),
      bin: { quotas: "bin/quotas" },
      scripts: { postinstall: "node install.cjs" },
      optionalDependencies: Object.fromEntries(targets.map((t) => [platformPackageName(t), version])),
      files: ["bin/quotas", "install.cjs", "lib/platform.cjs"],
      engines: { node: ">=18" },
    });
    writeFileSync(join(tmp, "README.md"), readFileSync(join(root, "docs/quotas/README.md")));
    const byPlatform: Record<string, string[]> = {};
    for (const t of targets) (byPlatform[`${t.os} ${t.cpu}`] ??= []).push(platformPackageName(t));
    const src = (f: string) => readFileSync(join(import.meta.dir, "npm", f), "utf8");
    mkdirSync(join(tmp, "bin"));
    mkdirSync(join(tmp, "lib"));
    writeFileSync(join(tmp, "lib/platform.cjs"), src("platform.cjs").replace("/* PACKAGES */ {}", JSON.stringify(byPlatform)));
    writeFileSync(join(tmp, "install.cjs"), src("install.cjs"));
    writeFileSync(join(tmp, "bin/quotas"), src("launcher.cjs"));
    chmodSync(join(tmp, "bin/quotas"), 0o755);
  });
}

/** Writes the main package and one platform package per `binaries` entry into `outDir/<packageDirName>`. */
export function writeNpmPackages(binaries: { target: Target; binary: string }[], outDir: string, version: string): string[] {
  mkdirSync(outDir, { recursive: true });
  return [
    writeMainPackage(binaries.map((b) => b.target), join(outDir, packageDirName()), version),
    ...binaries.map((b) => writePlatformPackage(b.target, b.binary, join(outDir, packageDirName(b.target)), version)),
  ];
}

if (import.meta.main) {
  const t = hostTarget();
  if (!t) {
    process.stderr.write(`npm-package: no quotas target for ${process.platform}-${process.arch}\n`);
    process.exit(1);
  }
  const { version } = await import("../../package.json");
  const dirs = writeNpmPackages([{ target: t, binary: join(root, "dist/quotas") }], join(root, "dist/npm"), version);
  console.log(`wrote the quotas npm packages (${manifest.name}@${version}, ${platformPackageName(t)}) to ${dirs.map((d) => d.slice(root.length + 1)).join(", ")}`);
}
