// The runs rules: start (resolve target + version, snapshot files, validate input, enqueue), wait,
// read, list with a stable cursor, cancel, rerun, artifacts. Knows nothing of HTTP.
import { Invalid, NotFound, TooLarge } from "../../kernel/errors";
import { actorOf } from "../tenancy/actor";
import type { Auth } from "../tenancy/model";
import { newId } from "../../kernel/ids";
import type { AutomationContext } from "../context";
import { releaseOwner, retainBlob, openBlob } from "../files/service";
import { sampleRankOf } from "./envelope";
import { type IncomingFile, materializeFiles, ownerOf, splitInputFiles } from "./inputs";
import { listFilter, page } from "./list";
import type { ListQuery } from "./model";
import { WorkerPool } from "./queue";
import type { AbortReason, Executing, RunSignals } from "./signals";
import type { RunsRuntime } from "./runtime";
import { resolveTarget, type ResolvedSource } from "./sources";
import { type Claim, type FinishedRun, isTerminal, type NewRun, type RunRow, type RunStore, StaleSource } from "./store";
import type { TickKey } from "../schedules/store";
import { signZipToken } from "./token";
import { defaultRuntime } from "./runtime-default";
import { executeRun } from "./worker";
import { type ZipEntry, zipStream } from "./zip";
import { Cancelled } from "../engine/errors";

/**
 * Who starts a run: a person (their user id, name and e-mail) or an API key (its id and name) become
 * `trigger.by` (`startedBy(auth)` makes one from a request's principal); an empty keyId (a schedule, an
 * e-mail) gives `by: null`.
 */
export interface Actor {
  tenantId: string;
  keyId: string;
  keyName?: string | null;
  email?: string | null;
}

/** The run's starter from a request's principal: the person, not their session, when a person signed in. */
export function startedBy(auth: Auth): Actor {
  const a = actorOf(auth);
  return { tenantId: auth.tenantId, keyId: a.id, keyName: a.name, email: a.email };
}

export interface StartRequest {
  target: string;
  input?: Record<string, unknown>;
  files?: Record<string, IncomingFile | IncomingFile[]>;
  overrides?: { steps?: Record<string, Record<string, unknown>> };
  metadata?: Record<string, unknown>;
  version?: string;
  /** `api` (default) or `cli` from X-Eigenpal-Trigger; `rerun`/`workflow` internally. */
  trigger?: string;
  /** Set by experiments (later): batch/example/experiment ids and evaluation mode. */
  batchId?: string;
  exampleId?: string;
  experimentId?: string;
  evaluation?: boolean;
  /** Which trial (1-based) of its experiment the run is, when the experiment runs each example more than once. */
  trial?: number;
  /** Inserted `created`, outside the queue: its experiment queues it when its concurrency allows. */
  held?: boolean;
  /** A replay of a past run (backtests): that run's input files (its `input` already refers to them by `$file`). */
  copyFilesFrom?: string;
  /** The x-request-id of the API request starting the run; the run's log lines carry it. */
  requestId?: string;
  /**
   * Unique across runs: a start whose key a committed run already has fails (SQLite: a UNIQUE
   * constraint error) and leaves nothing behind. Inbound e-mail passes its Message-ID here.
   */
  dedupeKey?: string;
  /** Extra fields of the run's `trigger` (`{email: {...}}`). */
  triggerDetail?: Record<string, unknown>;
  /** A cron tick the run claims in the transaction inserting it; TickTaken (nothing written) when it was already decided. */
  tick?: { key: TickKey; at: string };
}

export const ZIP_MAX_BYTES = 32 * 1024 * 1024;
/** How long a shutdown lets steps in flight finish before interrupting them. */
export const SHUTDOWN_GRACE_MS = 10_000;
/** How young a queued or running run must be for a read of it to wait for its finish (getSettled). */
export const SETTLE_MS = 100;

/** action.invoke-workflow may nest this deep (a workflow invoking itself stops here). */
export const MAX_NESTING = 5;

