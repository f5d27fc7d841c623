// Runs sandboxed scripts on worker threads. QuickJS checks its deadline only between bytecodes, so a
// loop over a heavy built-in (`while (true) bigArray.join()`) can overrun it by minutes; on the main
// thread that would stall the whole server. Here each script runs on a pooled worker, and a worker
// that is still busy shortly after the script's deadline is terminated, which stops it for sure.
// If workers cannot start (a binary built without the worker entrypoint) scripts run in-thread.
import { StepError } from "../errors";
import { runScript, type ScriptLimits } from "./quickjs";
import type { ScriptJob, ScriptReply } from "./worker";

/** Where the worker module lives: beside this file from source; at its project path inside a compiled binary. */
const WORKER_ENTRY = import.meta.url.includes("$bunfs")
  ? "/$bunfs/root/src/automation/engine/sandbox/worker.ts"
  : new URL("./worker.ts", import.meta.url).href;
const POOL = Math.min(4, Math.max(2, navigator.hardwareConcurrency || 2));
/** Time past the script's own deadline before its worker is killed. */
const GRACE_MS = 1000;

interface Pending {
  job: ScriptJob;
  resolve(value: unknown): void;
  reject(error: unknown): void;
}

interface PooledWorker {
  worker: Worker;
  current?: Pending;
  timer?: ReturnType<typeof setTimeout>;
  answered: boolean;
}

let nextId = 1;
let inThread = false;
const queue: Pending[] = [];
const idle: PooledWorker[] = [];
const live = new Set<PooledWorker>();

function kill(w: PooledWorker): void {
  clearTimeout(w.timer);
  live.delete(w);
  const i = idle.indexOf(w);
  if (i >= 0) idle.splice(i, 1);
  w.worker.terminate();
}

function local(p: Pending): void {
  runScript(p.job.code, p.job.args, p.job.limits).then(p.resolve, p.reject);
}

function spawn(): PooledWorker {
  const w: PooledWorker = { worker: new Worker(WORKER_ENTRY), answered: false };
  w.worker.unref();
  w.worker.onmessage = (event: MessageEvent<ScriptReply>) => {
    const p = w.current;
    w.answered = true;
    clearTimeout(w.timer);
    w.current = undefined;
    idle.push(w);
    if (p && p.job.id === event.data.id) {
      const r = event.data;
      if (r.ok) p.resolve(r.value);
      else p.reject(new StepError(r.error.message, r.error.code, { retryable: r.error.retryable }));
    }
    pump();
  };
  w.worker.addEventListener("error", (event) => {
    const p = w.current;
    w.current = undefined;
    kill(w);
    if (!w.answered && /ModuleNotFound|Cannot find module/i.test((event as ErrorEvent).message ?? "")) {
      // The worker module is not in this build: run every script in-thread from now on.
      if (!inThread) process.stderr.write("automation: script sandbox workers unavailable in this build; running scripts in-thread\n");
      inThread = true;
      if (p) local(p);
      for (const q of queue.splice(0)) local(q);
      return;
    }
    p?.reject(new StepError(`script sandbox crashed: ${(event as ErrorEvent).message}`, "script_error"));
    pump();
  });
  live.add(w);
  return w;
}

function pump(): void {
  while (queue.length > 0) {
    if (inThread) return void queue.splice(0).forEach(local);
    let w = idle.pop();
    if (!w) {
      if (live.size >= POOL) return;
      w = spawn();
    }
    const p = queue.shift()!;
    const worker = w;
    worker.current = p;
    worker.timer = setTimeout(() => {
      kill(worker);
      p.reject(new StepError("script exceeded its time limit and was stopped", "script_timeout"));
      pump();
    }, p.job.limits.timeoutMs + GRACE_MS);
    worker.worker.postMessage(p.job);
  }
}

/**
 * Calls `function script(...args)` from `code` in the sandbox, on a worker thread when available.
 * Aborting `signal` (cancel, step timeout) drops a queued script or kills the worker running it.
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
        const running = [...live].find((w) => w.current === p);
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
