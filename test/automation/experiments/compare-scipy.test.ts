// The comparison statistics checked against SciPy's (scipy.stats.bootstrap, permutation_test,
// binomtest) on seeded paired data with known effects, plus the error rates the verdicts promise.
// SciPy is required: without python3 + SciPy this fails (CI installs Debian's python3-scipy).
import { describe, expect, test } from "bun:test";
import { existsSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { bootstrapCi, bootstrapCis, compareScores, holm, mcnemarExact, prng, signFlipP, type CompareInput } from "../../../src/automation/experiments/compare";

/** Seeded standard normals (Box–Muller over the comparison's own generator). */
function normals(seed: number) {
  const next = prng(seed);
  return () => {
    const u = (next() + 1) / 4294967297;
    const v = next() / 4294967296;
    return Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * v);
  };
}

interface Case {
  name: string;
  base: number[];
  candidate: number[];
}

/** Paired scores: a per-example difficulty shared by both sides, noise, and an effect in sd of the differences. */
function pairedCase(name: string, seed: number, n: number, effectSd: number, kind: "normal" | "unit" | "binary" = "normal"): Case {
  const z = normals(seed);
  const base: number[] = [];
  const candidate: number[] = [];
  for (let i = 0; i < n; i++) {
    const difficulty = z();
    let b = difficulty + z() * Math.SQRT1_2;
    let c = difficulty + z() * Math.SQRT1_2 + effectSd;
    if (kind === "unit") {
      b = 1 / (1 + Math.exp(-b));
      c = 1 / (1 + Math.exp(-c));
    }
    if (kind === "binary") {
      b = b > 0 ? 1 : 0;
      c = c > 0 ? 1 : 0;
    }
    base.push(b);
    candidate.push(c);
  }
  return { name, base, candidate };
}

const diffs = (c: Case) => Float64Array.from(c.candidate.map((x, i) => x - c.base[i]));
const sdOf = (d: Float64Array) => {
  const m = d.reduce((s, x) => s + x, 0) / d.length;
  return Math.sqrt(d.reduce((s, x) => s + (x - m) ** 2, 0) / (d.length - 1));
};

const SCIPY = `
import json, sys
import numpy as np
from scipy import stats
cases = json.load(open(sys.argv[1]))
out = []
for i, c in enumerate(cases["cases"]):
    b = np.array(c["base"]); k = np.array(c["candidate"])
    rng = np.random.default_rng(1000 + i)
    mean_diff = lambda x, y, axis=-1: np.mean(y - x, axis=axis)
    ci = stats.bootstrap((b, k), mean_diff, paired=True, vectorized=True, n_resamples=50000, batch=2000,
                         confidence_level=0.95, method="percentile", random_state=rng).confidence_interval
    exact = len(b) <= 16
    perm = stats.permutation_test((k, b), lambda x, y, axis=-1: np.mean(x - y, axis=axis), permutation_type="samples",
                                  vectorized=True, n_resamples=np.inf if exact else 50000, batch=2000, alternative="two-sided", random_state=rng)
    out.append({"low": float(ci.low), "high": float(ci.high), "p": float(perm.pvalue)})
mc = [float(stats.binomtest(c, b + c, 0.5).pvalue) for b, c in cases["mcnemar"]]
print(json.dumps({"cases": out, "mcnemar": mc}))
`;

/** The first python3 on PATH that imports SciPy (a pyenv or venv one may come after the system's). */
function python(): string {
  const tried: string[] = [];
  for (const dir of (process.env.PATH ?? "").split(":")) {
    const exe = join(dir || ".", "python3");
    if (tried.includes(exe) || !existsSync(exe)) continue;
    tried.push(exe);
    if (Bun.spawnSync([exe, "-c", "import scipy, numpy"], { stderr: "pipe" }).exitCode === 0) return exe;
  }
  throw new Error(
    `python3 with SciPy is required to check the experiment statistics: ${tried.length ? `none of ${tried.join(", ")} imports scipy` : "no python3 on PATH"} (install Debian's python3-scipy; .ci/run does)`,
  );
}

