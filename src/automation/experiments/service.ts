// Experiments: one evaluation run per example through the durable run queue (batch id = experiment
// id), scored as each finishes (the runs service's finished hook), `queued → running → completed`,
// NDJSON progress, cancel, exports. After a crash, start-up scores runs that ended unscored and
// completes experiments whose runs are all done; counters are counted from rows, never kept aside.
import { follow, type Followers } from "../../kernel/follow";
import { Invalid, NotFound } from "../../kernel/errors";
import { newId } from "../../kernel/ids";
import type { AutomationContext } from "../context";
import { fileRefs, inputPathOf, startExampleRun } from "../datasets/run";
import { automationOf } from "../datasets/service";
import type { ExampleRow } from "../datasets/store";
import type { ExperimentRow, ExperimentStore } from "./store";
import { type TrialStats, trialStats } from "./trials";
import type { EvalResult } from "../evaluators/model";
import { scoreRun } from "../evaluators/service";
import { type Actor, runsOf } from "../runs/service";
import type { RunRow } from "../runs/store";

/** Runs started together per batch while an experiment is created (their inserts share commits). */
const CREATE_CHUNK = 50;
/**
 * An unready experiment younger than this may still be being created by another process on the database
 * (its runs are created in chunks, never idle this long): recovery leaves it alone until then.
 */
export const CREATION_GRACE_MS = 2 * 60_000;

export type ProgressLine = Record<string, unknown> & { type: "run" | "summary" };

export class Experiments {
  readonly store: ExperimentStore;
  private listeners: Followers<ProgressLine> = new Map();
  /** Experiments whose runs this process is still creating (recovery leaves them alone; other processes' by their age). */
  private creating = new Set<string>();

  constructor(readonly ctx: AutomationContext) {
    this.store = ctx.storage.experiments;
    runsOf(ctx).onFinished((runId, known) => {
      // Only evaluation runs of an example are scored (immutable fields): the others need no read.
      if (known && (known.evaluation !== 1 || !known.exampleId)) return;
      this.onRunFinished(runId).catch((err) => ctx.log.error("scoring a finished run failed", { runId, error: (err as Error)?.stack ?? String(err) }));
    });
  }

  private now(): string {
    return this.ctx.clock.now().toISOString();
  }

  private async onRunFinished(runId: string): Promise<void> {
    const run = await this.ctx.storage.runs.byId(runId);
    if (!run || run.evaluation !== 1 || !run.exampleId) return;
    // A slot of its experiment freed: the next held run starts before this one is scored.
    if (run.experimentId) await this.release(run.experimentId);
    await scoreRun(this.ctx, run);
    if (run.experimentId) await this.progress(run.experimentId, runId);
  }

  /** Tells stream subscribers about a scored run and completes the experiment when it was the last. */
  private async progress(experimentId: string, runId: string): Promise<void> {
    if (this.listeners.get(experimentId)?.size) {
      const line = await this.runLine(runId);
      if (line) for (const s of [...(this.listeners.get(experimentId) ?? [])]) s(line);
    }
    await this.checkCompleted(experimentId);
  }

  private async checkCompleted(experimentId: string): Promise<void> {
    if (!(await this.store.completeIfDone(experimentId, this.now()))) return;
    if (this.listeners.get(experimentId)?.size) {
      const line: ProgressLine = { type: "summary", experiment: await this.summary((await this.store.byId(experimentId))!) };
      for (const sub of [...(this.listeners.get(experimentId) ?? [])]) sub(line);
    }
  }

  /** Queues held runs of a bounded experiment up to its `batchConcurrency` (no-op when unbounded or cancelled). */
  private async release(experimentId: string): Promise<void> {
    const e = await this.store.byId(experimentId);
    if (!e?.batchConcurrency || e.cancelledAt || e.completedAt) return;
    const runs = runsOf(this.ctx);
    if ((await this.ctx.storage.runs.releaseHeld(experimentId, e.batchConcurrency, this.now())) > 0) runs.queued();
  }

  async runLine(runId: string): Promise<ProgressLine | null> {
    const run = await this.ctx.storage.runs.byId(runId);
    const ev = await this.ctx.storage.evaluators.evaluation(runId);
    if (!run || !ev) return null;
    const ex = run.exampleId ? await this.ctx.storage.datasets.byId(run.exampleId) : undefined;
    return {
      type: "run",
      runId,
      exampleId: run.exampleId,
      exampleName: ex?.name ?? null,
      // Only runs of a many-trial experiment have one: a one-trial experiment's lines are as they were.
      ...(run.trial !== null ? { trial: run.trial } : {}),
      status: run.status,
      score: ev.score,
      passed: ev.passed,
      results: await this.ctx.storage.evaluators.results(runId),
    };
  }

