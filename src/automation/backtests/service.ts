// Backtests (issue 39): past runs of an automation's active version replayed on a candidate version as
// evaluation runs (no side effects, as experiments' runs), each replay and its original scored by the
// automation's evaluators against the same expected value — the original output, or a reviewer's
// corrected output where there is one — and the pairs compared with the statistics of experiments.
//
// Durable: the backtest and one item per selected run are written before the 202; replays start a
// window at a time, each with the dedupe key `backtest:<id>:<run>` (unique across runs), so a start
// repeated after a crash finds the replay instead of making a second one; an item moves
// pending → started → scored by conditional updates, so it is scored once. Start-up scores replays that
// ended while no process was here and starts what is still pending.
import { follow, type Followers } from "../../kernel/follow";
import { DomainError, Invalid, NotFound } from "../../kernel/errors";
import { newId } from "../../kernel/ids";
import type { AutomationContext } from "../context";
import { automationOf } from "../datasets/service";
import type { FileDigest } from "../evaluators/scorers";
import { configOf, scoreAgainst } from "../evaluators/service";
import { DEFAULT_RESAMPLES, type SideScores, type StatsAnswer } from "../experiments/compare";
import { pairedStats, randomSeed } from "../experiments/comparison";
import { type Actor, runsOf } from "../runs/service";
import { isTerminal, type RunRow } from "../runs/store";
import { type BacktestDetail, type BacktestSummary, type ChangedRun, DEFAULT_BACKTEST_RUNS, type Select, SELECTABLE_STATUSES } from "./model";
import type { BacktestRow, BacktestStore, ItemRow, SideRecord } from "./store";

export type ProgressLine = Record<string, unknown> & { type: "run" | "summary" };

/** Replays of one backtest in flight at once (per process doing the starting); the pool's workers run them. */
const windowOf = (workers: number) => Math.max(32, workers * 8);
/** Changed runs listed in a report at most (`changedCount` counts all). */
const MAX_CHANGED = 1000;
const keyOf = (backtestId: string, runId: string) => `backtest:${backtestId}:${runId}`;
const link = (runId: string | null) => (runId ? `/v1/runs/${runId}` : null);

type Change = "broke" | "score_down" | "fixed" | "score_up";
const CHANGE_ORDER: Record<Change, number> = { broke: 0, score_down: 1, fixed: 2, score_up: 3 };

/** How an item's outcome changed from the original to the replay, or null when it did not. */
function changeOf(base: SideRecord, candidate: SideRecord): Change | null {
  if (base.passed && !candidate.passed) return "broke";
  if (!base.passed && candidate.passed) return "fixed";
  const d = (candidate.score ?? 0) - (base.score ?? 0);
  if ((base.score === null) !== (candidate.score === null) || Math.abs(d) > 1e-9) return d < 0 || candidate.score === null ? "score_down" : "score_up";
  return null;
}

export class Backtests {
  readonly store: BacktestStore;
  private listeners: Followers<ProgressLine> = new Map();
  private pumping = new Set<string>();
  /**
   * Replays this process started and has not seen end, by backtest: a finish starts more only once the
   * window is half empty, a batch at a time instead of one read-and-start per finish. A throttle only:
   * the database decides what is pending, and a process that does not know (a restart, another
   * instance's finish) pumps at once.
   */
  private inFlight = new Map<string, number>();
  private again = new Set<string>();
  /** Originals read when their replay started, for scoring it when it ends (a run's fields scored here never change). */
  private originals = new Map<string, RunRow>();
  /** Reports by (backtest, resamples): a completed backtest's report never changes (seeded). */
  private reports = new Map<string, StatsAnswer>();

  constructor(readonly ctx: AutomationContext) {
    this.store = ctx.storage.backtests;
    runsOf(ctx).onFinished((runId, known) => {
      // Only evaluation runs of a backtest (batch id bt_…) are ours: the others need no read.
      if (known && (known.evaluation !== 1 || !known.batchId?.startsWith("bt_"))) return;
      this.onRunFinished(runId, known).catch((err) => ctx.log.error("scoring a backtest replay failed", { runId, error: (err as Error)?.stack ?? String(err) }));
    });
  }

