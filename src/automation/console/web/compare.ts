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

function side(d: Detail, exampleKey: string) {
  const r = d.runs.find((x) => (x.exampleId ?? x.exampleName) === exampleKey);
  if (!r) return undefined;
  const results = d.resultsByRun[r.id] ?? [];
  const passedAll = results.length ? results.every((x) => x.passed !== false) : null;
  return { run: r.id, score: overall(results), passed: passedAll };
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

