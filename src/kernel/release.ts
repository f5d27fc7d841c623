// `bun run release [--targets a,b] [--products a,b] [--version X.Y.Z] [--out DIR]`: cross-compiles the three executables
// for every target (src/kernel/targets.ts) and writes dist/release/:
//   <server>-<version>-<target>.tar.gz (.zip for Windows): <server>-<version>-<target>/{<server>, LICENSE, README.md}
//   SHA256SUMS                         sha256sum -c input for the archives
//   npm/quotas, npm/quotas-<target>    the npm packages (src/quotas/npm-package.ts), ready for `npm publish`
//   bin/<target>/<name>                every executable as built (what the archives and packages hold)
// Everything is written into a temp dir beside the output and renamed at the end: a failed release
// leaves no half-written dist/release/ (and an earlier complete one stays as it was).
import { mkdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { version as repoVersion } from "../../package.json";
import { writeNpmPackages } from "../quotas/npm-package";
import { type Entry, sha256sums, tarGz, zip } from "./archive";
import { type BuildInfo, compile, currentBuildInfo, root, running } from "./build";
import { parseTargets, type Target, TARGETS } from "./targets";

export const SERVERS = ["order-server", "automation-server"];
export const PRODUCTS = [...SERVERS, "quotas"];

// semver.org's grammar without build metadata (npm ignores `+...`, so two releases would collide).
const SEMVER = /^(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)(?:-((?:0|[1-9]\d*|\d*[a-zA-Z-][0-9a-zA-Z-]*)(?:\.(?:0|[1-9]\d*|\d*[a-zA-Z-][0-9a-zA-Z-]*))*))?$/;

/** An expected failure: one line, exit `code` (2 for a bad command line). */
export class ReleaseError extends Error {
  constructor(message: string, readonly code = 1) {
    super(message);
  }
}

export interface ReleaseOptions {
  targets: Target[];
  /** Which executables (default all three); a partial release is for tests and trial runs. */
  products: string[];
  version: string;
  out: string;
  log?: (line: string) => void;
}

/** Parses the command line; throws ReleaseError (one line) for anything it cannot take. */
export function parseReleaseArgs(argv: string[]): ReleaseOptions {
  let targets = TARGETS;
  let products = PRODUCTS;
  let version = repoVersion;
  let out = join(root, "dist/release");
  for (let i = 0; i < argv.length; i++) {
    const [flag, inline] = argv[i].startsWith("--") && argv[i].includes("=") ? [argv[i].slice(0, argv[i].indexOf("=")), argv[i].slice(argv[i].indexOf("=") + 1)] : [argv[i], undefined];
    const value = () => {
      const v = inline ?? argv[++i];
      if (v === undefined) throw new ReleaseError(`${flag} needs a value`, 2);
      return v;
    };
    if (flag === "--targets") {
      try {
        targets = parseTargets(value());
      } catch (err) {
        throw new ReleaseError((err as Error).message, 2);
      }
    } else if (flag === "--products") {
      products = value().split(",").filter(Boolean);
      const unknown = products.filter((p) => !PRODUCTS.includes(p));
      if (unknown.length || !products.length) throw new ReleaseError(`unknown product ${unknown.map((p) => `"${p}"`).join(", ")}; valid: ${PRODUCTS.join(", ")}`, 2);
    } else if (flag === "--version") version = value();
    else if (flag === "--out") out = resolve(value());
    else throw new ReleaseError(`unknown argument ${argv[i]} (takes --targets a,b --products a,b --version X.Y.Z --out DIR)`, 2);
  }
  if (!SEMVER.test(version)) throw new ReleaseError(`version "${version}" is not a semver release number (X.Y.Z or X.Y.Z-pre, no "v", no build metadata)`, 2);
  if (/(^|[.-])dirty([.-]|$)/.test(version)) throw new ReleaseError(`version "${version}" marks a modified working tree: commit, then release a clean version`, 2);
  return { targets, products, version, out };
}

const archiveName = (server: string, version: string, t: Target) => `${server}-${version}-${t.name}${t.os === "win32" ? ".zip" : ".tar.gz"}`;

function readme(server: string, info: BuildInfo, t: Target): string {
  const exe = `${server}${t.exe}`;
  const doc = server === "order-server" ? "docs/orders/install.md" : "docs/automation/install.md";
  return `# ${server} ${info.version} (${t.name})

A self-contained executable: no runtime to install. Built from commit ${info.commit} on ${info.date}.

    ${t.os === "win32" ? exe : `./${exe}`} --version
    ${t.os === "win32" ? exe : `./${exe}`} ${server === "order-server" ? "--profile demo" : "--demo"} --port 8080   # try it with demo data
    ${t.os === "win32" ? exe : `./${exe}`} --help                 # every flag and environment variable

Check the download against SHA256SUMS of the release (\`sha256sum -c SHA256SUMS --ignore-missing\`).
Install as a service (systemd unit with hardening options): ${doc} in the source repository.
License: MIT (LICENSE).
`;
}

/**
 * Fetches the Bun runtime of every target up front (Bun downloads it on the first compile for a
 * target and caches it), so a target that cannot be fetched fails in seconds, before any real build.
 */
async function fetchRuntimes(targets: Target[], tmp: string, log: (l: string) => void) {
  const stub = join(tmp, "runtime-check.ts");
  writeFileSync(stub, "export {};\n");
  for (const t of targets) {
    const out = join(tmp, `runtime-check-${t.name}${t.exe}`);
    const p = Bun.spawn([process.execPath, "build", "--compile", "--target", t.bun, stub, "--outfile", out], { cwd: tmp, stdout: "pipe", stderr: "pipe" });
    running.add(p);
    void p.exited.then(() => running.delete(p));
    const [code, stdout, stderr] = await Promise.all([p.exited, new Response(p.stdout).text(), new Response(p.stderr).text()]);
    rmSync(out, { force: true });
    if (code !== 0) {
      const why = `${stdout}\n${stderr}`.split("\n").map((l) => l.trim()).filter((l) => l && !/^\[\d|^Downloading|^Decompressing|^Extracting/.test(l)).pop() ?? `exit ${code}`;
      throw new ReleaseError(`cannot fetch the Bun runtime for ${t.name} (${t.bun}): ${why.replace(/^error:\s*/i, "")}`);
    }
    log(`runtime for ${t.name}: ok`);
  }
  rmSync(stub);
}

/** Builds the release into `opts.out`. Throws ReleaseError (one line) on an expected failure. */
export async function release(opts: ReleaseOptions): Promise<{ files: string[]; seconds: number }> {
  const log = opts.log ?? ((l: string) => console.log(l));
  const started = performance.now();
  const info = { ...currentBuildInfo(opts.version) };
  const tmp = `${opts.out}.${process.pid}.tmp`;
  rmSync(tmp, { recursive: true, force: true });
  mkdirSync(tmp, { recursive: true });
  // Ctrl-C or a CI timeout mid-build: leave no temp dir of a few GB behind either.
  // The compiler children go first, or one would write into the removed directory after us.
  const interrupted = async (signal: NodeJS.Signals) => {
    const children = [...running];
    for (const c of children) c.kill("SIGKILL");
    await Promise.all(children.map((c) => c.exited));
    rmSync(tmp, { recursive: true, force: true });
    process.exit(signal === "SIGINT" ? 130 : 143);
  };
  process.once("SIGINT", interrupted).once("SIGTERM", interrupted);
  try {
    await fetchRuntimes(opts.targets, tmp, log);
    const built = new Map<string, string>();
    for (const t of opts.targets) {
      for (const name of PRODUCTS.filter((p) => opts.products.includes(p))) {
        const t0 = performance.now();
        const out = join(tmp, "bin", t.name, `${name}${t.exe}`);
        try {
          await compile(name, out, { target: t.bun, info });
        } catch (err) {
          const lines = (err as Error).message.split("\n").filter(Boolean);
          throw new ReleaseError(`build of ${name} for ${t.name} failed: ${lines.slice(1).pop() ?? lines[0]}`);
        }
        built.set(`${t.name}/${name}`, out);
        log(`built ${name} for ${t.name} in ${((performance.now() - t0) / 1000).toFixed(1)} s (${(statSync(out).size / 1e6).toFixed(1)} MB)`);
      }
    }
    const license = readFileSync(join(root, "LICENSE"));
    const mtime = Math.floor(Date.parse(info.date) / 1000);
    const archives: { name: string; data: Uint8Array }[] = [];
    for (const t of opts.targets) {
      for (const server of SERVERS.filter((p) => opts.products.includes(p))) {
        const t0 = performance.now();
        const dir = `${server}-${info.version}-${t.name}`;
        const entries: Entry[] = [
          { path: `${dir}/${server}${t.exe}`, data: readFileSync(built.get(`${t.name}/${server}`)!), mode: 0o755 },
          { path: `${dir}/LICENSE`, data: license, mode: 0o644 },
          { path: `${dir}/README.md`, data: Buffer.from(readme(server, info, t)), mode: 0o644 },
        ];
        const name = archiveName(server, info.version, t);
        const data = t.os === "win32" ? zip(entries, mtime) : tarGz(entries, mtime);
        writeFileSync(join(tmp, name), data);
        archives.push({ name, data });
        log(`packed ${name} in ${((performance.now() - t0) / 1000).toFixed(1)} s (${(data.length / 1e6).toFixed(1)} MB)`);
      }
    }
    writeFileSync(join(tmp, "SHA256SUMS"), sha256sums(archives));
    if (opts.products.includes("quotas")) writeNpmPackages(opts.targets.map((t) => ({ target: t, binary: built.get(`${t.name}/quotas`)! })), join(tmp, "npm"), info.version);
    writeFileSync(join(tmp, "release.json"), `${JSON.stringify({ ...info, targets: opts.targets.map((t) => t.name), products: opts.products, archives: archives.map((a) => a.name) }, null, 2)}\n`);
    mkdirSync(dirname(opts.out), { recursive: true });
    rmSync(opts.out, { recursive: true, force: true });
    renameSync(tmp, opts.out);
    return { files: archives.map((a) => a.name), seconds: (performance.now() - started) / 1000 };
  } catch (err) {
    rmSync(tmp, { recursive: true, force: true });
    throw err;
  } finally {
    process.off("SIGINT", interrupted).off("SIGTERM", interrupted);
  }
}

if (import.meta.main) {
  try {
    const opts = parseReleaseArgs(process.argv.slice(2));
    const { files, seconds } = await release(opts);
    console.log(`release ${opts.version}: ${files.length} archives, SHA256SUMS and the npm packages in ${opts.out.startsWith(root) ? opts.out.slice(root.length + 1) : opts.out} (${seconds.toFixed(0)} s)`);
  } catch (err) {
    if (!(err instanceof ReleaseError)) throw err;
    process.stderr.write(`release: ${err.message}\n`);
    process.exit(err.code);
  }
}
