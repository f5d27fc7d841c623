// Cleanups that run when the current test file is done. A helper module imported by many test files is
// evaluated once per `bun test` process, so an afterAll at its top level runs only after the first file
// that imported it: every later file's servers, pools and directories would stay open to the end of the
// run (on PostgreSQL: hundreds of pools still polling). Helpers register here instead; the preload
// (temp.ts) runs a file's cleanups before the first test of the next file, and the rest at the very end.
// Outside the test runner (benchmarks import some helpers) a cleanup runs at process exit (sync part only).

type Cleanup = () => unknown;
const pending: { file: string; fn: Cleanup }[] = [];
let inRunner = false;

/** `fn` runs once the current test file is done; cleanups run newest first (a pool stops before its database closes). */
export function atFileEnd(fn: Cleanup): void {
  if (!inRunner) {
    process.on("exit", () => void fn());
    return;
  }
  pending.push({ file: Bun.main, fn });
}

/** Runs the cleanups of every file but `current` (all of them without it), newest first. Called by the preload only. */
export async function runFileEnds(current?: string): Promise<void> {
  for (let i = pending.length - 1; i >= 0; i--) {
    if (pending[i].file === current) continue;
    const [{ fn }] = pending.splice(i, 1);
    try {
      await fn();
    } catch (err) {
      console.error("a test file's cleanup failed:", err);
    }
  }
}

const runEnd: Cleanup[] = [];

/**
 * `fn` runs once every test file is done, before the preload removes the run's temp root: for what
 * lives across files and writes inside that root (the shared PostgreSQL server). Outside the runner: at exit.
 */
export function atRunEnd(fn: Cleanup): void {
  if (!inRunner) {
    process.on("exit", () => void fn());
    return;
  }
  runEnd.push(fn);
}

/** Runs the atRunEnd cleanups, newest first. Called by the preload only, after runFileEnds(). */
export async function runRunEnds(): Promise<void> {
  for (const fn of runEnd.splice(0).reverse()) {
    try {
      await fn();
    } catch (err) {
      console.error("a test run's cleanup failed:", err);
    }
  }
}

/** The preload calls this once: from then on cleanups wait for their file's end. */
export function fileEndsInRunner(): void {
  inRunner = true;
}
