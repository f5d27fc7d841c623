// Our own files (caches, config edits): atomic writes and a small lock file between processes.
import { closeSync, mkdirSync, openSync, readFileSync, renameSync, statSync, unlinkSync, writeFileSync } from "node:fs";
import { dirname } from "node:path";

/** Writes via a unique temp file + rename, so readers see the old or the new file, never a mix. */
export function writeAtomic(path: string, text: string): void {
  mkdirSync(dirname(path), { recursive: true });
  const tmp = `${path}.${process.pid}.${Math.random().toString(36).slice(2)}.tmp`;
  try {
    writeFileSync(tmp, text, { mode: 0o600 });
    renameSync(tmp, path);
  } catch (err) {
    try {
      unlinkSync(tmp);
    } catch {}
    throw err;
  }
}

export function readText(path: string): string | undefined {
  try {
    return readFileSync(path, "utf8");
  } catch {
    return undefined;
  }
}

/**
 * Creates `path` exclusively; true when this process now holds it. A lock older than `staleMs` is
 * considered abandoned (its holder crashed) and taken over.
 */
export function tryLock(path: string, staleMs: number, now = Date.now()): boolean {
  mkdirSync(dirname(path), { recursive: true });
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      closeSync(openSync(path, "wx"));
      return true;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== "EEXIST") return false;
      try {
        if (now - statSync(path).mtimeMs < staleMs) return false;
        unlinkSync(path);
      } catch {
        // someone else removed or replaced it: try again
      }
    }
  }
  return false;
}

export function unlock(path: string): void {
  try {
    unlinkSync(path);
  } catch {}
}

/** Runs `fn` holding the lock, waiting for it up to `waitMs` (then proceeding anyway: writes stay atomic). */
export async function withLock<T>(path: string, fn: () => T, waitMs = 3000, staleMs = 10_000): Promise<T> {
  const until = Date.now() + waitMs;
  let held = tryLock(path, staleMs);
  while (!held && Date.now() < until) {
    await Bun.sleep(10 + Math.random() * 20);
    held = tryLock(path, staleMs);
  }
  try {
    return fn();
  } finally {
    if (held) unlock(path);
  }
}
