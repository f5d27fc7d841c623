// The workflow engine: runs a parsed workflow step by step, reporting each step to the run journal
// (engine/contract.ts). Steps already in the journal are not executed again: their recorded output is
// reused, which is how a run resumes after a crash without repeating side effects. Cancellation is
// honoured at step boundaries: a step in flight is never interrupted by a cancel (only pure waits
// end early); step `if`, `timeout` and `retry` are applied here for every kind.
import * as v from "valibot";
import { preferModel } from "../models/metered";
import { applyInputDefaults } from "./workflow-input";
import type { Step, Workflow } from "./workflow-types";
import type { ExecuteOptions, ExecuteResult, StepRecord } from "./contract";
import { Cancelled, StepError, Suspended } from "./errors";
import { pathMatches, type AnyStepKind, type BlockResult, type StepContext, type StepScope } from "./kind";
import { stepKind } from "./registry";
import { recordedInput } from "./step-input";
import { render, truthy } from "./template";

/** A step failed for good; carries the innermost failing step's path up through control steps. */
class StepFailed extends Error {
  constructor(readonly path: string, readonly error: StepError) {
    super(error.message);
  }
}

function asStepError(e: unknown): StepError {
  if (e instanceof StepError) return e;
  return new StepError(e instanceof Error ? e.message : String(e), "step_failed");
}

function templateData(scope: StepScope): Record<string, unknown> {
  const data: Record<string, unknown> = { ...scope.vars, input: scope.input, env: scope.env, steps: scope.steps };
  if (scope.eval) data.eval = scope.eval;
  return data;
}

async function renderIn(scope: StepScope, value: unknown, what: string, skip?: (path: string) => boolean): Promise<unknown> {
  try {
    return await render(value, templateData(scope), skip);
  } catch (e) {
    throw new StepError(`template error in ${what}: ${(e as Error).message}`, "template_error", { retryable: false });
  }
}

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal.aborted) return reject(signal.reason);
    const t = setTimeout(() => {
      signal.removeEventListener("abort", stop);
      resolve();
    }, ms);
    const stop = () => {
      clearTimeout(t);
      reject(signal.reason);
    };
    signal.addEventListener("abort", stop, { once: true });
  });
}

class Runner {
  constructor(
    private readonly opts: ExecuteOptions,
    private readonly workflow: Workflow,
  ) {}

  private now(): string {
    return this.opts.services.clock.now().toISOString();
  }

  /** A step boundary: stop here when the run was cancelled or the enclosing work was aborted. */
  private checkpoint(signal: AbortSignal): void {
    if (this.opts.signal.aborted) throw new Cancelled();
    if (signal.aborted) throw signal.reason instanceof Error ? signal.reason : new StepError("aborted", "aborted");
  }

  async runBlock(steps: Step[], prefix: string, scope: StepScope, signal: AbortSignal): Promise<BlockResult> {
    let last: unknown = null;
    for (const step of steps) {
      this.checkpoint(signal);
      const path = prefix ? `${prefix}.${step.name}` : step.name;
      const { output, status } = await this.runStep(step, path, scope, signal);
      scope.steps[step.name] = { output, status };
      if (status === "completed") last = output;
    }
    return { last };
  }