/**
 * New runs are `exec_…` like the hosted API's (its SDKs' smoke checks assert the prefix). Runs stored
 * before the switch keep their `run_…` ids; every lookup is by the whole id, so both keep working.
 */
const newRunId = () => newId("exec");
/** Finishes nobody waited for that are remembered (see RunService.unwaited): far more than runs started at once. */
const UNWAITED_MAX = 4096;

export class RunService {
  readonly store: RunStore;
  readonly pool: WorkerPool;
  /** wait_for_completion callers per run; called with the finish's snapshot when the finish was here. */
  private waiters = new Map<string, Set<(f?: FinishedRun) => void>>();
  private executing = new Map<string, Executing>();
  /**
   * Runs executing here that `runs.finished` announced (the announcement of a finish committed here can
   * arrive before the committing statement's answer): their waiters are told when the execution ends,
   * and by then the local finish told them with what it committed (sparing them a read), if it was ours.
   */
  private announced = new Set<string>();
  /**
   * Runs whose finish was announced here while nobody waited for them, newest last (bounded). A run
   * started here and executed by another process (direct dispatch hands it to a worker at its insert)
   * can finish, and its `runs.finished` arrive, before the start's own insert has answered: the wait
   * that follows the start, handed the row the insert returned, re-reads it when its finish came first.
   */
  private unwaited = new Set<string>();

  constructor(
    readonly ctx: AutomationContext,
    private runtimeOf: () => RunsRuntime,
  ) {
    this.store = ctx.storage.runs;
    const self = this;
    const deps = {
      ctx,
      store: this.store,
      get runtime() {
        return self.runtime;
      },
      executing: this.executing,
      finished: (id: string, f: FinishedRun) => this.finished(id, f),
      invoke: (parent: RunRow, target: string, input: Record<string, unknown>, opts: { version?: string; step?: string }) =>
        this.invokeChild(parent, target, input, opts),
    };
    this.pool = new WorkerPool({
      store: this.store,
      notifications: ctx.storage.notifications,
      clock: ctx.clock,
      log: ctx.log,
      concurrency: Math.max(0, ctx.config.workers),
      leaseMs: ctx.config.leaseMs,
      execute: (runId, signals, { claim, release }) => this.afterExecution(runId, executeRun(deps, runId, signals, claim, release)),
    });
    this.executeInline = (runId, signals, claim) => this.afterExecution(runId, executeRun(deps, runId, signals, claim));
  }

  /** Tells the waiters of a run announced finished while it executed here (if its own finish did not). */
  private afterExecution<T>(runId: string, execution: Promise<T>): Promise<T> {
    return execution.finally(() => {
      if (this.announced.delete(runId)) this.notify(runId);
    });
  }

  /** The parser + engine runs use (resolved on first use, so building the app needs no engine). */
  get runtime(): RunsRuntime {
    return this.runtimeOf();
  }

  /** Tests swap in their own executor. */
  useRuntime(runtime: RunsRuntime): void {
    this.runtimeOf = () => runtime;
  }

  /** Executes a run in the caller's slot; what its finish committed, when it finished. */
  private executeInline: (runId: string, signals: RunSignals, claim?: Claim) => Promise<FinishedRun | undefined>;

  private now(): string {
    return this.ctx.clock.now().toISOString();
  }

  /** What a start of `target` would run (its source and YAML): for triggers that read the workflow first. */
  resolve(tenantId: string, target: string, opts: { version?: string; trigger?: string } = {}): Promise<ResolvedSource> {
    return resolveTarget(this.ctx.storage.automations, tenantId, target, opts);
  }

