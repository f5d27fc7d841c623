// The typed way to run a job of the worker entry (src/automation/offthread-tasks.ts) off the main thread
// (the pool in pool.ts is untyped).
import { runTask } from "./pool";

/**
 * The worker entry's task table, filled in by offthread-tasks.ts (declaration merging): that entry
 * imports the features whose functions it runs, so this runner, which the features call, imports nothing of it.
 */
export interface Tasks {}

export type TaskName = keyof Tasks;
type Input<K extends TaskName> = Parameters<Tasks[K]>[0];
type Output<K extends TaskName> = Awaited<ReturnType<Tasks[K]>>;

/** Runs `task` on a worker thread; see runTask for results, errors and the deadline. */
export function runOffThread<K extends TaskName>(task: K, input: Input<K>, opts: { deadlineMs: number }): Promise<Output<K>> {
  return runTask(task, input, opts) as Promise<Output<K>>;
}
