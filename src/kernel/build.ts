// Compiles every executable under bin/*.ts into dist/<name> as the house rules require.
import { readdirSync } from "node:fs";
import { basename, join } from "node:path";

const root = join(import.meta.dir, "../..");
const only = process.argv.slice(2);
const entries = readdirSync(join(root, "bin"))
  .filter((f) => f.endsWith(".ts"))
  .filter((f) => only.length === 0 || only.includes(basename(f, ".ts")));

// Executables precompiled to bytecode for a faster start (quotas runs in shell prompts). Their entry
// must not use top-level await. They are also split into ESM chunks, so a run loads only the code its
// mode imports (the statusline's chunk is a fraction of the whole tool).
const BYTECODE = new Set(["quotas"]);
const fastStartFlags = ["--bytecode", "--splitting", "--format", "esm"];

// Worker-thread modules an executable starts with `new Worker`: compiled in as extra entrypoints.
// automation-server runs workflow scripts on workers so a runaway script cannot stall the server.
const WORKERS: Record<string, string[]> = { "automation-server": ["src/automation/engine/sandbox/worker.ts"] };

let failed = false;
for (const entry of entries) {
  const name = basename(entry, ".ts");
  const started = performance.now();
  const proc = Bun.spawnSync(
    [
      process.execPath, "build", "--compile", "--target", "bun",
      "--minify-whitespace", "--minify-syntax",
      "--no-compile-autoload-dotenv", "--no-compile-autoload-bunfig",
      ...(BYTECODE.has(name) ? fastStartFlags : []),
      join("bin", entry), ...(WORKERS[name] ?? []), "--outfile", join("dist", name),
    ],
    { cwd: root, stdout: "pipe", stderr: "pipe" },
  );
  if (proc.exitCode !== 0) {
    failed = true;
    process.stderr.write(`build ${name} failed:\n${proc.stdout.toString()}${proc.stderr.toString()}\n`);
    continue;
  }
  console.log(`built dist/${name} in ${Math.round(performance.now() - started)} ms`);
}
process.exit(failed ? 1 : 0);
