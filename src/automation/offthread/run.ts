// The typed way to run a job of tasks.ts off the main thread (the pool in pool.ts is untyped).
import { runTask } from "./pool";
import type { Tasks } from "./tasks";

export type TaskName = keyof Tasks;
type Input<K extends TaskName> = Parameters<Tasks[K]>[0];
type Output<K extends TaskName> = Awaited<ReturnType<Tasks[K]>>;

/** Runs `task` on a worker thread; see runTask for results, errors and the deadline. */
export function runOffThread<K extends TaskName>(task: K, input: Input<K>, opts: { deadlineMs: number }): Promise<Output<K>> {
  return runTask(task, input, opts) as Promise<Output<K>>;
}
