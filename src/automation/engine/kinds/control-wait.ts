// control.wait {duration}: pauses for `duration` ms (up to 24 h). Unlike every other step, a cancel
// (or a shutdown) ends the wait early: a pure wait has no work in flight to lose, and a run parked in a
// long wait must not need the whole wait to be cancelled. The step is not journaled then.
import * as v from "valibot";
import { Cancelled } from "../errors";
import { defineKind } from "../kind";

export const schema = v.strictObject({ duration: v.pipe(v.number(), v.integer(), v.minValue(0), v.maxValue(86_400_000)) });

export default defineKind({
  type: "control.wait",
  configAt: "step",
  schema,
  async run({ duration }, ctx) {
    const { signal, stopRequested } = ctx;
    await new Promise<void>((resolve, reject) => {
      if (signal.aborted) return reject(signal.reason);
      if (stopRequested.aborted) return reject(new Cancelled());
      const done = () => {
        clearTimeout(timer);
        signal.removeEventListener("abort", onAbort);
        stopRequested.removeEventListener("abort", onStop);
      };
      const timer = setTimeout(() => {
        done();
        resolve();
      }, duration);
      const onAbort = () => {
        done();
        reject(signal.reason);
      };
      const onStop = () => {
        done();
        reject(new Cancelled());
      };
      signal.addEventListener("abort", onAbort, { once: true });
      stopRequested.addEventListener("abort", onStop, { once: true });
    });
    return { waitedMs: duration };
  },
});
