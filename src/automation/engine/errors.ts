// Why a step or a run stopped. The engine turns these into StepRecord/ExecuteResult errors.

/** A step failed; `retryable` false means retrying cannot help (bad config, sandbox limits are still retried). */
export class StepError extends Error {
  readonly code: string;
  readonly statusCode?: number;
  readonly retryable: boolean;
  constructor(message: string, code = "step_failed", opts: { statusCode?: number; retryable?: boolean } = {}) {
    super(message);
    this.name = "StepError";
    this.code = code;
    this.statusCode = opts.statusCode;
    this.retryable = opts.retryable ?? true;
  }
}

/** `control.fail` fired: the run fails with the given HTTP-like status; never retried. */
export class WorkflowFailure extends StepError {
  constructor(message: string, statusCode: number) {
    super(message, "workflow_failed", { statusCode, retryable: false });
  }
}

/** The run was cancelled; raised at a step boundary. */
export class Cancelled extends Error {
  constructor() {
    super("run cancelled");
    this.name = "Cancelled";
  }
}

/**
 * The run parks here (`control.human_review`): its task and the `waiting` status are already
 * committed, so the engine unwinds without journaling the step and reports `waiting`. The run is
 * re-queued when the task is approved; the journal then holds the step's output.
 */
export class Suspended extends Error {
  constructor(readonly taskId: string) {
    super(`run waits for human review ${taskId}`);
    this.name = "Suspended";
  }
}
