// Finished-step records whose commit failed (both runs stores keep one). The rows, statuses and
// filters the runs store speaks in live in runs/store.ts.
import { JournalWriteLost } from "../runs/store";

// test/fuzz/automation.test.ts still reads the statuses from here.
export { TERMINAL } from "../runs/store";

/**
 * Finished-step records whose commit failed, per run (both stores keep one): marked when a write
 * fails, cleared when a later write of the same step commits; `take` reports them once to the finish.
 */
export class LostSteps {
  private readonly lost = new Map<string, Set<string>>();

  get empty(): boolean {
    return this.lost.size === 0;
  }

  mark(runId: string, path: string): void {
    let paths = this.lost.get(runId);
    if (!paths) this.lost.set(runId, (paths = new Set()));
    paths.add(path);
  }

  unmark(runId: string, path: string): void {
    const paths = this.lost.get(runId);
    if (!paths?.delete(path)) return;
    if (paths.size === 0) this.lost.delete(runId);
  }

  /** Whether `runId` has a lost record (its finish would be refused). */
  has(runId: string): boolean {
    return this.lost.has(runId);
  }

  /** The refusal for a finish of `runId` when it has lost records (forgotten here: reported once). */
  take(runId: string): JournalWriteLost | undefined {
    const paths = this.lost.get(runId);
    if (!paths) return undefined;
    this.lost.delete(runId);
    return new JournalWriteLost(runId, [...paths]);
  }
}
