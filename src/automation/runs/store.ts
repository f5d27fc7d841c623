// What runs need from storage: runs, their journal (steps, events), their files, the queue (a run row is
// its queue entry), and the wake-ups between the processes sharing the database. One async interface
// each; db/sqlite/runs.ts, db/pg/runs.ts and */notifications.ts implement them. This module imports no
// implementation. Runs, steps, events and run files are drizzle-inferred rows (db/tables/runs.ts);
// callers take them from here, with the statuses, filters and claims the store speaks in.
import type { TickKey } from "../schedules/store";
import type { EventRow, FileRow as RunFileRow, NewRun, RunRow, StepRow } from "../db/tables/runs";

export type { EventRow, FileRow, NewRun, RunRow, StepRow } from "../db/tables/runs";

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

/** One step execution as the engine reports it and the journal keeps it (engine/contract.ts re-exports it). */
export interface StepRecord {
  /** Unique position of the step execution: `total`, `loop[2].inner`, `par.branchA.fetch`. */
  path: string;
  name: string;
  type: string;
  status: "completed" | "failed" | "skipped";
  output?: unknown;
  error?: { message: string; code?: string };
  /**
   * The values the step ran with (its `with:` or control fields after templates), secrets redacted and
   * size bounded (engine/step-input.ts); absent when it never got that far (a skip, a template error).
   */
  input?: unknown;
  attempt: number;
  startedAt: string;
  completedAt: string;
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

/** What a run insert does besides the run, in the same transaction. */
export interface RunInsertOptions {
  /** A rerun: the run it retries links to it (`nextRunId`). */
  previousRunId?: string;
  /** A cron tick the run claims: TickTaken (schedules/store.ts) and nothing written when it was already decided. */
  tick?: { key: TickKey; tenantId: string; at: string };
  /**
   * The automation as the start read it (from memory): the run is inserted only while that automation's
   * current version and `updated_at` are still these; otherwise StaleSource and nothing is written.
   */
  source?: SourceCheck;
}

/** What a run start read about its automation: its id, current version and last change. */
export interface SourceCheck {
  automationId: string;
  versionId: string;
  updatedAt: string;
}

/** The automation changed since the start read it (RunInsertOptions.source): read it again and retry. */
export class StaleSource extends Error {
  constructor(readonly automationId: string) {
    super(`automation ${automationId} changed since it was read`);
    this.name = "StaleSource";
  }
}

/**
 * Runs, their journal (steps, events), their files, and the queue (a run row is its queue entry).
 * Journal writes of one event-loop turn share one commit (group commit); `stepFinished` resolves once
 * its write is committed. Every status move is one conditional write decided in the database.
 */
export interface RunStore {
  /**
   * Inserts a run with its first events and input-file snapshots; resolves once committed (runs
   * started in the same event-loop turn may share the commit). A dedupe key a committed run already
   * has fails the insert (a unique violation) and leaves nothing behind.
   */
  /**
   * Resolves with the run as inserted. A claimable (`pending`) run announces itself to the other
   * processes (PostgreSQL: `runs.queued` with the insert's commit); the inserting process wakes its own pool.
   * PostgreSQL, direct dispatch: a plain `pending` insert (no files, tick or retry link) made while no
   * run is pending takes a standing offer (`offer`) instead: it is inserted `running`, claimed by the
   * offering worker under a lease, and announced to it on `runs.assigned` with the row.
   */
  insert(run: NewRun, events: NewEvent[], files?: Omit<RunFileRow, "runId">[], opts?: RunInsertOptions): Promise<RunRow>;
  get(tenantId: string, id: string): Promise<RunRow | undefined>;
  byId(id: string): Promise<RunRow | undefined>;
  status(id: string): Promise<string | undefined>;
  /**
   * Up to `n` runnable runs for `worker`, oldest first: pending ones, then running ones nobody holds
   * (released at start-up) or whose lease (`leaseUntil`, ms) lapsed. Two claimers never get the same run.
   */
  claimMany(n: number, worker: string, now: string, nowMs: number, leaseMs: number): Promise<Claim[]>;
  /** Claims one given `running` run nobody holds (a child run its resumed parent continues inline). */
  claimRun(id: string, worker: string, now: string, nowMs: number, leaseMs: number): Promise<boolean>;
  /**
   * Queues the oldest held (`created`) runs of the experiment while fewer than `limit` of its runs are
   * in flight; returns how many it queued. Callers in parallel (other processes too) never queue past the bound.
   */
  releaseHeld(experimentId: string, limit: number, at: string): Promise<number>;
  /** Ids of the unfinished child runs of a run. */
  openChildren(parentId: string): Promise<string[]>;
  /** The latest child run that `action.invoke-workflow` at `step` of run `parentId` started. */
  childAt(parentId: string, step: string): Promise<{ id: string; status: string } | undefined>;
  /**
   * Marks worker `worker` (one per process) alive for as long as this process holds the database: on
   * PostgreSQL a session advisory lock on a connection of its own, which PostgreSQL drops with the
   * session, also after a SIGKILL. On SQLite (one process per database) nothing to do.
   */
  attach(worker: string): Promise<void>;
  /** Ends what `attach` started (graceful stop); withdraws the worker's offer. */
  detach(worker: string): Promise<void>;
  /**
   * Offers one idle slot of `worker` to the next run inserted while the queue is empty (direct
   * dispatch: the insert claims the run for `worker`, leased for `leaseMs`, and announces it on
   * `runs.assigned`). Replaces the worker's previous offer. False when this backend has no offers
   * (SQLite: one process, whose pool takes the runs started in it directly).
   */
  offer(worker: string, token: string, leaseMs: number): Promise<boolean>;
  /** Withdraws offer `token`: true when it still stood, false when a run took it (its assignment is on `runs.assigned`). */
  retract(worker: string, token: string): Promise<boolean>;
  /**
   * Runs held by a worker that is gone become claimable at once; returns how many. PostgreSQL: the
   * holders whose liveness lock (`attach`) no session holds any more. SQLite (one process): every
   * holder but `worker`. The offers of gone workers are withdrawn.
   */
  releaseOrphans(worker: string): Promise<number>;
  /** Extends the leases of the runs `worker` holds; answers the ids it still holds (a run missing lost its lease). */
  renewLeases(worker: string, until: number): Promise<string[]>;
  /** Graceful stop: the runs `worker` still holds become claimable at once (they resume on another worker); their ids. */
  handBack(worker: string): Promise<string[]>;
  completedSteps(runId: string): Promise<StepRow[]>;
  /**
   * Queued for a journal commit (not awaited: a lost start only hides a running step); PostgreSQL lets
   * it wait up to 10 ms for other writes to share the statement (`flush` sends it at once). With a
   * `lease`, every journal write and the finish apply only while the run is still held under it
   * (fencing: a worker that lost the run to another writes nothing).
   */
  stepStarted(runId: string, s: StepStart, lease?: Lease): void;
  /** Resolves once committed (durable): after a crash a finished step is never executed again. */
  stepFinished(runId: string, s: StepRecord, lease?: Lease): Promise<void>;
  /** Commits every queued journal write now. */
  flush(): Promise<void>;
  /**
   * Moves a non-terminal run to a terminal status exactly once, resolving with the run as it finished
   * and whether it has output files and a review then (so a waiter here needs no read); undefined when
   * it already was terminal (or the lease was lost). Refused with `JournalWriteLost` (once) when a
   * finished step's record of the run failed to commit in this process and was not written since: a
   * run never ends with a step missing from its journal.
   * A finish tells the other processes on the database itself (PostgreSQL: a `runs.finished` NOTIFY in
   * the same statement; SQLite has no other process).
   */
  finish(runId: string, at: string, r: FinishRequest, lease?: Lease): Promise<FinishedRun | undefined>;
  /** Records a cancel request; queued/held/waiting runs are cancelled at once. Race-safe against `finish`. */
  requestCancel(runId: string, at: string): Promise<CancelResult>;
  events(runId: string): Promise<EventRow[]>;
  /** In journal order. */
  steps(runId: string): Promise<StepRow[]>;
  /** By creation, then path. */
  files(runId: string, role?: string): Promise<RunFileRow[]>;
  /** By path or by the file-pool id it came from. */
  file(runId: string, pathOrFileId: string): Promise<RunFileRow | undefined>;
  /** Adds or replaces (same run and path) a file of the run. */
  putFile(f: RunFileRow): Promise<void>;
  /** One page: filters, sort (nulls as ''), then id; `after` is the (key, id) of the previous page's last row. */
  list(f: ListFilter): Promise<RunRow[]>;
}

/**
 * The wake-up channels between processes sharing a database. A payload is a run id unless said otherwise.
 * - `runs.queued`: a run became claimable now: inserted, released from its experiment's hold, resumed by
 *   a human-review decision, or handed back by a worker. Idle workers try a claim. The payload may be empty (one per turn).
 * - `runs.finished`: a run reached a terminal status. Waiters (`wait_for_completion`) read it again.
 * - `runs.cancel`: a cancel was requested for a run that is running. Its worker stops at the next step boundary.
 * - `keys.revoked` (payload: the key's id): an API key was revoked. Instances that remember key lookups forget it.
 * - `sessions.changed` (payload: a session's, user's or tenant's id): sessions ended or what they may do changed.
 *   Instances that remember session lookups forget those (pg/people.ts).
 * - `runs.assigned` (payload: `<worker> <offer token> <run id>[ <run row as JSON>]`): an insert took the
 *   worker's offer (RunStore.offer) and claimed the run for it. The row is left out when it would not fit.
 */
export const CHANNELS = ["runs.queued", "runs.finished", "runs.cancel", "keys.revoked", "runs.assigned", "sessions.changed"] as const;
export type Channel = (typeof CHANNELS)[number];

/** A `runs.assigned` payload: the run claimed for `worker` by the insert that took its offer `token`; `run` is absent when it did not fit. */
export interface Assignment {
  worker: string;
  token: string;
  runId: string;
  run?: RunRow;
}

const ROW_TIMES = ["createdAt", "startedAt", "completedAt", "cancelRequestedAt"] as const;

/** Reads a `runs.assigned` payload (the row as PostgreSQL's row_to_json wrote it, times made ISO as the stores give them). */
export function parseAssignment(payload: string): Assignment | undefined {
  const [worker, token, runId] = payload.split(" ", 3);
  if (!worker || !token || !runId) return undefined;
  const rest = payload.slice(worker.length + token.length + runId.length + 3);
  if (!rest) return { worker, token, runId };
  const run = JSON.parse(rest) as Record<string, unknown>;
  for (const k of ROW_TIMES) if (typeof run[k] === "string") run[k] = new Date(run[k] as string).toISOString();
  return { worker, token, runId, run: run as unknown as RunRow };
}

/** PostgreSQL's NOTIFY refuses payloads of 8000 bytes or more; both backends refuse them the same way. */
export const NOTIFY_PAYLOAD_MAX_BYTES = 7999;

/** Throws a RangeError for a channel outside CHANNELS or a payload NOTIFY would refuse. */
export function checkNotification(channel: string, payload: string): void {
  if (!(CHANNELS as readonly string[]).includes(channel)) throw new RangeError(`unknown notification channel ${JSON.stringify(channel)} (one of ${CHANNELS.join(", ")})`);
  const bytes = Buffer.byteLength(payload, "utf8");
  if (bytes > NOTIFY_PAYLOAD_MAX_BYTES) throw new RangeError(`notification payload on ${channel} is ${bytes} bytes: at most ${NOTIFY_PAYLOAD_MAX_BYTES} (PostgreSQL's NOTIFY limit)`);
}

/**
 * Wake-ups between the processes working one database (PostgreSQL `LISTEN/NOTIFY`; on SQLite, whose
 * database has one process, delivery within the process). Best-effort: a notification is a hint to look
 * at the database again, never the state itself, so every consumer also polls slowly as a safety net.
 * Delivery is asynchronous (never inside `publish`), to every subscriber of the channel in any process,
 * the publisher's own included.
 */
export interface Notifications {
  /**
   * Sends `payload` (a run id; under 8000 bytes, else a RangeError) to the channel's subscribers. On
   * PostgreSQL it runs on the pool, outside any transaction: publish after the commit that made the change
   * visible, so a woken process finds it. (A NOTIFY inside a transaction is delivered on commit and dropped
   * on rollback: `pgNotify` in pg/notifications.ts sends one on a transaction handle.)
   */
  publish(channel: Channel, payload: string): Promise<void>;
  /**
   * Calls `onMessage` with each payload published on `channel` from now on; resolves once listening
   * (a publish after that is delivered), with the function that stops this subscription. On PostgreSQL
   * all channels share one listening connection per opened storage, opened by the first subscribe; it
   * rejects when that connection cannot be opened.
   */
  subscribe(channel: Channel, onMessage: (payload: string) => void): Promise<() => void>;
  /**
   * Calls `cb` each time the listening connection came back after a drop, once every channel listens
   * again. Notifications sent while it was down are lost: `cb` re-reads the state it waits on. Never
   * called on SQLite. Returns the function that removes `cb`.
   */
  onReconnect(cb: () => void): () => void;
  /** Ends every subscription and the listening connection (no timer left): the process can exit. */
  close(): Promise<void>;
}