  private now(): string {
    return this.ctx.clock.now().toISOString();
  }

  /** `known`: the row as it finished, when this process's worker finished it (no read then). */
  private async onRunFinished(runId: string, known?: RunRow): Promise<void> {
    const run = known ?? (await this.ctx.storage.runs.byId(runId));
    if (!run || run.evaluation !== 1 || !run.batchId?.startsWith("bt_") || !run.dedupeKey?.startsWith("backtest:")) return;
    const originalRunId = run.dedupeKey.slice(`backtest:${run.batchId}:`.length);
    // The replay may end before its start was recorded on the item (a free worker runs it at once).
    if (!(await this.store.itemByReplay(run.id))) await this.store.markStarted(run.batchId, originalRunId, run.id, this.now());
    await this.settle(run.batchId, originalRunId, run);
    const left = (this.inFlight.get(run.batchId) ?? 0) - 1;
    if (left > windowOf(this.ctx.config.workers) / 2) {
      this.inFlight.set(run.batchId, left);
      return;
    }
    this.inFlight.delete(run.batchId);
    await this.pump(run.batchId);
  }

  /** Scores a finished replay and its original (once), tells followers, completes the backtest when it was the last. */
  private async settle(backtestId: string, originalRunId: string, replay: RunRow): Promise<void> {
    if (!isTerminal(replay.status)) return;
    const at = this.now();
    let changed: boolean;
    if (replay.status === "cancelled" || replay.status === "rejected") {
      changed = await this.store.markReplayCancelled(backtestId, originalRunId, at);
    } else {
      const original = this.originals.get(originalRunId) ?? (await this.ctx.storage.runs.byId(originalRunId));
      if (!original) return;
      const [{ expected, files, from }, config] = await Promise.all([this.expectedOf(original), configOf(this.ctx, replay.automationId)]);
      const [base, candidate] = await Promise.all([
        scoreAgainst(this.ctx, original, expected, files, { at, meterAs: replay, config }),
        scoreAgainst(this.ctx, replay, expected, files, { at, config }),
      ]);
      const side = (s: typeof base): SideRecord => ({ score: s.score, passed: s.passed, scores: Object.fromEntries(s.results.map((r) => [r.evaluatorName, r.score])) });
      changed = await this.store.markScored(backtestId, originalRunId, { expectedFrom: from, base: side(base), candidate: side(candidate) }, at);
    }
    this.originals.delete(originalRunId);
    if (changed) await this.progress(backtestId, originalRunId);
  }

  /**
   * What a run is compared with: a reviewer's corrected output (and corrected files) when the run's
   * review has them — human ground truth wins — else the run's own output and output files.
   */
  private async expectedOf(run: RunRow): Promise<{ expected: unknown; files: FileDigest[]; from: "output" | "correction" }> {
    const review = await this.ctx.storage.reviews.get(run.id);
    const correctedFiles = review ? await this.ctx.storage.reviews.files(run.id) : [];
    const correctedJson = review?.correctedOutput != null;
    const expected = correctedJson ? (JSON.parse(review!.correctedOutput!) as unknown) : run.output ? (JSON.parse(run.output) as unknown) : null;
    const files = correctedFiles.length
      ? correctedFiles.map((f) => ({ path: f.name, sha256: f.sha256, size: f.size }))
      : (await this.ctx.storage.runs.files(run.id, "output")).map((f) => ({ path: f.path, sha256: f.sha256, size: f.size }));
    return { expected, files, from: correctedJson || correctedFiles.length ? "correction" : "output" };
  }

  private async progress(backtestId: string, originalRunId: string): Promise<void> {
    if (this.listeners.get(backtestId)?.size) {
      const item = (await this.store.items(backtestId)).find((i) => i.originalRunId === originalRunId);
      if (item) for (const s of [...(this.listeners.get(backtestId) ?? [])]) s(this.itemLine(item));
    }
    await this.checkCompleted(backtestId);
  }

