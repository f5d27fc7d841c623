// The statistics of comparing two experiments over the examples they share (issue 39): per evaluator
// and for the overall score, the mean paired difference with a percentile bootstrap CI (Efron &
// Tibshirani 1993, ch. 13), a two-sided paired sign-flip permutation p-value (Good, Permutation Tests,
// 2005: exact up to 16 pairs, else seeded Monte Carlo with the +1 correction), Holm's (1979) step-down
// correction across the evaluators, and McNemar's (1947) exact test on the pass/fail pairs. Pure
// functions over plain values and typed arrays; `pairedTests` is the heavy part and runs off-thread.

export const ALPHA = 0.05;
export const DEFAULT_RESAMPLES = 10_000;
export const MIN_RESAMPLES = 10_000;
export const MAX_RESAMPLES = 1_000_000;
/** Up to this many pairs the permutation p-value enumerates all 2^n sign vectors. */
export const EXACT_MAX_PAIRS = 16;
/** z(1 − α/2) + z(0.80): the minimum detectable paired difference at 80 % power is this · sd / √n. */
const Z_MDE = 1.959963984540054 + 0.8416212335729143;

export type Verdict = "improved" | "regressed" | "no_detectable_change";

/** One compared measure (an evaluator's score or the overall score) over the pairs scored on both sides. */
export interface Stat {
  /** Pairs with a score on both sides. */
  n: number;
  baseMean: number | null;
  candidateMean: number | null;
  /** Mean paired difference, candidate − base. */
  delta: number | null;
  /** Standard deviation of the paired differences (n − 1). */
  sd: number | null;
  /** 95 % percentile-bootstrap interval of the mean paired difference. */
  ci: [number, number] | null;
  /** Two-sided paired sign-flip permutation p-value. */
  pValue: number;
  /** Holm-adjusted across the evaluators (the overall score is one test of its own: equal to pValue). */
  adjustedPValue: number;
  verdict: Verdict;
  /** Smallest |delta| this many pairs detect with 80 % power at α = 0.05 given the observed sd. */
  mde: number | null;
}

export interface PassRate {
  n: number;
  base: number | null;
  candidate: number | null;
  /** Pairs passing on base only (b) and on candidate only (c): McNemar's discordant pairs. */
  passedOnlyBase: number;
  passedOnlyCandidate: number;
  pValue: number;
  verdict: Verdict;
}

/** One side of one example: its overall score and pass/fail, and each evaluator's score. */
export interface SideScores {
  exampleId: string;
  exampleName: string | null;
  score: number | null;
  passed: boolean | null;
  scores: Record<string, number | null>;
}

export interface Regression {
  exampleId: string;
  exampleName: string | null;
  /** Largest drop of the overall or of one evaluator's score (base − candidate). */
  drop: number;
  base: { score: number | null; passed: boolean | null; evaluators: Record<string, number | null> };
  candidate: { score: number | null; passed: boolean | null; evaluators: Record<string, number | null> };
}

export interface CompareInput {
  /** Shared examples, the same order on both sides. */
  pairs: { base: SideScores; candidate: SideScores }[];
  /** Evaluators scored by both experiments, in the order they are reported. */
  evaluators: string[];
  seed: number;
  resamples: number;
}

export interface StatsAnswer {
  overall: Stat;
  evaluators: (Stat & { name: string })[];
  passRate: PassRate;
  regressions: Regression[];
  regressionCount: number;
}

/** Regressions listed in an answer at most (`regressionCount` says how many there are). */
export const MAX_REGRESSIONS = 100;

/** A seeded 32-bit generator (mulberry32): the same seed gives the same stream on every machine. */
export function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return (t ^ (t >>> 14)) >>> 0;
  };
}

/** An independent seed per (seed, stream), so each measure's resamples depend only on its own index. */
export function streamSeed(seed: number, stream: number): number {
  let z = (seed ^ Math.imul(stream + 1, 0x9e3779b9)) >>> 0;
  z = Math.imul(z ^ (z >>> 16), 0x85ebca6b) >>> 0;
  z = Math.imul(z ^ (z >>> 13), 0xc2b2ae35) >>> 0;
  return (z ^ (z >>> 16)) >>> 0;
}

const TO_UNIT = 2.3283064365386963e-10; // 2^-32