  /** Start-up: score runs that ended while no process was scoring, then complete what is done. */
  async recover(): Promise<void> {
    clearTimeout(this.recheck);
    const runs = this.ctx.storage.runs;
    for (;;) {
      const ids = await this.ctx.storage.evaluators.unscored(500);
      if (ids.length === 0) break;
      for (const id of ids) {
        const run = await runs.byId(id);
        if (run) await scoreRun(this.ctx, run);
      }
      if (ids.length < 500) break;
    }
    let young = false;
    for (const e of await this.store.unfinished()) {
      if (this.creating.has(e.id)) continue;
      if (!e.readyAt) {
        // Another process on the database may still be creating it: only one older than any creation
        // takes is abandoned. A young one is looked at again once it is old enough.
        if (this.ctx.clock.now().getTime() - Date.parse(e.createdAt) < CREATION_GRACE_MS) {
          young = true;
          continue;
        }
        // Its creation died with a previous process: it is made of the runs that were created.
        await this.store.setReady(e.id, this.now());
      }
      // A run that finished while no process was here to queue the next one leaves a free slot.
      await this.release(e.id);
      await this.checkCompleted(e.id);
    }
    if (young) {
      this.recheck = setTimeout(() => void this.recover().catch((err) => this.ctx.log.error("experiment recovery failed", { error: (err as Error)?.stack ?? String(err) })), CREATION_GRACE_MS);
      this.recheck.unref?.();
    }
  }

  private recheck: ReturnType<typeof setTimeout> | undefined;

  async summary(e: ExperimentRow) {
    const s = await this.store.stats(e.id);
    const status = e.completedAt ? "completed" : s.started > 0 || s.scored > 0 ? "running" : "queued";
    return {
      id: e.id,
      automationId: e.automationId,
      automationType: e.automationType,
      status,
      runCount: Math.max(s.runCount, e.readyAt ? 0 : e.runTotal),
      completedCount: s.scored,
      passedCount: s.passed,
      failedCount: s.failed,
      avgScore: s.avgScore,
      createdAt: e.createdAt,
      completedAt: e.completedAt,
      version: e.version,
    };
  }

  async detail(e: ExperimentRow) {
    const runs = await this.store.runs(e.id);
    const resultsByRun: Record<string, EvalResult[]> = {};
    for (const r of runs) resultsByRun[r.id] = [];
    for (const r of await this.ctx.storage.evaluators.resultsOfExperiment(e.id)) (resultsByRun[r.runId] ??= []).push(r);
    return {
      ...(await this.summary(e)),
      runs: runs.map((r) => ({
        id: r.id,
        status: r.status,
        exampleId: r.exampleId,
        exampleName: r.exampleName,
        createdAt: r.createdAt,
        completedAt: r.completedAt,
      })),
      resultsByRun,
    };
  }

  /**
   * Per example and per evaluator over its trials: mean, spread and pass rate, plus overall figures
   * (`GET …/experiments/{id}/trials`; the SDKs' Experiment shapes admit no extra key).
   */
  async trials(e: ExperimentRow): Promise<TrialStats> {
    const [summary, runs, results] = await Promise.all([this.summary(e), this.store.runs(e.id), this.ctx.storage.evaluators.resultsOfExperiment(e.id)]);
    return trialStats(e, summary.status, runs, results);
  }

  async find(tenantId: string, automationRef: string, id: string): Promise<ExperimentRow> {
    const a = await automationOf(this.ctx, tenantId, automationRef);
    const e = await this.store.get(tenantId, id);
    if (!e || e.automationId !== a.id) throw NotFound(`experiment ${id} not found`, { field: "experimentId" });
    return e;
  }

  async resolve(tenantId: string, id: string) {
    const e = await this.store.get(tenantId, id);
    if (!e) throw NotFound(`experiment ${id} not found`, { field: "experimentId" });
    return { id: e.id, automationId: e.automationId };
  }

  async list(tenantId: string, automationRef: string, q: { limit: number; offset: number; from?: string; to?: string }) {
    const a = await automationOf(this.ctx, tenantId, automationRef);
    const { rows, total } = await this.store.list(tenantId, a.id, q);
    return { data: await Promise.all(rows.map((e) => this.summary(e))), total, limit: q.limit, offset: q.offset };
  }

