// Trials: an experiment may run every example `trials` times (each run an independent evaluation run),
// and reports per example and per evaluator the mean, the spread (sample standard deviation, min, max)
// and the pass rate over the trials, plus overall figures. Pure functions over the experiment's runs
// and evaluator results; the service reads the rows, `GET …/experiments/{id}/trials` answers this.
// `exampleSides` is also what a comparison pairs: per example the mean over its trials and a majority pass.

export const MIN_TRIALS = 1;
export const MAX_TRIALS = 20;

/** A measure (the overall score or one evaluator's) over some trials. */
export interface Spread {
  /** Trials with a number. */
  n: number;
  mean: number | null;
  /** Sample standard deviation (n − 1); null below two numbers. */
  sd: number | null;
  min: number | null;
  max: number | null;
  /** Trials that passed, of the `scored` trials that have a pass/fail. */
  passed: number;
  scored: number;
  passRate: number | null;
}

/** Across the examples: the spread of every scored trial, plus what the trials of one example say together. */
export interface OverallSpread extends Spread {
  /** Examples with at least one scored trial. */
  examples: number;
  /** Mean of the examples' means (each example weighs the same, whatever its number of scored trials). */
  exampleMean: number | null;
  /** Pooled within-example standard deviation, √(mean of the examples' variances): the trial-to-trial noise. */
  withinSd: number | null;
  /** Share of examples that passed every scored trial (pass^k). */
  passAll: number | null;
  /** Share of examples that passed at least one (pass@k). */
  passAny: number | null;
  /** Share of examples that passed more than half of their scored trials (what a comparison counts as passed). */
  passMajority: number | null;
}

export interface TrialRun {
  id: string;
  /** 1-based. */
  trial: number;
  status: string;
  score: number | null;
  passed: boolean | null;
}

export interface ExampleTrials {
  exampleId: string;
  exampleName: string | null;
  runs: TrialRun[];
  overall: Spread;
  evaluators: (Spread & { name: string })[];
}

export interface TrialStats {
  experimentId: string;
  automationId: string;
  status: string;
  trials: number;
  overall: OverallSpread;
  evaluators: (OverallSpread & { name: string })[];
  examples: ExampleTrials[];
}

/** What trials.ts reads of a run of the experiment (ExperimentRunRow has these fields). */
export interface RunIn {
  id: string;
  status: string;
  exampleId: string | null;
  exampleName: string | null;
  /** Absent or null: trial 1. */
  trial?: number | null;
  score: number | null;
  passed: boolean | null;
}

export interface ResultIn {
  runId: string;
  evaluatorName: string;
  score: number | null;
  passed?: boolean | null;
}

const FINAL_UNSCORED = new Set(["cancelled", "rejected"]);

/** A run counts as a trial's result once it is scored; a cancelled one never is. */
export const isScored = (r: { status: string; passed: boolean | null }) => r.passed !== null && !FINAL_UNSCORED.has(r.status);

/** One value per (example, trial): the first run of each, should there be several (a rerun keeps its trial). */
function trialsByExample<R extends RunIn>(runs: R[]): Map<string, R[]> {
  const out = new Map<string, R[]>();
  const seen = new Set<string>();
  for (const r of runs) {
    if (!r.exampleId) continue;
    const key = `${r.exampleId}\u0000${r.trial ?? 1}`;
    if (seen.has(key)) continue;
    seen.add(key);
    (out.get(r.exampleId) ?? out.set(r.exampleId, []).get(r.exampleId)!).push(r);
  }
  for (const list of out.values()) list.sort((a, b) => (a.trial ?? 1) - (b.trial ?? 1));
  return out;
}

/** The spread of `values` (numbers; null = no score) and of `passes` (null = no pass/fail). */
export function spread(values: (number | null)[], passes: (boolean | null)[]): Spread {
  const xs = values.filter((x): x is number => typeof x === "number" && Number.isFinite(x));
  const n = xs.length;
  const mean = n ? xs.reduce((a, b) => a + b, 0) / n : null;
  const sd = n >= 2 && mean !== null ? Math.sqrt(xs.reduce((a, x) => a + (x - mean) ** 2, 0) / (n - 1)) : null;
  const ps = passes.filter((p): p is boolean => p !== null);
  const passed = ps.filter(Boolean).length;
  return {
    n,
    mean,
    sd,
    min: n ? Math.min(...xs) : null,
    max: n ? Math.max(...xs) : null,
    passed,
    scored: ps.length,
    passRate: ps.length ? passed / ps.length : null,
  };
}