/** Linear-interpolated quantile of a sorted array (numpy's default, as scipy's percentile bootstrap). */
function quantile(sorted: Float64Array, q: number): number {
  const h = (sorted.length - 1) * q;
  const lo = Math.floor(h);
  const hi = Math.min(lo + 1, sorted.length - 1);
  return sorted[lo] + (h - lo) * (sorted[hi] - sorted[lo]);
}

/**
 * 95 % percentile bootstrap intervals of the means of series of one length n (resampling pairs with
 * replacement). The series share each resample's indices: one random draw serves all of them (each
 * interval alone is an ordinary bootstrap), which makes five evaluators cost little more than one.
 */
export function bootstrapCis(series: Float64Array[], resamples: number, seed: number): [number, number][] {
  const n = series.length ? series[0].length : 0;
  if (n === 0) return series.map(() => [Number.NaN, Number.NaN]);
  // A series of one value (a backtest where nothing changed: every difference 0) has that value as every
  // resample's mean: its interval is exact without resampling. The others draw the same indices as
  // they would beside it (the draws do not depend on how many series share them).
  const varying = series.flatMap((d, k) => (d.every((x) => x === d[0]) ? [] : [k]));
  const out = series.map((d) => [d[0], d[0]] as [number, number]);
  if (varying.length === 0) return out;
  const drawn = resampledCis(varying.map((k) => series[k]), resamples, seed);
  varying.forEach((k, i) => (out[k] = drawn[i]));
  return out;
}

function resampledCis(series: Float64Array[], resamples: number, seed: number): [number, number][] {
  const m = series.length;
  const n = series[0].length;
  // Interleaved: the m values of pair i sit side by side, so one index reads one cache line.
  const rows = new Float64Array(n * m);
  for (let s = 0; s < m; s++) for (let i = 0; i < n; i++) rows[i * m + s] = series[s][i];
  const means = series.map(() => new Float64Array(resamples));
  const sums = new Float64Array(m);
  const next = prng(seed);
  const scale = n * TO_UNIT;
  for (let b = 0; b < resamples; b++) {
    sums.fill(0);
    for (let i = 0; i < n; i++) {
      const at = ((next() * scale) | 0) * m;
      for (let s = 0; s < m; s++) sums[s] += rows[at + s];
    }
    for (let s = 0; s < m; s++) means[s][b] = sums[s] / n;
  }
  return means.map((x) => {
    x.sort();
    return [quantile(x, ALPHA / 2), quantile(x, 1 - ALPHA / 2)] as [number, number];
  });
}

/** 95 % percentile bootstrap interval of the mean of `d`. */
export function bootstrapCi(d: Float64Array, resamples: number, seed: number): [number, number] {
  return bootstrapCis([d], resamples, seed)[0];
}

/**
 * Two-sided p-value of the paired sign-flip permutation test of mean(d) = 0: the share of sign vectors
 * whose |Σ sᵢdᵢ| reaches the observed |Σ dᵢ|. Exact for n ≤ 16, else `resamples` random sign vectors
 * with the +1 correction (the observed one counts), so p is never 0.
 */
export function signFlipP(d: Float64Array, resamples: number, seed: number): number {
  const n = d.length;
  if (n === 0) return 1;
  let observed = 0;
  let abs = 0;
  for (let i = 0; i < n; i++) {
    observed += d[i];
    abs += Math.abs(d[i]);
  }
  if (abs === 0) return 1;
  // Sums reached in a different order differ in the last bits: ties within this count as reached.
  const target = Math.abs(observed) - 1e-9 * abs;
  if (n <= EXACT_MAX_PAIRS) {
    // Gray code: each step flips one sign, so each of the 2^n sums costs one addition.
    const sign = new Int8Array(n).fill(1);
    let sum = observed;
    let count = 1;
    const total = 2 ** n;
    for (let k = 1; k < total; k++) {
      const j = 31 - Math.clz32(k & -k);
      sign[j] = -sign[j];
      sum += 2 * sign[j] * d[j];
      if (Math.abs(sum) >= target) count++;
    }
    return Math.min(1, count / total);
  }
  // Signs come 8 at a time: a table per group of 8 pairs holds the sum of each of its 256 sign
  // patterns, so one random vector costs n/8 lookups (pairs past n are zeros, any sign adds nothing).
  const groups = Math.ceil(n / 8);
  const table = new Float64Array(groups * 256);
  for (let g = 0; g < groups; g++) {
    const at = g * 256;
    for (let j = 0; j < 8; j++) table[at] -= d[g * 8 + j] ?? 0;
    for (let mask = 1; mask < 256; mask++) {
      const low = 31 - Math.clz32(mask & -mask);
      table[at + mask] = table[at + (mask & (mask - 1))] + 2 * (d[g * 8 + low] ?? 0);
    }
  }
  const next = prng(seed);
  let count = 0;
  for (let b = 0; b < resamples; b++) {
    let sum = 0;
    let bits = 0;
    for (let g = 0; g < groups; g++) {
      if ((g & 3) === 0) bits = next();
      sum += table[g * 256 + ((bits >>> ((g & 3) * 8)) & 255)];
    }
    if (Math.abs(sum) >= target) count++;
  }
  return (count + 1) / (resamples + 1);
}

