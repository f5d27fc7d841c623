// The real terminal behind the driver: raw-mode stdin, synchronous writes to stdout, size and resize.
import { writeSync } from "node:fs";

export interface Terminal {
  isTTY: boolean;
  color: boolean;
  size(): { width: number; height: number };
  write(s: string): void;
  setRaw(on: boolean): void;
  /** Subscribes to input; returns the unsubscribe function. */
  onInput(cb: (chunk: string) => void): () => void;
  /** Subscribes to size changes; returns the unsubscribe function. */
  onResize(cb: () => void): () => void;
}

/** NO_COLOR (no-color.org: present and not empty) or TERM=dumb turns colour off. */
export function colorEnabled(env: Record<string, string | undefined>): boolean {
  if (env.NO_COLOR !== undefined && env.NO_COLOR !== "") return false;
  return env.TERM !== "dumb";
}

/** Writes all of `s` to `fd`, retrying when a non-blocking tty is momentarily full. */
export function writeAll(fd: number, s: string): void {
  let buf = Buffer.from(s, "utf8");
  while (buf.length > 0) {
    try {
      const n = writeSync(fd, buf);
      buf = buf.subarray(n);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== "EAGAIN") throw err;
      Bun.sleepSync(1);
    }
  }
}

export function processTerminal(): Terminal {
  const stdin = process.stdin;
  const stdout = process.stdout;
  return {
    isTTY: Boolean(stdin.isTTY && stdout.isTTY),
    color: colorEnabled(process.env),
    size() {
      const [width, height] = stdout.getWindowSize?.() ?? [stdout.columns, stdout.rows];
      return { width: width || 80, height: height || 24 };
    },
    write: (s) => writeAll(1, s),
    setRaw(on) {
      if (stdin.isTTY) stdin.setRawMode(on);
      if (on) stdin.resume();
      else stdin.pause();
    },
    onInput(cb) {
      const listener = (chunk: Buffer | string) => cb(typeof chunk === "string" ? chunk : chunk.toString("utf8"));
      stdin.on("data", listener);
      return () => stdin.off("data", listener);
    },
    onResize(cb) {
      process.on("SIGWINCH", cb);
      return () => process.off("SIGWINCH", cb);
    },
  };
}