  /** Validates and enqueues a run; wakes the pool. */
  async start(actor: Actor, req: StartRequest): Promise<RunRow> {
    // The id first: runs started together (an experiment's) are numbered in the order they were asked for.
    const id = newRunId();
    const { input: scalars, files: embedded } = splitInputFiles(req.input ?? {});
    const incoming = { ...embedded, ...(req.files ?? {}) };
    const prepare = await this.preparer(actor, req, id, scalars, incoming);
    // A free slot here while nothing waits in the queue: the run is inserted already claimed by this
    // process and starts at once (no claim round trip, no wake-up of the others). Otherwise it is queued.
    const slot = req.held ? undefined : this.pool.reserve();
    if (!slot) {
      const row = await prepare(req);
      // The insert told the other processes (RunStore.insert); this one's pool claims now.
      if (row.status === "pending") void this.pool.wake();
      return row;
    }
    let row: RunRow;
    try {
      row = await prepare({ ...req, status: "running" });
    } catch (err) {
      slot.release();
      throw err;
    }
    slot.launch({ id, resumed: false, run: row, fresh: true });
    return row;
  }

  /**
   * Resolves a start's target and returns what inserts the run (prepareRun). A start without files may
   * take its automation as this process last read it (PostgreSQL: no round trip); the insert checks
   * that it still holds. Whatever such a start refuses or finds changed is decided again on a fresh
   * read, so a version promoted on another instance is the one that runs (or decides the refusal).
   * API starts and child runs (action.invoke-workflow) both start this way.
   */
  private async preparer(
    actor: Actor,
    at: { target: string; version?: string; trigger?: string },
    id: string,
    scalars: Record<string, unknown>,
    incoming: Record<string, IncomingFile | IncomingFile[]>,
  ): Promise<(over: Parameters<RunService["prepareRun"]>[5]) => Promise<RunRow>> {
    const remember = Object.keys(incoming).length === 0;
    const resolve = (mayRemember: boolean) =>
      resolveTarget(this.ctx.storage.automations, actor.tenantId, at.target, { version: at.version, trigger: at.trigger, mayRemember });
    let source = await resolve(remember).catch((err) => (remember ? resolve(false) : Promise.reject(err)));
    return async (over) => {
      try {
        return await this.prepareRun(actor, source, id, scalars, incoming, over);
      } catch (err) {
        if (!source.check) throw err;
        const fresh = await resolve(false);
        if (!(err instanceof StaleSource) && fresh.versionId === source.versionId) throw err;
        source = fresh;
        return this.prepareRun(actor, source, id, scalars, incoming, over);
      }
    };
  }

