// Evaluator files (YAML per automation, validated with line numbers before they are stored) and the
// scoring of a finished evaluation run: every evaluator's result plus the weighted overall, recorded
// once per run.
import * as v from "valibot";
import { Invalid, TooLarge } from "../../kernel/errors";
import { newId } from "../../kernel/ids";
import type { AutomationContext } from "../context";
import { automationOf } from "../datasets/service";
import type { ModelGateway } from "../models/contract";
import { meteredGateway } from "../models/metered";
import { runsOf } from "../runs/service";
import type { RunRow } from "../runs/store";
import { readYaml } from "../workflow/source";
import { type Evaluator, EvaluatorConfig, MAX_EVALUATOR_YAML_BYTES, type EvalResult, type Score } from "./model";
import { customScript, exactDiff, type FileDigest, llmJudge, overall } from "./scorers";

/** Without an evaluator file, an example run is compared with its expected output, exactly. */
export const DEFAULT_YAML = `# No evaluator file yet: runs are compared with the expected output.
passThreshold: 0.7
evaluators:
  - name: exact-diff
    type: exact-diff
`;

/** Parses and validates evaluator YAML; a 400 whose issues name the field and its line. */
export function parseEvaluators(yaml: string): EvaluatorConfig {
  if (Buffer.byteLength(yaml) > MAX_EVALUATOR_YAML_BYTES) throw TooLarge(`the evaluator YAML is larger than ${MAX_EVALUATOR_YAML_BYTES} bytes`, { field: "yaml" });
  const read = readYaml(yaml);
  if (!read.ok) throw Invalid(read.issues[0].message, { issues: read.issues.map((i) => ({ field: `yaml.${i.field}`, message: i.message, code: i.code })) });
  const r = v.safeParse(EvaluatorConfig, read.source.value ?? {});
  if (r.success) return r.output;
  const issues = r.issues.map((i) => {
    const path = v.getDotPath(i) ?? "";
    const line = read.source.lineOf(path);
    const unknown = i.type === "strict_object" && i.expected === "never";
    const message = unknown ? `unknown field ${path.split(".").pop()}` : i.received === "undefined" && i.expected?.startsWith('"') ? `${path} is required` : i.message;
    return { field: path || "<root>", message: line ? `line ${line}: ${message}` : message, code: unknown ? "unrecognized_keys" : "invalid_value" };
  });
  throw Invalid(issues[0].message, { issues });
}

function view(ctx: AutomationContext, automationId: string, automationType: string, yaml: string) {
  const config = parseEvaluators(yaml);
  return { automationId, automationType, yaml, config: { evaluators: config.evaluators, passThreshold: config.passThreshold } };
}

export async function getEvaluators(ctx: AutomationContext, tenantId: string, ref: string) {
  const a = await automationOf(ctx, tenantId, ref);
  return view(ctx, a.id, a.type, (await ctx.storage.evaluators.yaml(a.id)) ?? DEFAULT_YAML);
}

export async function putEvaluators(ctx: AutomationContext, tenantId: string, ref: string, yaml: string) {
  const a = await automationOf(ctx, tenantId, ref);
  const out = view(ctx, a.id, a.type, yaml);
  await ctx.storage.evaluators.put(tenantId, a.id, yaml, ctx.clock.now().toISOString());
  return out;
}

// Parsed configs by YAML text: every run of an experiment is scored with the same file.
const parsedConfigs = new Map<string, EvaluatorConfig>();

/** The automation's evaluators as configured now (the stored YAML, parsed once per text). */
export async function configOf(ctx: AutomationContext, automationId: string): Promise<EvaluatorConfig> {
  const yaml = (await ctx.storage.evaluators.yaml(automationId)) ?? DEFAULT_YAML;
  let config = parsedConfigs.get(yaml);
  if (!config) {
    try {
      config = parseEvaluators(yaml);
    } catch {
      config = parseEvaluators(DEFAULT_YAML); // stored YAML was valid when stored; a stricter build falls back
    }
    if (parsedConfigs.size > 100) parsedConfigs.clear();
    parsedConfigs.set(yaml, config);
  }
  return config;
}

/**
 * The judge's model calls go through the run's metered gateway: they count in the run's usage (tokens,
 * llmCallCount) and its model-call journal under the step path `evaluators.<name>`, like an AI step's.
 */