  /**
   * Creates the experiment and enqueues one evaluation run per example. Every example is checked
   * first (its `$file` references exist); a run that still cannot start (its input does not match
   * the workflow) cancels the runs already created and answers 400 naming the example.
   */
  async create(
    actor: Actor,
    automationRef: string,
    body: { examples?: string[]; version?: string; name?: string; batchConcurrency?: number | null; trials?: number },
  ): Promise<{ id: string; runs: { id: string; exampleId: string | null }[]; total: number }> {
    const a = await automationOf(this.ctx, actor.tenantId, automationRef);
    const exStore = this.ctx.storage.datasets;
    let examples: ExampleRow[];
    if (body.examples) {
      examples = [];
      for (const [i, id] of [...new Set(body.examples)].entries()) {
        const ex = await exStore.get(actor.tenantId, a.id, id);
        if (!ex) throw Invalid(`example ${id} is not in this automation's dataset`, { field: `examples.${i}`, code: "example_not_found" });
        examples.push(ex);
      }
    } else {
      examples = await exStore.all(actor.tenantId, a.id);
    }
    if (examples.length === 0) throw Invalid("the dataset has no examples to run", { field: "examples", code: "empty_dataset" });
    // Awaited: the runs feature resolves targets through its (async) store.
    const source = await runsOf(this.ctx).resolve(actor.tenantId, a.id, { version: body.version, trigger: "eval" });
    for (const ex of examples) await checkFileRefs(this.ctx, ex);
    const id = newId("exp");
    const now = this.now();
    const trials = body.trials ?? 1;
    // Trial by trial over the dataset, so an experiment cut short (cancelled, or a creation that died)
    // has the early trials of every example rather than every trial of a few. One-trial runs carry no trial.
    const jobs = Array.from({ length: trials }, (_, t) => examples.map((ex) => ({ ex, trial: trials > 1 ? t + 1 : undefined }))).flat();
    await this.store.insert({
      id, tenantId: actor.tenantId, automationId: a.id, automationType: a.type, name: body.name ?? null, version: source.versionLabel ?? source.versionId,
      runTotal: jobs.length, readyAt: null, createdAt: now, completedAt: null, cancelledAt: null,
      batchConcurrency: body.batchConcurrency ?? null, trials,
    });
    this.creating.add(id);
    const runs: RunRow[] = [];
    try {
      for (let i = 0; i < jobs.length; i += CREATE_CHUNK) {
        const chunk = jobs.slice(i, i + CREATE_CHUNK);
        const settled = await Promise.allSettled(
          chunk.map(({ ex, trial }) => startExampleRun(this.ctx, actor, ex, { experimentId: id, version: source.versionId, held: !!body.batchConcurrency, trial })),
        );
        for (const s of settled) if (s.status === "fulfilled") runs.push(s.value);
        const failed = settled.findIndex((s) => s.status === "rejected");
        if (failed >= 0) {
          const err = (settled[failed] as PromiseRejectedResult).reason as Error;
          throw Invalid(`example ${chunk[failed].ex.name} cannot run: ${err.message}`, { field: "examples", code: "example_invalid" });
        }
        // Large bounded experiments start their first runs while the rest are still being created.
        await this.release(id);
      }
      await this.store.setReady(id, this.now(), runs.length);
    } catch (err) {
      // Whatever failed (a run that cannot start, the database): no half-created experiment stays
      // behind and none of its runs is left queued or held to run later.
      for (const r of runs) await runsOf(this.ctx).cancel(actor.tenantId, r.id).catch(() => {});
      await this.store.remove(id).catch(() => {});
      throw err;
    } finally {
      this.creating.delete(id);
    }
    await this.checkCompleted(id);
    return { id, runs: runs.map((r) => ({ id: r.id, exampleId: r.exampleId })), total: runs.length };
  }

  /** Finished runs stay; queued ones are cancelled, running ones stop at their next step. */
  async cancel(tenantId: string, automationRef: string, id: string) {
    const e = await this.find(tenantId, automationRef, id);
    if (!e.completedAt) {
      await this.store.setCancelled(id, this.now());
      for (const runId of await this.store.openRuns(id)) await runsOf(this.ctx).cancel(tenantId, runId);
    }
    return this.detail((await this.store.byId(id))!);
  }

  /**
   * Progress of an experiment as lines: every run already scored, then one per run as it is scored,
   * then the summary. The returned function unsubscribes (the experiment goes on).
   */
  follow(id: string, emit: (line: ProgressLine) => void, done: () => void): () => void {
    return follow<ProgressLine>(
      {
        followers: this.listeners,
        id,
        keyOf: (line) => (line.type === "run" ? (line.runId as string) : undefined),
        settled: async (sent) => {
          const lines: ProgressLine[] = [];
          for (const r of await this.store.runs(id)) {
            if (r.passed === null || sent.has(r.id)) continue;
            const line = await this.runLine(r.id);
            if (line) lines.push(line);
          }
          return lines;
        },
        final: async () => {
          const e = await this.store.byId(id);
          return e?.completedAt ? { type: "summary", experiment: await this.summary(e) } : undefined;
        },
        onError: (err) => this.ctx.log.error("following an experiment failed", { experimentId: id, error: (err as Error)?.stack ?? String(err) }),
      },
      emit,
      done,
    );
  }
}

/** Every `{"$file": "input/…"}` of the example's input names one of its input files. */
async function checkFileRefs(ctx: AutomationContext, ex: ExampleRow): Promise<void> {
  const input = ex.input ? (JSON.parse(ex.input) as Record<string, unknown>) : {};
  for (const { field, path } of fileRefs(input)) {
    const inFolder = inputPathOf(path);
    if (!inFolder || !(await ctx.storage.datasets.file(ex.id, "input", inFolder))) {
      throw Invalid(`example ${ex.name}: input.${field} refers to ${path}, which is not one of its input files`, { field: "examples", code: "file_not_found" });
    }
  }
}

const services = new WeakMap<AutomationContext, Experiments>();

/** The one Experiments service of a context; creating it hooks scoring into run completion. */
export function experimentsOf(ctx: AutomationContext): Experiments {
  let s = services.get(ctx);
  if (!s) {
    s = new Experiments(ctx);
    services.set(ctx, s);
  }
  return s;
}
