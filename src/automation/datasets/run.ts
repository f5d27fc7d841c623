// Starts the evaluation run of one example: the example's input (its `{"$file": "input/…"}` values
// become the run's input files), its overrides, `trigger` eval, `exampleId` set. Experiments start
// their runs through here too, with the experiment id as batch id.
import { Invalid } from "../../kernel/errors";
import type { AutomationContext } from "../context";
import { openBlob } from "../files/service";
import type { IncomingFile } from "../runs/inputs";
import { type Actor, runsOf } from "../runs/service";
import type { RunRow } from "../runs/store";
import type { ExampleRow } from "./store";

const isRef = (x: unknown): x is { $file: string } =>
  !!x && typeof x === "object" && !Array.isArray(x) && typeof (x as { $file?: unknown }).$file === "string" && Object.keys(x).length === 1;

/** The `{"$file": …}` references of an example input (top-level values and lists of them). */
export function fileRefs(input: Record<string, unknown>): { field: string; path: string }[] {
  return Object.entries(input).flatMap(([field, val]) => (Array.isArray(val) ? val : [val]).filter(isRef).map((r) => ({ field, path: r.$file })));
}

/** The path inside the example's input folder a `$file` reference names, or null when it names none. */
export const inputPathOf = (ref: string): string | null => /^input\/(.+)$/.exec(ref)?.[1] ?? null;

async function fileFor(ctx: AutomationContext, ex: ExampleRow, field: string, ref: string): Promise<File> {
  const path = inputPathOf(ref);
  const row = path ? await ctx.storage.datasets.file(ex.id, "input", path) : undefined;
  const blob = row ? await openBlob(ctx, row.sha256) : null;
  if (!row || !blob) {
    throw Invalid(`example ${ex.name}: input.${field} refers to ${ref}, which is not one of its input files`, { field: `input.${field}`, code: "file_not_found" });
  }
  return new File([await blob.arrayBuffer()], row.path.split("/").pop()!, { type: row.contentType });
}

/** Splits the example input into scalar values and the files its `$file` references name. */
export async function exampleInput(ctx: AutomationContext, ex: ExampleRow): Promise<{ input: Record<string, unknown>; files: Record<string, IncomingFile | IncomingFile[]> }> {
  const all = ex.input ? (JSON.parse(ex.input) as Record<string, unknown>) : {};
  const input: Record<string, unknown> = {};
  const files: Record<string, IncomingFile | IncomingFile[]> = {};
  for (const [k, val] of Object.entries(all)) {
    if (isRef(val)) files[k] = await fileFor(ctx, ex, k, val.$file);
    else if (Array.isArray(val) && val.length > 0 && val.every(isRef)) files[k] = await Promise.all(val.map((r) => fileFor(ctx, ex, k, r.$file)));
    else input[k] = val;
  }
  return { input, files };
}

export async function startExampleRun(
  ctx: AutomationContext,
  actor: Actor,
  ex: ExampleRow,
  opts: { experimentId?: string; version?: string; held?: boolean; trial?: number } = {},
): Promise<RunRow> {
  const { input, files } = await exampleInput(ctx, ex);
  const o = ex.overrides ? (JSON.parse(ex.overrides) as { steps?: unknown }) : null;
  const steps = o?.steps && typeof o.steps === "object" && !Array.isArray(o.steps) ? (o.steps as Record<string, Record<string, unknown>>) : undefined;
  const run = await runsOf(ctx).start(actor, {
    target: ex.automationId,
    input,
    files,
    overrides: steps ? { steps } : undefined,
    version: opts.version,
    trigger: "eval",
    exampleId: ex.id,
    batchId: opts.experimentId,
    experimentId: opts.experimentId,
    evaluation: true,
    trial: opts.trial,
    held: opts.held,
  });
  await ctx.storage.datasets.setLatestRun(ex.id, run.id);
  return run;
}