function judgeModels(ctx: AutomationContext, run: RunRow, e: Evaluator): ModelGateway | undefined {
  if (!ctx.models) return undefined;
  const metered = meteredGateway(ctx.models, ctx.storage.models, run.id, ctx.clock);
  return { resolve: metered.resolve, complete: (req) => metered.complete({ ...req, step: `evaluators.${e.name}` }) };
}

async function judge(ctx: AutomationContext, run: RunRow, e: Evaluator, expected: unknown, actual: unknown, files?: { expected: FileDigest[]; actual: FileDigest[] }): Promise<Score> {
  if (e.type === "exact-diff") {
    const noJson = expected === null || expected === undefined;
    if (noJson && !files) return { score: null, passed: false, details: null, error: "the example has no expected output" };
    return exactDiff(e.config, noJson ? undefined : expected, actual, files);
  }
  if (e.type === "custom-script") return customScript(e.config, expected, actual);
  return llmJudge(judgeModels(ctx, run, e), e.config, expected, actual);
}

const thresholdOf = (e: Evaluator) => e.config.passThreshold;

/**
 * Scores a finished evaluation run (once; a second call is a no-op). A failed run scores 0 on every
 * evaluator; a cancelled one is recorded without scores. Returns whether this call recorded it.
 */
export async function scoreRun(ctx: AutomationContext, run: RunRow): Promise<boolean> {
  const store = ctx.storage.evaluators;
  if (run.evaluation !== 1 || !run.exampleId || (await store.scored(run.id))) return false;
  const at = ctx.clock.now().toISOString();
  const record = { runId: run.id, experimentId: run.experimentId, at };
  if (run.status === "cancelled" || run.status === "rejected") return store.record({ ...record, score: null, passed: false }, []);
  const ex = await ctx.storage.datasets.byId(run.exampleId);
  const expected = ex?.expected ? (JSON.parse(ex.expected) as unknown) : null;
  // Expected files (the example's `expected/` folder) are compared with the run's output files by exact-diff.
  const expectedFiles = ex ? await ctx.storage.datasets.files(ex.id, "expected") : [];
  const s = await scoreAgainst(ctx, run, expected, expectedFiles, { at });
  return store.record({ ...record, score: s.score, passed: s.passed }, s.results);
}

/**
 * Scores a finished run's output (and output files) against an expected value with the automation's
 * evaluators, recording nothing: scoreRun records it for an example run; backtests score a replay and
 * the run it replays against the same expected value. A failed run scores 0 on every evaluator.
 * `meterAs`: the run whose usage an llm-judge's model calls count in (default: the scored run).
 */
export async function scoreAgainst(
  ctx: AutomationContext,
  run: RunRow,
  expected: unknown,
  expectedFiles: FileDigest[],
  opts: { at?: string; meterAs?: RunRow; config?: EvaluatorConfig } = {},
): Promise<{ score: number | null; passed: boolean; results: EvalResult[] }> {
  const at = opts.at ?? ctx.clock.now().toISOString();
  const actual = run.output ? (JSON.parse(run.output) as unknown) : null;
  const config = opts.config ?? (await configOf(ctx, run.automationId));
  const runError = run.status === "failed" ? ((run.error ? (JSON.parse(run.error) as { message?: string }) : {}).message ?? "the run failed") : null;
  const files = expectedFiles.length ? { expected: expectedFiles, actual: await ctx.storage.runs.files(run.id, "output") } : undefined;
  const rows: EvalResult[] = [];
  for (const e of config.evaluators) {
    const s: Score = runError ? { score: 0, passed: false, details: null, error: `the run failed: ${runError}` } : await judge(ctx, opts.meterAs ?? run, e, expected, actual, files);
    rows.push({
      id: newId("evr"),
      runId: run.id,
      automationId: run.automationId,
      evaluatorName: e.name,
      evaluatorType: e.type,
      score: s.score,
      passed: s.passed,
      label: s.label ?? null,
      weight: e.weight,
      passThreshold: thresholdOf(e),
      description: e.description ?? null,
      details: s.details ?? null,
      error: s.error ?? null,
      createdAt: at,
    });
  }
  const total = overall(rows.map((r) => ({ weight: r.weight ?? 0, score: r.score })));
  return { score: total, passed: total !== null && total >= config.passThreshold, results: rows };
}