  private async checkCompleted(backtestId: string): Promise<void> {
    if (!(await this.store.completeIfDone(backtestId, this.now()))) return;
    if (this.listeners.get(backtestId)?.size) {
      const line: ProgressLine = { type: "summary", backtest: await this.summary((await this.store.byId(backtestId))!) };
      for (const s of [...(this.listeners.get(backtestId) ?? [])]) s(line);
    }
  }

  itemLine(i: ItemRow): ProgressLine {
    return {
      type: "run",
      originalRunId: i.originalRunId,
      replayRunId: i.replayRunId,
      state: i.state,
      ...(i.reason ? { reason: i.reason } : {}),
      ...(i.expectedFrom ? { expectedFrom: i.expectedFrom } : {}),
      ...(i.base && i.candidate ? { base: i.base, candidate: i.candidate, change: changeOf(i.base, i.candidate) } : {}),
    };
  }

  /**
   * Starts replays of pending items until the window is full. One pass at a time per backtest in this
   * process (a call meanwhile asks for another pass); other processes may pump too: the dedupe key
   * and the conditional updates keep every run replayed once.
   */
  async pump(backtestId: string): Promise<void> {
    if (this.pumping.has(backtestId)) {
      this.again.add(backtestId);
      return;
    }
    this.pumping.add(backtestId);
    try {
      do {
        this.again.delete(backtestId);
        const b = await this.store.byId(backtestId);
        if (!b || b.completedAt || b.cancelledAt) break;
        // Index reads of the few items in flight and the next pending ones (counting all items per finish would be quadratic).
        const started = (await this.store.started(backtestId)).length;
        this.inFlight.set(backtestId, started);
        const room = windowOf(this.ctx.config.workers) - started;
        if (room <= 0) break;
        const items = await this.store.pending(backtestId, room);
        const replays = (await Promise.all(items.map((i) => this.replay(b, i)))).filter(Boolean).length;
        this.inFlight.set(backtestId, (this.inFlight.get(backtestId) ?? 0) + replays);
        if (items.length > 0) this.again.add(backtestId);
      } while (this.again.has(backtestId));
    } finally {
      this.pumping.delete(backtestId);
    }
    await this.checkCompleted(backtestId);
  }

  /** Starts the replay of one pending item (or finds the one a crashed start made); skips what cannot replay. True when this call started a run. */
  private async replay(b: BacktestRow, item: ItemRow): Promise<boolean> {
    const key = keyOf(b.id, item.originalRunId);
    const skip = async (reason: string) => {
      if (await this.store.markSkipped(b.id, item.originalRunId, reason, this.now())) await this.progress(b.id, item.originalRunId);
      return false;
    };
    const adopt = async (replayId: string) => {
      await this.store.markStarted(b.id, item.originalRunId, replayId, this.now());
      const run = await this.ctx.storage.runs.byId(replayId);
      if (run) await this.settle(b.id, item.originalRunId, run);
      return false;
    };
    // A replay a crashed start made is found by its dedupe key when this start is refused (below).
    const original = await this.ctx.storage.runs.byId(item.originalRunId);
    if (!original) return skip("the run no longer exists");
    // Files past their retention: the run's rows name bytes the blob store no longer has.
    for (const f of await this.ctx.storage.runs.files(original.id, "input")) {
      if (!(await this.ctx.blobs.has(f.sha256))) return skip(`input file ${f.path} is past its retention (its bytes are gone)`);
    }
    if (this.originals.size > 10_000) this.originals.clear();
    this.originals.set(original.id, original);
    let replay: RunRow;
    try {
      replay = await runsOf(this.ctx).start(
        { tenantId: b.tenantId, keyId: b.createdBy ?? "", keyName: null },
        {
          target: b.automationId,
          input: JSON.parse(original.input) as Record<string, unknown>,
          copyFilesFrom: original.id,
          overrides: original.overrides ? (JSON.parse(original.overrides) as { steps?: Record<string, Record<string, unknown>> }) : undefined,
          version: b.candidateVersionId,
          trigger: "eval",
          batchId: b.id,
          evaluation: true,
          dedupeKey: key,
          metadata: { backtest: { id: b.id, originalRunId: original.id } },
        },
      );
    } catch (err) {
      // Started before (another process meanwhile, or this one before a crash: the dedupe key is taken): that replay is this item's.
      const other = await this.store.runByDedupeKey(key);
      if (other) return adopt(other);
      return skip(`the candidate cannot run its input: ${(err as Error).message}`);
    }
    // Marked started, the replay is this item's: its finish (this process's listener, or start-up
    // recovery after a crash) scores it, even when it finished before this line.
    if (await this.store.markStarted(b.id, item.originalRunId, replay.id, this.now())) return true;
    // Not pending any more: the replay's finish came first and marked it (it is this item's, settled by
    // then or now, once), or the backtest was cancelled (this replay is nobody's).
    const now = (await this.store.items(b.id)).find((i) => i.originalRunId === item.originalRunId);
    if (now?.replayRunId !== replay.id) {
      await runsOf(this.ctx).cancel(b.tenantId, replay.id).catch(() => {});
      return false;
    }
    return adopt(replay.id);
  }

