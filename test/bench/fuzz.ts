// The long fuzz run (not in CI): the in-process suites of test/fuzz/ with many more cases.
//   bun test/bench/fuzz.ts [CASES]      (default 50000 per server; FUZZ_SEED=N replays one run)
import { join } from "node:path";

const root = join(import.meta.dir, "../..");
const cases = Number(process.argv[2] ?? process.env.FUZZ_RUNS ?? 50_000);
const seed = process.env.FUZZ_SEED ?? String((Date.now() ^ (Math.random() * 2 ** 31)) | 0);
console.log(`fuzz: ${cases} cases per server, seed ${seed} (replay with FUZZ_SEED=${seed})`);
const proc = Bun.spawn([process.execPath, "test", "--timeout", String(Math.max(120_000, cases * 50)), "test/fuzz/"], {
  cwd: root,
  env: { ...process.env, FUZZ_RUNS: String(cases), FUZZ_SEED: seed },
  stdout: "inherit",
  stderr: "inherit",
});
process.exit(await proc.exited);
