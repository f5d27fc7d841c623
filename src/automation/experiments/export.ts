// Experiment results as CSV (RFC 4180; cells a spreadsheet would run as a formula are neutralised)
// or JSON, one row per evaluator result.
import type { AutomationContext } from "../context";
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

async function rowsOf(ctx: AutomationContext, svc: Experiments, e: ExperimentRow) {
  const byRun = new Map((await svc.store.runs(e.id)).map((r) => [r.id, r]));
  return (await ctx.storage.evaluators.resultsOfExperiment(e.id)).map((r) => {
    const run = byRun.get(r.runId);
    const row = { ...r, exampleId: run?.exampleId ?? null, exampleName: run?.exampleName ?? null, batchId: e.id };
    return e.trials > 1 ? { ...row, trial: run?.trial ?? 1 } : row;
  });
}

export async function exportCsv(ctx: AutomationContext, svc: Experiments, experiments: ExperimentRow[]): Promise<string> {
  const lines = [CSV_COLUMNS.join(",")];
  for (const e of experiments) {
    for (const r of await rowsOf(ctx, svc, e)) lines.push(CSV_COLUMNS.map((c) => csvCell(r[c])).join(","));
  }
  return `${lines.join("\r\n")}\r\n`;
}

export async function exportJson(ctx: AutomationContext, svc: Experiments, experiments: ExperimentRow[], includeTrace: boolean) {
  return {
    experiments: await Promise.all(experiments.map(async (e) => {
      // The export is free-form: it also carries the experiment's name and its cancellation.
      const out: Record<string, unknown> = { ...(await svc.summary(e)), name: e.name, cancelledAt: e.cancelledAt, ...(e.trials > 1 ? { trials: e.trials } : {}), results: await rowsOf(ctx, svc, e) };
      if (includeTrace) {
        const runs = ctx.storage.runs;
        out.traces = Object.fromEntries(await Promise.all((await svc.store.runs(e.id)).map(async (r) => [r.id, (await runs.steps(r.id)).map(stepView)])));
      }
      return out;
    })),
  };
}
