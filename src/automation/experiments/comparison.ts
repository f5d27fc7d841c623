// Comparing two experiments of one automation: the checks (same automation, both completed, some
// example scored on both sides), the pairing of their runs by example, and the statistics of
// compare.ts — on a worker thread when the resampling is big, so the API keeps answering meanwhile.
// Takes the stores only, so the HTTP route and `automation-server experiments gate --data-dir` share it.
import { Conflict, DomainError, Invalid, NotFound } from "../../kernel/errors";
import { OffThreadError } from "../offthread/pool";
import { runOffThread } from "../offthread/run";
import { type CompareInput, compareScores, DEFAULT_RESAMPLES, pairedTests, type SideScores, type StatsAnswer, workOf } from "./compare";
import type { Comparison, ExampleRef } from "./model";
import { exampleSides, type ResultIn, type RunIn } from "./trials";

/** Above this many resampling steps the tests run on a worker thread (≈ 10 ms on one core). */
const INLINE_WORK = 4_000_000;
const DEADLINE_MS = 60_000;
/** More resampling steps than this (≈ 20 s of one core) is refused: fewer resamples answer the same question. */
const MAX_WORK = 20_000_000_000;

/** What a comparison reads of an experiment (the experiment store's rows have these fields). */
export interface ExperimentRow {
  id: string;
  automationId: string;
  name: string | null;
  version: string | null;
  completedAt: string | null;
  /** Runs per example (absent: 1). */
  trials?: number;
}

/** The queries a comparison needs (the experiments' and evaluators' stores answer them). */
export interface CompareStores {
  experiments: {
    byId(id: string): Promise<ExperimentRow | undefined>;
    get(tenantId: string, id: string): Promise<ExperimentRow | undefined>;
    runs(id: string): Promise<RunIn[]>;
  };
  evaluators: { resultsOfExperiment(experimentId: string): Promise<ResultIn[]> };
}


/**
 * The two experiments, found by id: within the tenant (an API caller) and, when given, under the
 * automation of the path. Unknown (or another tenant's) → 404; of different automations → 400.
 */
export async function experimentPair(
  stores: CompareStores,
  scope: { tenantId?: string; automationId?: string },
  baseId: string,
  candidateId: string,
): Promise<[ExperimentRow, ExperimentRow]> {
  const find = async (id: string, field: string) => {
    const e = scope.tenantId ? await stores.experiments.get(scope.tenantId, id) : await stores.experiments.byId(id);
    if (!e) throw NotFound(`experiment ${id} not found`, { field, code: "experiment_not_found" });
    if (scope.automationId && e.automationId !== scope.automationId) {
      throw Invalid(`${field} ${id} is an experiment of another automation: only experiments of one automation compare`, { field, code: "different_automations" });
    }
    return e;
  };
  const base = await find(baseId, "base");
  const candidate = await find(candidateId, "candidate");
  if (base.automationId !== candidate.automationId) {
    throw Invalid(`base ${base.id} and candidate ${candidate.id} are experiments of different automations`, { field: "candidate", code: "different_automations" });
  }
  for (const [e, field] of [[base, "base"], [candidate, "candidate"]] as const) {
    // A comparison of a moving target would change under the caller (and a CI gate would pass on half the data).
    if (!e.completedAt) throw Conflict(`${field} experiment ${e.id} is not completed yet: compare once every run is scored`, { field, code: "experiment_not_completed" });
  }
  return [base, candidate];
}

/**
 * Each example of the experiment with its scores: with `trials` > 1 the mean over its scored trials
 * (passed when more than half passed), so the paired analysis stays one pair per example.
 */
async function sideOf(stores: CompareStores, e: ExperimentRow): Promise<{ examples: Map<string, SideScores>; evaluators: string[] }> {
  const results = await stores.evaluators.resultsOfExperiment(e.id);
  const evaluators = [...new Set(results.map((r) => r.evaluatorName))];
  return { examples: exampleSides(await stores.experiments.runs(e.id), results), evaluators };
}

/** A random seed when none is given; the answer carries it so the numbers can be had again. */
export const randomSeed = () => crypto.getRandomValues(new Uint32Array(1))[0];

