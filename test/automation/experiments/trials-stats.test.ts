// The edges of the trial arithmetic (experiments/trials.ts): a cancelled trial is left out, a rerun of a
// trial does not count twice, a tie of passes is not a majority, an example none of whose trials was
// scored is unscored, and one trial per example gives that run's own values (as before trials).
import { describe, expect, test } from "bun:test";
import { exampleSides, spread, trialStats, type ResultIn, type RunIn } from "../../../src/automation/experiments/trials";

const run = (id: string, exampleId: string, trial: number | null, score: number | null, passed: boolean | null, status = "completed"): RunIn => ({
  id, status, exampleId, exampleName: exampleId.replace("ex_", ""), trial, score, passed,
});
const res = (runId: string, evaluatorName: string, score: number | null, passed: boolean | null = score === null ? null : score >= 0.5): ResultIn => ({ runId, evaluatorName, score, passed });

describe("trial statistics", () => {
  test("spread: sample sd (n − 1), null below two numbers; pass rate over the trials with a pass/fail", () => {
    expect(spread([0.2, 0.4, 0.9], [false, false, true])).toEqual({ n: 3, mean: 0.5, sd: Math.sqrt(((0.3 ** 2) + (0.1 ** 2) + (0.4 ** 2)) / 2), min: 0.2, max: 0.9, passed: 1, scored: 3, passRate: 1 / 3 });
    expect(spread([0.7], [true])).toMatchObject({ n: 1, mean: 0.7, sd: null, passRate: 1 });
    expect(spread([null, null], [false, null])).toMatchObject({ n: 0, mean: null, sd: null, min: null, max: null, passed: 0, scored: 1, passRate: 0 });
  });

  test("a cancelled trial is left out; a rerun of a trial counts once (the first); the overall figures", () => {
    const runs = [
      run("a1", "ex_a", 1, 1, true),
      run("a2", "ex_a", 2, 0, false),
      run("a3", "ex_a", 3, null, null, "cancelled"),
      run("a2b", "ex_a", 2, 1, true), // a rerun of trial 2: not a fourth trial
      run("b1", "ex_b", 1, 0.6, true),
      run("b2", "ex_b", 2, 0.8, true),
      run("b3", "ex_b", 3, 1, true),
    ];
    const results = runs.map((r) => res(r.id, "q", r.score));
    const s = trialStats({ id: "exp", automationId: "wf", trials: 3 }, "completed", runs, results);
    const [a, b] = s.examples;
    expect(a.runs.map((r) => r.id)).toEqual(["a1", "a2", "a3"]);
    expect(a.overall).toMatchObject({ n: 2, mean: 0.5, min: 0, max: 1, passed: 1, scored: 2 });
    expect(b.overall).toMatchObject({ n: 3, passed: 3 });
    expect(b.overall.mean).toBeCloseTo(0.8);
    expect(s.overall.n).toBe(5);
    expect(s.overall.mean).toBeCloseTo((1 + 0 + 0.6 + 0.8 + 1) / 5);
    expect(s.overall.exampleMean).toBeCloseTo((0.5 + 0.8) / 2);
    expect(s.overall.withinSd).toBeCloseTo(Math.sqrt((0.5 + 0.04) / 2)); // variances 0.5 and 0.04
    // a: 1 of 2 passed (a tie: not a majority); b: all three.
    expect(s.overall).toMatchObject({ examples: 2, passAll: 0.5, passAny: 1, passMajority: 0.5 });
    expect(s.evaluators.map((e) => e.name)).toEqual(["q"]);
    expect(s.evaluators[0].n).toBe(5);

    const sides = exampleSides(runs, results);
    expect(sides.get("ex_a")).toMatchObject({ score: 0.5, passed: false, scores: { q: 0.5 } });
    expect(sides.get("ex_b")!.passed).toBe(true);
  });

  test("one trial per example: each side is the run itself; an example with no scored trial is unscored", () => {
    const runs = [run("x", "ex_x", null, 0.4, false), run("y", "ex_y", null, null, null, "cancelled"), run("z", "ex_z", null, null, false)];
    const sides = exampleSides(runs, [res("x", "q", 0.4), res("x", "r", null), res("z", "q", null)]);
    expect(sides.get("ex_x")).toEqual({ exampleId: "ex_x", exampleName: "x", score: 0.4, passed: false, scores: { q: 0.4, r: null } });
    expect(sides.get("ex_y")).toEqual({ exampleId: "ex_y", exampleName: "y", score: null, passed: null, scores: {} });
    expect(sides.get("ex_z")).toEqual({ exampleId: "ex_z", exampleName: "z", score: null, passed: false, scores: { q: null } });
  });
});