  private async prepareRun(
    actor: Actor,
    source: ResolvedSource,
    id: string,
    scalars: Record<string, unknown>,
    incoming: Record<string, IncomingFile | IncomingFile[]>,
    req: StartRequest & {
      status?: string;
      retry?: { number: number; previousRunId: string };
      parentRunId?: string;
      /** Rerun: the source run's input files. */
      copyFilesFrom?: string;
      /** Child runs: files of the parent (inputs or outputs) its input refers to by `$file`. */
      inheritFiles?: { runId: string; paths: string[] };
    },
  ): Promise<RunRow> {
    const parsed = this.runtime.parse(source.yaml);
    if (!parsed.ok) throw Invalid(`the workflow version cannot run: ${parsed.message}`, { field: "target", code: "invalid_workflow" });
    const fileInputs = new Set(this.runtime.fileInputs(parsed.workflow));
    for (const field of Object.keys(incoming)) {
      if (!fileInputs.has(field)) throw Invalid(`${field} is not a file input of ${source.slug}`, { field: `files.${field}`, code: "unknown_input" });
    }
    const { refs, rows } = await materializeFiles(this.ctx, actor.tenantId, id, incoming);
    try {
      const { input, issues } = this.runtime.validateInput(parsed.workflow, { ...scalars, ...refs });
      if (issues.length) {
        throw Invalid(issues[0].message, {
          issues: issues.map((i) => ({ field: i.field.startsWith("input") ? i.field : `input.${i.field}`, message: i.message, code: i.code ?? "invalid_value" })),
        });
      }
      const copied = req.copyFilesFrom ? await this.store.files(req.copyFilesFrom, "input") : [];
      if (req.inheritFiles) {
        for (const path of new Set(req.inheritFiles.paths)) {
          const f = await this.store.file(req.inheritFiles.runId, path);
          if (f && !rows.some((r) => r.path === f.path)) copied.push({ ...f, role: "input" });
        }
      }
      for (const f of copied) {
        await retainBlob(this.ctx, actor.tenantId, f.sha256, ownerOf(id));
        rows.push({ ...f, runId: id, createdAt: this.now() });
      }
      const now = this.now();
      const running = req.status === "running";
      const run: NewRun = {
        id,
        tenantId: actor.tenantId,
        type: source.type,
        automationId: source.automationId,
        automationName: source.name,
        automationSlug: source.slug,
        versionId: source.versionId,
        versionLabel: source.versionLabel,
        sourceRef: source.sourceRef,
        requestedRef: source.requestedRef,
        definition: source.yaml,
        status: running ? "running" : req.held ? "created" : "pending",
        triggerType: req.trigger ?? "api",
        triggeredBy: actor.keyId || null,
        triggeredByName: actor.keyName ?? null,
        triggeredByEmail: actor.email ?? null,
        batchId: req.batchId ?? null,
        exampleId: req.exampleId ?? null,
        experimentId: req.experimentId ?? null,
        evaluation: req.evaluation ? 1 : 0,
        trial: req.trial ?? null,
        input: JSON.stringify(input),
        metadata: req.metadata ? JSON.stringify(req.metadata) : null,
        overrides: req.overrides?.steps ? JSON.stringify(req.overrides) : null,
        sampleRank: sampleRankOf(id),
        retryNumber: req.retry?.number ?? 0,
        previousRunId: req.retry?.previousRunId ?? null,
        parentRunId: req.parentRunId ?? null,
        createdAt: now,
        startedAt: running ? now : null,
        claimedBy: running ? this.pool.worker : null,
        leaseUntil: running ? Date.now() + this.pool.leaseMs : null,
        attempts: running ? 1 : 0,
        requestId: req.requestId ?? null,
        dedupeKey: req.dedupeKey ?? null,
        triggerDetail: req.triggerDetail ? JSON.stringify(req.triggerDetail) : null,
      };
      const events = [
        { type: "created", status: "created", message: `run of ${source.slug}${source.versionLabel ? `@${source.versionLabel}` : ""}` },
        ...(req.held ? [] : [{ type: "queued", status: "pending" }]),
        ...(running ? [{ type: "started", status: "running" }] : []),
      ];
      return await this.store.insert(run, events, rows, {
        previousRunId: req.retry?.previousRunId,
        tick: req.tick && { key: req.tick.key, tenantId: actor.tenantId, at: req.tick.at },
        source: source.check,
      });
    } catch (err) {
      await releaseOwner(this.ctx, ownerOf(id));
      throw err;
    }
  }

  /** A run of the tenant; another tenant's id is as missing as an unknown one. */
  async get(tenantId: string, id: string): Promise<RunRow> {
    const r = await this.store.get(tenantId, id);
    if (!r) throw NotFound(`run ${id} not found`, { field: "id" });
    return r;
  }

  /**
   * A run as `GET /v1/runs/{id}` answers it. A run that is queued or running and was created less than
   * SETTLE_MS ago is answered when it finishes, or once it is SETTLE_MS old at the latest: clients that
   * start a run and poll it (both official SDKs' `run_and_wait` read it right after the start, then
   * sleep their interval, 2 s in Python) see a run of a few milliseconds finished at their first read
   * instead of a sleep later. An older run, or one parked on a review or held, is answered at once.
   */
  async getSettled(tenantId: string, id: string): Promise<{ run: RunRow; has?: FinishedRun["has"] }> {
    const run = await this.get(tenantId, id);
    if (run.status !== "pending" && run.status !== "running") return { run };
    const left = SETTLE_MS - (this.ctx.clock.now().getTime() - Date.parse(run.createdAt));
    if (left <= 0 || left > SETTLE_MS) return { run };
    return this.waitForView(id, left / 1000, run);
  }