  /** Start-up: score replays that ended while no process was here, start what is pending, complete what is done. */
  async recover(): Promise<void> {
    for (const b of await this.store.unfinished()) {
      for (const item of await this.store.started(b.id)) {
        const run = item.replayRunId ? await this.ctx.storage.runs.byId(item.replayRunId) : undefined;
        if (run) await this.settle(b.id, item.originalRunId, run);
      }
      if (b.cancelledAt) await this.checkCompleted(b.id);
      else await this.pump(b.id);
    }
  }

  async summary(b: BacktestRow): Promise<BacktestSummary> {
    const c = await this.store.counts(b.id);
    const done = c.scored + c.skipped + c.cancelled;
    return {
      id: b.id,
      automationId: b.automationId,
      status: b.completedAt ? "completed" : c.started > 0 || done > 0 ? "running" : "queued",
      base: { versionId: b.baseVersionId, version: b.baseVersion },
      candidate: { versionId: b.candidateVersionId, version: b.candidateVersion },
      selection: JSON.parse(b.selection) as Select,
      progress: { total: b.runTotal, done, ...c },
      createdAt: b.createdAt,
      completedAt: b.completedAt,
      cancelledAt: b.cancelledAt,
    };
  }

  /** Status and progress; once completed, the comparison: changed runs first, then the statistics of compare. */
  async detail(b: BacktestRow, opts: { resamples?: number } = {}): Promise<BacktestDetail> {
    const summary = await this.summary(b);
    // A running backtest is asked for often (followers poll it): its items are read only when some were skipped.
    const items = b.completedAt || summary.progress.skipped > 0 ? await this.store.items(b.id) : [];
    const skipped = items.filter((i) => i.state === "skipped").map((i) => ({ originalRunId: i.originalRunId, reason: i.reason }));
    if (!b.completedAt) return { ...summary, skipped };
    const scored = items.filter((i): i is ItemRow & { base: SideRecord; candidate: SideRecord } => i.state === "scored" && !!i.base && !!i.candidate);
    const changed = scored
      .map((i) => ({ i, change: changeOf(i.base, i.candidate) }))
      .filter((x): x is { i: (typeof scored)[number]; change: Change } => x.change !== null)
      .sort((x, y) => CHANGE_ORDER[x.change] - CHANGE_ORDER[y.change] || Math.abs((y.i.candidate.score ?? 0) - (y.i.base.score ?? 0)) - Math.abs((x.i.candidate.score ?? 0) - (x.i.base.score ?? 0)))
      .map(({ i, change }): ChangedRun => ({
        originalRunId: i.originalRunId,
        replayRunId: i.replayRunId,
        change,
        expectedFrom: i.expectedFrom,
        base: { score: i.base.score, passed: i.base.passed, evaluators: i.base.scores },
        candidate: { score: i.candidate.score, passed: i.candidate.passed, evaluators: i.candidate.scores },
        links: { original: link(i.originalRunId), replay: link(i.replayRunId) },
      }));
    const count = (c: Change) => changed.filter((x) => x.change === c).length;
    const outcome = {
      changedCount: changed.length,
      changes: { broke: count("broke"), fixed: count("fixed"), scoreDown: count("score_down"), scoreUp: count("score_up") },
      changed: changed.slice(0, MAX_CHANGED),
      expectedFrom: { output: scored.filter((i) => i.expectedFrom === "output").length, correction: scored.filter((i) => i.expectedFrom === "correction").length },
    };
    const pairs = scored.map((i) => ({ base: sideScores(i, i.base), candidate: sideScores(i, i.candidate) }));
    if (pairs.length === 0) return { ...summary, ...outcome, skipped, report: null, reportIssue: "no run was replayed and scored: nothing to compare" };
    const resamples = opts.resamples ?? DEFAULT_RESAMPLES;
    const cacheKey = `${b.id}:${resamples}`;
    let stats = this.reports.get(cacheKey);
    if (!stats) {
      const evaluators = [...new Set(pairs.flatMap((p) => Object.keys(p.base.scores)))];
      stats = await pairedStats({ pairs, evaluators, seed: b.seed, resamples });
      if (this.reports.size > 100) this.reports.clear();
      this.reports.set(cacheKey, stats);
    }
    const replayOf = new Map(scored.map((i) => [i.originalRunId, i.replayRunId]));
    const { regressions, ...rest } = stats;
    return {
      ...summary,
      ...outcome,
      skipped,
      report: {
        seed: b.seed,
        resamples,
        alpha: 0.05,
        pairs: pairs.length,
        ...rest,
        regressions: regressions.map(({ exampleId, exampleName: _, ...r }) => ({ originalRunId: exampleId, replayRunId: replayOf.get(exampleId) ?? null, ...r })),
      },
    };
  }

