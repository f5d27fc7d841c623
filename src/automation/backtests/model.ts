// Wire schemas of backtests (valibot).
import * as v from "valibot";
import { pageQuery, queryInt, wholeNumber } from "../http/validate";
import { MAX_RESAMPLES, MIN_RESAMPLES, type Regression, type StatsAnswer } from "../experiments/compare";

/** At most this many past runs per backtest. */
export const MAX_BACKTEST_RUNS = 10_000;
/** Without `select.limit`: the most recent this many runs. */
export const DEFAULT_BACKTEST_RUNS = 100;
/** Runs that end with an output to compare (or a failure to score 0): what a backtest can replay. */
export const SELECTABLE_STATUSES = ["completed", "failed"] as const;
/** How production runs start (evaluation runs and child runs are never selected). */
export const SELECTABLE_TRIGGERS = ["api", "cli", "manual", "cron", "email", "rerun"] as const;
export const REVIEW_VERDICTS = ["correct", "incorrect", "none"] as const;

const iso = (name: string) =>
  v.pipe(
    v.string(`${name} must be an ISO-8601 timestamp`),
    v.check((s) => !Number.isNaN(Date.parse(s)), `${name} must be an ISO-8601 timestamp`),
    v.transform((s) => new Date(s).toISOString()),
  );

/** One value or a list of them. */
const oneOrMany = <const T extends readonly [string, ...string[]]>(name: string, allowed: T) => {
  const item = v.picklist(allowed, `${name} must be ${allowed.join(", ")}`);
  return v.union([v.pipe(item, v.transform((x) => [x])), v.pipe(v.array(item), v.minLength(1, `${name} must not be empty`))], `${name} must be one of ${allowed.join(", ")} or a list of them`);
};

export const Select = v.strictObject({
  from: v.optional(iso("select.from")),
  to: v.optional(iso("select.to")),
  status: v.optional(oneOrMany("select.status", SELECTABLE_STATUSES)),
  trigger: v.optional(oneOrMany("select.trigger", SELECTABLE_TRIGGERS)),
  reviewVerdict: v.optional(v.picklist(REVIEW_VERDICTS, `select.reviewVerdict must be ${REVIEW_VERDICTS.join(", ")}`)),
  limit: v.optional(wholeNumber("select.limit", 1, MAX_BACKTEST_RUNS)),
  runIds: v.optional(
    v.pipe(
      v.array(v.pipe(v.string("select.runIds must be run ids"), v.minLength(1), v.maxLength(100))),
      v.minLength(1, "select.runIds must not be empty; omit it to select by the other fields"),
      v.maxLength(MAX_BACKTEST_RUNS, `select.runIds takes at most ${MAX_BACKTEST_RUNS} runs`),
    ),
  ),
});
export type Select = v.InferOutput<typeof Select>;

export const CreateBody = v.strictObject({
  candidate: v.pipe(v.string("candidate is required (a version id or tag)"), v.minLength(1, "candidate is required (a version id or tag)"), v.maxLength(100)),
  select: v.optional(Select, {}),
});

export const ListQuery = v.object({ ...pageQuery });

export const ReportQuery = v.object({
  resamples: v.optional(queryInt(MIN_RESAMPLES, MAX_RESAMPLES)),
});

/** One side of a replayed run: the overall score, pass, and each evaluator's score. */
export interface BacktestSide {
  score: number | null;
  passed: boolean;
  evaluators: Record<string, number | null>;
}

export interface BacktestSummary {
  id: string;
  automationId: string;
  status: "queued" | "running" | "completed";
  /** The active version whose runs were replayed. */
  base: { versionId: string; version: string | null };
  candidate: { versionId: string; version: string | null };
  selection: Select;
  /** Items by state; `done` = scored + skipped + cancelled. */
  progress: { total: number; done: number; pending: number; started: number; scored: number; skipped: number; cancelled: number };
  createdAt: string;
  completedAt: string | null;
  cancelledAt: string | null;
}

/** `broke` (passed → failed), `score_down`, `fixed` (failed → passed), `score_up`: in this order in a report. */
export type BacktestChange = "broke" | "score_down" | "fixed" | "score_up";

export interface ChangedRun {
  originalRunId: string;
  replayRunId: string | null;
  change: BacktestChange;
  /** What both sides were scored against: the original `output`, or a reviewer's `correction`. */
  expectedFrom: "output" | "correction" | null;
  base: BacktestSide;
  candidate: BacktestSide;
  links: { original: string | null; replay: string | null };
}

export interface BacktestReport extends Omit<StatsAnswer, "regressions"> {
  seed: number;
  resamples: number;
  alpha: number;
  /** Runs scored on both sides (the pairs of the statistics). */
  pairs: number;
  regressions: (Omit<Regression, "exampleId" | "exampleName"> & { originalRunId: string; replayRunId: string | null })[];
}

export interface BacktestDetail extends BacktestSummary {
  /** Runs not replayed, with why (input files past their retention, a candidate refusing the input). */
  skipped: { originalRunId: string; reason: string | null }[];
  /** From here on only once completed. */
  changedCount?: number;
  changes?: { broke: number; fixed: number; scoreDown: number; scoreUp: number };
  changed?: ChangedRun[];
  expectedFrom?: { output: number; correction: number };
  report?: BacktestReport | null;
  reportIssue?: string;
}

/** A line of `GET …/backtests/{id}/progress`. */
export type BacktestLine =
  | {
      type: "run";
      originalRunId: string;
      replayRunId: string | null;
      state: "scored" | "skipped" | "cancelled";
      reason?: string;
      expectedFrom?: "output" | "correction";
      base?: { score: number | null; passed: boolean; scores: Record<string, number | null> };
      candidate?: { score: number | null; passed: boolean; scores: Record<string, number | null> };
      change?: BacktestChange | null;
    }
  | { type: "summary"; backtest: BacktestSummary };
