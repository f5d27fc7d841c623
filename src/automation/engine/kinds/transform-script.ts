// transform.script: calls `function script(...)` from `function` in the QuickJS sandbox. Arguments
// come from `inputs`: by parameter name when every parameter names an input, else in `inputs` order.
import * as v from "valibot";
import { defineKind } from "../kind";
import { runSandboxed } from "../sandbox/isolate";

export const schema = v.strictObject({
  function: v.pipe(v.string(), v.minLength(1), v.maxLength(256 * 1024)),
  inputs: v.optional(v.record(v.string(), v.unknown()), {}),
  /** Time limit of the script itself (ms); the step `timeout` caps it too. */
  timeoutMs: v.optional(v.pipe(v.number(), v.integer(), v.minValue(1), v.maxValue(60_000)), 5_000),
  memoryMb: v.optional(v.pipe(v.number(), v.integer(), v.minValue(8), v.maxValue(256)), 64),
});

function argumentsFor(code: string, inputs: Record<string, unknown>): unknown[] {
  const m = /function\s+script\s*\(([^)]*)\)/.exec(code);
  const params = m ? m[1].split(",").map((p) => p.trim()).filter((p) => p !== "") : [];
  if (params.length > 0 && params.every((p) => /^[A-Za-z_$][\w$]*$/.test(p) && p in inputs)) return params.map((p) => inputs[p]);
  return Object.values(inputs);
}

export default defineKind({
  type: "transform.script",
  configAt: "with",
  schema,
  literal: ["function"],
  async run(config, ctx) {
    const timeoutMs = Math.min(config.timeoutMs, ctx.step.timeout ?? Number.POSITIVE_INFINITY);
    return runSandboxed(config.function, argumentsFor(config.function, config.inputs), {
      timeoutMs,
      memoryBytes: config.memoryMb * 1024 * 1024,
    }, ctx.signal);
  },
});