  /**
   * Resolves when the run is terminal or `seconds` passed; returns the latest row. `known` is the row
   * the caller just inserted in this turn (no I/O since), so no finish can have been announced yet
   * and the first read is skipped: a finish is announced only after the store's commit returns.
   */
  async waitFor(id: string, seconds: number, known?: RunRow): Promise<RunRow> {
    return (await this.waitForView(id, seconds, known)).run;
  }

  /**
   * waitFor, plus what the finish knew when it happened in this process (whether the run has output
   * files and a review), which spares the run view those reads.
   */
  async waitForView(id: string, seconds: number, known?: RunRow): Promise<{ run: RunRow; has?: FinishedRun["has"] }> {
    if (seconds <= 0) return { run: (await this.store.byId(id))! };
    // Subscribed before the read, so a finish between the two is not missed; one read when it already ended.
    let done!: (f?: FinishedRun) => void;
    const ended = new Promise<FinishedRun | undefined>((resolve) => {
      const set = this.waiters.get(id) ?? new Set();
      this.waiters.set(id, set);
      done = (f) => {
        clearTimeout(timer);
        set.delete(done);
        if (set.size === 0 && this.waiters.get(id) === set) this.waiters.delete(id);
        resolve(f);
      };
      const timer = setTimeout(done, seconds * 1000);
      set.add(done);
    });
    // A row handed over is read again when its finish was announced before this wait began.
    const row = known && !this.unwaited.delete(id) ? known : await this.store.byId(id);
    if (!row || isTerminal(row.status)) {
      done();
      return { run: row! };
    }
    // A finish in this process hands over what it committed; otherwise (another process finished it,
    // the wait expired) the run is read again.
    return (await ended) ?? { run: (await this.store.byId(id))! };
  }

  /** `run`: the row as it finished, when known (a worker's finish answers it). */
  private finishedListeners: ((runId: string, run?: RunRow) => void)[] = [];

  /**
   * Calls `listener` once per run that reached a terminal status in this process (after the status is
   * committed). Features that act on finished runs (evaluation scoring, ...) hook here; a crash between
   * the commit and the listener is theirs to recover at start-up.
   */
  onFinished(listener: (runId: string, run?: RunRow) => void): void {
    this.finishedListeners.push(listener);
  }

  /**
   * Announces a terminal status committed in this process (by its worker, or outside it: a rejected
   * human review, a cancel): waiters here at once, other processes' through `runs.finished`.
   */
  finished(id: string, f?: FinishedRun): void {
    const run = f?.run;
    this.notify(id, f);
    // A worker's finish (f) announced itself to the other processes (RunStore.finish); other endings do here.
    if (!f) this.ctx.storage.notifications.publish("runs.finished", id).catch((err) => this.ctx.log.warn("notifying a finished run failed", { runId: id, error: (err as Error)?.message }));
    for (const l of this.finishedListeners) {
      try {
        l(id, run);
      } catch (err) {
        this.ctx.log.error("run finished listener failed", { runId: id, error: (err as Error)?.stack ?? String(err) });
      }
    }
  }

  private notify(id: string, f?: FinishedRun): void {
    const set = this.waiters.get(id);
    if (set) for (const done of [...set]) done(f);
    else {
      this.unwaited.add(id);
      if (this.unwaited.size > UNWAITED_MAX) this.unwaited.delete(this.unwaited.values().next().value!);
    }
  }

  /** One page of the tenant's runs, newest first by default, with a cursor stable under inserts. */
  async list(tenantId: string, q: ListQuery): Promise<{ rows: RunRow[]; nextCursor: string | null }> {
    const rows = await this.store.list(listFilter(tenantId, q));
    return page(rows, q);
  }

