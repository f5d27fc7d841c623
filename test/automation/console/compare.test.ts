// The console's experiment arithmetic: a run's overall score follows the server's weighting, and the
// comparison puts the examples that changed first.
import { describe, expect, test } from "bun:test";
import type { EvalResult, ExperimentDetail } from "../../../src/automation/client/index";
import { compareRows, overall } from "../../../src/automation/console/web/compare";

const result = (runId: string, score: number | null, weight: number | null, passed: boolean | null = score === null ? null : score >= 0.7): EvalResult =>
  ({ id: `r-${runId}-${weight}`, runId, evaluatorName: "e", evaluatorType: "exact-diff", score, passed, weight }) as EvalResult;

function experiment(id: string, scores: Record<string, number | null>): ExperimentDetail {
  const runs = Object.keys(scores).map((name) => ({ id: `${id}-${name}`, status: "completed", exampleId: `ex_${name}`, exampleName: name, createdAt: "", completedAt: "" }));
  const resultsByRun = Object.fromEntries(runs.map((r) => [r.id, [result(r.id, scores[r.exampleName], 1)]]));
  return { id, runs, resultsByRun } as unknown as ExperimentDetail;
}

describe("console compare", () => {
  test("overall: Σ wᵢsᵢ / Σ wᵢ over weights > 0; score-only evaluators (weight 0) and missing scores left out", () => {
    expect(overall([result("a", 1, 1), result("a", 0.5, 3)])).toBeCloseTo(0.625);
    expect(overall([result("a", 1, 1), result("a", 0, 0)])).toBe(1);
    expect(overall([result("a", null, 1), result("a", 0.4, 1)])).toBeCloseTo(0.4);
    expect(overall([result("a", 0.9, 0)])).toBeNull();
    expect(overall(undefined)).toBeNull();
  });

  test("changed examples first, the biggest change first; unchanged ones by name", () => {
    const a = experiment("exp_a", { alpha: 1, beta: 1, gamma: 0.5, delta: 1 });
    const b = experiment("exp_b", { alpha: 1, beta: 0.25, gamma: 0.75, delta: 1 });
    const rows = compareRows(a, b);
    expect(rows.map((r) => [r.name, r.changed])).toEqual([
      ["beta", true],
      ["gamma", true],
      ["alpha", false],
      ["delta", false],
    ]);
    expect(rows[0].delta).toBeCloseTo(-0.75);
  });

  test("an example in only one experiment, or scored in only one, counts as changed", () => {
    const rows = compareRows(experiment("exp_a", { only: 1, scored: 1 }), experiment("exp_b", { other: 1, scored: null }));
    expect(rows.filter((r) => r.changed).map((r) => r.name).sort()).toEqual(["only", "other", "scored"]);
    expect(rows.find((r) => r.name === "only")!.right).toBeUndefined();
  });

  test("with trials: an example's side is the mean over its runs, passed when most of them passed", () => {
    const trials = (id: string, scores: Record<string, (number | null)[]>): ExperimentDetail => {
      const runs = Object.entries(scores).flatMap(([name, xs]) => xs.map((_, i) => ({ id: `${id}-${name}-${i}`, status: "completed", exampleId: `ex_${name}`, exampleName: name, createdAt: "", completedAt: "" })));
      const resultsByRun = Object.fromEntries(runs.map((r) => [r.id, [result(r.id, scores[r.exampleName][Number(r.id.split("-").pop())], 1)]]));
      return { id, runs, resultsByRun } as unknown as ExperimentDetail;
    };
    const rows = compareRows(trials("exp_a", { x: [1, 0.5, 0.9], y: [0.8, 0.8, null] }), trials("exp_b", { x: [0.2, 0.9, 0.1], y: [0.9, 0.6, 0.9] }));
    const x = rows.find((r) => r.name === "x")!;
    expect(x.left!.score).toBeCloseTo(0.8);
    expect(x.left!.passed).toBe(true); // 1 and 0.9 pass (≥ 0.7), 0.5 fails: two of three
    expect(x.right!.score).toBeCloseTo(0.4);
    expect(x.right!.passed).toBe(false); // one of three
    expect(x.delta).toBeCloseTo(-0.4);
    expect(x.left!.run).toBe("exp_a-x-0");
    const y = rows.find((r) => r.name === "y")!;
    expect(y.left!.score).toBeCloseTo(0.8); // the unscored trial is left out
    expect(y.right!.score).toBeCloseTo(0.8);
    expect(rows[0].name).toBe("x");
  });
});
