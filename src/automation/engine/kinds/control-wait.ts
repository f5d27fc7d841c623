// control.wait {duration}: pauses for `duration` ms (up to 24 h); a cancel interrupts the wait.
import * as v from "valibot";
import { defineKind } from "../kind";

export const schema = v.strictObject({ duration: v.pipe(v.number(), v.integer(), v.minValue(0), v.maxValue(86_400_000)) });

export default defineKind({
  type: "control.wait",
  configAt: "step",
  schema,
  async run({ duration }, ctx) {
    await new Promise<void>((resolve, reject) => {
      if (ctx.signal.aborted) return reject(ctx.signal.reason);
      const timer = setTimeout(() => {
        ctx.signal.removeEventListener("abort", onAbort);
        resolve();
      }, duration);
      const onAbort = () => {
        clearTimeout(timer);
        reject(ctx.signal.reason);
      };
      ctx.signal.addEventListener("abort", onAbort, { once: true });
    });
    return { waitedMs: duration };
  },
});