  /** Queued → cancelled at once; running → requested (stops at its next step boundary); terminal → unchanged. */
  async cancel(tenantId: string, id: string): Promise<{ run: RunRow; state: "cancelled" | "requested" | "already_terminal"; wasStatus: string }> {
    await this.get(tenantId, id);
    const r = await this.store.requestCancel(id, this.now());
    if (r.state === "cancelled") this.finished(id);
    if (r.state === "requested") {
      this.executing.get(id)?.abort("cancel" satisfies AbortReason);
      // The run may execute in another process: it stops there at its next step boundary.
      await this.ctx.storage.notifications.publish("runs.cancel", id).catch((err) => this.ctx.log.warn("notifying a cancel failed", { runId: id, error: (err as Error)?.message }));
      // Child runs of action.invoke-workflow go too (one a pool worker resumed does not share our signal).
      for (const child of await this.store.openChildren(id)) await this.cancel(tenantId, child);
    }
    return { run: (await this.store.byId(id))!, ...r };
  }

  /** A new run from a finished or running one, with the same input and files, linked both ways. */
  async rerun(actor: Actor, id: string, opts: { version?: string; requestId?: string }): Promise<RunRow> {
    const src = await this.get(actor.tenantId, id);
    const source: ResolvedSource =
      opts.version === "original"
        ? {
            automationId: src.automationId, type: src.type as "workflow", name: src.automationName, slug: src.automationSlug ?? src.automationId,
            versionId: src.versionId ?? "", versionLabel: src.versionLabel, sourceRef: src.sourceRef, requestedRef: src.requestedRef, yaml: src.definition,
          }
        : await resolveTarget(this.ctx.storage.automations, actor.tenantId, src.automationId, { version: opts.version, trigger: "rerun" });
    const rerunId = newRunId();
    const input = JSON.parse(src.input) as Record<string, unknown>;
    const row = await this.prepareRun(actor, source, rerunId, input, {}, {
      target: src.automationId,
      trigger: "rerun",
      metadata: src.metadata ? (JSON.parse(src.metadata) as Record<string, unknown>) : undefined,
      overrides: src.overrides ? JSON.parse(src.overrides) : undefined,
      batchId: src.batchId ?? undefined,
      exampleId: src.exampleId ?? undefined,
      experimentId: src.experimentId ?? undefined,
      evaluation: src.evaluation === 1,
      trial: src.trial ?? undefined,
      retry: { number: src.retryNumber + 1, previousRunId: src.id },
      copyFilesFrom: src.id,
      requestId: opts.requestId,
    });
    void this.pool.wake(); // the insert told the other processes (RunStore.insert)
    return row;
  }

  /**
   * `action.invoke-workflow`: a child run executed inline by the parent's worker (no second slot needed).
   * A resumed parent continues the child an earlier attempt started at the same step (found by
   * `metadata.invokedBy`) instead of starting it over: a finished child's output is reused.
   */
  private async invokeChild(parent: RunRow, target: string, input: Record<string, unknown>, opts: { version?: string; step?: string }): Promise<unknown> {
    let depth = 1;
    for (let p = parent.parentRunId; p && depth <= MAX_NESTING; depth++) p = (await this.store.byId(p))?.parentRunId ?? null;
    if (depth > MAX_NESTING) throw new Error(`workflow nesting is limited to ${MAX_NESTING} levels`);
    // Cancelling (or stopping) the parent reaches the child through the parent's signals.
    const never = new AbortController().signal;
    const signals = this.executing.get(parent.id) ?? { stop: never, interrupt: never };
    // Only a resumed parent can have a child from an earlier attempt (the lookup is not indexed).
    const prior = opts.step && parent.attempts > 1 ? await this.store.childAt(parent.id, opts.step) : undefined;
    let childId: string;
    // What the child's finish committed, when it finished here (no read of the child afterwards).
    let finished: FinishedRun | undefined;
    if (prior && (prior.status === "completed" || !isTerminal(prior.status))) {
      childId = prior.id;
      if (await this.store.claimRun(childId, this.pool.worker, this.now(), Date.now(), this.pool.leaseMs)) finished = await this.executeInline(childId, signals);
      else await this.awaitRun(childId, signals.stop); // a pool worker resumed it first
    } else {
      childId = newRunId();
      const { input: scalars, files } = splitInputFiles(input);
      const actor = { tenantId: parent.tenantId, keyId: parent.triggeredBy ?? parent.id, keyName: parent.triggeredByName, email: parent.triggeredByEmail };
      const prepare = await this.preparer(actor, { target, version: opts.version, trigger: "workflow" }, childId, scalars, files);
      const row = await prepare({
        target,
        trigger: "workflow",
        status: "running",
        parentRunId: parent.id,
        requestId: parent.requestId ?? undefined,
        metadata: opts.step ? { invokedBy: { runId: parent.id, step: opts.step } } : undefined,
        evaluation: parent.evaluation === 1,
        inheritFiles: { runId: parent.id, paths: fileRefPaths(scalars) },
      });
      // Inserted running and claimed by this process: it executes from that row, with no journal to read.
      finished = await this.executeInline(childId, signals, { id: childId, resumed: false, run: row, fresh: true });
    }
    const child = finished?.run ?? (await this.store.byId(childId))!;
    // Stopped by a shutdown, unfinished: the parent stops too and finds this child again on resume.
    if (!isTerminal(child.status)) throw new Cancelled();
    if (child.status !== "completed") {
      const err = child.error ? (JSON.parse(child.error) as { message?: string }) : null;
      throw new Error(`invoked workflow ${target} ${child.status}: ${err?.message ?? "no output"} (run ${childId})`);
    }
    return child.output ? JSON.parse(child.output) : null;
  }