/** Across examples: every trial pooled, plus the per-example view (equal weights, noise, pass^k, pass@k, majority). */
function overallOf(perExample: { values: (number | null)[]; passes: (boolean | null)[]; own: Spread }[]): OverallSpread {
  const all = spread(perExample.flatMap((e) => e.values), perExample.flatMap((e) => e.passes));
  const withScore = perExample.filter((e) => e.own.mean !== null);
  const withPass = perExample.filter((e) => e.own.scored > 0);
  const withVar = perExample.filter((e) => e.own.sd !== null);
  const share = (pred: (s: Spread) => boolean) => (withPass.length ? withPass.filter((e) => pred(e.own)).length / withPass.length : null);
  return {
    ...all,
    examples: perExample.filter((e) => e.own.n > 0 || e.own.scored > 0).length,
    exampleMean: withScore.length ? withScore.reduce((a, e) => a + (e.own.mean as number), 0) / withScore.length : null,
    withinSd: withVar.length ? Math.sqrt(withVar.reduce((a, e) => a + (e.own.sd as number) ** 2, 0) / withVar.length) : null,
    passAll: share((s) => s.passed === s.scored),
    passAny: share((s) => s.passed > 0),
    passMajority: share(majority),
  };
}

/** Passed on more than half of its scored trials (a tie fails: with one trial it is that trial's pass). */
export const majority = (s: Pick<Spread, "passed" | "scored">) => s.passed * 2 > s.scored;

/** The trial statistics of an experiment from its runs (oldest first) and its evaluator results. */
export function trialStats(e: { id: string; automationId: string; trials: number }, status: string, runs: RunIn[], results: ResultIn[]): TrialStats {
  const byRun = new Map<string, ResultIn[]>();
  const names: string[] = [];
  for (const r of results) {
    (byRun.get(r.runId) ?? byRun.set(r.runId, []).get(r.runId)!).push(r);
    if (!names.includes(r.evaluatorName)) names.push(r.evaluatorName);
  }
  const groups = [...trialsByExample(runs).values()];
  const overallRows: Parameters<typeof overallOf>[0] = [];
  const evaluatorRows = new Map<string, Parameters<typeof overallOf>[0]>(names.map((n) => [n, []]));
  const examples: ExampleTrials[] = groups.map((list) => {
    const scored = list.filter(isScored);
    const values = scored.map((r) => r.score);
    const passes = scored.map((r) => r.passed);
    const own = spread(values, passes);
    overallRows.push({ values, passes, own });
    const evaluators = names.map((name) => {
      const mine = scored.map((r) => byRun.get(r.id)?.find((x) => x.evaluatorName === name)).filter((x): x is ResultIn => !!x);
      const ev = { values: mine.map((x) => x.score), passes: mine.map((x) => x.passed ?? null) };
      const s = spread(ev.values, ev.passes);
      evaluatorRows.get(name)!.push({ ...ev, own: s });
      return { name, ...s };
    });
    return {
      exampleId: list[0].exampleId as string,
      exampleName: list[0].exampleName,
      runs: list.map((r) => ({ id: r.id, trial: r.trial ?? 1, status: r.status, score: r.score, passed: r.passed })),
      overall: own,
      evaluators,
    };
  });
  return {
    experimentId: e.id,
    automationId: e.automationId,
    status,
    trials: e.trials,
    overall: overallOf(overallRows),
    evaluators: names.map((name) => ({ name, ...overallOf(evaluatorRows.get(name)!) })),
    examples,
  };
}

/** One side of an example in a comparison: the mean over its scored trials, passed by majority. */
export interface ExampleSide {
  exampleId: string;
  exampleName: string | null;
  /** Null when no trial of it was scored (all cancelled). */
  score: number | null;
  passed: boolean | null;
  scores: Record<string, number | null>;
}

/**
 * Per example of the experiment: its overall score and each evaluator's as the mean over the scored
 * trials, and passed when more than half of them passed. With one trial these are that run's values.
 */
export function exampleSides(runs: RunIn[], results: ResultIn[]): Map<string, ExampleSide> {
  const byRun = new Map<string, ResultIn[]>();
  for (const r of results) (byRun.get(r.runId) ?? byRun.set(r.runId, []).get(r.runId)!).push(r);
  const out = new Map<string, ExampleSide>();
  for (const [exampleId, list] of trialsByExample(runs)) {
    const scored = list.filter(isScored);
    const base = { exampleId, exampleName: list[0].exampleName };
    if (scored.length === 0) {
      out.set(exampleId, { ...base, score: null, passed: null, scores: {} });
      continue;
    }
    const own = spread(scored.map((r) => r.score), scored.map((r) => r.passed));
    const perEvaluator = new Map<string, number[]>();
    for (const r of scored) {
      for (const x of byRun.get(r.id) ?? []) {
        const list = perEvaluator.get(x.evaluatorName) ?? perEvaluator.set(x.evaluatorName, []).get(x.evaluatorName)!;
        if (typeof x.score === "number") list.push(x.score);
      }
    }
    const scores: Record<string, number | null> = {};
    for (const [name, xs] of perEvaluator) scores[name] = xs.length ? xs.reduce((a, b) => a + b, 0) / xs.length : null;
    out.set(exampleId, { ...base, score: own.mean, passed: majority(own), scores });
  }
  return out;
}
