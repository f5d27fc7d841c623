// Experiment results as CSV (RFC 4180; cells a spreadsheet would run as a formula are neutralised)
// or JSON, one row per evaluator result.
import type { AutomationContext } from "../context";
import { evaluatorStore, resultView } from "../evaluators/service";
import { runsOf } from "../runs/service";
import { stepView } from "../runs/envelope";
import type { Experiments } from "./service";
import type { ExperimentRow } from "./store";

export const CSV_COLUMNS = ["runId", "exampleId", "exampleName", "batchId", "evaluatorName", "evaluatorType", "score", "passed", "label", "weight", "createdAt", "error"] as const;

/** A cell as RFC 4180 wants it; a leading =, +, -, @, tab or CR gets a `'` so it stays text. */
export function csvCell(value: unknown): string {
  let s = value === null || value === undefined ? "" : String(value);
  if (/^[=+\-@\t\r]/.test(s) && !/^-?\d+(\.\d+)?(e-?\d+)?$/i.test(s)) s = `'${s}`;
  return /[",\r\n]/.test(s) ? `"${s.replace(/"/g, '""')}"` : s;
}

function rowsOf(ctx: AutomationContext, svc: Experiments, e: ExperimentRow) {
  const byRun = new Map(svc.store.runs(e.id).map((r) => [r.id, r]));
  return evaluatorStore(ctx)
    .resultsOfExperiment(e.id)
    .map((r) => {
      const run = byRun.get(r.runId);
      return { ...resultView(r), exampleId: run?.exampleId ?? null, exampleName: run?.exampleName ?? null, batchId: e.id };
    });
}

export function exportCsv(ctx: AutomationContext, svc: Experiments, experiments: ExperimentRow[]): string {
  const lines = [CSV_COLUMNS.join(",")];
  for (const e of experiments) {
    for (const r of rowsOf(ctx, svc, e)) lines.push(CSV_COLUMNS.map((c) => csvCell(r[c])).join(","));
  }
  return `${lines.join("\r\n")}\r\n`;
}

export function exportJson(ctx: AutomationContext, svc: Experiments, experiments: ExperimentRow[], includeTrace: boolean) {
  return {
    experiments: experiments.map((e) => {
      // The export is free-form: it also carries the experiment's name and its cancellation.
      const out: Record<string, unknown> = { ...svc.summary(e), name: e.name, cancelledAt: e.cancelledAt, results: rowsOf(ctx, svc, e) };
      if (includeTrace) {
        const runs = runsOf(ctx).store;
        out.traces = Object.fromEntries(svc.store.runs(e.id).map((r) => [r.id, runs.steps(r.id).map(stepView)]));
      }
      return out;
    }),
  };
}