  /** Resolves when run `id` is terminal, or early once `stop` aborts. */
  private async awaitRun(id: string, stop: AbortSignal): Promise<void> {
    while (!stop.aborted && !isTerminal((await this.store.status(id)) ?? "completed")) {
      const stopped = new Promise<void>((resolve) => stop.addEventListener("abort", () => resolve(), { once: true }));
      await Promise.race([this.waitFor(id, 1), stopped]);
    }
  }

  /** Every file of the run with its role: input snapshots first (they exist from the start), then outputs. */
  async artifacts(tenantId: string, id: string) {
    await this.get(tenantId, id);
    return this.store.files(id);
  }

  async artifactBytes(tenantId: string, id: string, path: string): Promise<{ blob: Blob; sha256: string; contentType: string; name: string }> {
    await this.get(tenantId, id);
    const f = await this.store.file(id, path);
    const blob = f ? await openBlob(this.ctx, f.sha256) : null;
    if (!f || !blob) throw NotFound(`run ${id} has no artifact ${path}`, { field: "path" });
    return { blob, sha256: f.sha256, contentType: f.contentType, name: f.name };
  }

  /** The output files as a streaming ZIP; over 32 MiB uncompressed → 413 `artifacts_zip_too_large`. */
  async zip(runId: string, bundle?: "review"): Promise<ReadableStream<Uint8Array>> {
    const files = await this.store.files(runId, "output");
    const prefix = bundle === "review" ? "output/" : "";
    const entries: (ZipEntry & { size: number })[] = files.map((f) => ({ name: prefix + f.path, size: f.size, open: () => openBlob(this.ctx, f.sha256) }));
    // The review bundle adds the reviewer's corrected files (reviews/) under expected/.
    if (bundle === "review") {
      for (const f of await this.ctx.storage.reviews.files(runId)) entries.push({ name: `expected/${f.name}`, size: f.size, open: () => openBlob(this.ctx, f.sha256) });
    }
    const total = entries.reduce((s, f) => s + f.size, 0);
    if (total > ZIP_MAX_BYTES) throw tooLarge(total);
    return zipStream(entries);
  }