/**
 * The CI and p-value of each series of paired differences. Series of one length share bootstrap
 * draws (stream 2n of `seed`); series k flips signs on stream 2k + 1.
 */
export function pairedTests(job: { series: Float64Array[]; seed: number; resamples: number }): { ci: [number, number]; pValue: number }[] {
  const cis = new Array<[number, number]>(job.series.length);
  const byLength = new Map<number, number[]>();
  job.series.forEach((d, k) => byLength.set(d.length, [...(byLength.get(d.length) ?? []), k]));
  for (const [n, ks] of byLength) {
    const out = bootstrapCis(ks.map((k) => job.series[k]), job.resamples, streamSeed(job.seed, 2 * n));
    ks.forEach((k, i) => (cis[k] = out[i]));
  }
  return job.series.map((d, k) => ({ ci: cis[k], pValue: signFlipP(d, job.resamples, streamSeed(job.seed, 2 * k + 1)) }));
}

/** Holm's step-down adjustment: the i-th smallest of m p-values times (m − i), kept monotone, ≤ 1. */
export function holm(p: number[]): number[] {
  const order = p.map((_, i) => i).sort((a, b) => p[a] - p[b]);
  const out = new Array<number>(p.length);
  let running = 0;
  order.forEach((idx, rank) => {
    running = Math.max(running, Math.min(1, (p.length - rank) * p[idx]));
    out[idx] = running;
  });
  return out;
}

/** McNemar's exact test: the two-sided binomial test of b among the b + c discordant pairs at ½. */
export function mcnemarExact(b: number, c: number): number {
  const n = b + c;
  if (n === 0) return 1;
  const k = Math.min(b, c);
  if (2 * k === n) return 1;
  // P(X = k) in log space (n can be large), then the lower tail down to 0 by the pmf's ratio.
  let log = -n * Math.LN2;
  for (let j = 0; j < k; j++) log += Math.log((n - j) / (j + 1));
  let term = Math.exp(log);
  let tail = term;
  for (let i = k; i > 0; i--) {
    term *= i / (n - i + 1);
    tail += term;
    if (term < tail * 1e-17) break;
  }
  return Math.min(1, 2 * tail);
}

export function verdictOf(p: number, delta: number | null, ci: [number, number] | null): Verdict {
  if (p >= ALPHA || delta === null || !ci) return "no_detectable_change";
  if (delta > 0 && ci[0] > 0) return "improved";
  if (delta < 0 && ci[1] < 0) return "regressed";
  return "no_detectable_change";
}

/** The paired values of one measure: the pairs where both sides have a number. */
function pairsOf(input: CompareInput, pick: (s: SideScores) => number | null): { base: Float64Array; candidate: Float64Array } {
  const base: number[] = [];
  const candidate: number[] = [];
  for (const p of input.pairs) {
    const b = pick(p.base);
    const c = pick(p.candidate);
    if (b === null || c === null || !Number.isFinite(b) || !Number.isFinite(c)) continue;
    base.push(b);
    candidate.push(c);
  }
  return { base: Float64Array.from(base), candidate: Float64Array.from(candidate) };
}

const mean = (x: Float64Array) => (x.length ? x.reduce((s, v) => s + v, 0) / x.length : null);

