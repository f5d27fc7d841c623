// What a step kind is: a small module with its valibot config schema beside its code. The engine
// knows kinds only through this interface (see registry.ts), so new kinds plug in without touching it.
import type * as v from "valibot";
import type { Step } from "./workflow-types";
import type { EngineServices, EvalContext } from "./contract";

export interface StepScope {
  input: Record<string, unknown>;
  env: Record<string, string>;
  /** Outputs visible to templates as `steps.<name>.output|status`. */
  steps: Record<string, { output: unknown; status: string }>;
  /** Loop variables (`item`, `index` or the names given by `as`/`indexAs`). */
  vars: Record<string, unknown>;
  /** Evaluation runs of an example: `eval.exampleId`, `eval.experimentId`, `eval.trial`. */
  eval?: EvalContext;
}

export interface BlockResult {
  /** Output of the last step of the block that ran (null when every step was skipped). */
  last: unknown;
}

export interface StepContext {
  step: Step;
  /** Unique execution path of this step (`loop[2].inner`). */
  path: string;
  scope: StepScope;
  services: EngineServices;
  /**
   * Aborted on this attempt's timeout, when a sibling branch failed, or when a shutdown interrupts
   * in-flight work. Not on cancel: a cancelled run lets the step in flight finish.
   */
  signal: AbortSignal;
  /** Aborted when the run was asked to stop (cancel, shutdown). Only pure waits should end early on it. */
  stopRequested: AbortSignal;
  evaluation: boolean;
  /** Nested step list of a control kind by its config path (`then`, `cases.0.steps`). */
  children(key: string): Step[];
  /** Runs a nested block. `prefix` is prepended to child paths; `scope` and `signal` default to this step's. */
  runBlock(steps: Step[], prefix: string, scope?: StepScope, signal?: AbortSignal): Promise<BlockResult>;
  /** A scope for a loop iteration: own copy of `steps`, plus variables. */
  childScope(vars: Record<string, unknown>): StepScope;
  /** Renders templates against this step's scope. */
  render(value: unknown): Promise<unknown>;
}

export interface StepKind<C> {
  type: string;
  /** `with`: config lives under `with`; `step`: control kinds keep their fields at step level. */
  configAt: "with" | "step";
  /** Validated after templates are rendered (and at parse time, ignoring fields that are templates). */
  schema: v.GenericSchema<unknown, C>;
  /** Config paths that hold nested step lists; `*` matches an array index (`cases.*.steps`). */
  children?: string[];
  /** Config paths that are code, not templates: never rendered nor checked as Liquid. */
  literal?: string[];
  /** Steps with outside effects that evaluation runs skip (output `{skipped: true, reason}`); may depend on the config. */
  sideEffect?: boolean | ((config: C) => boolean);
  /**
   * Internal kinds (the agent loop's) are refused in hand-written workflow YAML: only definitions the
   * server generates itself (an agent release's workflow) may use them, so they stay undocumented.
   */
  internal?: boolean;
  run(config: C, ctx: StepContext): Promise<unknown>;
}

export type AnyStepKind = StepKind<unknown>;

/** Erases the config type so kinds of different configs share one registry. */
export function defineKind<C>(kind: StepKind<C>): AnyStepKind {
  return kind as unknown as AnyStepKind;
}

/** Whether `path` (dotted) matches `pattern` where `*` stands for one segment. */
export function pathMatches(pattern: string, path: string): boolean {
  const a = pattern.split(".");
  const b = path.split(".");
  return a.length === b.length && a.every((seg, i) => seg === "*" || seg === b[i]);
}

/** Concrete paths of `value` matching `pattern`, with the values found there. */
export function findPaths(value: unknown, pattern: string): [string, unknown][] {
  const out: [string, unknown][] = [];
  const walk = (v: unknown, segs: string[], at: string[]) => {
    if (segs.length === 0) return void out.push([at.join("."), v]);
    if (v === null || typeof v !== "object") return;
    const [seg, ...rest] = segs;
    const keys = seg === "*" ? Object.keys(v) : [seg];
    for (const k of keys) {
      const next = (v as Record<string, unknown>)[k];
      if (next !== undefined) walk(next, rest, [...at, k]);
    }
  };
  walk(value, pattern.split("."), []);
  return out;
}