  /** A signed link to the run's artifacts as one ZIP; `base` is the public URL the client reaches us at. */
  async zipToken(tenantId: string, id: string, base: string, ttlSeconds = 3600): Promise<{ token: string; url: string; expiresAt: string }> {
    await this.get(tenantId, id);
    const expiresAt = Date.now() + ttlSeconds * 1000;
    const token = signZipToken(this.ctx.config.signingSecret, id, expiresAt);
    return { token, url: `${base.replace(/\/+$/, "")}/v1/runs/${id}/artifacts?zip=1&token=${token}`, expiresAt: new Date(Math.floor(expiresAt / 1000) * 1000).toISOString() };
  }

  private queuedNotice = false;

  /**
   * Runs became claimable (inserted, released from a hold, resumed by a review decision): this
   * process's pool claims at once, and one `runs.queued` notification per turn wakes the others'.
   */
  queued(): void {
    void this.pool.wake();
    if (this.queuedNotice) return;
    this.queuedNotice = true;
    queueMicrotask(() => {
      this.queuedNotice = false;
      this.ctx.storage.notifications.publish("runs.queued", "").catch((err) => this.ctx.log.warn("notifying queued runs failed; the poll picks them up", { error: (err as Error)?.message }));
    });
  }

  private unsubscribe: (() => void)[] = [];

  /**
   * Starts this process's part: listens for runs finished elsewhere (wait_for_completion here returns
   * when another process finishes the run) and cancels of runs executing here, then starts the pool
   * (which does nothing with `--workers 0`).
   */
  async startWorkers(): Promise<void> {
    const n = this.ctx.storage.notifications;
    const listen = (channel: "runs.finished" | "runs.cancel", on: (id: string) => void) =>
      n.subscribe(channel, on).then(
        (off) => void this.unsubscribe.push(off),
        (err) => this.ctx.log.warn(`cannot listen for ${channel}`, { error: (err as Error)?.message ?? String(err) }),
      );
    await listen("runs.finished", (id) => (this.executing.has(id) ? this.announced.add(id) : this.notify(id)));
    await listen("runs.cancel", (id) => this.executing.get(id)?.abort("cancel" satisfies AbortReason));
    // Notifications lost while the listening connection was down: every waiter re-reads its run.
    this.unsubscribe.push(
      n.onReconnect(() => {
        for (const id of [...this.waiters.keys()]) void this.store.status(id).then((s) => isTerminal(s ?? "") && this.notify(id), () => {});
      }),
    );
    await this.pool.start();
  }

  /**
   * Graceful stop: no more claims; runs stop at their next step boundary, steps in flight get
   * `graceMs` to finish; then every pending wait_for_completion is answered with the run as it is (202).
   */
  async stopWorkers(graceMs = SHUTDOWN_GRACE_MS): Promise<void> {
    for (const off of this.unsubscribe.splice(0)) off();
    await this.pool.stop(graceMs);
    await this.store.flush(); // whatever finished is committed before the database closes
    for (const id of [...this.waiters.keys()]) this.notify(id);
  }
}

function tooLarge(total: number) {
  return TooLarge(`the artifacts total ${total} bytes uncompressed; the ZIP limit is ${ZIP_MAX_BYTES} bytes`, {
    code: "artifacts_zip_too_large",
  });
}

/** `$file` paths of the file references among the input's values (top level and lists). */
function fileRefPaths(input: Record<string, unknown>): string[] {
  const isRef = (x: unknown): x is { $file: string } => !!x && typeof x === "object" && typeof (x as { $file?: unknown }).$file === "string";
  return Object.values(input).flatMap((val) => (Array.isArray(val) ? val.filter(isRef) : isRef(val) ? [val] : []).map((r) => r.$file));
}

const services = new WeakMap<AutomationContext, RunService>();

/**
 * The one RunService of a context (routes under both prefixes and the server's start/stop share it).
 * Passing a runtime replaces the engine (tests); otherwise this build's parser + engine are used.
 */
export function runsOf(ctx: AutomationContext, runtime?: RunsRuntime): RunService {
  let s = services.get(ctx);
  if (!s) {
    s = new RunService(ctx, defaultRuntime);
    services.set(ctx, s);
  }
  if (runtime) s.useRuntime(runtime);
  return s;
}