  async find(tenantId: string, automationRef: string, id: string): Promise<BacktestRow> {
    const a = await automationOf(this.ctx, tenantId, automationRef);
    const b = await this.store.get(tenantId, id);
    if (!b || b.automationId !== a.id) throw NotFound(`backtest ${id} not found`, { field: "backtestId" });
    return b;
  }

  async list(tenantId: string, automationRef: string, page: { limit: number; offset: number }) {
    const a = await automationOf(this.ctx, tenantId, automationRef);
    const { rows, total } = await this.store.list(tenantId, a.id, page);
    return { data: await Promise.all(rows.map((b) => this.summary(b))), total, limit: page.limit, offset: page.offset };
  }

  /**
   * Checks the candidate (a version of this automation, not the active one) and the selection (past
   * runs of the active version; none → 400), then writes the backtest and its items in one
   * transaction. Replays start after the answer.
   */
  async create(actor: Actor, automationRef: string, body: { candidate: string; select: Select }): Promise<{ id: string; total: number }> {
    const a = await automationOf(this.ctx, actor.tenantId, automationRef);
    const runs = runsOf(this.ctx);
    const active = await runs.resolve(actor.tenantId, a.id, { trigger: "eval" }).catch((err) => {
      if (err instanceof DomainError && err.kind === "not_found") throw Invalid(`${a.slug} has no active version whose runs could be replayed`, { field: "candidate", code: "no_active_version" });
      throw err;
    });
    const candidate = await runs.resolve(actor.tenantId, a.id, { version: body.candidate, trigger: "eval" }).catch((err) => {
      if (err instanceof DomainError && err.kind === "not_found") throw Invalid(`candidate ${body.candidate} is not a version of ${a.slug}`, { field: "candidate", code: "unknown_version" });
      throw err;
    });
    if (candidate.versionId === active.versionId) {
      throw Invalid(`candidate ${body.candidate} is the active version: a backtest replays the active version's runs on another one`, { field: "candidate", code: "candidate_is_active" });
    }
    const s = body.select;
    if (s.from && s.to && s.from > s.to) throw Invalid("select.from is after select.to", { field: "select.from", code: "invalid_value" });
    const runIds = await this.store.select({
      tenantId: actor.tenantId,
      automationId: a.id,
      versionId: active.versionId,
      from: s.from,
      to: s.to,
      statuses: s.status ?? [...SELECTABLE_STATUSES],
      triggers: s.trigger,
      reviewVerdict: s.reviewVerdict,
      runIds: s.runIds ? [...new Set(s.runIds)] : undefined,
      // Explicit ids are all looked up (each must be selectable); `limit` then keeps the most recent.
      limit: s.runIds ? s.runIds.length : (s.limit ?? DEFAULT_BACKTEST_RUNS),
    });
    if (s.runIds) {
      const found = new Set(runIds);
      const missing = s.runIds.findIndex((id) => !found.has(id));
      if (missing >= 0) {
        throw Invalid(`run ${s.runIds[missing]} is not a finished run of ${a.slug}'s active version matching the selection`, { field: `select.runIds.${missing}`, code: "run_not_selectable" });
      }
      if (s.limit) runIds.splice(s.limit);
    }
    if (runIds.length === 0) {
      throw Invalid(`the selection matches no finished run of ${a.slug}'s active version${active.versionLabel ? ` (${active.versionLabel})` : ""}: nothing to replay`, { field: "select", code: "no_runs_selected" });
    }
    const id = newId("bt");
    await this.store.create(
      {
        id,
        tenantId: actor.tenantId,
        automationId: a.id,
        baseVersionId: active.versionId,
        baseVersion: active.versionLabel,
        candidateVersionId: candidate.versionId,
        candidateVersion: candidate.versionLabel,
        selection: JSON.stringify(s),
        seed: randomSeed(),
        runTotal: runIds.length,
        createdBy: actor.keyId || null,
        createdAt: this.now(),
        completedAt: null,
        cancelledAt: null,
      },
      runIds,
    );
    void this.pump(id).catch((err) => this.ctx.log.error("starting backtest replays failed", { backtestId: id, error: (err as Error)?.stack ?? String(err) }));
    return { id, total: runIds.length };
  }