function describe(base: Float64Array, candidate: Float64Array) {
  const n = base.length;
  const d = new Float64Array(n);
  for (let i = 0; i < n; i++) d[i] = candidate[i] - base[i];
  const delta = mean(d);
  let sd: number | null = null;
  if (n >= 2 && delta !== null) {
    let ss = 0;
    for (let i = 0; i < n; i++) ss += (d[i] - delta) ** 2;
    sd = Math.sqrt(ss / (n - 1));
  }
  return { n, d, baseMean: mean(base), candidateMean: mean(candidate), delta, sd, mde: sd === null ? null : (Z_MDE * sd) / Math.sqrt(n) };
}

/** Work units of the resampling (pairs × resamples, both tests): above a few million it goes off-thread. */
export function workOf(input: CompareInput): number {
  return input.pairs.length * (input.evaluators.length + 1) * input.resamples * 2;
}

type Tests = (job: { series: Float64Array[]; seed: number; resamples: number }) => Promise<{ ci: [number, number]; pValue: number }[]> | { ci: [number, number]; pValue: number }[];

/** The whole comparison; `tests` runs `pairedTests` (inline, or on a worker thread for big inputs). */
export async function compareScores(input: CompareInput, tests: Tests = pairedTests): Promise<StatsAnswer> {
  const measure = (pick: (s: SideScores) => number | null) => {
    const { base, candidate } = pairsOf(input, pick);
    return describe(base, candidate);
  };
  const measures = [measure((s) => s.score), ...input.evaluators.map((name) => measure((s) => s.scores[name] ?? null))];
  const results = await tests({ series: measures.map((m) => m.d), seed: input.seed, resamples: input.resamples });
  const round = (x: number | null) => (x === null || !Number.isFinite(x) ? null : x);
  const stat = (k: number, adjusted: number): Stat => {
    const m = measures[k];
    const ci: [number, number] | null = m.n ? results[k].ci : null;
    return {
      n: m.n,
      baseMean: round(m.baseMean),
      candidateMean: round(m.candidateMean),
      delta: round(m.delta),
      sd: round(m.sd),
      ci,
      pValue: results[k].pValue,
      adjustedPValue: adjusted,
      verdict: verdictOf(adjusted, m.delta, ci),
      mde: round(m.mde),
    };
  };
  const adjusted = holm(results.slice(1).map((r) => r.pValue));
  return {
    overall: stat(0, results[0].pValue),
    evaluators: input.evaluators.map((name, i) => ({ name, ...stat(i + 1, adjusted[i]) })),
    passRate: passRateOf(input),
    ...regressionsOf(input),
  };
}

function passRateOf(input: CompareInput): PassRate {
  let n = 0;
  let passedBase = 0;
  let passedCandidate = 0;
  let b = 0;
  let c = 0;
  for (const p of input.pairs) {
    if (p.base.passed === null || p.candidate.passed === null) continue;
    n++;
    if (p.base.passed) passedBase++;
    if (p.candidate.passed) passedCandidate++;
    if (p.base.passed && !p.candidate.passed) b++;
    if (!p.base.passed && p.candidate.passed) c++;
  }
  const pValue = mcnemarExact(b, c);
  const verdict: Verdict = pValue >= ALPHA ? "no_detectable_change" : c > b ? "improved" : "regressed";
  return { n, base: n ? passedBase / n : null, candidate: n ? passedCandidate / n : null, passedOnlyBase: b, passedOnlyCandidate: c, pValue, verdict };
}

function regressionsOf(input: CompareInput): { regressions: Regression[]; regressionCount: number } {
  const out: Regression[] = [];
  const drop = (b: number | null | undefined, c: number | null | undefined) => (typeof b === "number" && typeof c === "number" ? b - c : 0);
  for (const { base, candidate } of input.pairs) {
    let worst = drop(base.score, candidate.score);
    for (const name of input.evaluators) worst = Math.max(worst, drop(base.scores[name], candidate.scores[name]));
    if (worst <= 1e-12) continue;
    const side = (s: SideScores) => ({ score: s.score, passed: s.passed, evaluators: Object.fromEntries(input.evaluators.map((e) => [e, s.scores[e] ?? null])) });
    out.push({ exampleId: base.exampleId, exampleName: base.exampleName ?? candidate.exampleName, drop: worst, base: side(base), candidate: side(candidate) });
  }
  out.sort((a, b) => b.drop - a.drop || a.exampleId.localeCompare(b.exampleId));
  return { regressions: out.slice(0, MAX_REGRESSIONS), regressionCount: out.length };
}
