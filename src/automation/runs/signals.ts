// How a run executing in this process is told to stop: shared by the pool (queue.ts), the executor
// (worker.ts) and the service, so neither of the first two imports the other.

/**
 * Why a run's signal fired: a cancel (stop at the next step boundary), this process shutting down, or
 * its lease lost to another worker (this process stalled past it): the last two leave the run to resume.
 */
export type AbortReason = "cancel" | "shutdown" | "lease_lost";

/** Stopped for a reason that is not the run's: leave it running for whoever resumes it. */
export const leftToResume = (signal: AbortSignal): boolean => signal.aborted && (signal.reason === "shutdown" || signal.reason === "lease_lost");

/** Signals a run executes under: `stop` = stop at the next step boundary; `interrupt` = abort the step in flight. */
export interface RunSignals {
  stop: AbortSignal;
  interrupt: AbortSignal;
}

/** A run executing here: `abort` asks it to stop at its next step boundary; child runs inherit its signals. */
export interface Executing extends RunSignals {
  abort(reason: AbortReason): void;
}
