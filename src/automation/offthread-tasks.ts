// The entry of the pool's worker threads (offthread/pool.ts): the functions they may run, and the loop that runs
// them. Each task takes and returns structured-clonable values. A new CPU-heavy function of the
// engine goes here, imported from its feature; nothing in this file holds state between jobs.
import { dlopen, FFIType } from "bun:ffi";
import { DomainError } from "../kernel/errors";
import type { Reply } from "./offthread/pool";
import { type ImportLimits, stageArchive } from "./datasets/stage";
import { renderStringFully } from "./engine/liquid";
import type { inspectTemplate, renderTemplate } from "./templates/work";
import { pairedTests } from "./experiments/compare";
import { readPlain } from "./workflow/source";

// Loaded on a thread's first template job, so threads that only render Liquid or stage archives do
// not pay for docxtemplater and exceljs.
const templateWork = () => import("./templates/work");

export const tasks = {
  /** A Liquid template rendered with the full render, memory and template limits. */
  "liquid.render": (job: { source: string; data: Record<string, unknown> }) => renderStringFully(job.source, job.data),
  /** A dataset archive (a file) inflated and staged into `dir` under the import limits. */
  "dataset.stage": (job: { archive: string; dir: string; limits: ImportLimits }) => stageArchive(job.archive, job.dir, job.limits),
  /** YAML text read into its JSON value and the line of every path (workflow/offthread.ts). */
  "yaml.read": (text: string) => readPlain(text),
  /** Workflow YAML parsed and validated (workflow/offthread.ts); the step kinds load on first use. */
  "workflow.parse": async (job: { yaml: string; internal: boolean }) => (await import("./workflow/parse")).parseFully(job.yaml, { internal: job.internal }),
  /** A DOCX/XLSX template checked and its tokens listed (a broken one comes back as its issues). */
  "template.inspect": async (job: Parameters<typeof inspectTemplate>[0]) => (await templateWork()).inspectTemplate(job),
  /** A DOCX/XLSX template filled with data. */
  "template.render": async (job: Parameters<typeof renderTemplate>[0]) => (await templateWork()).renderTemplate(job),
  /** Bootstrap CIs and sign-flip p-values of paired score differences (experiments/comparison.ts). */
  "experiments.pairedTests": pairedTests,
};

// The typed runner (offthread/run.ts) learns the table's types here: this entry sits above the features
// whose functions it runs, so the runner they call declares an empty Tasks and this file fills it in.
declare module "./offthread/run" {
  interface Tasks extends TaskTable {}
}
type TaskTable = typeof tasks;


declare const self: Worker;

// On Linux each thread has its own nice value: these threads yield the CPU to the one answering HTTP
// when cores are scarce, so tenant work slows down before the API does.
function lowerThreadPriority(): void {
  if (process.platform !== "linux") return;
  try {
    const libc = dlopen("libc.so.6", { gettid: { args: [], returns: FFIType.i32 }, setpriority: { args: [FFIType.i32, FFIType.u32, FFIType.i32], returns: FFIType.i32 } });
    libc.symbols.setpriority(0, libc.symbols.gettid(), 10);
  } catch {
    // the same work at normal priority
  }
}

if (!Bun.isMainThread) {
  lowerThreadPriority();
  self.onmessage = async (e: MessageEvent<{ id: number; task: keyof TaskTable; input: never }>) => {
    const { id, task, input } = e.data;
    let reply: Reply;
    try {
      const fn = tasks[task] as (x: unknown) => unknown;
      if (typeof fn !== "function") throw new Error(`unknown off-thread task ${String(task)}`);
      reply = { id, ok: true, value: await fn(input) };
    } catch (err) {
      const domain = err instanceof DomainError ? { kind: err.kind, field: err.field, code: err.code } : undefined;
      reply = { id, ok: false, message: (err as Error)?.message ?? String(err), ...(domain ? { domain } : {}) };
    }
    try {
      postMessage(reply);
    } catch (err) {
      postMessage({ id, ok: false, message: `the result could not be sent back: ${(err as Error).message}` } satisfies Reply);
    }
  };
}
