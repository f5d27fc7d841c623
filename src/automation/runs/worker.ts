// Executes one claimed run through the engine: builds the journal from the steps already recorded
// (so a resumed run skips them), persists every step as it finishes, and records the terminal status
// exactly once.
import { NotFound } from "../../kernel/errors";
import type { AutomationContext } from "../context";
import type { EngineServices, ExecuteResult, FileRef, RunJournal, StepRecord } from "../engine/contract";
import { describeWorkflow } from "../agents/service";
import { openBlob, putBytes, retainBlob } from "../files/service";
import { templateRenderer } from "../templates/engine";
import { humanReviewGateway } from "./human-review-gateway";
import { mailSender } from "../email/engine";
import { meteredGateway } from "../models/metered";
import { modelUsageMetrics } from "../metrics";
import { ownerOf } from "./inputs";
import { leftToResume, type Executing, type RunSignals } from "./signals";
import type { RunsRuntime } from "./runtime";
import { JournalWriteLost, type Claim, type FinishedRun, type FinishRequest, type Lease, type RunRow, type StepRow } from "./store";
import type { RunStore } from "./store";

export interface WorkerDeps {
  ctx: AutomationContext;
  store: RunStore;
  runtime: RunsRuntime;
  /** Called once a run reached a terminal status, with what its finish committed. */
  finished(runId: string, finished: FinishedRun): void;
  /** Runs executing in this process (pool or inline children): cancel aborts them here. */
  executing: Map<string, Executing>;
  /** `action.invoke-workflow`: runs a child workflow to completion and returns its output. */
  invoke(parent: RunRow, target: string, input: Record<string, unknown>, opts: { version?: string; step?: string }): Promise<unknown>;
}

/** Pauses before each new write of a lost step record (the store's busy timeout comes on top of each). */
const JOURNAL_RETRIES_MS = [100, 500, 2000, 5000];

/** Pick-ups of one run (the first plus resumes after restarts) before it is failed. */
export const MAX_ATTEMPTS = 5;

const parse = (s: string | null): unknown => (s == null ? undefined : JSON.parse(s));

function toRecord(s: StepRow): StepRecord {
  return {
    path: s.path,
    name: s.name,
    type: s.type,
    status: s.status as StepRecord["status"],
    output: parse(s.output),
    error: parse(s.error) as StepRecord["error"],
    attempt: s.attempt,
    startedAt: s.startedAt,
    completedAt: s.completedAt ?? s.startedAt,
  };
}

export function envFor(names: string[]): Record<string, string> {
  const env: Record<string, string> = {};
  for (const n of names) if (process.env[n] !== undefined) env[n] = process.env[n]!;
  return env;
}

function services(deps: WorkerDeps, run: RunRow): EngineServices {
  const { ctx, store } = deps;
  return {
    clock: ctx.clock,
    env: envFor(ctx.config.envAllowList),
    httpAllowHosts: ctx.config.httpAllowHosts,
    outboundAllow: ctx.config.outboundAllow,
    async readFile(ref: FileRef) {
      const row = await store.file(run.id, ref.$file);
      const blob = row ? await openBlob(ctx, row.sha256) : null;
      if (!blob) throw NotFound(`file ${ref.$file} is not part of this run`);
      return new Uint8Array(await blob.arrayBuffer());
    },
    async writeFile(f) {
      const blob = await putBytes(ctx, f.bytes);
      await retainBlob(ctx, run.tenantId, blob.sha256, ownerOf(run.id));
      const base = f.name.replace(/[\\/\x00-\x1f]/g, "_") || "file";
      // Same name from another step keeps both: the later one goes under its step's folder.
      const taken = await store.file(run.id, base);
      const path = taken && taken.stepName !== f.stepName ? `${f.stepName}/${base}` : base;
      await store.putFile({
        runId: run.id, path, role: f.role ?? "output", name: f.name, contentType: f.contentType, size: blob.size,
        sha256: blob.sha256, stepName: f.stepName, fileId: null, createdAt: ctx.clock.now().toISOString(),
      });
      return { $file: path, filename: f.name, contentType: f.contentType, size: blob.size };
    },
    invokeWorkflow: (target, input, opts) => deps.invoke(run, target, input, opts),
    templates: templateRenderer(ctx, run.tenantId),
    describeWorkflow: (target) => describeWorkflow(ctx.storage.automations, run.tenantId, target),
    ...(ctx.models ? { models: meteredGateway(ctx.models, ctx.storage.models, run.id, ctx.clock, ctx.metrics && modelUsageMetrics(ctx.metrics)) } : {}),
    humanReview: humanReviewGateway(ctx, run),
    email: mailSender(ctx, run.tenantId, run.id),
  };
}

