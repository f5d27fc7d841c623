// Compiles every executable under bin/*.ts into dist/<name> as the house rules require. The e2e tests
// compile through `compile` too, so tests and `bun run build` always produce the same binaries.
import { mkdirSync, readdirSync, renameSync } from "node:fs";
import { basename, join } from "node:path";
import { version as repoVersion } from "../../package.json";

export const root = join(import.meta.dir, "../..");

/** What `--version` prints (src/kernel/build-info.ts), injected into the executable with `--define`. */
export interface BuildInfo {
  version: string;
  commit: string;
  date: string;
}

/**
 * The repository's version, its HEAD commit (short; `-dirty` when tracked files differ from it; `unknown`
 * outside a git checkout) and the build time: now, or SOURCE_DATE_EPOCH for a reproducible build.
 */
export function currentBuildInfo(version = repoVersion): BuildInfo {
  const git = (...args: string[]) => Bun.spawnSync(["git", ...args], { cwd: root, stdout: "pipe", stderr: "ignore" });
  const head = git("rev-parse", "--short=12", "HEAD");
  const commit = head.exitCode === 0 ? head.stdout.toString().trim() + (git("diff", "--quiet", "HEAD").exitCode === 0 ? "" : "-dirty") : "unknown";
  const epoch = Number(process.env.SOURCE_DATE_EPOCH);
  const date = (Number.isFinite(epoch) && process.env.SOURCE_DATE_EPOCH ? new Date(epoch * 1000) : new Date()).toISOString().replace(/\.\d{3}Z$/, "Z");
  return { version, commit, date };
}

let defaultInfo: BuildInfo | undefined;

/** The compiler processes running now: a release stopped midway kills them before it cleans up. */
export const running = new Set<Bun.Subprocess>();

// Executables precompiled to bytecode for a faster start (quotas runs in shell prompts). Their entry
// must not use top-level await. They are also split into ESM chunks, so a run loads only the code its
// mode imports (the statusline's chunk is a fraction of the whole tool).
const FAST_START = new Set(["quotas"]);
const fastStartFlags = ["--bytecode", "--splitting", "--format", "esm"];

// Executables whose embedded web page is split into chunks: the automation console's first load
// carries only its shell and pages, and the YAML editor and the diff come as chunks that the pages
// needing them import() (Bun's HTML import splits only under --splitting).
const SPLIT = new Set(["automation-server"]);

// Worker-thread entries an executable starts with `new Worker(...)`: bundled as extra entry points,
// so the binary embeds them under its project-root path (see src/automation/offthread/pool.ts).
const WORKER_ENTRIES: Record<string, string[]> = {
  "automation-server": ["src/automation/offthread-tasks.ts"],
};

/**
 * Compiles bin/<name>.ts into `outfile` atomically (a temp name, then rename), so a binary that a
 * test or a user is running is never overwritten in place. Throws with the compiler's output.
 * `target` is a Bun compile target (`bun-linux-arm64`, ...; default: this machine); a Windows target
 * needs an `outfile` ending in `.exe`. `env` reaches the compiler (e.g. BUN_INSTALL_CACHE_DIR).
 */
export async function compile(
  name: string,
  outfile = join(root, "dist", name),
  opts: { target?: string; info?: BuildInfo; env?: Record<string, string | undefined> } = {},
): Promise<string> {
  mkdirSync(join(outfile, ".."), { recursive: true });
  // bun appends .exe to a Windows outfile that lacks it: keep the suffix last.
  const tmp = outfile.endsWith(".exe") ? `${outfile.slice(0, -4)}.${process.pid}.tmp.exe` : `${outfile}.${process.pid}.tmp`;
  const info = opts.info ?? (defaultInfo ??= currentBuildInfo());
  const proc = Bun.spawn(
    [
      process.execPath, "build", "--compile", "--target", opts.target ?? "bun",
      "--minify-whitespace", "--minify-syntax",
      "--no-compile-autoload-dotenv", "--no-compile-autoload-bunfig",
      "--define", `BUILD_VERSION=${JSON.stringify(info.version)}`,
      "--define", `BUILD_COMMIT=${JSON.stringify(info.commit)}`,
      "--define", `BUILD_DATE=${JSON.stringify(info.date)}`,
      ...(FAST_START.has(name) ? fastStartFlags : SPLIT.has(name) ? ["--splitting"] : []),
      join("bin", `${name}.ts`), ...(WORKER_ENTRIES[name] ?? []), "--outfile", tmp,
    ],
    { cwd: root, stdout: "pipe", stderr: "pipe", env: { ...process.env, ...opts.env } },
  );
  running.add(proc);
  void proc.exited.then(() => running.delete(proc));
  const [code, out, err] = await Promise.all([proc.exited, new Response(proc.stdout).text(), new Response(proc.stderr).text()]);
  if (code !== 0) throw new Error(`build of ${name} failed:\n${out}${err}`);
  renameSync(tmp, outfile);
  return outfile;
}

if (import.meta.main) {
  const only = process.argv.slice(2);
  const names = readdirSync(join(root, "bin"))
    .filter((f) => f.endsWith(".ts"))
    .map((f) => basename(f, ".ts"))
    .filter((n) => only.length === 0 || only.includes(n));
  let failed = false;
  for (const name of names) {
    const started = performance.now();
    try {
      await compile(name);
      console.log(`built dist/${name} in ${Math.round(performance.now() - started)} ms`);
    } catch (err) {
      failed = true;
      process.stderr.write(`${(err as Error).message}\n`);
    }
  }
  process.exit(failed ? 1 : 0);
}
