// Compiles every executable under bin/*.ts into dist/<name> as the house rules require. The e2e tests
// compile through `compile` too, so tests and `bun run build` always produce the same binaries.
import { mkdirSync, readdirSync, renameSync } from "node:fs";
import { basename, join } from "node:path";

export const root = join(import.meta.dir, "../..");

// Executables precompiled to bytecode for a faster start (quotas runs in shell prompts). Their entry
// must not use top-level await. They are also split into ESM chunks, so a run loads only the code its
// mode imports (the statusline's chunk is a fraction of the whole tool).
const FAST_START = new Set(["quotas"]);
const fastStartFlags = ["--bytecode", "--splitting", "--format", "esm"];

// Worker-thread entries an executable starts with `new Worker(...)`: bundled as extra entry points,
// so the binary embeds them under its project-root path (see src/automation/offthread/pool.ts).
const WORKER_ENTRIES: Record<string, string[]> = {
  "automation-server": ["src/automation/offthread/tasks.ts"],
};

/**
 * Compiles bin/<name>.ts into `outfile` atomically (a temp name, then rename), so a binary that a
 * test or a user is running is never overwritten in place. Throws with the compiler's output.
 */
export async function compile(name: string, outfile = join(root, "dist", name)): Promise<string> {
  mkdirSync(join(outfile, ".."), { recursive: true });
  const tmp = `${outfile}.${process.pid}.tmp`;
  const proc = Bun.spawn(
    [
      process.execPath, "build", "--compile", "--target", "bun",
      "--minify-whitespace", "--minify-syntax",
      "--no-compile-autoload-dotenv", "--no-compile-autoload-bunfig",
      ...(FAST_START.has(name) ? fastStartFlags : []),
      join("bin", `${name}.ts`), ...(WORKER_ENTRIES[name] ?? []), "--outfile", tmp,
    ],
    { cwd: root, stdout: "pipe", stderr: "pipe" },
  );
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
