// How a run executing in this process is told to stop: shared by the pool (queue.ts), the executor
// (worker.ts) and the service, so neither of the first two imports the other.

/** Why a run's signal fired: a cancel (stop at the next step boundary) or this process shutting down. */
export type AbortReason = "cancel" | "shutdown";

/** Signals a run executes under: `stop` = stop at the next step boundary; `interrupt` = abort the step in flight. */
export interface RunSignals {
  stop: AbortSignal;
  interrupt: AbortSignal;
}

/** A run executing here: `abort` asks it to stop at its next step boundary; child runs inherit its signals. */
export interface Executing extends RunSignals {
  abort(reason: AbortReason): void;
}
