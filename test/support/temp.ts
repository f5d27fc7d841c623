// Preloaded by `bun test` (bunfig.toml): every test process gets one temp root of its own and points
// TMPDIR at it, so every temp directory a test, a helper or a child process (compiled servers, git,
// PostgreSQL) makes lands inside it, and the root is removed after the last test file, however
// many afterAll hooks a failing test skipped. Tests still remove what they make as they go; this is
// the guarantee that a run leaves nothing behind (`.ci/run` checks the temp dir before and after).
import { afterAll, beforeEach } from "bun:test";
import { chmodSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileEndsInRunner, runFileEnds, runRunEnds } from "./file-end";

const root = mkdtempSync(join(tmpdir(), "bun-test-"));
// PostgreSQL runs as its own user inside it (test/support/postgres.ts): it must be able to traverse.
chmodSync(root, 0o755);
process.env.TMPDIR = root;

// The cleanups helpers registered for a test file (file-end.ts) run before the next file's first test
// (Bun.main names the file whose tests run), the last file's at the end.
fileEndsInRunner();
beforeEach(() => runFileEnds(Bun.main));

// An afterAll in a preload runs once, after every test file (Bun fires no "exit" event in `bun test`).
afterAll(async () => {
  await runFileEnds();
  // Servers that live across files (PostgreSQL) stop first: one still running writes into the root
  // while it is being removed, and the removal gives up.
  await runRunEnds();
  // A server being stopped may still write into its directory for a moment: retry briefly.
  for (let i = 0; i < 5; i++) {
    try {
      rmSync(root, { recursive: true, force: true });
      return;
    } catch {
      Bun.sleepSync(50);
    }
  }
});
