// Background work runs as a detached child of this same executable (the compiled binary, or
// `bun bin/quotas.ts` in development), so the caller never waits for it.
import { spawn } from "node:child_process";

/** argv prefix that re-runs this program: [binary] when compiled, [bun, script] otherwise. */
export function selfCommand(): string[] {
  const compiled = Bun.main.startsWith("/$bunfs/") || /^[A-Z]:[\\/]~BUN[\\/]/.test(Bun.main);
  return compiled ? [process.execPath] : [process.execPath, Bun.main];
}

/** Starts `quotas <args>` detached with no stdio; returns at once. */
export function spawnDetached(args: string[]): void {
  const [cmd, ...pre] = selfCommand();
  try {
    const child = spawn(cmd, [...pre, ...args], { detached: true, stdio: "ignore", env: process.env });
    child.on("error", () => {});
    child.unref();
  } catch {
    // no background refresh this time; the next prompt tries again
  }
}
