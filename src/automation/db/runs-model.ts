// What the runs store's interface (storage.ts) speaks in: the rows (drizzle tables in tables/runs.ts),
// the run statuses, a new event, and the run list's filter. Backend-neutral: no SQL here.
export type { EventRow, FileRow, NewRun, RunRow, StepRow } from "./tables/runs";
import type { RunRow } from "./tables/runs";

export const TERMINAL = ["completed", "failed", "cancelled", "rejected"] as const;
export const STATUSES = ["created", "pending", "running", "waiting", "finalizing", ...TERMINAL] as const;
export type RunStatus = (typeof STATUSES)[number];
export const isTerminal = (s: string) => (TERMINAL as readonly string[]).includes(s);

export interface NewEvent {
  type: string;
  status?: string | null;
  message?: string | null;
  metadata?: Record<string, unknown>;
}

/** The review filters of `GET /runs` (already validated): conditions on each run's review row. */
export interface ReviewFilter {
  reviewStatus?: string;
  reviewVerdict?: string;
  hasReview?: boolean;
  noReview?: boolean;
  hasCorrections?: boolean;
  reviewNoteContains?: string;
  reviewCreatedAfter?: string;
  reviewCreatedBefore?: string;
  reviewUpdatedAfter?: string;
  reviewUpdatedBefore?: string;
  reviewClosedAfter?: string;
  reviewClosedBefore?: string;
  sinceLastClosed?: boolean;
}

export interface ListFilter {
  tenantId: string;
  type?: string;
  source?: string;
  statuses?: string[];
  trigger?: string;
  triggeredBy?: string;
  sourceRef?: string;
  batchId?: string;
  exampleId?: string;
  exampleIdContains?: string;
  createdFrom?: string; // inclusive
  createdTo?: string; // inclusive
  createdAfter?: string;
  createdBefore?: string;
  completedAfter?: string;
  completedBefore?: string;
  ids?: string[];
  experiments?: { mode: "include" | "exclude" | "only" } | { ids: string[] };
  sampleRate?: number;
  review?: ReviewFilter;
  sort: "createdAt" | "completedAt" | "startedAt";
  order: "asc" | "desc";
  after?: { key: string; id: string };
  offset?: number;
  limit: number;
}

/**
 * The claim a worker executes a run under: the journal writes and the finish it sends apply only while
 * the run is still claimed by `worker` at `attempt` (a claim counts attempts), so a worker that lost its
 * lease (another one claimed the run) can neither write steps nor finish it.
 */
export interface Lease {
  worker: string;
  attempt: number;
}

export interface Claim {
  id: string;
  /** A running run picked up again (its lease lapsed, or released after a restart). */
  resumed: boolean;
  /** The run as the claim left it (the worker does not read it again). */
  run: RunRow;
  /** True when the run never started before the claim, so it has no journaled steps to read. */
  fresh: boolean;
}

/**
 * A run as its finish committed it, with what its view would otherwise read next: whether it has output
 * files and a review at that moment (wait_for_completion answers from this without another read).
 */
export interface FinishedRun {
  run: RunRow;
  has: { outputFiles: boolean; review: boolean };
}

export type FinishRequest = { status: "completed" | "failed" | "cancelled"; output?: unknown; error?: unknown; message?: string };

export type CancelResult = { wasStatus: string; state: "cancelled" | "requested" | "already_terminal" };

export interface StepStart {
  path: string;
  name: string;
  type: string;
  attempt: number;
  startedAt: string;
}

/**
 * A finish refused because a finished step's record of the run did not commit (the database stayed
 * locked or unwritable past its retries): completing the run then would leave a journal that re-runs
 * a step with side effects after a crash and shows it as never finished. The worker writes `paths`
 * again and finishes once they committed.
 */
export class JournalWriteLost extends Error {
  constructor(
    readonly runId: string,
    readonly paths: string[],
  ) {
    super(`the record of step ${paths.join(", ")} of run ${runId} was not written`);
    this.name = "JournalWriteLost";
  }
}

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

  /** The refusal for a finish of `runId` when it has lost records (forgotten here: reported once). */
  take(runId: string): JournalWriteLost | undefined {
    const paths = this.lost.get(runId);
    if (!paths) return undefined;
    this.lost.delete(runId);
    return new JournalWriteLost(runId, [...paths]);
  }
}
