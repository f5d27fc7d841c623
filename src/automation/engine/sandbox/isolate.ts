// Runs sandboxed scripts in a small pool of child processes (child.ts). QuickJS checks its deadline
// only between bytecodes, so a loop over a heavy built-in (`while (true) bigArray.join()`) can overrun
// it by minutes. Worker threads cannot stop that: Worker.terminate() on a thread busy inside QuickJS's
// WASM returns, but the thread keeps burning a core until the built-in returns. A process can be
// SIGKILLed: a child still busy shortly after the script's deadline is killed, and the CPU is free.
import { existsSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { StepError } from "../errors";
import { SANDBOX_SUBCOMMAND, type ScriptJob, type ScriptReply } from "./child";
import type { ScriptLimits } from "./quickjs";

/**
 * How to start a child: a compiled executable runs itself with the hidden subcommand (it must dispatch
 * it, as bin/automation-server.ts does); from source, Bun runs child-main.ts.
 */
function childCommand(): string[] {
  const parent = String(process.pid); // the child dies with this process (see child.ts)
  if (import.meta.url.includes("$bunfs")) return [runningExecutable(), SANDBOX_SUBCOMMAND, parent];
  return [process.execPath, fileURLToPath(new URL("./child-main.ts", import.meta.url)), parent];
}

/**
 * The executable this process runs. On Linux /proc/self/exe, which reaches it even after an upgrade
 * replaced the file on disk (a rename over it, as installers and `bun build` do, unlinks the old one:
 * process.execPath then names a file that is gone, and every script step failed until a restart).
 */
function runningExecutable(): string {
  return process.platform === "linux" && existsSync("/proc/self/exe") ? "/proc/self/exe" : process.execPath;
}

const POOL = Math.min(4, Math.max(2, navigator.hardwareConcurrency || 2));
/** Time past the script's own deadline (which QuickJS usually honours) before its process is killed. */
const GRACE_MS = 500;

interface Pending {
  job: ScriptJob;
  resolve(value: unknown): void;
  reject(error: unknown): void;
  /** Written to a second child after the first was found dead. */
  resent?: boolean;
}

interface Child {
  proc: Bun.Subprocess<"pipe", "pipe", "ignore">;
  current?: Pending;
  timer?: ReturnType<typeof setTimeout>;
  dead: boolean;
}

let nextId = 1;
const queue: Pending[] = [];
const idle: Child[] = [];
const live = new Set<Child>();

function kill(c: Child): void {
  if (c.dead) return;
  c.dead = true;
  c.current = undefined;
  clearTimeout(c.timer);
  live.delete(c);
  const i = idle.indexOf(c);
  if (i >= 0) idle.splice(i, 1);
  try {
    c.proc.kill("SIGKILL");
  } catch {
    // already gone
  }
}

async function readReplies(c: Child): Promise<void> {
  const decoder = new TextDecoder();
  let buffered = "";
  try {
    for await (const chunk of c.proc.stdout) {
      buffered += decoder.decode(chunk, { stream: true });
      for (let nl = buffered.indexOf("\n"); nl >= 0; nl = buffered.indexOf("\n")) {
        const line = buffered.slice(0, nl);
        buffered = buffered.slice(nl + 1);
        if (line.trim()) settle(c, JSON.parse(line) as ScriptReply);
      }
    }
  } catch {
    // the pipe broke: handled as an exit below
  }
  const p = c.current;
  c.current = undefined;
  const unexpected = !c.dead;
  kill(c);
  if (p && unexpected) resendOrFail(p, "the script sandbox process died");
  pump();
}

function settle(c: Child, r: ScriptReply): void {
  const p = c.current;
  // A reply read after the child was killed (its script answered as its deadline or its step's
  // abort killed it) is dropped, and the child stays out of `idle`: the next script written to it
  // failed with EPIPE (1 test run in 8 under load).
  if (!p || p.job.id !== r.id || c.dead) return;
  clearTimeout(c.timer);
  c.current = undefined;
  idle.push(c);
  if (r.ok) p.resolve(r.value);
  else p.reject(new StepError(r.error.message, r.error.code, { retryable: r.error.retryable }));
  pump();
}

function spawn(): Child {
  const proc = Bun.spawn(childCommand(), { stdin: "pipe", stdout: "pipe", stderr: "ignore", env: {} });
  proc.unref();
  const c: Child = { proc, dead: false };
  live.add(c);
  void readReplies(c);
  return c;
}

/**
 * A job whose process died under it goes to another process, once: it may have died while idle
 * (killed from outside, or out of memory) before it read the job. Scripts have no side effects to
 * repeat; a script that kills its process twice fails.
 */
function resendOrFail(p: Pending, why: string): void {
  if (p.resent) return p.reject(new StepError(why, "script_error"));
  p.resent = true;
  queue.unshift(p);
}

function pump(): void {
  while (queue.length > 0) {
    let c = idle.pop();
    if (!c) {
      if (live.size >= POOL) return;
      try {
        c = spawn();
      } catch (e) {
        for (const p of queue.splice(0)) p.reject(new StepError(`the script sandbox cannot start: ${(e as Error).message}`, "script_error"));
        return;
      }
    }
    const p = queue.shift()!;
    const child = c;
    try {
      child.proc.stdin.write(JSON.stringify(p.job) + "\n");
      child.proc.stdin.flush();
    } catch (e) {
      // The child died while idle (its exit not read yet).
      kill(child);
      resendOrFail(p, `the script sandbox process died: ${(e as Error).message}`);
      continue;
    }
    child.current = p;
    child.timer = setTimeout(() => {
      kill(child);
      p.reject(new StepError("script exceeded its time limit and was stopped", "script_timeout"));
      pump();
    }, p.job.limits.timeoutMs + GRACE_MS);
  }
}

/**
 * Calls `function script(...args)` from `code` in a sandbox process. Aborting `signal` (step timeout,
 * shutdown interrupt) drops a queued script or kills the process running it.
 */
export function runSandboxed(code: string, args: unknown[], limits: ScriptLimits, signal?: AbortSignal): Promise<unknown> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const p: Pending = { job: { id: nextId++, code, args, limits }, resolve, reject };
    signal?.addEventListener(
      "abort",
      () => {
        const queued = queue.indexOf(p);
        if (queued >= 0) queue.splice(queued, 1);
        const running = [...live].find((c) => c.current === p);
        if (running) {
          kill(running);
          pump();
        }
        reject(signal.reason);
      },
      { once: true },
    );
    queue.push(p);
    pump();
  });
}

/** Kills every sandbox process (server shutdown); later scripts start new ones. */
export function stopSandboxes(): void {
  for (const c of [...live]) kill(c);
}

/** Process ids of the live sandbox processes (tests check that none is left burning CPU). */
export function sandboxPids(): number[] {
  return [...live].map((c) => c.proc.pid);
}
