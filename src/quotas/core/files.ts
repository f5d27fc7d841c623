// Our own files (caches, config edits): atomic writes and a small lock file between processes.
import { dirname } from "./context";

// node:fs is loaded on first use (see context.ts): a warm statusline only reads, and reads with Bun.file.
const fs = () => require("node:fs") as typeof import("node:fs");

/**
 * Reads a text file for the statusline; undefined when it is missing, empty or unreadable. Bun.mmap is
 * synchronous and needs neither node:fs (about 2 ms to load) nor Bun.file's async read, which starts a
 * thread pool (3 threads, 2-3 ms). The mapping is copied into a string at once; our own files are only
 * ever replaced by rename, so the mapped inode never changes under us.
 */
export function readTextFast(path: string): string | undefined {
  try {
    return new TextDecoder().decode(Bun.mmap(path));
  } catch {
    return undefined;
  }
}

/** Writes via a unique temp file + rename, so readers see the old or the new file, never a mix. */
export function writeAtomic(path: string, text: string): void {
  const f = fs();
  f.mkdirSync(dirname(path), { recursive: true });
  const tmp = `${path}.${process.pid}.${Math.random().toString(36).slice(2)}.tmp`;
  try {
    f.writeFileSync(tmp, text, { mode: 0o600 });
    f.renameSync(tmp, path);
  } catch (err) {
    try {
      f.unlinkSync(tmp);
    } catch {}
    throw err;
  }
}

export function readText(path: string): string | undefined {
  try {
    return fs().readFileSync(path, "utf8");
  } catch {
    return undefined;
  }
}

/**
 * Creates `path` exclusively; true when this process now holds it. A lock older than `staleMs` is
 * considered abandoned (its holder crashed) and taken over.
 */
export function tryLock(path: string, staleMs: number, now = Date.now()): boolean {
  const f = fs();
  f.mkdirSync(dirname(path), { recursive: true });
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      f.closeSync(f.openSync(path, "wx"));
      return true;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== "EEXIST") return false;
      try {
        if (now - f.statSync(path).mtimeMs < staleMs) return false;
        f.unlinkSync(path);
      } catch {
        // someone else removed or replaced it: try again
      }
    }
  }
  return false;
}

export function unlock(path: string): void {
  try {
    fs().unlinkSync(path);
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
