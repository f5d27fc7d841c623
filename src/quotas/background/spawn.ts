// Background work runs as a detached child of this same executable (the compiled binary, or
// `bun bin/quotas.ts` in development), so the caller never waits for it.

/** argv prefix that re-runs this program: [binary] when compiled, [bun, script] otherwise. */
export function selfCommand(): string[] {
  const compiled = Bun.main.startsWith("/$bunfs/") || /^[A-Z]:[\\/]~BUN[\\/]/.test(Bun.main);
  return compiled ? [process.execPath] : [process.execPath, Bun.main];
}

/** Starts `quotas <args>` detached with no stdio; returns at once. */
export function spawnDetached(args: string[]): void {
  try {
    const child = Bun.spawn([...selfCommand(), ...args], { detached: true, stdin: "ignore", stdout: "ignore", stderr: "ignore", env: process.env });
    child.unref();
  } catch {
    // no background refresh this time; the next prompt tries again
  }
}
