// Pieces shared by the control kinds: step lists (parsed by the workflow parser into Step[]),
// loop variable names, and a bounded-concurrency runner that stops taking work after a failure.
import * as v from "valibot";
import { Cancelled, Suspended } from "../errors";

/** A nested list of steps; its items are validated as steps by the parser, not here. */
export const stepList = v.array(v.unknown());

/** A value that must be present (templates render it before validation). */
export const present = v.custom<unknown>((x) => x !== undefined, "is required");

export const variableName = v.pipe(
  v.string(),
  v.regex(/^[A-Za-z_][A-Za-z0-9_]*$/, "must be an identifier"),
  v.check((s) => !["input", "steps", "env"].includes(s), "must not shadow input, steps or env"),
);

/**
 * Runs blocks side by side: returns a signal that aborts when `parent` does or when one of them
 * failed (`fail`), which interrupts the others' steps in flight. A cancel is not a failure: each
 * block stops at its own next step boundary, so a sibling's step in flight still finishes. Nor is a
 * block parked on a human review: its siblings run on (or park too) before the run waits.
 */
export function siblings(parent: AbortSignal): { signal: AbortSignal; fail(error: unknown): void } {
  const controller = new AbortController();
  const signal = AbortSignal.any([parent, controller.signal]);
  return { signal, fail: (error) => void (signal.aborted || error instanceof Cancelled || error instanceof Suspended || controller.abort(error)) };
}

/** Runs `task` over `count` indexes with at most `concurrency` in flight; the first error stops new work and is rethrown. */
export async function boundedAll<T>(count: number, concurrency: number, task: (i: number) => Promise<T>): Promise<T[]> {
  const results = new Array<T>(count);
  let next = 0;
  let failed: { error: unknown } | undefined;
  const worker = async () => {
    while (!failed && next < count) {
      const i = next++;
      try {
        results[i] = await task(i);
      } catch (error) {
        failed ??= { error };
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, count) }, worker));
  if (failed) throw failed.error;
  return results;
}
