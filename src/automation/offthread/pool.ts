// Runs CPU-heavy functions on worker threads of this same process, so the event loop that answers
// HTTP for every tenant never waits for one tenant's work (issue 27). A job names a function of the
// worker entry (tasks.ts) and carries structured-clonable input; up to `size` threads start on
// demand, one job per thread at a time, the rest queue. Each job has a deadline: past it the thread is
// terminated (which stops even a loop that never checks a clock) and replaced on the next job.
// The job protocol is plain messages, so the same entry could serve a child process of the same
// executable or a separate worker machine (scale-out, part 2) without the callers changing.
import { availableParallelism } from "node:os";
import { DomainError } from "../../kernel/errors";

/** A worker's answer to a job (tasks.ts posts them). */
export type Reply =
  | { id: number; ok: true; value: unknown }
  | { id: number; ok: false; message: string; domain?: { kind: DomainError["kind"]; field?: string; code?: string } };

/** A job that could not finish off the main thread: past its deadline, or its thread died. */
export class OffThreadError extends Error {
  constructor(
    message: string,
    readonly reason: "deadline" | "crashed",
  ) {
    super(message);
    this.name = "OffThreadError";
  }
}

interface Job {
  id: number;
  task: string;
  input: unknown;
  deadlineMs: number;
  resolve(value: unknown): void;
  reject(err: Error): void;
}

interface Thread {
  worker: Worker;
  job?: Job;
  timer?: ReturnType<typeof setTimeout>;
}

// Inside a compiled executable the entry is embedded under the project root (src/kernel/build.ts adds
// it as an entry point); from source it sits beside this file.
const ENTRY = import.meta.url.includes("/$bunfs/") ? "./src/automation/offthread/tasks.ts" : new URL("./tasks.ts", import.meta.url).href;

/** Threads the pool may run at once: AUTOMATION_THREADS, else one core less than the machine has (1 to 4): the main thread keeps a core. */
export function poolSize(env: Record<string, string | undefined> = process.env): number {
  const n = Number(env.AUTOMATION_THREADS);
  if (Number.isInteger(n) && n >= 1 && n <= 64) return n;
  return Math.max(1, Math.min(4, availableParallelism() - 1));
}

let size = poolSize();
const threads = new Set<Thread>();
const queue: Job[] = [];
let nextId = 1;

function rebuild(reply: Extract<Reply, { ok: false }>): Error {
  if (reply.domain) return new DomainError(reply.domain.kind, reply.message, { field: reply.domain.field, code: reply.domain.code });
  return new Error(reply.message);
}

function retire(t: Thread): void {
  clearTimeout(t.timer);
  threads.delete(t);
  t.worker.terminate();
}

function spawn(): Thread {
  const t: Thread = { worker: new Worker(ENTRY) };
  t.worker.unref();
  t.worker.onmessage = (e: MessageEvent<Reply>) => {
    const job = t.job;
    if (!job || e.data.id !== job.id) return;
    clearTimeout(t.timer);
    t.job = undefined;
    if (e.data.ok) job.resolve(e.data.value);
    else job.reject(rebuild(e.data));
    pump();
  };
  t.worker.onerror = (e: ErrorEvent) => {
    const job = t.job;
    retire(t);
    job?.reject(new OffThreadError(`worker thread failed: ${e.message}`, "crashed"));
    pump();
  };
  threads.add(t);
  return t;
}

function pump(): void {
  while (queue.length > 0) {
    let t = [...threads].find((x) => !x.job);
    if (!t && threads.size < size) t = spawn();
    if (!t) return;
    const job = queue.shift()!;
    const thread = t;
    thread.job = job;
    thread.timer = setTimeout(() => {
      retire(thread);
      job.reject(new OffThreadError(`${job.task} did not finish within ${job.deadlineMs} ms`, "deadline"));
      pump();
    }, job.deadlineMs);
    try {
      thread.worker.postMessage({ id: job.id, task: job.task, input: job.input });
    } catch (err) {
      // Input that cannot be cloned is the caller's problem, not the thread's.
      clearTimeout(thread.timer);
      thread.job = undefined;
      job.reject(err as Error);
    }
  }
}

/**
 * Runs `task` of tasks.ts on a worker thread, untyped: callers use runOffThread (run.ts), which types
 * it from tasks.ts. (The pool itself imports nothing from tasks.ts: tasks reach into features whose
 * code runs jobs here, engine/template.ts among them, so a typed import would close a circle.)
 * Resolves with its result; rejects with the task's own error (DomainErrors keep their kind, field
 * and code), or an OffThreadError past `deadlineMs`.
 */
export function runTask(task: string, input: unknown, opts: { deadlineMs: number }): Promise<unknown> {
  return new Promise<unknown>((resolve, reject) => {
    queue.push({ id: nextId++, task, input, deadlineMs: opts.deadlineMs, resolve: resolve as (v: unknown) => void, reject });
    pump();
  });
}

/** Terminates every thread (idle ones too) and sets how many may run; queued jobs wait for new ones. */
export function resetOffThreadPool(threadCount = poolSize()): void {
  size = threadCount;
  for (const t of [...threads]) {
    if (t.job) t.job.reject(new OffThreadError("the thread pool was stopped", "crashed"));
    retire(t);
  }
}