/** Top-level `overrides.steps.<name>` act as already-finished steps with that output. */
function overrideRecords(run: RunRow): StepRecord[] {
  const o = parse(run.overrides) as { steps?: Record<string, unknown> } | undefined;
  if (!o?.steps) return [];
  return Object.entries(o.steps).map(([name, output]) => ({
    path: name, name, type: "override", status: "completed", output, attempt: 1, startedAt: run.createdAt, completedAt: run.createdAt,
  }));
}

/**
 * Executes run `runId`; `claim` is the pool's claim of it, which may carry the row and whether it ever
 * started. `release` is called once the run executes nothing more and its finish is queued (the pool's
 * slot takes the next run while that finish commits); the promise settles after the finish committed.
 */
export async function executeRun(deps: WorkerDeps, runId: string, outer: RunSignals, claim?: Claim, release?: () => void): Promise<FinishedRun | undefined> {
  const local = new AbortController();
  const signal = AbortSignal.any([outer.stop, local.signal]);
  deps.executing.set(runId, { abort: (reason) => local.abort(reason), stop: signal, interrupt: outer.interrupt });
  try {
    return await execute(deps, runId, signal, outer.interrupt, claim, release);
  } finally {
    deps.executing.delete(runId);
  }
}

/** Executes the run to its end or to where it stops (a review, a shutdown); what the finish committed, when it finished. */
async function execute(deps: WorkerDeps, runId: string, signal: AbortSignal, interrupt: AbortSignal, claim?: Claim, release?: () => void): Promise<FinishedRun | undefined> {
  const { ctx, store, runtime } = deps;
  const run = claim?.run ?? (await store.byId(runId));
  if (!run) return;
  const now = () => ctx.clock.now().toISOString();
  // Every line about this run names it, its tenant and the request that started it.
  const log = ctx.log.child({ runId, tenant: run.tenantId, ...(run.requestId ? { requestId: run.requestId } : {}) });
  const t0 = performance.now();
  const m = ctx.metrics;
  if (run.attempts <= 1) {
    m?.runsStarted.inc();
    m?.queueWait.observe(Math.max(0, (ctx.clock.now().getTime() - Date.parse(run.createdAt)) / 1000));
  }
  log.info("run started", { automation: run.automationSlug ?? run.automationId, attempt: run.attempts });
  // Fencing: this execution's writes and finish count only while the run is still claimed as it was.
  const lease: Lease | undefined = run.claimedBy ? { worker: run.claimedBy, attempt: run.attempts } : undefined;
  // This execution's finished steps, to write again when their record was lost (see finishJournaled).
  const records = new Map<string, StepRecord>();
  const finishJournaled = async (r: FinishRequest): Promise<FinishedRun | undefined> => {
    for (let attempt = 0; ; attempt++) {
      try {
        return await store.finish(runId, now(), r, lease);
      } catch (err) {
        if (!(err instanceof JournalWriteLost)) throw err;
        const again = err.paths.map((p) => records.get(p)).filter((s): s is StepRecord => s !== undefined);
        if (attempt >= JOURNAL_RETRIES_MS.length || again.length < err.paths.length) {
          // Still unwritable: the run stops as failed rather than completing with a journal that lies.
          log.error("a step's record could not be written; the run fails instead of finishing", { steps: err.paths, status: r.status });
          const error = { message: `the record of step ${err.paths.join(", ")} could not be written to the database`, code: "journal_write_failed" };
          return store.finish(runId, now(), { status: "failed", error, message: error.message }, lease);
        }
        log.warn("a step's record was not written; writing it again before the run finishes", { steps: err.paths, attempt: attempt + 1 });
        await Bun.sleep(JOURNAL_RETRIES_MS[attempt]);
        await Promise.allSettled(again.map((s) => store.stepFinished(runId, s, lease)));
      }
    }
  };
  const end = async (r: FinishRequest): Promise<FinishedRun | undefined> => {
    const finishing = finishJournaled(r);
    release?.();
    const finished = await finishing;
    if (!finished) return undefined;
    m?.runsFinished.inc({ status: r.status });
    log.info("run finished", { status: r.status, ms: Math.round(performance.now() - t0) });
    deps.finished(runId, finished);
    return finished;
  };
  if (run.cancelRequestedAt) return end({ status: "cancelled", message: "cancelled at a step boundary" });
  // A run that keeps dying with the process (a poison run) must not crash-loop the server forever.
  if (run.attempts > MAX_ATTEMPTS) {
    return end({ status: "failed", error: { message: `the run was interrupted ${run.attempts - 1} times (server restarts) and is given up`, code: "too_many_restarts" } });
  }
  const parsed = runtime.parse(run.definition);
  if (!parsed.ok) return end({ status: "failed", error: { message: `workflow definition is invalid: ${parsed.message}`, code: "invalid_workflow" } });

  const completed = new Map<string, StepRecord>();
  for (const r of overrideRecords(run)) completed.set(r.path, r);
  if (!claim?.fresh) for (const s of await store.completedSteps(runId)) completed.set(s.path, toRecord(s));
  const journal: RunJournal = {
    completed,
    stepStarted: (s) => store.stepStarted(runId, s, lease),
    stepFinished: (s) => {
      // Committed with the turn's group commit (finish flushes first); the engine does not wait for it.
      // A write that fails is written again before the run may finish (the store refuses the finish).
      records.set(s.path, s);
      store.stepFinished(runId, s, lease).catch((err) => log.warn("journaling a step failed", { step: s.path, error: (err as Error)?.message ?? String(err) }));
      if (m) m.stepDuration.observe({ kind: s.type, status: s.status }, Math.max(0, (Date.parse(s.completedAt) - Date.parse(s.startedAt)) / 1000));
      if (s.status === "failed") log.warn("step failed", { step: s.path, kind: s.type, error: s.error?.message });
    },
  };

  let result: ExecuteResult;
  try {
    result = await runtime.execute({
      workflow: parsed.workflow,
      input: JSON.parse(run.input) as Record<string, unknown>,
      journal,
      services: services(deps, run),
      signal,
      interrupt,
      evaluation: run.evaluation === 1,
      eval: run.evaluation === 1 && run.exampleId ? { exampleId: run.exampleId, experimentId: run.experimentId, trial: run.trial ?? 1 } : undefined,
    });
  } catch (err) {
    if (leftToResume(signal)) return;
    log.error("engine threw", { error: (err as Error)?.stack ?? String(err) });
    result = { status: "failed", error: { message: `internal error: ${(err as Error)?.message ?? String(err)}`, code: "internal_error" } };
  }
  // Stopped for a shutdown, not by the user: leave it running, the next start resumes it.
  if (leftToResume(signal) && result.status !== "completed" && !run.cancelRequestedAt && !(await store.byId(runId))?.cancelRequestedAt) return;
  // Parked on a human review: `waiting` is already committed with the task; approval re-queues the run.
  if (result.status === "waiting") {
    log.info("run waiting for a human review");
    return undefined;
  }
  if (result.status === "completed") return end({ status: "completed", output: result.output ?? null });
  if (result.status === "cancelled") return end({ status: "cancelled", message: "cancelled at a step boundary" });
  return end({ status: "failed", error: result.error ?? { message: "the run failed" }, message: result.error?.message });
}
