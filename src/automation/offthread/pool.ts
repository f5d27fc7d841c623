// Runs CPU-heavy functions on worker threads of this same process, so the event loop that answers
// HTTP for every tenant never waits for one tenant's work (issue 27). A job names a function of the
// worker entry (../offthread-tasks.ts) and carries structured-clonable input; up to `size` threads start on
// demand, one job per thread at a time, the rest queue. Each job has a deadline: past it the thread is
// terminated (which stops even a loop that never checks a clock) and replaced on the next job.
// The job protocol is plain messages, so the same entry could serve a child process of the same
// executable or a separate worker machine (scale-out, part 2) without the callers changing.
import { availableParallelism } from "node:os";
import { DomainError } from "../../kernel/errors";

/** A worker's answer to a job (offthread-tasks.ts posts them). */
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
const ENTRY = import.meta.url.includes("/$bunfs/") ? "./src/automation/offthread-tasks.ts" : new URL("../offthread-tasks.ts", import.meta.url).href;

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
  dispatch();
  changed();
}

function dispatch(): void {
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
 * Runs `task` of offthread-tasks.ts on a worker thread, untyped: callers use runOffThread (run.ts), which types
 * it from offthread-tasks.ts. (The pool itself imports nothing from offthread-tasks.ts: tasks reach into features whose
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
  changed();
}

// Room for more work (issue 38.5). The worker pool of the runs (runs/queue.ts) claims runs, offers
// idle slots and takes runs it inserts only while this pool has room: a process whose threads are
// saturated leaves the runs to a process whose threads are idle, instead of queueing them here.

/**
 * How long the pool must have had an idle thread before it counts as having room again: a run between
 * two heavy steps leaves its thread idle for a few milliseconds, and that is not room for another run.
 */
export const SETTLE_MS = 30;
/** How long after its last job the pool still counts as in use (then room is its idle threads). */
export const WARM_MS = 2_000;

let full = false;
let lastLoad = 0;
/** When the pool last stopped being full (every thread busy or promised to a queued job). */
let freedAt = Number.NEGATIVE_INFINITY;
/** When the pool last had a job (running or queued). */
let usedAt = Number.NEGATIVE_INFINITY;
const listeners = new Set<() => void>();
let settling: ReturnType<typeof setTimeout> | undefined;

const load = (): number => {
  let busy = 0;
  for (const t of threads) if (t.job) busy++;
  return busy + queue.length;
};

function notify(): void {
  for (const cb of listeners) cb();
}

/** After every change of the jobs: tells the listeners when the pool became full, and SETTLE_MS after it stopped being full. */
function changed(): void {
  const n = load();
  const now = performance.now();
  if (n > 0 || lastLoad > 0) usedAt = now;
  lastLoad = n;
  const nowFull = n >= size;
  if (nowFull === full) return;
  full = nowFull;
  if (full) {
    clearTimeout(settling);
    settling = undefined;
    queueMicrotask(notify); // a standing offer of an idle slot is withdrawn
    return;
  }
  freedAt = now;
  clearTimeout(settling);
  settling = setTimeout(() => {
    settling = undefined;
    notify();
  }, SETTLE_MS);
  settling.unref?.();
}

/**
 * How many more runs this process should take on now, as far as the pool can tell: none while every
 * thread is busy or promised to a queued job (or was, less than SETTLE_MS ago); its idle threads while
 * it is in use (a job ran in the last WARM_MS); no limit when it has been idle for longer (runs that do
 * no off-thread work never meet a limit here).
 */
export function offThreadRoom(): number {
  const n = load();
  if (n >= size) return 0;
  const now = performance.now();
  if (now - freedAt < SETTLE_MS) return 0;
  if (n === 0 && now - usedAt >= WARM_MS) return Number.POSITIVE_INFINITY;
  return size - n;
}

/** Calls `cb` when the pool became full, and when it may have room again; returns the unsubscribe. */
export function onOffThreadRoom(cb: () => void): () => void {
  listeners.add(cb);
  return () => listeners.delete(cb);
}