  private async runStep(step: Step, path: string, scope: StepScope, signal: AbortSignal): Promise<{ output: unknown; status: string }> {
    const kind = stepKind(step.type);
    if (!kind) throw new StepFailed(path, new StepError(`unknown step type ${step.type}`, "unknown_step_type", { retryable: false }));
    const done = this.opts.journal.completed.get(path);
    const reusable = done && (done.status === "completed" || done.status === "skipped");
    // Leaf steps that finished before are never run again. Control steps are re-entered (they have no
    // effects of their own) so their children repopulate the scope, each child reused from the journal.
    if (reusable && !kind.children) return { output: done.output ?? null, status: done.status };
    const journaled = !reusable;

    if (step.if !== undefined) {
      let go: boolean;
      try {
        go = truthy(typeof step.if === "string" ? await renderIn(scope, step.if, "if") : step.if);
      } catch (e) {
        const err = asStepError(e);
        if (journaled) await this.finish(step, path, 1, this.now(), { status: "failed", error: { message: err.message, code: err.code } });
        throw new StepFailed(path, err);
      }
      if (!go) {
        if (journaled) await this.finish(step, path, 0, this.now(), { status: "skipped" });
        return { output: null, status: "skipped" };
      }
    }

    const policy = step.retry ?? (kind.children ? "never" : undefined);
    const maxAttempts = policy === "never" ? 1 : (policy?.maxAttempts ?? (this.workflow.settings.retries ?? 0) + 1);
    for (let attempt = 1; ; attempt++) {
      this.checkpoint(signal);
      const startedAt = this.now();
      if (journaled) await this.opts.journal.stepStarted({ path, name: step.name, type: step.type, attempt, startedAt });
      const seen: { input?: unknown } = {};
      try {
        const output = await this.attempt(kind, step, path, scope, signal, seen);
        if (journaled) await this.finish(step, path, attempt, startedAt, { status: "completed", output, input: seen.input });
        return { output, status: "completed" };
      } catch (e) {
        if (e instanceof Cancelled || e instanceof Suspended) throw e;
        if (signal.aborted && e === signal.reason) throw e; // an enclosing timeout, a failed sibling or an interrupt: not this step's fault
        const failed = e instanceof StepFailed ? e : new StepFailed(path, asStepError(e));
        if (failed.error.retryable && attempt < maxAttempts && !(e instanceof StepFailed && kind.children)) {
          const delay = policy !== "never" && policy?.delayMs ? policy.delayMs : 0;
          if (delay > 0) await sleep(delay, AbortSignal.any([signal, this.opts.signal])).catch(() => this.checkpoint(signal));
          continue;
        }
        if (journaled) {
          const error = failed.path === path ? { message: failed.error.message, code: failed.error.code } : { message: `step ${failed.path} failed: ${failed.error.message}`, code: failed.error.code };
          await this.finish(step, path, attempt, startedAt, { status: "failed", error, input: seen.input });
        }
        throw failed;
      }
    }
  }

  private async finish(step: Step, path: string, attempt: number, startedAt: string, result: Pick<StepRecord, "status" | "output" | "error" | "input">): Promise<void> {
    const record: StepRecord = { path, name: step.name, type: step.type, attempt, startedAt, completedAt: this.now(), ...result };
    if (record.output === undefined && result.status === "completed") record.output = null;
    if (record.input === undefined) delete record.input;
    await this.opts.journal.stepFinished(record);
  }

  /**
   * One attempt: render the config, validate it, run the kind under this step's timeout. `seen.input`
   * gets the rendered values as the journal keeps them (step-input.ts), also when the step then fails.
   */
  private async attempt(kind: AnyStepKind, step: Step, path: string, scope: StepScope, outer: AbortSignal, seen: { input?: unknown }): Promise<unknown> {
    const controller = new AbortController();
    const abort = () => controller.abort(outer.reason);
    outer.addEventListener("abort", abort, { once: true });
    const timer = step.timeout
      ? setTimeout(() => controller.abort(new StepError(`step ${path} timed out after ${step.timeout} ms`, "step_timeout")), step.timeout)
      : undefined;
    try {
      const keep = [...(kind.literal ?? []), ...(kind.children ?? [])];
      const rendered = await renderIn(scope, step.config, kind.configAt === "with" ? "with" : "step config", (p) => keep.some((k) => pathMatches(k, p)));
      seen.input = recordedInput(step.config, rendered, scope.env, kind.children);
      const parsed = v.safeParse(kind.schema, rendered);
      if (!parsed.success) {
        const detail = parsed.issues.map((i) => `${v.getDotPath(i) ?? "config"}: ${i.message}`).join("; ");
        throw new StepError(`invalid ${kind.configAt === "with" ? "with" : "config"} after rendering templates: ${detail}`, "invalid_config", { retryable: false });
      }
      const effect = typeof kind.sideEffect === "function" ? kind.sideEffect(parsed.output) : kind.sideEffect;
      if (this.opts.evaluation && effect) return { skipped: true, reason: "side effects are skipped on evaluation runs" };
      const ctx = this.context(step, path, scope, controller.signal);
      const aborted = new Promise<never>((_, reject) => {
        if (controller.signal.aborted) reject(controller.signal.reason);
        controller.signal.addEventListener("abort", () => reject(controller.signal.reason), { once: true });
      });
      aborted.catch(() => {});
      return await Promise.race([kind.run(parsed.output, ctx), aborted]);
    } finally {
      clearTimeout(timer);
      outer.removeEventListener("abort", abort);
    }
  }

