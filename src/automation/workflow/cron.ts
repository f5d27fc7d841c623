// Cron triggers of a workflow: the YAML shape with its documented defaults, and the checks croner
// and the platform's time-zone database make at version create (the scheduler trusts what passed).
import { Cron } from "croner";
import * as v from "valibot";

export const OVERLAP = ["skip", "allow"] as const;
export const CATCH_UP = ["latest", "none", "all"] as const;
/** The most missed ticks `catchUp: all` may start after downtime (and the default `maxCatchUp`). */
export const MAX_CATCH_UP = 100;
export const DEFAULT_MAX_CATCH_UP = 10;

export const cronTriggerSchema = v.strictObject({
  type: v.literal("cron"),
  schedule: v.pipe(v.string("must be a cron expression such as \"0 9 * * 1-5\" (quote it)"), v.maxLength(200)),
  timezone: v.optional(v.pipe(v.string("must be an IANA time zone such as Europe/Berlin"), v.maxLength(100)), "UTC"),
  input: v.optional(v.record(v.string(), v.unknown(), "must be a mapping of input names to values"), {}),
  overlap: v.optional(v.picklist(OVERLAP, `must be one of ${OVERLAP.join(", ")}`), "skip"),
  catchUp: v.optional(v.picklist(CATCH_UP, `must be one of ${CATCH_UP.join(", ")}`), "latest"),
  maxCatchUp: v.optional(v.pipe(v.number(), v.integer(), v.minValue(1), v.maxValue(MAX_CATCH_UP)), DEFAULT_MAX_CATCH_UP),
});

export type CronTrigger = v.InferOutput<typeof cronTriggerSchema>;

/** Why `zone` is not a time zone this server knows, or undefined. */
export function timeZoneError(zone: string): string | undefined {
  try {
    new Intl.DateTimeFormat("en-US", { timeZone: zone });
    return undefined;
  } catch {
    return `unknown time zone "${zone}"; use an IANA name such as Europe/Berlin or UTC`;
  }
}

/** A paused croner job for the expression (5 fields, or 6 with seconds first) in `zone`; throws on a bad expression. */
export function cronOf(expression: string, zone: string): Cron {
  return new Cron(expression, { timezone: zone, mode: "5-or-6-parts", paused: true });
}

/** Why the expression is refused (bad syntax, or it never fires), or undefined. */
export function expressionError(expression: string, zone: string): string | undefined {
  let job: Cron;
  try {
    job = cronOf(expression, zone);
  } catch (err) {
    const why = String((err as Error)?.message ?? err).replace(/^CronPattern: /, "");
    return `invalid cron expression "${expression}": ${why} (5 fields, or 6 with seconds first)`;
  }
  if (job.nextRun() === null) return `cron expression "${expression}" never fires`;
  return undefined;
}
