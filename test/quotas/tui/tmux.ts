// A real terminal for TUI tests: a private tmux server (own socket, no user config) running a shell,
// with send-keys, capture-pane, the pane's raw output (pipe-pane) and its cursor/alternate-screen state.
import { expect } from "bun:test";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

export const PROMPT = "READY$ ";

export class Tmux {
  readonly socket: string;
  readonly dir: string;
  readonly rawFile: string;

  private constructor() {
    this.dir = mkdtempSync(join(tmpdir(), "qtui-tmux-"));
    this.socket = join(this.dir, "sock");
    this.rawFile = join(this.dir, "raw.out");
  }

  /**
   * Starts a `width`×`height` terminal running a plain bash with prompt `READY$ ` in `cwd`, with `env`
   * (and only PATH/HOME/TERM from outside). The pane's raw output goes to `rawFile`.
   */
  static async start(opts: { width: number; height: number; env: Record<string, string>; cwd: string }): Promise<Tmux> {
    const t = new Tmux();
    const env = { PATH: process.env.PATH ?? "/usr/bin:/bin", TERM: "xterm-256color", PS1: PROMPT, ...opts.env };
    // tmux takes PATH from the client, not from -e: it is set on the shell's command line instead.
    const envArgs = Object.entries(env).flatMap(([k, v]) => ["-e", `${k}=${v}`]);
    t.run(["-f", "/dev/null", "new-session", "-d", "-s", "t", "-x", String(opts.width), "-y", String(opts.height), "-c", opts.cwd, ...envArgs, `env PS1='${PROMPT}' PATH='${env.PATH}' bash --norc --noprofile -i`]);
    try {
      t.run(["set-option", "-g", "status", "off"]);
      t.run(["set-option", "-g", "escape-time", "0"]);
      t.run(["resize-window", "-t", "t", "-x", String(opts.width), "-y", String(opts.height)]);
      await t.waitFor((s) => s.includes(PROMPT.trim()));
      t.run(["pipe-pane", "-t", "t", "-o", `cat >> ${t.rawFile}`]);
      return t;
    } catch (err) {
      t.stop();
      throw err;
    }
  }

  run(args: string[]): string {
    // The server inherits this environment: keep the outside world (the real HOME, TMUX) out of it.
    const env = { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: this.dir, TMUX_TMPDIR: this.dir };
    const p = Bun.spawnSync(["tmux", "-S", this.socket, ...args], { stdout: "pipe", stderr: "pipe", env });
    if (p.exitCode !== 0) throw new Error(`tmux ${args.join(" ")}: ${p.stderr.toString()}`);
    return p.stdout.toString();
  }

  /** Types a command line at the shell prompt and presses Enter. */
  type(line: string): void {
    this.run(["send-keys", "-t", "t", "-l", line]);
    this.run(["send-keys", "-t", "t", "Enter"]);
  }

  /** tmux key names: "Down", "Enter", "Escape", "Tab", "PPage", "C-c", "q", ... */
  keys(...keys: string[]): void {
    for (const k of keys) this.run(["send-keys", "-t", "t", k]);
  }

  /** The visible screen as text, one string per row. */
  screen(): string[] {
    return this.run(["capture-pane", "-p", "-t", "t"]).replace(/\n$/, "").split("\n");
  }

  text(): string {
    return this.screen().join("\n");
  }

  /** Pane properties, e.g. `#{cursor_flag}` (1 when the cursor is visible), `#{alternate_on}`. */
  display(format: string): string {
    return this.run(["display-message", "-p", "-t", "t", format]).trim();
  }

  resize(width: number, height: number): void {
    this.run(["resize-window", "-t", "t", "-x", String(width), "-y", String(height)]);
  }

  /** Everything the programs in the pane wrote, escape sequences included. */
  raw(): string {
    try {
      return readFileSync(this.rawFile, "latin1");
    } catch {
      return "";
    }
  }

  /** Waits until the raw output satisfies `pred` (it reaches the file a little after the screen). */
  async waitForRaw(pred: (raw: string) => boolean, what = "raw output", timeoutMs = 10_000): Promise<string> {
    const until = Date.now() + timeoutMs;
    while (Date.now() < until) {
      const raw = this.raw();
      if (pred(raw)) return raw;
      await Bun.sleep(25);
    }
    throw new Error(`timed out waiting for ${what} in the pane's output`);
  }

  /** All a program wrote before it left the alternate screen (call after it quit). */
  rawAfterExit(): Promise<string> {
    return this.waitForRaw((r) => r.includes("\x1b[?1049l"), "the alternate screen left");
  }

  /** Waits until the raw output stops growing for `quietMs`; returns its length. */
  async rawSettled(quietMs = 300): Promise<number> {
    let len = this.raw().length;
    for (;;) {
      await Bun.sleep(quietMs);
      const now = this.raw().length;
      if (now === len) return now;
      len = now;
    }
  }

  /** Waits until `pred` holds for a screen that is not changing (unless `settle` is false). */
  async waitFor(pred: (screen: string) => boolean, what = "screen condition", timeoutMs = 10_000, settle = true): Promise<string> {
    const until = Date.now() + timeoutMs;
    let last = "";
    while (Date.now() < until) {
      last = this.text();
      if (pred(last)) {
        if (!settle) return last;
        // A frame may be caught half written: only a screen that stays the same counts.
        await Bun.sleep(40);
        const again = this.text();
        if (again === last) return last;
        continue;
      }
      await Bun.sleep(25);
    }
    throw new Error(`timed out waiting for ${what}; screen was:\n${last}`);
  }

  waitForText(text: string, timeoutMs?: number): Promise<string> {
    return this.waitFor((s) => s.includes(text), JSON.stringify(text), timeoutMs);
  }

  /** Waits until the shell shows its prompt again on the normal screen (the program has exited). */
  waitForPrompt(timeoutMs?: number): Promise<string> {
    return this.waitFor(
      (s) => s.trimEnd().endsWith(PROMPT.trim()) && this.display("#{alternate_on}") === "0" && this.foregroundPid() === null,
      "the shell prompt",
      timeoutMs,
    );
  }

  /** Pid of the foreground process of the pane (the program started from the shell). */
  foregroundPid(): number | null {
    const shell = Number(this.display("#{pane_pid}"));
    const p = Bun.spawnSync(["pgrep", "-P", String(shell)], { stdout: "pipe" });
    const pid = Number(p.stdout.toString().trim().split("\n")[0]);
    return pid > 0 ? pid : null;
  }

  stop(): void {
    try {
      this.run(["kill-server"]);
    } catch {
      // Already gone.
    }
    rmSync(this.dir, { recursive: true, force: true });
  }
}

/**
 * After the TUI exits with `code`: main screen back (the command line typed before it is visible
 * again), cursor visible, raw mode off (typed text is echoed and read by the shell).
 */
export async function expectRestored(t: Tmux, code: number, commandLine: string): Promise<void> {
  await t.waitForPrompt();
  t.type("echo rc=$?");
  await t.waitForText(`rc=${code}`);
  expect(t.display("#{alternate_on}")).toBe("0");
  expect(t.display("#{cursor_flag}")).toBe("1");
  const screen = t.text();
  expect(screen).toContain(commandLine);
  expect(screen).not.toContain("providers loaded");
  expect(screen.trimEnd().endsWith(PROMPT.trim())).toBe(true);
  t.type("echo $((20+22))ok");
  await t.waitForText("42ok");
  expect(t.text().trimEnd().endsWith(PROMPT.trim())).toBe(true);
}