  private context(step: Step, path: string, scope: StepScope, signal: AbortSignal): StepContext {
    return {
      step,
      path,
      scope,
      services: this.opts.services,
      signal,
      stopRequested: this.opts.signal,
      evaluation: this.opts.evaluation ?? false,
      children: (key) => step.children[key] ?? [],
      runBlock: (steps, prefix, s, sig) => this.runBlock(steps, prefix, s ?? scope, sig ?? signal),
      childScope: (vars) => ({ input: scope.input, env: scope.env, steps: { ...scope.steps }, vars: { ...scope.vars, ...vars }, eval: scope.eval }),
      render: (value) => renderIn(scope, value, step.name),
    };
  }

  async output(scope: StepScope): Promise<unknown> {
    if (this.workflow.output === undefined) {
      return Object.fromEntries(this.workflow.steps.map((s) => [s.name, scope.steps[s.name]?.output ?? null]));
    }
    return renderIn(scope, this.workflow.output, "output");
  }
}

/** Executes a workflow (see contract.ts). Never throws for workflow failures: they are in the result. */
export async function execute(opts: ExecuteOptions): Promise<ExecuteResult> {
  const workflow = opts.workflow as Workflow;
  if (!workflow || !Array.isArray(workflow.steps) || !Array.isArray(workflow.inputs)) return { status: "failed", error: { message: "not a parsed workflow", code: "invalid_workflow" } };
  const runTimeout = workflow.settings?.timeout;
  const limit = new AbortController();
  const timer = runTimeout ? setTimeout(() => limit.abort(new StepError(`run exceeded its timeout of ${runTimeout} ms`, "run_timeout", { retryable: false })), runTimeout) : undefined;
  const models = workflow.defaultModel && opts.services.models ? preferModel(opts.services.models, workflow.defaultModel) : opts.services.models;
  const runner = new Runner({ ...opts, services: { ...opts.services, models } }, { ...workflow, settings: workflow.settings ?? {} });
  const scope: StepScope = { input: applyInputDefaults(workflow, opts.input ?? {}), env: opts.services.env, steps: {}, vars: {}, eval: opts.eval };
  try {
    // Steps see the run timeout and a hard interrupt, not the cancel: a cancel waits for the step boundary.
    await runner.runBlock(workflow.steps, "", scope, opts.interrupt ? AbortSignal.any([opts.interrupt, limit.signal]) : limit.signal);
    if (opts.signal.aborted) return cancelled();
    const output = await runner.output(scope);
    return { status: "completed", output };
  } catch (e) {
    if (e instanceof Suspended) return { status: "waiting" };
    if (e instanceof Cancelled || opts.signal.aborted) return cancelled();
    if (e instanceof StepFailed) {
      return { status: "failed", error: { message: e.error.message, code: e.error.code, step: e.path, ...(e.error.statusCode ? { statusCode: e.error.statusCode } : {}) } };
    }
    const err = asStepError(e);
    return { status: "failed", error: { message: err.message, code: err.code, ...(err.statusCode ? { statusCode: err.statusCode } : {}) } };
  } finally {
    clearTimeout(timer);
  }
}

function cancelled(): ExecuteResult {
  return { status: "cancelled", error: { message: "run cancelled", code: "cancelled" } };
}