  /** Replays not started are dropped, running ones are cancelled (they stop at their next step); scored ones stay. */
  async cancel(tenantId: string, automationRef: string, id: string) {
    const b = await this.find(tenantId, automationRef, id);
    if (!b.completedAt) {
      await this.store.cancel(id, this.now());
      for (const item of await this.store.started(id)) if (item.replayRunId) await runsOf(this.ctx).cancel(tenantId, item.replayRunId).catch(() => {});
      await this.checkCompleted(id);
    }
    return this.summary((await this.store.byId(id))!);
  }

  /**
   * Progress as lines: every item already settled, then one per item as it settles, then the summary.
   * The returned function unsubscribes (the backtest goes on).
   */
  follow(id: string, emit: (line: ProgressLine) => void, done: () => void): () => void {
    return follow<ProgressLine>(
      {
        followers: this.listeners,
        id,
        keyOf: (line) => (line.type === "run" ? (line.originalRunId as string) : undefined),
        settled: async (sent) => (await this.store.items(id)).filter((i) => i.state !== "pending" && i.state !== "started" && !sent.has(i.originalRunId)).map((i) => this.itemLine(i)),
        final: async () => {
          const b = await this.store.byId(id);
          return b?.completedAt ? { type: "summary", backtest: await this.summary(b) } : undefined;
        },
        onError: (err) => this.ctx.log.error("following a backtest failed", { backtestId: id, error: (err as Error)?.stack ?? String(err) }),
      },
      emit,
      done,
    );
  }
}

function sideScores(i: ItemRow, s: SideRecord): SideScores {
  return { exampleId: i.originalRunId, exampleName: null, score: s.score, passed: s.passed, scores: s.scores };
}

const services = new WeakMap<AutomationContext, Backtests>();

/** The one Backtests service of a context; creating it hooks replay scoring into run completion. */
export function backtestsOf(ctx: AutomationContext): Backtests {
  let s = services.get(ctx);
  if (!s) {
    s = new Backtests(ctx);
    services.set(ctx, s);
  }
  return s;
}