function scipy(cases: Case[], mcnemar: [number, number][]): { cases: { low: number; high: number; p: number }[]; mcnemar: number[] } {
  const exe = python();
  const dir = mkdtempSync(join(tmpdir(), "compare-scipy-"));
  try {
    const data = join(dir, "cases.json");
    writeFileSync(data, JSON.stringify({ cases, mcnemar }));
    const r = Bun.spawnSync([exe, "-c", SCIPY, data], { stderr: "pipe" });
    if (r.exitCode !== 0) throw new Error(`the SciPy reference failed: ${r.stderr.toString()}`);
    return JSON.parse(r.stdout.toString());
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

describe("comparison statistics against SciPy", () => {
  const cases = [
    pairedCase("n=12 exact, no effect", 1, 12, 0),
    pairedCase("n=16 exact, 0.7 sd", 2, 16, 0.7),
    pairedCase("n=40, no effect", 3, 40, 0),
    pairedCase("n=40, 0.3 sd", 4, 40, 0.3),
    pairedCase("n=40, 0.5 sd in [0,1]", 5, 40, 0.5, "unit"),
    pairedCase("n=200, 0.1 sd in [0,1]", 6, 200, 0.1, "unit"),
    pairedCase("n=60, 0/1 scores with ties", 7, 60, 0.2, "binary"),
    pairedCase("n=1000, 0.05 sd", 8, 1000, 0.05),
  ];
  const mcnemar: [number, number][] = [[1, 0], [5, 1], [12, 3], [3, 12], [40, 25], [7, 7], [200, 160], [0, 9]];
  const ref = scipy(cases, mcnemar);
  // Ours at 100,000 resamples: the Monte Carlo error of both sides is well inside the tolerances.
  const R = 100_000;

  for (const [i, c] of cases.entries()) {
    test(`${c.name}: CI ends within 0.02·sd, p within 0.01`, () => {
      const d = diffs(c);
      const sd = sdOf(d);
      const [low, high] = bootstrapCi(d, R, 77 + i);
      const p = signFlipP(d, R, 99 + i);
      expect(Math.abs(low - ref.cases[i].low)).toBeLessThan(0.02 * sd);
      expect(Math.abs(high - ref.cases[i].high)).toBeLessThan(0.02 * sd);
      if (d.length <= 16) expect(Math.abs(p - ref.cases[i].p)).toBeLessThan(1e-9);
      else if (ref.cases[i].p >= 0.01 && ref.cases[i].p <= 0.99) expect(Math.abs(p - ref.cases[i].p)).toBeLessThan(0.01);
      else expect(Math.abs(p - ref.cases[i].p)).toBeLessThan(0.002);
      console.log(`${c.name}: ours [${low.toFixed(4)}, ${high.toFixed(4)}] p=${p.toFixed(4)} | scipy [${ref.cases[i].low.toFixed(4)}, ${ref.cases[i].high.toFixed(4)}] p=${ref.cases[i].p.toFixed(4)} | sd ${sd.toFixed(3)}`);
    }, 30_000);
  }

  test("McNemar's exact test equals binomtest on the discordant pairs", () => {
    for (const [i, [b, c]] of mcnemar.entries()) expect(Math.abs(mcnemarExact(b, c) - ref.mcnemar[i])).toBeLessThan(1e-9);
    expect(mcnemarExact(0, 0)).toBe(1); // no discordant pair: nothing changed (binomtest refuses n = 0)
  });
});

describe("bootstrap intervals of several series", () => {
  test("a series of one value has that value as its interval, and does not change the draws of the others", () => {
    const z = normals(7);
    const varying = Float64Array.from({ length: 200 }, () => z());
    const [zero, same, half] = bootstrapCis([new Float64Array(200), varying, new Float64Array(200).fill(0.5)], 2000, 11);
    expect(zero).toEqual([0, 0]);
    expect(half).toEqual([0.5, 0.5]);
    // The same indices as when it is resampled alone.
    expect(same).toEqual(bootstrapCis([varying], 2000, 11)[0]);
    expect(same[0]).toBeLessThan(same[1]);
  });
});

describe("Holm's step-down correction", () => {
  test("a worked example: p sorted, times m, m−1, …, kept monotone, capped at 1", () => {
    expect(holm([0.01, 0.04, 0.03, 0.005]).map((x) => +x.toFixed(6))).toEqual([0.03, 0.06, 0.06, 0.02]);
    expect(holm([0.5, 0.9])).toEqual([1, 1]);
    expect(holm([])).toEqual([]);
  });
});

describe("verdicts over seeded repetitions", () => {
  const input = (c: Case, seed: number): CompareInput => ({
    pairs: c.base.map((b, i) => ({
      base: { exampleId: `ex_${i}`, exampleName: null, score: b, passed: b > 0.5, scores: { quality: b } },
      candidate: { exampleId: `ex_${i}`, exampleName: null, score: c.candidate[i], passed: c.candidate[i] > 0.5, scores: { quality: c.candidate[i] } },
    })),
    evaluators: ["quality"],
    seed,
    resamples: 10_000,
  });

  test("no effect: no detectable change in ≥ 94 of 100", async () => {
    let quiet = 0;
    for (let r = 0; r < 100; r++) {
      const a = await compareScores(input(pairedCase("null", 10_000 + r, 40, 0, "unit"), r));
      if (a.evaluators[0].verdict === "no_detectable_change") quiet++;
    }
    console.log(`null effect, n=40: no_detectable_change in ${quiet}/100`);
    expect(quiet).toBeGreaterThanOrEqual(94);
  }, 60_000);

  test("an effect of 1 sd on 40 examples: improved in ≥ 90 of 100, and a drop is regressed", async () => {
    let found = 0;
    let down = 0;
    for (let r = 0; r < 100; r++) {
      const c = pairedCase("1sd", 20_000 + r, 40, 1);
      if ((await compareScores(input(c, r))).evaluators[0].verdict === "improved") found++;
      const swapped = { name: "-1sd", base: c.candidate, candidate: c.base };
      if ((await compareScores(input(swapped, r))).evaluators[0].verdict === "regressed") down++;
    }
    console.log(`1 sd effect, n=40: improved in ${found}/100, regressed (swapped) in ${down}/100`);
    expect(found).toBeGreaterThanOrEqual(90);
    expect(down).toBeGreaterThanOrEqual(90);
  }, 60_000);

  test("the same seed gives the same answer; mde is 2.80·sd/√n", async () => {
    const c = pairedCase("x", 5, 40, 0.3);
    const a = await compareScores(input(c, 1234));
    expect(await compareScores(input(c, 1234))).toEqual(a);
    const sd = sdOf(diffs(c));
    expect(a.overall.mde!).toBeCloseTo((2.801585 * sd) / Math.sqrt(40), 5);
  });
});
