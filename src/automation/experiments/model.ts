// Wire schemas of experiments.
import * as v from "valibot";
import { pageQuery, queryInt, wholeNumber } from "../http/validate";
import { MAX_RESAMPLES, MIN_RESAMPLES, type StatsAnswer } from "./compare";
import { MAX_TRIALS, MIN_TRIALS } from "./trials";

/** More runs of one experiment in flight than this is no bound at all (as many as an experiment has examples). */
export const MAX_BATCH_CONCURRENCY = 10_000;

export const CreateBody = v.strictObject({
  examples: v.optional(v.pipe(v.array(v.pipe(v.string(), v.minLength(1))), v.minLength(1, "examples must not be empty; omit it to run the whole dataset"), v.maxLength(10_000))),
  version: v.optional(v.pipe(v.string(), v.minLength(1), v.maxLength(100))),
  sourceRef: v.optional(v.pipe(v.string(), v.minLength(1), v.maxLength(100))),
  name: v.optional(v.pipe(v.string(), v.maxLength(200))),
  /** At most this many of the experiment's runs in flight at once (omitted: the server's workers bound them). */
  batchConcurrency: v.optional(v.nullable(wholeNumber("batchConcurrency", 1, MAX_BATCH_CONCURRENCY))),
  /** Runs per example (default 1): each is an independent evaluation run, reported with its spread. */
  trials: v.optional(wholeNumber("trials", MIN_TRIALS, MAX_TRIALS)),
});

const DateBound = v.pipe(
  v.string(),
  v.check((s) => /^\d+[mhdw]$/.test(s) || !Number.isNaN(Date.parse(s)), "must be an ISO date or a relative time like 7d, 12h, 2w"),
);

export const ListQuery = v.object({ ...pageQuery, fromDate: v.optional(DateBound), toDate: v.optional(DateBound) });

export const ExportQuery = v.object({
  format: v.picklist(["csv", "json"], "format must be csv or json"),
  includeTrace: v.optional(v.picklist(["0", "1", "true", "false"], "includeTrace must be true or false")),
});

const ExperimentId = (name: string) => v.pipe(v.string(`${name} is required (an experiment id)`), v.minLength(1, `${name} is required (an experiment id)`), v.maxLength(100));

/** `GET …/experiments/compare?base=exp_…&candidate=exp_…[&seed=N][&resamples=N]`. */
export const CompareQuery = v.object({
  base: ExperimentId("base"),
  candidate: ExperimentId("candidate"),
  seed: v.optional(queryInt(0, 0xffffffff)),
  resamples: v.optional(queryInt(MIN_RESAMPLES, MAX_RESAMPLES)),
});

export type ExampleRef = { id: string; name: string | null };

/** The answer of `GET …/experiments/compare` (the statistics are documented in compare.ts). */
export type Comparison = {
  automationId: string;
  /** `trials`: runs per example; a side's per-example value is the mean over its trials. */
  base: { id: string; name: string | null; version: string | null; trials: number };
  candidate: { id: string; name: string | null; version: string | null; trials: number };
  seed: number;
  resamples: number;
  alpha: number;
  examples: { shared: number; onlyBase: ExampleRef[]; onlyCandidate: ExampleRef[]; unscored: ExampleRef[] };
  /** Evaluators that only one of the two experiments scored (not compared). */
  evaluatorsNotShared: { onlyBase: string[]; onlyCandidate: string[] };
} & StatsAnswer;

const UNIT_MS: Record<string, number> = { m: 60_000, h: 3_600_000, d: 86_400_000, w: 604_800_000 };

/** `7d` → now − 7 days; an ISO date as is; as an ISO timestamp. `end` widens a bare date to its last ms. */
export function dateBound(s: string | undefined, now: Date, end = false): string | undefined {
  if (!s) return undefined;
  const rel = /^(\d+)([mhdw])$/.exec(s);
  if (rel) return new Date(now.getTime() - Number(rel[1]) * UNIT_MS[rel[2]]).toISOString();
  const d = new Date(Date.parse(s) + (end && /^\d{4}-\d{2}-\d{2}$/.test(s) ? 86_399_999 : 0));
  return d.toISOString();
}
