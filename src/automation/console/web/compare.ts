// Scores of experiments as the console shows them: a run's overall score and two experiments side by
// side by example. Plain functions (no DOM), so tests outside the browser call them directly.
import type { EvalResult, ExperimentDetail as Detail } from "../../client/index";

/** The overall score of one run: Σ wᵢsᵢ / Σ wᵢ over weights > 0 (the server's rule), null when none. */
export function overall(results: EvalResult[] | undefined): number | null {
  let sum = 0;
  let weights = 0;
  for (const r of results ?? []) {
    const w = r.weight ?? 1;
    if (w > 0 && r.score !== null) {
      sum += w * r.score;
      weights += w;
    }
  }
  return weights > 0 ? sum / weights : null;
}

export interface Row {
  key: string;
  name: string;
  left?: { run: string; score: number | null; passed: boolean | null };
  right?: { run: string; score: number | null; passed: boolean | null };
  delta: number | null;
  changed: boolean;
}

/**
 * One experiment's side of an example: with one run per example that run's score and pass; with
 * trials, the mean score over its scored runs and passed when more than half of them passed (as the
 * compare route counts). `run` links the first.
 */
function side(d: Detail, exampleKey: string) {
  const runs = d.runs.filter((x) => (x.exampleId ?? x.exampleName) === exampleKey);
  if (!runs.length) return undefined;
  const per = runs.map((r) => {
    const results = d.resultsByRun[r.id] ?? [];
    return { score: overall(results), passed: results.length ? results.every((x) => x.passed !== false) : null };
  });
  const scores = per.map((p) => p.score).filter((x): x is number => x !== null);
  const passes = per.map((p) => p.passed).filter((x): x is boolean => x !== null);
  return {
    run: runs[0].id,
    score: scores.length ? scores.reduce((a, b) => a + b, 0) / scores.length : null,
    passed: passes.length ? passes.filter(Boolean).length * 2 > passes.length : null,
  };
}

/** Rows of two experiments by example: those whose score or pass/fail changed first, biggest change first. */
export function compareRows(a: Detail, b: Detail): Row[] {
  const keys = new Map<string, string>();
  for (const r of [...a.runs, ...b.runs]) keys.set(r.exampleId ?? r.exampleName ?? r.id, r.exampleName ?? r.exampleId ?? r.id);
  const rows: Row[] = [...keys].map(([key, name]) => {
    const left = side(a, key);
    const right = side(b, key);
    const delta = left?.score !== undefined && right?.score !== undefined && left.score !== null && right.score !== null ? right.score - left.score : null;
    const changed = !left || !right || (delta !== null && Math.abs(delta) > 1e-9) || left.passed !== right.passed || (left.score === null) !== (right.score === null);
    return { key, name, left, right, delta, changed };
  });
  return rows.sort((x, y) => Number(y.changed) - Number(x.changed) || Math.abs(y.delta ?? 0) - Math.abs(x.delta ?? 0) || x.name.localeCompare(y.name));
}