/** Compares two completed experiments of one automation (experimentPair checked them). */
export async function compareExperiments(
  stores: CompareStores,
  base: ExperimentRow,
  candidate: ExperimentRow,
  opts: { seed?: number; resamples?: number; inline?: boolean } = {},
): Promise<Comparison> {
  const [b, c] = await Promise.all([sideOf(stores, base), sideOf(stores, candidate)]);
  const ref = (s: SideScores): ExampleRef => ({ id: s.exampleId, name: s.exampleName });
  const onlyBase = [...b.examples.values()].filter((s) => !c.examples.has(s.exampleId)).map(ref);
  const onlyCandidate = [...c.examples.values()].filter((s) => !b.examples.has(s.exampleId)).map(ref);
  const pairs: { base: SideScores; candidate: SideScores }[] = [];
  const unscored: ExampleRef[] = [];
  for (const s of b.examples.values()) {
    const other = c.examples.get(s.exampleId);
    if (!other) continue;
    if (s.passed === null || other.passed === null) unscored.push(ref(s));
    else pairs.push({ base: s, candidate: { ...other, exampleName: other.exampleName ?? s.exampleName } });
  }
  if (pairs.length === 0) {
    const why = unscored.length ? `the ${unscored.length} example(s) they share have no score on one side (cancelled runs)` : "they share no example";
    throw Invalid(`base ${base.id} and candidate ${candidate.id} cannot be compared: ${why}`, { field: "candidate", code: "no_shared_examples" });
  }
  const candidateEvaluators = new Set(c.evaluators);
  const evaluators = b.evaluators.filter((n) => candidateEvaluators.has(n));
  const seed = opts.seed ?? randomSeed();
  const resamples = opts.resamples ?? DEFAULT_RESAMPLES;
  const stats = await pairedStats({ pairs, evaluators, seed, resamples }, opts.inline);
  const side = (e: ExperimentRow) => ({ id: e.id, name: e.name, version: e.version, trials: e.trials ?? 1 });
  return {
    automationId: base.automationId,
    base: side(base),
    candidate: side(candidate),
    seed,
    resamples,
    alpha: 0.05,
    examples: { shared: pairs.length + unscored.length, onlyBase, onlyCandidate, unscored },
    evaluatorsNotShared: { onlyBase: b.evaluators.filter((n) => !candidateEvaluators.has(n)), onlyCandidate: c.evaluators.filter((n) => !b.evaluators.includes(n)) },
    ...stats,
  };
}

/**
 * The statistics of compare.ts over paired scores (experiments' examples, a backtest's runs): refused
 * when the resampling is too big, on a worker thread when it is big, inline otherwise.
 */
export async function pairedStats(input: CompareInput, inline = false): Promise<StatsAnswer> {
  const work = workOf(input);
  if (work > MAX_WORK) {
    throw Invalid(`${input.pairs.length} examples × ${input.evaluators.length + 1} measures × ${input.resamples} resamples is more resampling than one comparison does: lower resamples`, { field: "resamples", code: "too_much_work" });
  }
  const offThread = !inline && work > INLINE_WORK;
  const tests = (job: Parameters<typeof pairedTests>[0]) =>
    runOffThread("experiments.pairedTests", job, { deadlineMs: DEADLINE_MS }).catch((err) => {
      if (err instanceof OffThreadError) throw new DomainError("unavailable", `the comparison did not finish (${err.reason}): try again, or with fewer resamples`, { code: "comparison_unfinished" });
      throw err;
    });
  return compareScores(input, offThread ? tests : pairedTests);
}

/** Whether a CI gate fails: a significant regression of an evaluator, the overall score or the pass rate. */
export function regressed(c: Pick<Comparison, "overall" | "evaluators" | "passRate">): string[] {
  const out: string[] = [];
  for (const e of c.evaluators) if (e.verdict === "regressed") out.push(`evaluator ${e.name}`);
  if (c.overall.verdict === "regressed") out.push("overall score");
  if (c.passRate.verdict === "regressed") out.push("pass rate");
  return out;
}
